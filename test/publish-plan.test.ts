// The plan of a publish to a bucket (src/publish/bucket/plan.ts): which objects are written and
// deleted, in which order, and which keys are refused as foreign. Pure: bucket views are made here.
import { describe, expect, it } from 'vitest';
import {
  STATE_KEY,
  emptyState,
  encodeState,
  parseState,
  planPublish,
  planSteps,
  type LocalObject,
  type LocalSnapshot,
  type PublishState,
  type RemoteView,
  type Step,
} from '../src/publish/bucket/plan.js';

const sha = (c: string) => c.repeat(64).slice(0, 64);
const obj = (key: string, c: string, phase: LocalObject['phase'] = 'content', size = 10): LocalObject => ({ key, sha256: sha(c), size, phase });

function tree(...objects: LocalObject[]): LocalSnapshot {
  return { kind: 'tree', objects };
}

/** The bucket after a completed publish of `snap` (plus `extra` keys). */
function published(snap: LocalSnapshot, extra: Record<string, number> = {}): RemoteView {
  const listed = new Map<string, number>(snap.objects.map((o) => [o.key, o.size]));
  listed.set(STATE_KEY, 100);
  for (const [k, n] of Object.entries(extra)) listed.set(k, n);
  const root = snap.objects.find((o) => o.phase === 'root')!;
  const state = snap.kind === 'tree' ? emptyState('tree') : { ...emptyState('pack'), live: snap.objects.filter((o) => o.phase === 'content').map((o) => o.key).sort() };
  return {
    state,
    root: snap.kind === 'tree' ? new Map(snap.objects.filter((o) => o.phase !== 'root').map((o) => [o.key, o.sha256])) : undefined,
    rootSha256: root.sha256,
    listed,
  };
}

const EMPTY: RemoteView = { state: undefined, root: undefined, rootSha256: undefined, listed: new Map() };
const show = (s: Step) => (s.op === 'put' ? `put ${s.object.key}` : s.op === 'delete' ? `delete ${s.key}` : 'state');

const T1 = tree(obj('tx/a.json', 'a'), obj('tx/b.json', 'b'), obj('stats.json', 's', 'whole'), obj('_site.json', 'i', 'whole'), obj('_manifest.json', 'm', 'root'));

