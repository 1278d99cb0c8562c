// Builds of in-memory Namecoin regtest chains (test/chains.ts scenarios) into a temporary
// directory per test file: the tests that compare an incremental run with a full build byte for
// byte (incremental, block-splice, address-reuse) share them.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { buildSnapshot, type BuildOptions, type BuildReport } from '../src/site/build.js';
import { memorySource, type MemoryBlock } from '../src/source/memory.js';

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
export const build = (blocks: MemoryBlock[], outDir: string, height: number, extra: Partial<BuildOptions> = {}): Promise<BuildReport> =>
  buildSnapshot({ source: memorySource(NET, blocks), outDir, height, hosts: HOSTS, ...extra });
