/**
 * The tree's `_manifest.json` in a pack: a recipe over chunks of its lines, each chunk a blob of
 * its own (stored gzip). A chunk ends after a line whose path hashes to 0 modulo
 * {@link MANIFEST_CHUNK_LINES} (32-bit FNV-1a of the path's bytes), so where chunks end depends on
 * the paths alone: a run that changes some files changes the lines, and so the chunks, that hold
 * them, and an appending run stores only those. The others are the blobs of the previous
 * manifest's chunks, each matched by its first path, its length and its sha256 (the previous
 * chunks are read from the pack appended to, and hashed). The manifest is read in 1 MiB blocks,
 * never whole: a mainnet manifest is gigabytes.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { MANIFEST_PATH } from '../contract/layout.js';
import { Kind, type RecipeSegment } from '../contract/pack-format.js';
import type { PackReader } from './reader.js';
import type { PackWriter } from './writer.js';

/**
 * Lines a chunk holds on average (a power of 2): about 8.5 KB of a real chain's manifest. A block
 * changes lines all over it (its txs' and addresses' files), about one chunk in six to eight at 64 lines
 * a chunk on the 200k-tx real-profile chain, one in three at 256.
 */
export const MANIFEST_CHUNK_LINES = 64;
/** Lines a chunk holds at most, whatever the paths' hashes. */
const MAX_CHUNK_LINES = 16 * MANIFEST_CHUNK_LINES;
const NL = 0x0a;
const SPACE = 0x20;

/** The path of the manifest line at [start, end) of `b` (`<sha256> <size> <path>`), as bytes. */
function pathStart(b: Buffer, start: number, end: number): number {
  const at = b.indexOf(SPACE, start + 65);
  return at < 0 || at >= end ? end : at + 1;
}

function fnv1a(b: Buffer, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}

/** The chunks of the manifest file at `path`, in order, and the sha256 of all of it. */
export function* manifestChunks(path: string): Generator<Buffer, string> {
  const whole = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    let pending = Buffer.alloc(0);
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) {
      whole.update(buf.subarray(0, n));
      const b = pending.length ? Buffer.concat([pending, buf.subarray(0, n)]) : Buffer.from(buf.subarray(0, n));
      let from = 0;
      let lines = 0;
      for (let at = 0, nl; (nl = b.indexOf(NL, at)) >= 0; at = nl + 1) {
        lines++;
        if ((fnv1a(b, pathStart(b, at, nl), nl) & (MANIFEST_CHUNK_LINES - 1)) === 0 || lines === MAX_CHUNK_LINES) {
          yield b.subarray(from, nl + 1);
          from = nl + 1;
          lines = 0;
        }
      }
      // Lines since the last cut are read again with the next block (a chunk's lines are counted from its start).
      pending = b.subarray(from);
    }
    if (pending.length) yield pending;
  } finally {
    closeSync(fd);
  }
  return whole.digest('hex');
}

const firstPath = (chunk: Uint8Array): string => {
  const b = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const nl = b.indexOf(NL);
  const end = nl < 0 ? b.length : nl;
  return b.toString('latin1', pathStart(b, 0, end), end);
};

interface OldChunk {
  segment: RecipeSegment & { type: 'range' };
  /** The first 128 bits of the chunk's sha256 (as latin1): about 150 bytes a chunk in all, one chunk per 64 files. */
  digest: string;
}

const sha256Of = (bytes: Uint8Array): Buffer => createHash('sha256').update(bytes).digest();
/** An OldChunk's digest of a sha256. */
const digestOf = (sha256: Buffer): string => sha256.toString('latin1', 0, 16);

/** The previous manifest's chunks in `base` by first path (none when it is stored whole, by an older version or a merge). */
export async function previousChunks(base: PackReader): Promise<Map<string, OldChunk>> {
  const out = new Map<string, OldChunk>();
  const rec = await base.lookup(MANIFEST_PATH);
  if (!rec || rec.kind !== Kind.RECIPE) return out;
  // Whole blobs, one a chunk: the reader yields one piece a segment (nearby blobs read together).
  const chunks = (await base.recipe(MANIFEST_PATH, rec)).filter((s): s is OldChunk['segment'] => s.type === 'range' && s.start === 0 && s.length > 0);
  let i = 0;
  for await (const bytes of base.assemble(chunks, MANIFEST_PATH)) {
    out.set(firstPath(bytes), { segment: chunks[i++]!, digest: digestOf(sha256Of(bytes)) });
  }
  return out;
}

/**
 * Stores the manifest file at `path` in `writer` as `_manifest.json`: a recipe over its chunks,
 * those equal to one of `previous` taken from it. Returns the file's sha256 and the chunks kept.
 */
export function storeManifest(writer: PackWriter, path: string, previous: ReadonlyMap<string, OldChunk> = new Map()): { sha256: string; chunks: number; kept: number } {
  const segments: RecipeSegment[] = [];
  let kept = 0;
  const it = manifestChunks(path);
  let next = it.next();
  for (; !next.done; next = it.next()) {
    const chunk = next.value;
    const d = sha256Of(chunk);
    const old = previous.get(firstPath(chunk));
    if (old && old.segment.length === chunk.length && old.digest === digestOf(d)) {
      segments.push(old.segment);
      kept++;
      continue;
    }
    // Gzipped by the writer, on this thread: zlib's thread pool costs a chunk of 8 KB more CPU than its gzip.
    const blob = writer.store(chunk, true, { sha256: d.toString('hex') });
    segments.push({ type: 'range', blob, start: 0, length: chunk.length });
  }
  writer.addRecipe(MANIFEST_PATH, segments, { compress: true });
  return { sha256: next.value, chunks: segments.length, kept };
}
