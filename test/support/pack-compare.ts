// Checks shared by the pack build tests: a pack directory answers a tree's files byte for byte,
// and what files a pack directory holds.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { MANIFEST_PATH } from '../../src/contract/layout.js';
import { PACK_POINTER } from '../../src/contract/pack-format.js';
import { answerBytes, PackReader } from '../../src/pack/reader.js';

/** The paths a tree's `_manifest.json` lists. */
export function manifestPaths(tree: string): string[] {
  return readFileSync(join(tree, MANIFEST_PATH), 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(' ')[2]!);
}

/** The pack at `packDir` answers every path of the tree's manifest, and the manifest itself, with the tree's bytes; it holds nothing else. */
export async function expectPackAnswersTree(packDir: string, tree: string): Promise<void> {
  const reader = await PackReader.open(packDir);
  try {
    const paths = [...manifestPaths(tree), MANIFEST_PATH];
    for (const path of paths) {
      const want = readFileSync(join(tree, path));
      const a = await reader.get(path);
      expect(a, path).toBeDefined();
      const got = Buffer.from(await answerBytes(a!));
      if (!got.equals(want)) expect(got.toString('latin1'), path).toBe(want.toString('latin1'));
    }
    expect(reader.header.entries).toBe(paths.length);
  } finally {
    await reader.close();
  }
}

/** Two packs give the same answer for every path of `paths`. */
export async function expectSameAnswers(a: string, b: string, paths: readonly string[]): Promise<void> {
  const ra = await PackReader.open(a);
  const rb = await PackReader.open(b);
  try {
    expect(ra.header.entries).toBe(rb.header.entries);
    for (const p of paths) {
      const x = await ra.get(p);
      const y = await rb.get(p);
      expect(x === undefined, p).toBe(y === undefined);
      if (x && y) expect(Buffer.from(await answerBytes(x)).equals(await answerBytes(y)), p).toBe(true);
    }
  } finally {
    await ra.close();
    await rb.close();
  }
}

/** The index `pack.json` names and the part files it lists. */
export async function packFiles(packDir: string): Promise<{ index: string; parts: string[] }> {
  const r = await PackReader.open(packDir);
  await r.close();
  return { index: r.index, parts: r.parts.map((p) => p.name) };
}

/** The entries of a pack directory, sorted, with pack.json left out. */
/** The host glue and the UI's static files a pack build writes beside the pack (top-level entries). */
export const PACK_GLUE_TOP = ['_netlify', '_pack-worker', 'netlify.toml', 'index.html', 'assets'];

export function packDirEntries(packDir: string): string[] {
  return readdirSync(packDir)
    .filter((e) => e !== PACK_POINTER && !PACK_GLUE_TOP.includes(e))
    .sort();
}
