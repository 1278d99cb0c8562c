import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { buildSnapshot } from '../src/site/build.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { memorySource } from '../src/source/memory.js';
import { scenario } from './support/chains.js';
import { TRACE } from './fixtures/pausing.js';
import { REPO, killIncrementalChildAt, manifestMismatches, nodeArgs } from './support/helpers.js';
import { keepOutput } from './support/memory-builds.js';

const NET = NETWORKS['namecoin-regtest'];
const HOSTS = ['netlify', 'cloudflare'] as const;
const SEED = 61;

/**
 * Every pause point of an incremental run with a reorg (fixtures/pausing.ts), in the order the run
 * passes them: each stage's start and half, the moment before the publish, each publish step.
 */
const POINTS = [
  'rollback',
  'rollback@half',
  'scan',
  'scan@half',
  'staging',
  'txs and blocks',
  'txs and blocks@half',
  'addresses',
  'addresses@half',
  'names',
  'names@half',
  'site files',
  'links',
  'links@half',
  'manifest',
  'manifest@half',
  'publishing',
  'linked',
  'swapped',
  'removed-old',
];
/** The first point at which the new snapshot is the published one. */
const SWAPPED = POINTS.indexOf('swapped');

function manifestOf(dir: string): string {
  return readFileSync(join(dir, MANIFEST_PATH), 'utf8');
}

/** `<path> <sha256>` of every file below `dir`, sorted: two trees are byte-equal when these are. */
function treeBytes(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else out.push(`${p} ${createHash('sha256').update(readFileSync(join(dir, p))).digest('hex')}`);
    }
  };
  walk('');
  return out.sort();
}

/** The pause points a child build of scenario `seed` at `height` into `outDir` passes, in order (it runs to the end). */
function tracePoints(outDir: string, seed: number, height: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs(join(REPO, 'test', 'fixtures', 'incremental-child.ts')), outDir, String(seed), String(height), TRACE], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0 || !out.endsWith('done\n')) return reject(new Error(`traced child failed (exit ${code}): ${out}${err}`));
      const points = out.split('\n').flatMap((l) => (l.startsWith('point ') ? [l.slice('point '.length)] : []));
      resolve([...new Set(points)]); // a stage's updates after its half repeat `@half`
    });
  });
}

