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
import { gzipSync } from 'node:zlib';
import { MANIFEST_PATH } from '../contract/layout.js';
import { Encoding, Kind, type RecipeSegment } from '../contract/pack-format.js';
import { onPath, readAll } from '../runtime/io-error.js';
import { OutFile } from './out-file.js';
import type { PackReader } from './reader.js';
import { keepsGzip, type PackWriter } from './writer.js';

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

export interface OldChunk {
  segment: RecipeSegment & { type: 'range' };
  /** The first 128 bits of the chunk's sha256 (as latin1): about 150 bytes a chunk in all, one chunk per 64 files. */
  digest: string;
}

const sha256Of = (bytes: Uint8Array): Buffer => createHash('sha256').update(bytes).digest();
/** An OldChunk's digest of a sha256. */
const digestOf = (sha256: Buffer): string => sha256.toString('latin1', 0, 16);

/** The segment of the previous manifest's chunk that `chunk` (of sha256 `d`) is again: same first path, length and digest. */
function previousSegment(previous: ReadonlyMap<string, OldChunk>, chunk: Buffer, d: Buffer): OldChunk['segment'] | undefined {
  const old = previous.get(firstPath(chunk));
  return old && old.segment.length === chunk.length && old.digest === digestOf(d) ? old.segment : undefined;
}

/** A pause prepareManifest and previousChunks take every PAUSE_EVERY chunks (a thread's other work then goes first). */
export type Pause = () => Promise<void>;
const PAUSE_EVERY = 64;

/** The previous manifest's chunks in `base` by first path (none when it is stored whole, by an older version or a merge). */
export async function previousChunks(base: PackReader, pause?: Pause): Promise<Map<string, OldChunk>> {
  const out = new Map<string, OldChunk>();
  const rec = await base.lookup(MANIFEST_PATH);
  if (!rec || rec.kind !== Kind.RECIPE) return out;
  // Whole blobs, one a chunk: the reader yields one piece a segment (nearby blobs read together).
  const chunks = (await base.recipe(MANIFEST_PATH, rec)).filter((s): s is OldChunk['segment'] => s.type === 'range' && s.start === 0 && s.length > 0);
  let i = 0;
  for await (const bytes of base.assemble(chunks, MANIFEST_PATH)) {
    out.set(firstPath(bytes), { segment: chunks[i++]!, digest: digestOf(sha256Of(bytes)) });
    if (pause && i % PAUSE_EVERY === 0) await pause();
  }
  return out;
}

/** How a chunk prepareManifest made is stored: its bytes, their gzip, or the previous manifest's blob of the same bytes. */
export const ChunkAs = { IDENTITY: 0, GZIP: 1, PREVIOUS: 2 } as const;
export type ChunkAs = (typeof ChunkAs)[keyof typeof ChunkAs];

/**
 * The manifest's chunks made ready to store off the main thread (prepareManifest): per chunk its
 * size, how it is stored (ChunkAs), the size of its bytes as stored and its sha256 (32 bytes a
 * chunk, in `shas`); the bytes stored one after the other in a scratch file; the previous
 * manifest's segments of the chunks kept from it, in order.
 */
export interface PreparedManifest {
  /** The whole file's sha256 (hex). */
  sha256: string;
  sizes: Float64Array;
  as: Uint8Array;
  stored: Float64Array;
  shas: Uint8Array;
  previous: OldChunk['segment'][];
}

/**
 * The chunks of the manifest at `path` hashed, the ones not among `previous` (previousChunks's)
 * gzipped (at `gzipLevel`, kept as the writer would keep it: keepsGzip with `keepGzipRatio`) and
 * their stored bytes written to `scratch`, for storePreparedManifest: on packFromTree's read thread
 * (tree-read-worker.ts), which lets its reads go first (`pause`), or on the main thread.
 */
export async function prepareManifest(path: string, scratch: string, gzipLevel: number, keepGzipRatio: number, previous: ReadonlyMap<string, OldChunk> = new Map(), pause?: Pause): Promise<PreparedManifest> {
  const sizes: number[] = [];
  const as: ChunkAs[] = [];
  const stored: number[] = [];
  const shas: Buffer[] = [];
  const kept: OldChunk['segment'][] = [];
  const out = new OutFile(scratch, { scratch: true });
  try {
    const it = manifestChunks(path);
    let next = it.next();
    for (; !next.done; next = it.next()) {
      const chunk = next.value;
      if (pause && sizes.length % PAUSE_EVERY === PAUSE_EVERY - 1) await pause();
      const d = sha256Of(chunk);
      const old = previousSegment(previous, chunk, d);
      sizes.push(chunk.length);
      shas.push(d);
      if (old) {
        as.push(ChunkAs.PREVIOUS);
        stored.push(0);
        kept.push(old);
        continue;
      }
      const z = gzipSync(chunk, { level: gzipLevel });
      const gzip = keepsGzip(z.length, chunk.length, keepGzipRatio);
      out.write(gzip ? z : chunk);
      as.push(gzip ? ChunkAs.GZIP : ChunkAs.IDENTITY);
      stored.push(gzip ? z.length : chunk.length);
    }
    return { sha256: next.value, sizes: Float64Array.from(sizes), as: Uint8Array.from(as), stored: Float64Array.from(stored), shas: new Uint8Array(Buffer.concat(shas)), previous: kept };
  } finally {
    out.close();
  }
}

/**
 * Stores the chunks prepareManifest made (`prepared`, its stored bytes in `scratch`) in `writer`
 * as `_manifest.json`: a recipe over them, those equal to a previous chunk that chunk's blob.
 * Returns the file's sha256 and the chunks kept.
 */
export function storePreparedManifest(writer: PackWriter, prepared: PreparedManifest, scratch: string): { sha256: string; chunks: number; kept: number } {
  const segments: RecipeSegment[] = [];
  const what = 'manifest chunks scratch file';
  const fd = onPath(scratch, what, () => openSync(scratch, 'r'));
  try {
    let buf = Buffer.allocUnsafe(1 << 16);
    let kept = 0;
    let at = 0;
    prepared.sizes.forEach((size, i) => {
      const as = prepared.as[i] as ChunkAs;
      if (as === ChunkAs.PREVIOUS) return void segments.push(prepared.previous[kept++]!);
      const n = prepared.stored[i]!;
      if (n > buf.length) buf = Buffer.allocUnsafe(n);
      readAll(fd, buf, n, at, scratch, what);
      at += n;
      const sha256 = Buffer.from(prepared.shas.buffer, prepared.shas.byteOffset + 32 * i, 32).toString('hex');
      const blob = writer.storeEncoded(sha256, buf.subarray(0, n), as === ChunkAs.GZIP ? Encoding.GZIP : Encoding.IDENTITY);
      segments.push({ type: 'range', blob, start: 0, length: size });
    });
  } finally {
    closeSync(fd);
  }
  writer.addRecipe(MANIFEST_PATH, segments, { compress: true });
  return { sha256: prepared.sha256, chunks: segments.length, kept: prepared.previous.length };
}
