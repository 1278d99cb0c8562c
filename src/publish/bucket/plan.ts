/**
 * What a publish to a bucket does, decided from what the bucket holds and the local snapshot:
 * pure (no I/O), so every order and ownership rule is unit-tested (test/publish-plan.test.ts).
 *
 * The bucket's record of what the tool wrote is the root of the last published snapshot (a
 * tree's `_manifest.json`, a pack's `pack.json` through the state) and a small state object
 * (`.snapshot-publish.json`) listing what a run may have left beside it: keys being written, keys
 * due for deletion, and for a pack the parts of the previous root that readers may still hold.
 * Anything else under the prefix is foreign.
 */
import { MANIFEST_PATH, NAMES_PATH, SITE_INFO_PATH, STATS_PATH, UI_SITE_PATH } from '../../contract/layout.js';
import { PACK_POINTER } from '../../contract/pack-format.js';

export const STATE_KEY = '.snapshot-publish.json';
export const STATE_FORMAT = 'chain-snapshot-publish';
export const STATE_VERSION = 1;

/** The documents of a tree that describe it as a whole: written after the others, before the manifest. */
export const WHOLE_TREE_PATHS: ReadonlySet<string> = new Set([STATS_PATH, NAMES_PATH, SITE_INFO_PATH, UI_SITE_PATH]);

export type SnapshotKind = 'tree' | 'pack';

/** A file of the local snapshot, by its key relative to the prefix. */
export interface LocalObject {
  key: string;
  sha256: string;
  size: number;
  /** content: documents, parts, index; whole: documents about the whole tree; root: what readers follow. */
  phase: 'content' | 'whole' | 'root';
}

export interface LocalSnapshot {
  kind: SnapshotKind;
  /** Every object of the snapshot, the root included (a tree: every manifest line plus the manifest). */
  objects: LocalObject[];
}

/** `.snapshot-publish.json`. */
export interface PublishState {
  format: typeof STATE_FORMAT;
  version: number;
  kind: SnapshotKind;
  /** Tree: keys a run was writing when the state was saved, with the sha256 it was writing. */
  put: Record<string, string>;
  /** Keys the tool wrote that are due for deletion. */
  delete: string[];
  /** Pack: the objects (index, parts) of the published root, and of the root before it. */
  live: string[];
  keep: string[];
}

export function emptyState(kind: SnapshotKind): PublishState {
  return { format: STATE_FORMAT, version: STATE_VERSION, kind, put: {}, delete: [], live: [], keep: [] };
}

/** What the bucket holds under the prefix, as read by a run (keys relative to the prefix). */
export interface RemoteView {
  state: PublishState | undefined;
  /** Tree: the lines of the published `_manifest.json` (path → sha256); pack: unused. */
  root: ReadonlyMap<string, string> | undefined;
  /** sha256 of the root object's bytes (`_manifest.json` or `pack.json`) when there is one. */
  rootSha256: string | undefined;
  /** Every key under the prefix with its size. */
  listed: ReadonlyMap<string, number>;
}

export type Step = { op: 'put'; object: LocalObject } | { op: 'delete'; key: string } | { op: 'state'; state: PublishState };

export interface Plan {
  /** Keys under the prefix the tool did not write, in listing order. */
  foreign: string[];
  /** Steps in phases: the steps of a phase may run at once; a phase starts when the one before has finished. */
  phases: Step[][];
}

