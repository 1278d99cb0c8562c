// Builds of in-memory Namecoin regtest chains (test/support/chains.ts scenarios) into a temporary
// directory per test file: the tests that compare an incremental run with a full build byte for
// byte (incremental, block-splice, address-reuse) share them.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { NETWORKS } from '../../src/chain/networks.js';
import { MANIFEST_PATH } from '../../src/contract/layout.js';
import { buildSnapshot, type BuildHooks, type BuildOptions, type BuildReport } from '../../src/site/build.js';
import { memorySource, type MemoryBlock } from '../../src/source/memory.js';

export const NET = NETWORKS['namecoin-regtest'];
// nginx.conf names the tree's absolute path; leave it out so trees in different dirs compare equal.
export const HOSTS = ['netlify', 'cloudflare'] as const;

/** A directory made before the file's tests and removed after them; `dir(...parts)` is a path in it. */
export function tempDir(prefix: string): (...parts: string[]) => string {
  let root = '';
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  return (...parts) => join(root, ...parts);
}

/** The tree's `_manifest.json` text. */
export const manifest = (dir: string): string => readFileSync(join(dir, MANIFEST_PATH), 'utf8');

/** Builds `blocks` (in memory) to `height` into `outDir`. */
export const build = (blocks: MemoryBlock[], outDir: string, height: number, extra: Partial<BuildOptions> = {}, hooks?: BuildHooks): Promise<BuildReport> =>
  buildSnapshot({ source: memorySource(NET, blocks), outDir, height, hosts: HOSTS, ...extra }, hooks);

/**
 * Keeps a copy of the output `out` with its `out.releases` and `out.state` (one `cp -a`: the
 * hard links between releases and the symlinks are kept); the function returned puts that copy
 * back at the same path, replacing what is there. The same path because the output's path is a
 * build option: a copy elsewhere would make the next build a full one. Lets the cases of a file
 * start from one prepared state instead of building it again each.
 */
export function keepOutput(out: string): () => void {
  const family = [out, `${out}.releases`, `${out}.state`].filter((p) => existsSync(p));
  const saved = mkdtempSync(join(dirname(out), '.kept-'));
  const cp = (from: string[], to: string) => {
    const r = spawnSync('cp', ['-a', ...from, to], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`cp -a ${from.join(' ')} ${to}: ${r.stderr}`);
  };
  cp(family, saved);
  return () => {
    for (const p of [out, `${out}.releases`, `${out}.state`]) rmSync(p, { recursive: true, force: true });
    cp(family.map((p) => join(saved, basename(p))), dirname(out));
  };
}