describe('publish plan: tree', () => {
  it('into an empty prefix: the state, then documents, then the whole-tree documents, then the manifest, then the state', () => {
    const plan = planPublish(EMPTY, T1);
    expect(plan.foreign).toEqual([]);
    expect(plan.phases.map((p) => p.map(show))).toEqual([['state'], ['put tx/a.json', 'put tx/b.json'], ['put stats.json', 'put _site.json'], ['put _manifest.json'], ['state']]);
    const before = plan.phases[0]![0] as Extract<Step, { op: 'state' }>;
    // Every key the run may leave behind is recorded before the first is written.
    expect(Object.keys(before.state.put).sort()).toEqual(['_manifest.json', '_site.json', 'stats.json', 'tx/a.json', 'tx/b.json']);
  });

  it('nothing changed: no step at all', () => {
    expect(planPublish(published(T1), T1).phases).toEqual([]);
  });

  it('changed and new documents only; deletions after the manifest, only of keys the tool wrote', () => {
    const t2 = tree(obj('tx/a.json', 'a'), obj('tx/c.json', 'c'), obj('stats.json', 't', 'whole'), obj('_site.json', 'i', 'whole'), obj('_manifest.json', 'n', 'root'));
    const plan = planPublish(published(T1), t2);
    expect(plan.phases.map((p) => p.map(show))).toEqual([['state'], ['put tx/c.json'], ['put stats.json'], ['put _manifest.json'], ['delete tx/b.json'], ['state']]);
    const before = (plan.phases[0]![0] as Extract<Step, { op: 'state' }>).state;
    expect(before.delete).toEqual(['tx/b.json']);
  });

  it('a document gone from the bucket, or of another size, is written again', () => {
    const remote = published(T1);
    (remote.listed as Map<string, number>).delete('tx/a.json');
    (remote.listed as Map<string, number>).set('tx/b.json', 9);
    expect(planSteps(planPublish(remote, T1)).map(show)).toEqual(['state', 'put tx/a.json', 'put tx/b.json', 'state']);
  });

  it('after a stopped run: keys it was writing count as maybe-changed, keys it meant to delete are still deleted', () => {
    const remote = published(T1, { 'tx/old.json': 5 });
    const stopped: PublishState = { ...emptyState('tree'), put: { 'tx/a.json': sha('z'), 'tx/new.json': sha('n') }, delete: ['tx/old.json'] };
    const plan = planPublish({ ...remote, state: stopped, listed: new Map([...remote.listed, ['tx/new.json', 10]]) }, T1);
    expect(plan.foreign).toEqual([]);
    expect(planSteps(plan).map(show)).toEqual(['state', 'put tx/a.json', 'delete tx/new.json', 'delete tx/old.json', 'state']);
  });

  it('refuses a prefix with a key the tool did not write, naming it; --force publishes and never deletes it', () => {
    const remote = published(T1, { 'other/file.txt': 3 });
    expect(planPublish(remote, T1)).toEqual({ foreign: ['other/file.txt'], phases: [] });
    const t2 = tree(obj('tx/a.json', 'x'), obj('_manifest.json', 'n', 'root'));
    const forced = planSteps(planPublish(remote, t2, true)).map(show);
    expect(forced).toContain('put tx/a.json');
    expect(forced).not.toContain('delete other/file.txt');
    expect(forced.filter((s) => s.startsWith('delete'))).toEqual(['delete _site.json', 'delete stats.json', 'delete tx/b.json']);
  });

  it('a manifest without the state beside it is not ours', () => {
    const remote: RemoteView = { state: undefined, root: new Map(), rootSha256: sha('m'), listed: new Map([['_manifest.json', 10]]) };
    expect(planPublish(remote, T1).foreign).toEqual(['_manifest.json']);
  });

  it('refuses a prefix holding the other format', () => {
    const pack: LocalSnapshot = { kind: 'pack', objects: [obj('a.part', 'a'), obj('pack.json', 'p', 'root')] };
    expect(() => planPublish(published(T1), pack)).toThrow(/holds a published tree; this snapshot is a pack/);
  });
});

describe('publish plan: pack', () => {
  const P1: LocalSnapshot = { kind: 'pack', objects: [obj('p1.part', '1'), obj('i1.idx', 'i'), obj('pack.json', 'p', 'root')] };
  const P2: LocalSnapshot = { kind: 'pack', objects: [obj('p1.part', '1'), obj('p2.part', '2'), obj('i2.idx', 'j'), obj('pack.json', 'q', 'root')] };
  const P3: LocalSnapshot = { kind: 'pack', objects: [obj('p3.part', '3'), obj('i3.idx', 'k'), obj('pack.json', 'r', 'root')] };

  it('new parts and index first, then pack.json, then the state; nothing to delete yet', () => {
    expect(planPublish(EMPTY, P1).phases.map((p) => p.map(show))).toEqual([['put p1.part', 'put i1.idx'], ['put pack.json'], ['state']]);
  });

  it('unchanged: no step', () => {
    expect(planPublish(published(P1), P1).phases).toEqual([]);
  });

  it('the previous root’s objects stay one more run; the ones before it are deleted after pack.json', () => {
    const r1 = published(P1);
    const plan2 = planPublish(r1, P2);
    expect(planSteps(plan2).map(show)).toEqual(['put p2.part', 'put i2.idx', 'put pack.json', 'state']);
    const s2 = (planSteps(plan2).at(-1) as Extract<Step, { op: 'state' }>).state;
    expect(s2.keep).toEqual(['i1.idx']);
    // The bucket after run 2, then run 3.
    const r2: RemoteView = { state: s2, root: undefined, rootSha256: sha('q'), listed: new Map([...r1.listed, ['p2.part', 10], ['i2.idx', 10]]) };
    const plan3 = planPublish(r2, P3);
    expect(plan3.phases.map((p) => p.map(show))).toEqual([['put p3.part', 'put i3.idx'], ['put pack.json'], ['state'], ['delete i1.idx']]);
  });

  it('keys deleted by the last run, still named in its state: no step (the state is not rewritten for them)', () => {
    const r = published(P1);
    const state = { ...r.state!, delete: ['gone.idx'] };
    expect(planPublish({ ...r, state }, P1).phases).toEqual([]);
  });

  it('a part already there (a stopped run wrote it) is ours and not written again', () => {
    const r = published(P1);
    const plan = planPublish({ ...r, listed: new Map([...r.listed, ['p2.part', 10]]) }, P2);
    expect(plan.foreign).toEqual([]);
    expect(planSteps(plan).map(show)).toEqual(['put i2.idx', 'put pack.json', 'state']);
  });
});

