import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { recoverInterrupted } from '../src/publish/publish.js';
import { verifySnapshot } from '../src/verify/index.js';
import { manifestMismatches, nodeArgs } from './support/helpers.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'build-child.ts');

/** Runs the child build in `mode` and SIGKILLs it once it prints `onOutput`; rejects unless the kill happened there. */
function killBuild(outDir: string, how: { onOutput: string; mode: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs(CHILD), outDir, how.mode], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(how.onOutput)) child.kill('SIGKILL');
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' && out.includes(how.onOutput) ? resolve() : reject(new Error(`child was not killed at ${JSON.stringify(how.onOutput)} (exit ${code}, signal ${signal}): ${out}${err}`)),
    );
  });
}

describe('a killed build leaves the previous out/ intact', () => {
  let dir: string;
  let out: string;
  let manifest: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-kill-'));
    out = join(dir, 'out');
    await buildSnapshot({ source: demoSource(), outDir: out, height: 120 });
    manifest = readFileSync(join(out, MANIFEST_PATH), 'utf8');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['early in the scan', 'scan@half'],
    ['while writing files', 'txs and blocks@half'],
  ])('SIGKILL %s (%s)', async (_when, point) => {
    // Paused at the point (its writer threads go on), so the kill lands there and never after the build.
    await killBuild(out, { onOutput: `paused ${point}\n`, mode: `pause:${point}` });
    expect(readFileSync(join(out, MANIFEST_PATH), 'utf8')).toBe(manifest);
    expect(manifestMismatches(out)).toEqual([]);
  });

  it('the next build recovers without manual steps and leaves nothing behind', async () => {
    const r = await buildSnapshot({ source: demoSource(), outDir: out });
    expect(r.height).toBe(150);
    expect({ mode: r.mode, fullReason: r.fullReason }).toEqual({ mode: 'incremental', fullReason: undefined }); // from the published snapshot at 120
    expect(manifestMismatches(out)).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual(['out', 'out.releases', 'out.state']);
  });
});

describe('SIGKILL inside the publish, at every step', () => {
  let dir: string;
  let base: string;
  let oldManifest: string;
  let newManifest: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-publish-kill-'));
    base = join(dir, 'base');
    await buildSnapshot({ source: demoSource(), outDir: join(base, 'out'), height: 140 });
    oldManifest = manifestAt(join(base, 'out'));
    const fresh = join(dir, 'fresh');
    await buildSnapshot({ source: demoSource(), outDir: join(fresh, 'out') });
    newManifest = manifestAt(join(fresh, 'out'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The manifest without nginx.conf (it names the tree's absolute path, which differs between the copies). */
  const manifestAt = (out: string) =>
    readFileSync(join(out, MANIFEST_PATH), 'utf8')
      .split('\n')
      .filter((l) => !l.endsWith(' nginx.conf'))
      .join('\n');

  /** A copy of the base snapshot (out -> out.releases/<n>, out.state); `legacy`: out as a real directory, as older versions left it. */
  function copyBase(name: string, legacy: boolean): string {
    const d = join(dir, name);
    cpSync(base, d, { recursive: true, verbatimSymlinks: true });
    const out = join(d, 'out');
    if (legacy) {
      const release = realpathSync(out);
      rmSync(out);
      renameSync(release, out);
      rmSync(join(d, 'out.releases'), { recursive: true });
    }
    return out;
  }

  // The child's build is a full one (the copy's path is another build option than the base's).
  // Killed before the swap, the next run builds everything again; after it, the next run adopts
  // the index the child published with and goes on incrementally: at the same height with nothing
  // new, that run finds the adopted snapshot current and writes nothing.
  it.each([
    ['linked', false, 'old', 'full'],
    ['swapped', false, 'new', 'incremental'],
    ['removed-old', false, 'new', 'its recovery only'],
    ['swapped', true, 'new', 'its recovery only'],
  ] as const)('paused at %s (older real-directory out: %s): out is the %s snapshot and verifies; the next run: %s', async (step, legacy, which, rebuild) => {
    const out = copyBase(`${step}-${legacy}`, legacy);
    await killBuild(out, { onOutput: `paused ${step}`, mode: `pause:${step}` });
    expect(manifestAt(out)).toBe(which === 'old' ? oldManifest : newManifest);
    const v = await verifySnapshot(out);
    expect(v.problems).toEqual([]);
    expect(v.ok).toBe(true);
    // The next build (or its first step, the recovery) leaves the published release (and a spare) and nothing else.
    if (rebuild !== 'its recovery only') {
      const r = await buildSnapshot({ source: demoSource(), outDir: out });
      expect([r.height, r.mode, r.upToDate]).toEqual([150, rebuild, rebuild === 'incremental' ? true : undefined]);
      expect(manifestAt(out)).toBe(newManifest);
      expect(readdirSync(dirname(out)).sort()).toEqual(['out', 'out.releases', 'out.state']);
    } else recoverInterrupted(out);
    expect(readdirSync(join(dirname(out), 'out.releases')).length).toBe(2);
  });

  it('the one-time migration of an older real-directory out: killed in its window, out is briefly absent and the next run repairs it', async () => {
    const out = copyBase('moved-aside', true);
    await killBuild(out, { onOutput: 'paused moved-aside', mode: 'pause:moved-aside' });
    expect(existsSync(out)).toBe(false); // the documented window (once per output, between two renames)
    recoverInterrupted(out); // what the next build does first
    expect(manifestAt(out)).toBe(newManifest); // the finished publish was completed
    expect((await verifySnapshot(out)).ok).toBe(true);
  });
});
