import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { buildSnapshot } from '../src/site/build.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { memorySource } from '../src/source/memory.js';
import { scenario } from './chains.js';
import { killIncrementalChildAt, manifestMismatches } from './helpers.js';
import { keepOutput } from './memory-builds.js';

const NET = NETWORKS['namecoin-regtest'];
const HOSTS = ['netlify', 'cloudflare'] as const;
const SEED = 61;


function manifestOf(dir: string): string {
  return readFileSync(join(dir, MANIFEST_PATH), 'utf8');
}


describe('SIGKILL during incremental builds (with a reorg)', () => {
  const sc = scenario(SEED, { reorg: true });
  let root: string;
  let out: string;
  let restore: () => void;
  let oldManifest: string;
  let newManifest: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'snapshot-inckill-'));
    // Every case starts from this output, put back at the same path (the output's path is a build
    // option: a copy elsewhere would make the child's build a full one, not an incremental one).
    out = join(root, 'k', 'out');
    await buildSnapshot({ source: memorySource(NET, sc.before), outDir: out, height: sc.m, hosts: HOSTS });
    oldManifest = manifestOf(out);
    restore = keepOutput(out);
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
      restore();
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