describe('publish plan: the browsing UI beside a pack', () => {
  const ui = (c: string) => [obj('index.html', c, 'whole'), obj('assets/app.js', c, 'whole')];
  const P1: LocalSnapshot = { kind: 'pack', objects: [obj('p1.part', '1'), obj('i1.idx', 'i'), obj('pack.json', 'p', 'root'), ...ui('u')] };
  const after = (plan: ReturnType<typeof planPublish>) => (planSteps(plan).at(-1) as Extract<Step, { op: 'state' }>).state;

  it('first publish: the state owns the UI keys before they are written; the last state records their sha256', () => {
    const plan = planPublish(EMPTY, P1);
    expect(plan.phases.map((p) => p.map(show))).toEqual([['put p1.part', 'put i1.idx'], ['put pack.json'], ['state'], ['put index.html', 'put assets/app.js'], ['state']]);
    const owning = plan.phases[2]![0] as Extract<Step, { op: 'state' }>;
    expect(owning.state.put).toEqual({ 'index.html': '', 'assets/app.js': '' });
    expect(after(plan).put).toEqual({ 'index.html': sha('u'), 'assets/app.js': sha('u') });
  });

  it('unchanged UI: no step; a changed UI file of the same size is written again', () => {
    const r: RemoteView = { ...published(P1), state: after(planPublish(EMPTY, P1)) };
    expect(planPublish(r, P1).phases).toEqual([]);
    const changed: LocalSnapshot = { ...P1, objects: [...P1.objects.filter((o) => o.key !== 'assets/app.js'), obj('assets/app.js', 'v', 'whole')] };
    expect(planSteps(planPublish(r, changed)).map(show)).toEqual(['state', 'put assets/app.js', 'state']);
  });

  it('a run stopped after the owning state: the UI keys are not foreign and are written again', () => {
    const plan = planPublish(EMPTY, P1);
    const owning = (plan.phases[2]![0] as Extract<Step, { op: 'state' }>).state;
    const r: RemoteView = { ...published(P1), state: owning };
    expect(planPublish(r, P1).foreign).toEqual([]);
    expect(planSteps(planPublish(r, P1)).map(show)).toContain('put index.html');
  });

  it('a UI file the pack no longer has is deleted last; a foreign index.html is refused', () => {
    const r: RemoteView = { ...published(P1), state: after(planPublish(EMPTY, P1)) };
    const noJs: LocalSnapshot = { ...P1, objects: P1.objects.filter((o) => o.key !== 'assets/app.js') };
    expect(planSteps(planPublish(r, noJs)).map(show)).toEqual(['state', 'delete assets/app.js']);
    expect(planPublish({ ...EMPTY, listed: new Map([['index.html', 5]]) }, P1).foreign).toEqual(['index.html']);
  });
});

describe('publish state object', () => {
  it('round-trips and refuses what is not one', () => {
    const s: PublishState = { ...emptyState('tree'), put: { b: sha('b'), a: sha('a') }, delete: ['x'] };
    expect(parseState(encodeState(s), 'k')).toEqual(s);
    expect(() => parseState('{"format":"x"}', 's3://b/p/.snapshot-publish.json')).toThrow(/s3:\/\/b\/p\/.snapshot-publish.json is not a chain-snapshot-publish state/);
    expect(() => parseState('nope', 'k')).toThrow(/k is not JSON/);
  });
});
