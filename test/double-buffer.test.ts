// Incremental cost proportional to the change: the release an incremental build
// replaces is kept as the spare and, one run later, brought up to date at the cost of the paths
// the last run changed and staged into; the manifest is merged from the published one.
import { createHash } from 'node:crypto';
import { linkSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { MARKER_FILE } from '../src/publish/publish.js';
import { buildSnapshot } from '../src/site/build.js';
import { memorySource } from '../src/source/memory.js';
import { verifySnapshot } from '../src/verify/index.js';
import { scenario } from './support/chains.js';
import { killIncrementalChildAt, manifestMismatches } from './support/helpers.js';
import { keepOutput } from './support/memory-builds.js';

const NET = NETWORKS['namecoin-regtest'];
const HOSTS = ['netlify', 'cloudflare'] as const; // nginx.conf names the tree's path: left out
const SEED = 62;
const sc = scenario(SEED, { reorg: true }); // the chain incremental-child.ts builds
const [H1, H2, H3] = [sc.n - 6, sc.n - 3, sc.n];

const build = (outDir: string, height: number) => buildSnapshot({ source: memorySource(NET, sc.after), outDir, height, hosts: HOSTS });
const manifestOf = (dir: string) => readFileSync(join(dir, MANIFEST_PATH), 'utf8');

/** Every file of a tree (but the manifest), relative paths. */
function filesOf(root: string, rel = ''): string[] {
  return readdirSync(join(root, rel), { withFileTypes: true }).flatMap((e) => {
    const child = rel ? `${rel}/${e.name}` : e.name;
    return e.isDirectory() ? filesOf(root, child) : child === MANIFEST_PATH ? [] : [child];
  });
}

/** The manifest recomputed from the tree alone: sha256 and size of each file, sorted by the path's UTF-8 bytes. */
function manifestFromTree(root: string): string {
  return filesOf(root)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    .map((p) => {
      const buf = readFileSync(join(root, p));
      return `${createHash('sha256').update(buf).digest('hex')} ${buf.length} ${p}\n`;
    })
    .join('');
}

/** Paths whose manifest lines differ between two manifests (changed, added or removed). */
function changedPaths(a: string, b: string): Set<string> {
  const lines = (m: string) => new Map(m.trim().split('\n').map((l) => [l.slice(l.indexOf(' ', 65) + 1), l]));
  const [x, y] = [lines(a), lines(b)];
  return new Set([...x.keys(), ...y.keys()].filter((p) => x.get(p) !== y.get(p)));
}

/** Files of the published tree whose inode changed (ctime) after `since`: a link(2), unlink(2) or rename(2) touches it. */
function touchedSince(out: string, since: number): string[] {
  const root = realpathSync(out);
  return filesOf(root).filter((p) => statSync(join(root, p)).ctimeMs > since);
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A moment strictly between what happened before and what happens after (ctimes are coarse). */
async function moment(): Promise<number> {
  await pause(30);
  const t = Date.now();
  await pause(30);
  return t;
}

/** `o` is the H3 snapshot: its manifest equals a full build's and one recomputed from its files, and it verifies. */
async function expectH3(o: string, manifests: Record<number, string>): Promise<void> {
  expect(manifestOf(o)).toBe(manifests[H3]);
  expect(manifestOf(o)).toBe(manifestFromTree(realpathSync(o)));
  expect((await verifySnapshot(o)).ok).toBe(true);
}


// Each case makes one or two small builds (and a child build): generous limits for a loaded machine.
describe('double-buffered incremental builds', { timeout: 240_000 }, () => {
  let root: string;
  let out: string;
  const manifests: Record<number, string> = {};
  /** The output built at H1 (full) then H2 (incremental): published H2, spare H1; built once, put back before each case. */
  let restore: () => void;
  const prepared = () => {
    restore();
    return out;
  };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'snapshot-dbuf-'));
    for (const h of [H1, H2, H3]) {
      await build(join(root, `fresh-${h}`, 'out'), h);
      manifests[h] = manifestOf(join(root, `fresh-${h}`, 'out'));
    }
    // (The output's path is a build option: each case gets the prepared output back at the same path.)
    out = join(root, 'prepared', 'out');
    expect((await build(out, H1)).mode).toBe('full');
    expect((await build(out, H2)).mode).toBe('incremental');
    restore = keepOutput(out);
  }, 240_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('after an incremental build the replaced release is kept as the one spare, unchanged (it still verifies as the older tree)', async () => {
    prepared();
    const rel = `${out}.releases`;
    const current = readlinkSync(out).split('/')[1]!;
    const entries = readdirSync(rel).filter((e) => e !== MARKER_FILE && e !== current);
    expect(entries).toHaveLength(2);
    const spare = entries.find((e) => !e.endsWith('.spare'))!;
    expect(entries).toContain(`${spare}.spare`);
    expect(manifestOf(join(rel, spare))).toBe(manifests[H1]);
    expect(manifestMismatches(join(rel, spare))).toEqual([]);
    expect(manifestOf(out)).toBe(manifests[H2]);
  });

  it('the next build stages into the spare: only the paths changed by the last two runs are touched, the result equals a full build, the manifest equals one computed from the tree', async () => {
    const o = prepared();
    const before = readlinkSync(o).split('/')[1]!;
    const spare = readdirSync(`${o}.releases`).find((e) => e.endsWith('.spare'))!.slice(0, -'.spare'.length);
    const t0 = await moment();
    expect((await build(o, H3)).mode).toBe('incremental');
    await expectH3(o, manifests);
    // The release published before is now the spare, verifying as the H2 tree.
    expect(readdirSync(`${o}.releases`).sort()).toEqual([MARKER_FILE, readlinkSync(o).split('/')[1]!, before, `${before}.spare`].sort());
    expect(readdirSync(`${o}.releases`)).not.toContain(spare);
    expect(manifestMismatches(join(`${o}.releases`, before))).toEqual([]);
    expect(manifestOf(join(`${o}.releases`, before))).toBe(manifests[H2]);
    // O(change): the inodes touched are those of paths that changed between H1 and H3 (the spare
    // was at H1), not the whole tree as a hard-linked copy would touch.
    const touched = touchedSince(o, t0);
    const changed = new Set([...changedPaths(manifests[H1]!, manifests[H2]!), ...changedPaths(manifests[H2]!, manifests[H3]!)]);
    const total = filesOf(realpathSync(o)).length;
    expect(touched.filter((p) => !changed.has(p))).toEqual([]);
    expect(touched.length).toBeLessThan(total / 2);
    // Unchanged files are shared by the two releases and nothing else.
    const keep = filesOf(realpathSync(o)).find((p) => !changed.has(p))!;
    expect(statSync(join(o, keep)).nlink).toBe(2);
  });

  it('a file the last run changed and this run changes again is rewritten in place in the spare (its inode kept: no unlink, link, new file or rename); a file linked from elsewhere is not', async () => {
    const o = prepared();
    const rel = `${o}.releases`;
    const spare = readdirSync(rel).find((e) => e.endsWith('.spare'))!.slice(0, -'.spare'.length);
    // The spare (H1) holds its own copy of each path H2 changed; those H3 changes again are rewritten.
    const again = [...changedPaths(manifests[H1]!, manifests[H2]!)].filter((p) => changedPaths(manifests[H2]!, manifests[H3]!).has(p) && statSync(join(rel, spare, p), { throwIfNoEntry: false })?.nlink === 1);
    expect(again.length).toBeGreaterThan(10);
    const inode = new Map(again.map((p) => [p, statSync(join(rel, spare, p)).ino]));
    // Somebody's hard link to one of them (a backup made with cp -al, say): that file must keep its bytes.
    const foreign = again[0]!;
    const foreignBytes = readFileSync(join(rel, spare, foreign));
    linkSync(join(rel, spare, foreign), join(root, 'foreign-link'));
    try {
      expect((await build(o, H3)).mode).toBe('incremental');
      await expectH3(o, manifests);
      const kept = again.filter((p) => statSync(join(o, p)).ino === inode.get(p));
      expect(kept).toEqual(again.filter((p) => p !== foreign));
      expect(statSync(join(o, foreign)).ino).not.toBe(inode.get(foreign));
      expect(readFileSync(join(root, 'foreign-link'))).toEqual(foreignBytes);
      // The release published before (now the spare) was not written to.
      expect(manifestMismatches(join(rel, readdirSync(rel).find((e) => e.endsWith('.spare'))!.slice(0, -'.spare'.length)))).toEqual([]);
    } finally {
      rmSync(join(root, 'foreign-link'), { force: true });
    }
  });

  it('killed while bringing the spare up to date: out is the older snapshot and verifies; the next run resumes from it and equals a full build', async () => {
    const o = prepared();
    await killIncrementalChildAt(o, SEED, H3, 'links@half');
    expect(manifestOf(o)).toBe(manifests[H2]);
    expect(manifestMismatches(o)).toEqual([]);
    // The spare's record went before the spare was touched: nothing marks the half-refreshed dir as a spare.
    expect(readdirSync(`${o}.releases`).filter((e) => e.endsWith('.spare'))).toEqual([]);
    const h2 = readlinkSync(o).split('/')[1]!;
    // The index had moved on (the kill came after the scan): the next run brings it back to H2 and goes on from there.
    expect((await build(o, H3)).mode).toBe('incremental');
    await expectH3(o, manifests);
    // The half-refreshed dir was removed; the H2 release is the spare now.
    expect(readdirSync(`${o}.releases`).sort()).toEqual([MARKER_FILE, readlinkSync(o).split('/')[1]!, h2, `${h2}.spare`].sort());
  });

  it('killed right after the swap (the spare record written, the index not yet told): out is the new snapshot; the next run adopts it and has nothing to write', async () => {
    const o = prepared();
    await killIncrementalChildAt(o, SEED, H3, 'swapped');
    expect(manifestOf(o)).toBe(manifests[H3]);
    expect(manifestMismatches(o)).toEqual([]);
    expect(readdirSync(`${o}.releases`).filter((e) => e.endsWith('.spare'))).toHaveLength(1);
    const r = await build(o, H3);
    expect([r.mode, r.written]).toEqual(['incremental', 0]);
    await expectH3(o, manifests);
    expect(readdirSync(`${o}.releases`).filter((e) => e !== MARKER_FILE)).toHaveLength(3); // published, spare, its record
  });

  it('a spare whose record names another published release is not used (full link), and is removed', async () => {
    const o = prepared();
    const rel = `${o}.releases`;
    const record = readdirSync(rel).find((e) => e.endsWith('.spare'))!;
    const text = readFileSync(join(rel, record), 'utf8');
    const current = readlinkSync(o).split('/')[1]!;
    writeFileSync(join(rel, record), text.replace(current, '1-AAAAAA'));
    const t0 = await moment();
    await build(o, H3);
    expect(manifestOf(o)).toBe(manifests[H3]);
    expect(manifestMismatches(o)).toEqual([]);
    expect(touchedSince(o, t0).length).toBe(filesOf(realpathSync(o)).length);
    expect(readdirSync(rel)).not.toContain(record);
    expect(readdirSync(rel)).not.toContain(record.slice(0, -'.spare'.length));
  });
});