function sameState(a: PublishState | undefined, b: PublishState): boolean {
  return a !== undefined && JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(s: PublishState): PublishState {
  const put: Record<string, string> = {};
  for (const k of Object.keys(s.put).sort()) put[k] = s.put[k]!;
  return { ...s, put, delete: [...s.delete].sort(), live: [...s.live].sort(), keep: [...s.keep].sort() };
}

/** The keys the tool wrote, by the state and the root it recorded (none without a state). */
export function ownedKeys(remote: RemoteView, local: LocalSnapshot): Set<string> {
  const owned = new Set<string>();
  const s = remote.state;
  if (s === undefined) return owned;
  owned.add(STATE_KEY);
  if (s.kind === 'tree') {
    owned.add(MANIFEST_PATH);
    for (const k of remote.root?.keys() ?? []) owned.add(k);
  } else owned.add(PACK_POINTER);
  for (const k of Object.keys(s.put)) owned.add(k);
  for (const k of [...s.delete, ...s.live, ...s.keep]) owned.add(k);
  // A pack object is named by its content: one already there holds what this run would write.
  if (local.kind === 'pack') for (const o of local.objects) if (o.phase === 'content' && remote.listed.get(o.key) === o.size) owned.add(o.key);
  return owned;
}

/** Keys under the prefix the tool did not write, in listing order. */
export function foreignKeys(remote: RemoteView, local: LocalSnapshot): string[] {
  const owned = ownedKeys(remote, local);
  return [...remote.listed.keys()].filter((k) => !owned.has(k));
}

/**
 * The steps of a run. `force` publishes beside foreign objects (they are never deleted);
 * without it a plan with foreign objects has no steps.
 */
export function planPublish(remote: RemoteView, local: LocalSnapshot, force = false): Plan {
  const foreign = foreignKeys(remote, local);
  if (remote.state !== undefined && remote.state.kind !== local.kind) {
    throw new Error(`the prefix holds a published ${remote.state.kind}; this snapshot is a ${local.kind} (publish it to another prefix)`);
  }
  if (foreign.length > 0 && !force) return { foreign, phases: [] };
  const phases = local.kind === 'tree' ? planTree(remote, local) : planPack(remote, local);
  return { foreign, phases: phases.filter((p) => p.length > 0) };
}

function rootOf(local: LocalSnapshot): LocalObject {
  const root = local.objects.find((o) => o.phase === 'root');
  if (!root) throw new Error(`a ${local.kind} snapshot without its root`);
  return root;
}

function planTree(remote: RemoteView, local: LocalSnapshot): Step[][] {
  const old = remote.state ?? emptyState('tree');
  rootOf(local);
  const wanted = new Set(local.objects.map((o) => o.key));
  // An object is up to date when it is there with the local size and every version the bucket
  // may hold under the key (the published one, one a stopped run was writing) is the local one.
  const upToDate = (o: LocalObject): boolean => {
    if (remote.listed.get(o.key) !== o.size) return false;
    if (o.phase === 'root') return remote.rootSha256 === o.sha256 && (old.put[o.key] ?? o.sha256) === o.sha256;
    const published = remote.root?.get(o.key);
    return published === o.sha256 && (old.put[o.key] ?? o.sha256) === o.sha256;
  };
  const puts = local.objects.filter((o) => !upToDate(o));
  const owned = ownedKeys(remote, local);
  owned.delete(STATE_KEY);
  const deletes = [...owned].filter((k) => !wanted.has(k) && remote.listed.has(k)).sort();
  const final = emptyState('tree');
  if (puts.length === 0 && deletes.length === 0) return sameState(remote.state, final) ? [] : [[{ op: 'state', state: final }]];
  // Before anything is written, the state names every key this run may leave behind.
  const before: PublishState = { ...emptyState('tree'), put: { ...old.put }, delete: [...new Set([...old.delete, ...deletes])] };
  for (const o of puts) before.put[o.key] = o.sha256;
  const put = (phase: LocalObject['phase']): Step[] => puts.filter((o) => o.phase === phase).map((object) => ({ op: 'put', object }));
  return [
    sameState(remote.state, before) ? [] : [{ op: 'state', state: before }],
    put('content'),
    put('whole'),
    put('root'),
    deletes.map((key): Step => ({ op: 'delete', key })),
    [{ op: 'state', state: final }],
  ];
}

function planPack(remote: RemoteView, local: LocalSnapshot): Step[][] {
  const old = remote.state ?? emptyState('pack');
  const root = rootOf(local);
  const content = local.objects.filter((o) => o.phase === 'content');
  const ui = local.objects.filter((o) => o.phase === 'whole');
  const live = content.map((o) => o.key).sort();
  const puts = content.filter((o) => remote.listed.get(o.key) !== o.size);
  const rootPut = remote.listed.get(root.key) !== root.size || remote.rootSha256 !== root.sha256;
  const liveSet = new Set(live);
  const sameRoot = !rootPut && JSON.stringify([...old.live].sort()) === JSON.stringify(live);
  // The previous root's objects stay for readers that hold it; the ones before it go.
  const keep = sameRoot ? old.keep : old.live.filter((k) => !liveSet.has(k));
  const keepSet = new Set(keep);
  // The UI's files have fixed keys: the state's `put` holds the sha256 of what each key holds.
  const uiKeys = new Set(ui.map((o) => o.key));
  const uiPuts = ui.filter((o) => remote.listed.get(o.key) !== o.size || old.put[o.key] !== o.sha256);
  const uiGone = Object.keys(old.put).filter((k) => !uiKeys.has(k));
  const doomed = [...new Set([...old.keep, ...old.delete, ...old.live, ...uiGone])].filter((k) => !liveSet.has(k) && !keepSet.has(k) && !uiKeys.has(k) && remote.listed.has(k)).sort();
  const put = Object.fromEntries(ui.map((o) => [o.key, o.sha256]));
  const state: PublishState = { ...emptyState('pack'), put, live, keep: [...keep].sort(), delete: doomed };
  // Keys deleted by an earlier run may stay listed in the state: rewriting it for them alone would cost a PUT.
  const stale = remote.state && { ...remote.state, delete: remote.state.delete.filter((k) => remote.listed.has(k)) };
  const stateStep: Step[] = sameState(stale, state) ? [] : [{ op: 'state', state }];
  // Before a UI file is written the state owns its key, with no sha256 (so a stopped run writes it again).
  const owning: PublishState = { ...(remote.state ?? emptyState('pack')), put: { ...old.put, ...Object.fromEntries(uiPuts.map((o) => [o.key, ''])) } };
  const uiSteps: Step[][] = uiPuts.length === 0 ? [] : [[{ op: 'state', state: owning }], uiPuts.map((object): Step => ({ op: 'put', object }))];
  return [
    puts.map((object): Step => ({ op: 'put', object })),
    rootPut ? [{ op: 'put', object: root }] : [],
    ...uiSteps,
    stateStep,
    doomed.map((key): Step => ({ op: 'delete', key })),
  ];
}

/** The steps of a plan in order. */
export function planSteps(plan: Plan): Step[] {
  return plan.phases.flat();
}

/** Checks a parsed `.snapshot-publish.json`; throws naming what is wrong. */
export function parseState(text: string, where: string): PublishState {
  let s: Partial<PublishState>;
  try {
    s = JSON.parse(text) as Partial<PublishState>;
  } catch (e) {
    throw new Error(`${where} is not JSON (${(e as Error).message}); not a state this tool wrote`, { cause: e });
  }
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  const putOk = s.put !== null && typeof s.put === 'object' && !Array.isArray(s.put) && Object.values(s.put).every((v) => typeof v === 'string');
  if (s.format !== STATE_FORMAT || (s.kind !== 'tree' && s.kind !== 'pack') || !putOk || !strings(s.delete) || !strings(s.live) || !strings(s.keep)) {
    throw new Error(`${where} is not a ${STATE_FORMAT} state (format, kind, put, delete, live, keep); not a state this tool wrote`);
  }
  if (s.version !== STATE_VERSION) throw new Error(`${where} has state version ${s.version}; this tool reads version ${STATE_VERSION}`);
  return s as PublishState;
}

export function encodeState(s: PublishState): string {
  return JSON.stringify(canonical(s)) + '\n';
}
