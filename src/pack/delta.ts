/**
 * A changed document as a recipe over its previous answer, in a pack that appends to another.
 *
 * Most documents an appending run rewrites differ from their previous answer in a few bytes:
 * every name document and each of its variants changes with every block, in `expires_in` alone.
 * Stored whole, each such run would hold them all again (on the 200k-tx real-profile chain, 67 MB
 * of gzip a block for 50,400 variants). As a recipe, the bytes the document shares with its
 * previous answer at its start and at its end are ranges of the blobs that answer already points
 * at: its stored blob, or the segments of its recipe, clipped. Only what lies between is new.
 * Range segments thus always name stored blobs (never a recipe), so a delta of a delta costs a
 * reader what the first did, and the segment count stays about three however many runs append.
 */
import { encodeRecipe, Kind, type BlobRef, type RecipeSegment } from '../contract/pack-format.js';
import type { PackReader } from './reader.js';

/** Previous answers larger than this are not read to be compared (a hub address's is megabytes). */
export const DELTA_MAX_BYTES = 64 * 1024;

/** A delta is kept when its recipe is at most this share of the bytes the document would store. */
export const DELTA_SAVES = 0.5;

const lengthOf = (s: RecipeSegment): number => (s.type === 'literal' ? s.bytes.length : s.length);

/** Bytes [from, to) of the answer `segments` assemble, as segments. */
export function clipSegments(segments: readonly RecipeSegment[], from: number, to: number): RecipeSegment[] {
  return new SegmentClipper(segments).clip(from, to);
}

/** Clips one list of segments many times (a binary search for each clip's first segment). */
class SegmentClipper {
  private readonly starts: number[] = [];

  constructor(private readonly segments: readonly RecipeSegment[]) {
    let at = 0;
    for (const s of segments) {
      this.starts.push(at);
      at += lengthOf(s);
    }
  }

  clip(from: number, to: number): RecipeSegment[] {
    const out: RecipeSegment[] = [];
    let lo = 0;
    let hi = this.starts.length;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if (this.starts[mid]! <= from) lo = mid;
      else hi = mid;
    }
    for (let i = lo; i < this.segments.length && this.starts[i]! < to; i++) {
      const s = this.segments[i]!;
      const at = this.starts[i]!;
      const a = Math.max(from, at);
      const b = Math.min(to, at + lengthOf(s));
      if (a < b) out.push(s.type === 'literal' ? { type: 'literal', bytes: s.bytes.subarray(a - at, b - at) } : { type: 'range', blob: s.blob, start: s.start + a - at, length: b - a });
    }
    return out;
  }
}

const sameBlob = (a: BlobRef, b: BlobRef): boolean => a.part === b.part && a.offset === b.offset && a.stored === b.stored;

/** `segments` with empty ones dropped, adjacent literals joined and adjacent ranges of one blob that meet joined. */
export function joinSegments(segments: readonly RecipeSegment[]): RecipeSegment[] {
  const out: RecipeSegment[] = [];
  for (const s of segments) {
    if (lengthOf(s) === 0) continue;
    const last = out.at(-1);
    if (last?.type === 'literal' && s.type === 'literal') out[out.length - 1] = { type: 'literal', bytes: Buffer.concat([last.bytes, s.bytes]) };
    else if (last?.type === 'range' && s.type === 'range' && sameBlob(last.blob, s.blob) && last.start + last.length === s.start) {
      out[out.length - 1] = { ...last, length: last.length + s.length };
    } else out.push(s);
  }
  return out;
}

/** Where each token of `b` ends: after each `,`, `{`, `}`, `[` and `]`, and at its end. */
function tokenEnds(b: Uint8Array): number[] {
  const ends: number[] = [];
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    // , { } [ ]
    if (c === 0x2c || c === 0x7b || c === 0x7d || c === 0x5b || c === 0x5d) ends.push(i + 1);
  }
  if (ends.at(-1) !== b.length) ends.push(b.length);
  return ends;
}

/**
 * Segments that assemble `bytes`, given the segments `previous` that assemble `old`. Both are cut
 * into tokens after each comma and bracket (a JSON document's members and elements); each token of `bytes`
 * is taken from `old` where `old` has it (following on from the last token taken when it can, so
 * unchanged runs stay one range), else it is new bytes. A name's history changes with each block
 * in one number an entry (`expires_in`): its delta is that number an entry, the rest ranges.
 */
export function deltaSegments(previous: readonly RecipeSegment[], old: Uint8Array, bytes: Uint8Array): RecipeSegment[] {
  const where = new Map<string, number[]>();
  let from = 0;
  for (const end of tokenEnds(old)) {
    const key = Buffer.from(old.buffer, old.byteOffset + from, end - from).toString('latin1');
    const at = where.get(key);
    if (at) at.push(from);
    else where.set(key, [from]);
    from = end;
  }
  const clipper = new SegmentClipper(previous);
  const out: RecipeSegment[] = [];
  let run: [number, number] | undefined; // [start, end) in old of the run being taken
  let fresh = 0; // start in bytes of the new bytes not yet emitted
  const flush = (upTo: number) => {
    if (run) out.push(...clipper.clip(run[0], run[1]));
    else if (upTo > fresh) out.push({ type: 'literal', bytes: bytes.subarray(fresh, upTo) });
    run = undefined;
    fresh = upTo;
  };
  from = 0;
  for (const end of tokenEnds(bytes)) {
    const len = end - from;
    const token = bytes.subarray(from, end);
    if (run && run[1] + len <= old.length && Buffer.compare(token, old.subarray(run[1], run[1] + len)) === 0) run[1] += len;
    else {
      const at = where.get(Buffer.from(token.buffer, token.byteOffset, len).toString('latin1'));
      const next = at && (at.find((a) => a >= (run?.[1] ?? 0)) ?? at[0]!);
      if (next !== undefined) {
        flush(from);
        run = [next, next + len];
      } else if (run) flush(from);
    }
    from = end;
    if (run) fresh = end;
  }
  flush(bytes.length);
  return joinSegments(out);
}

/**
 * The recipe of `bytes`, the new answer of `path`, over its answer in `base`, when that answer is
 * a stored document or a recipe of at most {@link DELTA_MAX_BYTES} and the recipe is at most
 * {@link DELTA_SAVES} of `storedBytes` (what the document would take stored); else undefined.
 */
export async function deltaOf(base: PackReader, path: string, bytes: Uint8Array, storedBytes: number): Promise<RecipeSegment[] | undefined> {
  const rec = await base.lookup(path);
  if (!rec || rec.size > DELTA_MAX_BYTES || rec.kind === Kind.HEX) return undefined;
  const previous: RecipeSegment[] =
    rec.kind === Kind.RECIPE ? await base.recipe(path, rec) : [{ type: 'range', blob: { part: rec.part, offset: rec.offset, stored: rec.stored, encoding: rec.encoding, crc: rec.crc }, start: 0, length: rec.size }];
  const pieces: Uint8Array[] = [];
  for await (const piece of base.assemble(previous, path)) pieces.push(piece);
  const old = Buffer.concat(pieces);
  const segments = deltaSegments(previous, old, bytes);
  return encodeRecipe(segments).length <= storedBytes * DELTA_SAVES ? segments : undefined;
}
