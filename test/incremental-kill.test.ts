import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { buildSnapshot } from '../src/site/build.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { memorySource } from '../src/source/memory.js';
import { scenario } from './chains.js';
import { killIncrementalChildAt, manifestMismatches } from './helpers.js';

const NET = NETWORKS['namecoin-regtest'];
const HOSTS = ['netlify', 'cloudflare'] as const;
const SEED = 61;


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

  it.each([
    ['scan@half', 'old'],
    ['staging', 'old'],
    ['txs and blocks@half', 'old'],
    ['names', 'old'],
    ['linked', 'old'],
    ['swapped', 'new'],
  ] as const)(
    'killed at %s: the %s snapshot, never a mix; the next run recovers',
    async (point, which) => {
      const dir = join(root, `k-${point.replace(/\W/g, '-')}`);
      cpSync(base, dir, { recursive: true, verbatimSymlinks: true });
      const out = join(dir, 'out');
      await killIncrementalChildAt(out, SEED, sc.n, point);
      expect(manifestOf(out)).toBe(which === 'old' ? oldManifest : newManifest);
      expect(manifestMismatches(out)).toEqual([]);
      const r = await buildSnapshot({ source: memorySource(NET, sc.after), outDir: out, height: sc.n, hosts: HOSTS });
      expect(manifestOf(out)).toBe(newManifest);
      expect(manifestMismatches(out)).toEqual([]);
      expect(['full', 'incremental']).toContain(r.mode);
    },
  );
});
