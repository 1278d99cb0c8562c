// Checks shared by the pack build tests: a pack directory answers a tree's files byte for byte,
// and what files a pack directory holds.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { MANIFEST_PATH } from '../../src/contract/layout.js';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Encoding, Kind, PACK_POINTER, decodeRecipe, type RecipeSegment } from '../../src/contract/pack-format.js';
import { answerBytes, PackReader } from '../../src/pack/reader.js';
import { COALESCE_BYTES, COALESCE_GAP } from '../../src/contract/pack-reader.js';

/** The paths a tree's `_manifest.json` lists. */
export function manifestPaths(tree: string): string[] {
  return readFileSync(join(tree, MANIFEST_PATH), 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(' ')[2]!);
}

/**
 * The pack at `packDir` answers every path of the tree's manifest, and the manifest itself, with
 * the tree's bytes (with `gzip`, gzip answers decoded); it holds nothing else. With `listedIn`
 * (a pack build's private tree, which lists its txs' `.bin` and `.hex` without them), a file the
 * tree lacks is read from that tree (a tree build of the same chain).
 */
export async function expectPackAnswersTree(packDir: string, tree: string, acceptEncoding?: 'gzip', listedIn?: string): Promise<void> {
  const reader = await PackReader.open(packDir);
  try {
    const paths = [...manifestPaths(tree), MANIFEST_PATH];
    for (const path of paths) {
      const want = readFileSync(join(listedIn && !existsSync(join(tree, path)) ? listedIn : tree, path));
      const a = await reader.get(path, { acceptEncoding });
      expect(a, path).toBeDefined();
      const bytes = await answerBytes(a!);
      const got = a!.contentEncoding === 'gzip' ? gunzipSync(bytes) : Buffer.from(bytes);
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

/**
 * What dedup did in a pack, from its records (independent of the writer's own counts): entries of
 * kind 2 (recipes) and their stored bytes, against the gzip-6 size of the tree files they stand
 * for; stored entries that point inside a block's `.bin` blob (slices), per tree path.
 */
export async function dedupOf(packDir: string, tree: string): Promise<{ recipes: number; recipeStored: number; recipeGzip: number; slices: number }> {
  const reader = await PackReader.open(packDir);
  const out = { recipes: 0, recipeStored: 0, recipeGzip: 0, slices: 0 };
  try {
    const blockBlobs: { part: number; from: number; to: number }[] = [];
    const paths = manifestPaths(tree);
    for (const p of paths.filter((q) => /^block\/[0-9a-f]{64}\.bin$/.test(q))) {
      const r = (await reader.lookup(p))!;
      blockBlobs.push({ part: r.part, from: r.offset, to: r.offset + r.stored });
    }
    for (const p of paths) {
      const r = (await reader.lookup(p))!;
      if (r.kind === Kind.RECIPE) {
        out.recipes++;
        out.recipeStored += r.stored;
        out.recipeGzip += gzipSync(readFileSync(join(tree, p)), { level: 6 }).length;
      } else if (/^tx\/[0-9a-f]{64}\.(bin|hex)$/.test(p) && blockBlobs.some((b) => b.part === r.part && r.offset > b.from && r.offset + r.stored <= b.to)) out.slices++;
    }
  } finally {
    await reader.close();
  }
  return out;
}

/**
 * The range reads answering a recipe take, by the format's rule (docs/pack-format.md): its slot
 * and its own blob, then one read per group of consecutive range segments whose blobs lie in one
 * part within COALESCE_GAP of each other and COALESCE_BYTES in all (a blob inside the group's
 * range read again costs nothing).
 */
export function recipeReads(segments: readonly RecipeSegment[], gap: number, max: number): number {
  let reads = 2;
  let g: { part: number; from: number; to: number } | undefined;
  for (const s of segments) {
    if (s.type !== 'range') continue;
    const b = s.blob;
    if (g && g.part === b.part && b.offset >= g.from && b.offset + b.stored <= g.to) continue;
    reads++;
    g = { part: b.part, from: b.offset, to: b.offset + b.stored };
    let open = true;
    for (const t of segments.slice(segments.indexOf(s) + 1)) {
      if (!open || t.type !== 'range') continue;
      const c = t.blob;
      const from = Math.min(g.from, c.offset);
      const to = Math.max(g.to, c.offset + c.stored);
      const near = c.offset <= g.to + gap && c.offset + c.stored >= g.from - gap;
      if (c.part !== b.part || !near || to - from > max) open = false;
      else g = { part: b.part, from, to };
    }
  }
  return reads;
}

/** The segments of the recipe `path` stands for (its record must be of kind 2). */
export async function recipeOf(reader: PackReader, path: string): Promise<RecipeSegment[]> {
  const r = (await reader.lookup(path))!;
  const stored = await reader.blob(r, path);
  const bytes = r.encoding === Encoding.GZIP ? gunzipSync(stored) : stored;
  return decodeRecipe(bytes, path, 0);
}

/** The read bound of every recipe among `paths` of the pack in `packDir` (recipeReads of its segments). */
export async function recipeReadBounds(packDir: string, paths: readonly string[]): Promise<Map<string, number>> {
  const bounds = new Map<string, number>();
  const reader = await PackReader.open(packDir);
  try {
    for (const p of paths) if ((await reader.lookup(p))?.kind === Kind.RECIPE) bounds.set(p, recipeReads(await recipeOf(reader, p), COALESCE_GAP, COALESCE_BYTES));
  } finally {
    await reader.close();
  }
  return bounds;
}

/**
 * Per document among `paths` that is a recipe in `packDir`: how many of its bytes the recipe
 * holds as literals (the rest are ranges of other blobs). A document stored whole counts all
 * its bytes.
 */
export async function literalBytes(packDir: string, paths: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const reader = await PackReader.open(packDir);
  try {
    for (const p of paths) {
      const r = (await reader.lookup(p))!;
      if (r.kind !== Kind.RECIPE) out.set(p, r.size);
      else out.set(p, (await recipeOf(reader, p)).reduce((n, s) => n + (s.type === 'literal' ? s.bytes.length : 0), 0));
    }
  } finally {
    await reader.close();
  }
  return out;
}

/** `value: count` pairs of `xs`, by value. */
export function histogram(xs: readonly number[]): string {
  const h = new Map<number, number>();
  for (const x of xs) h.set(x, (h.get(x) ?? 0) + 1);
  return [...h].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}: ${v}`).join(', ');
}