describe('SIGKILL during incremental builds (with a reorg): the next run resumes incrementally', () => {
  const sc = scenario(SEED, { reorg: true });
  let root: string;
  let out: string;
  let restore: () => void;
  let oldManifest: string;
  let newManifest: string;
  let freshTree: string[];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'snapshot-inckill-'));
    // Every case starts from this output, put back at the same path (the output's path is a build
    // option: a copy elsewhere would make the child's build a full one, not an incremental one).
    out = join(root, 'k', 'out');
    await buildSnapshot({ source: memorySource(NET, sc.before), outDir: out, height: sc.m, hosts: HOSTS });
    oldManifest = manifestOf(out);
    restore = keepOutput(out);
    const fresh = join(root, 'fresh', 'out');
    await buildSnapshot({ source: memorySource(NET, sc.after), outDir: fresh, height: sc.n, hosts: HOSTS });
    newManifest = manifestOf(fresh);
    freshTree = treeBytes(fresh);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('the cases below are every pause point an incremental run with a reorg passes', async () => {
    restore();
    expect(await tracePoints(out, SEED, sc.n)).toEqual(POINTS);
    expect(manifestOf(out)).toBe(newManifest);
  });

  it.each(POINTS.map((point, i) => [point, i < SWAPPED ? 'old' : 'new'] as const))(
    'killed at %s: the %s snapshot, never a mix; the next run goes on incrementally to a tree byte-equal to a full build',
    async (point, which) => {
      restore();
      await killIncrementalChildAt(out, SEED, sc.n, point);
      expect(manifestOf(out)).toBe(which === 'old' ? oldManifest : newManifest);
      expect(manifestMismatches(out)).toEqual([]);
      const r = await buildSnapshot({ source: memorySource(NET, sc.after), outDir: out, height: sc.n, hosts: HOSTS });
      expect({ mode: r.mode, fullReason: r.fullReason }).toEqual({ mode: 'incremental', fullReason: undefined });
      expect(r.height).toBe(sc.n);
      expect(manifestOf(out)).toBe(newManifest);
      expect(treeBytes(out)).toEqual(freshTree);
      // Resumed from where the published snapshot was: the reorg is rolled back (old snapshot), or nothing is left to do (new).
      if (which === 'old') expect(r.rolledBackTo).toBe(sc.m - sc.reorgDepth);
      else expect(r.written).toBe(0);
    },
  );

  it('killed twice (in the scan, then the next run halfway through its rollback): the third run still resumes incrementally', async () => {
    restore();
    await killIncrementalChildAt(out, SEED, sc.n, 'scan@half');
    await killIncrementalChildAt(out, SEED, sc.n, 'rollback@half'); // it passes its rollback again: it went back to the published snapshot first
    expect(manifestOf(out)).toBe(oldManifest);
    const r = await buildSnapshot({ source: memorySource(NET, sc.after), outDir: out, height: sc.n, hosts: HOSTS });
    expect({ mode: r.mode, fullReason: r.fullReason, rolledBackTo: r.rolledBackTo }).toEqual({ mode: 'incremental', fullReason: undefined, rolledBackTo: sc.m - sc.reorgDepth });
    expect(treeBytes(out)).toEqual(freshTree);
  });

  it('a first (full) build killed after its swap: the next run adopts its index and goes on incrementally', async () => {
    const first = join(root, 'first', 'out');
    await killIncrementalChildAt(first, SEED, sc.n, 'swapped');
    expect(manifestOf(first)).toBe(newManifest);
    const r = await buildSnapshot({ source: memorySource(NET, sc.after), outDir: first, height: sc.n, hosts: HOSTS });
    expect({ mode: r.mode, fullReason: r.fullReason, written: r.written }).toEqual({ mode: 'incremental', fullReason: undefined, written: 0 });
    expect(treeBytes(first)).toEqual(freshTree);
  });

  it('the block spill failing to open while the index is brought back: the build fails naming it and keeps the index; with the spill back, the next run resumes', async () => {
    restore();
    await killIncrementalChildAt(out, SEED, sc.n, 'names');
    const spill = `${out}.state/blocks.spill`;
    renameSync(spill, `${spill}.aside`);
    mkdirSync(spill); // open(2) fails with EISDIR: an error of the file system, not of the index
    const build = () => buildSnapshot({ source: memorySource(NET, sc.after), outDir: out, height: sc.n, hosts: HOSTS });
    await expect(build()).rejects.toThrow(/^block spill \S+blocks\.spill: .*EISDIR/);
    expect(existsSync(`${out}.state/lmdb`)).toBe(true);
    expect(manifestOf(out)).toBe(oldManifest);
    rmSync(spill, { recursive: true });
    renameSync(`${spill}.aside`, spill);
    const r = await build();
    expect({ mode: r.mode, fullReason: r.fullReason }).toEqual({ mode: 'incremental', fullReason: undefined });
    expect(treeBytes(out)).toEqual(freshTree);
  });

  it('killed after the scan with its block spill cut short: the index cannot be brought back, so the next run is a full build that says why', async () => {
    restore();
    await killIncrementalChildAt(out, SEED, sc.n, 'names');
    // The spill holds the bytes of the blocks to undo and of the published ones to apply again.
    truncateSync(`${out}.state/blocks.spill`, 0);
    const r = await buildSnapshot({ source: memorySource(NET, sc.after), outDir: out, height: sc.n, hosts: HOSTS });
    expect(r.mode).toBe('full');
    expect(r.fullReason).toMatch(/^the index cannot be brought back to the published snapshot: block spill .*blocks\.spill ends early at offset \d+$/);
    expect(treeBytes(out)).toEqual(freshTree);
  });
});
