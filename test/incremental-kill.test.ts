import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { buildSnapshot } from '../src/site/build.js';
import { MANIFEST_PATH } from '../src/site/layout.js';
import { memorySource } from '../src/source/memory.js';
import { scenario } from './chains.js';
import { manifestMismatches } from './helpers.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'incremental-child.ts');
const NET = NETWORKS['namecoin-regtest'];
const HOSTS = ['netlify', 'cloudflare'] as const;
const SEED = 61;

/** Starts the child build and SIGKILLs it after `ms` (if it is still running). Resolves whether it was killed. */
function runKilledAfter(outDir: string, height: number, ms: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, outDir, String(SEED), String(height)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') resolve(true);
      else if (code === 0) resolve(false);
      else reject(new Error(`child exited ${code}: ${err.split('\n').filter((l) => !/^(scan|txs|addresses|names)/.test(l)).join('\n')}`));
    });
  });
}

function manifestOf(dir: string): string {
  return readFileSync(join(dir, MANIFEST_PATH), 'utf8');
}


describe('SIGKILL during incremental builds (with a reorg)', () => {
  const sc = scenario(SEED, { reorg: true });
  let root: string;
  let base: string;
  let oldManifest: string;
  let newManifest: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'snapshot-inckill-'));
    base = join(root, 'base');
    await buildSnapshot({ source: memorySource(NET, sc.before), outDir: join(base, 'out'), height: sc.m, hosts: HOSTS });
    oldManifest = manifestOf(join(base, 'out'));
    const fresh = join(root, 'fresh');
    await buildSnapshot({ source: memorySource(NET, sc.after), outDir: join(fresh, 'out'), height: sc.n, hosts: HOSTS });
    newManifest = manifestOf(join(fresh, 'out'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it.each([300, 800, 1300, 1900, 2600, 3500])(
    'killed after %i ms: the old or the new snapshot, never a mix; the next run recovers',
    async (ms) => {
      const dir = join(root, `k${ms}`);
      cpSync(base, dir, { recursive: true });
      const out = join(dir, 'out');
      await runKilledAfter(out, sc.n, ms);
      const now = manifestOf(out);
      expect([oldManifest, newManifest]).toContain(now);
      expect(manifestMismatches(out)).toEqual([]);
      const r = await buildSnapshot({ source: memorySource(NET, sc.after), outDir: out, height: sc.n, hosts: HOSTS });
      expect(manifestOf(out)).toBe(newManifest);
      expect(manifestMismatches(out)).toEqual([]);
      expect(['full', 'incremental']).toContain(r.mode);
    },
  );
});
