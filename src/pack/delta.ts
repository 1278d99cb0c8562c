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
import { blobOf, encodeRecipe, Kind, sameBlob, type RecipeSegment } from '../contract/pack-format.js';
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
export class SegmentClipper {
  private readonly starts: number[] = [];
  /** The bytes the segments assemble. */
  readonly size: number;

  constructor(private readonly segments: readonly RecipeSegment[]) {
    let at = 0;
    for (const s of segments) {
      this.starts.push(at);
      at += lengthOf(s);
    }
    this.size = at;
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

/** The bytes that end a token: `,` `{` `}` `[` `]`. */
const DELIMITERS = [0x2c, 0x7b, 0x7d, 0x5b, 0x5d];

/** Where each token of b[from, to) ends: after each delimiter, and at `to`. */
function tokenEnds(b: Buffer, from: number, to: number): number[] {
  const part = b.subarray(from, to);
  const ends: number[] = [];
  for (const d of DELIMITERS) for (let i = part.indexOf(d); i >= 0; i = part.indexOf(d, i + 1)) ends.push(from + i + 1);
  ends.sort((x, y) => x - y);
  if (ends.at(-1) !== to) ends.push(to);
  return ends;
}

/** A short key of b[from, to) (its length and its first and last three bytes); equal tokens have equal keys. */
function tokenKey(b: Buffer, from: number, to: number): string {
  const n = to - from;
  return String.fromCharCode(n & 0xffff, n >>> 16, b[from] ?? 0, b[from + 1] ?? 0, b[from + 2] ?? 0, b[to - 3] ?? 0, b[to - 2] ?? 0, b[to - 1] ?? 0);
}

/** Candidates a token is looked for among (the same key) on each side of where the last run ended: bounds a document of many equal tokens. */
const CANDIDATES = 8;

/**
 * Of `at` (ascending places of one key in the old answer), the first at or after `after` that
 * `holds`, else the first before it that does, looking at no more than {@link CANDIDATES} on each side.
 */
function takeFrom(at: readonly number[] | undefined, after: number, holds: (a: number) => boolean): number | undefined {
  if (!at) return undefined;
  let lo = 0;
  let hi = at.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (at[mid]! < after) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < Math.min(at.length, lo + CANDIDATES); i++) if (holds(at[i]!)) return at[i];
  for (let i = 0; i < Math.min(lo, CANDIDATES); i++) if (holds(at[i]!)) return at[i];
  return undefined;
}

const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/**
 * Segments that assemble `bytes`, given the segments `previous` that assemble `old`. Their
 * common prefix and suffix are ranges; what lies between is cut into tokens after each comma and
 * bracket (a JSON document's members and elements), and each token of `bytes` there is taken from
 * `old` where `old` has it (following on from the last token taken when it can, so unchanged runs
 * stay one range), else it is new bytes. A name variant changes with each block in one number
 * (`expires_in`), its history in one number an entry: its delta is those numbers, the rest ranges.
 */
export function deltaSegments(previous: readonly RecipeSegment[], oldBytes: Uint8Array, newBytes: Uint8Array): RecipeSegment[] {
  const old = asBuffer(oldBytes);
  const bytes = asBuffer(newBytes);
  const max = Math.min(old.length, bytes.length);
  let prefix = 0;
  while (prefix < max && old[prefix] === bytes[prefix]) prefix++;
  let suffix = 0;
  while (suffix < max - prefix && old[old.length - 1 - suffix] === bytes[bytes.length - 1 - suffix]) suffix++;
  const oldEnd = old.length - suffix;
  const end = bytes.length - suffix;

  const where = new Map<string, number[]>();
  let from = prefix;
  for (const e of prefix < oldEnd ? tokenEnds(old, prefix, oldEnd) : []) {
    const key = tokenKey(old, from, e);
    const at = where.get(key);
    if (at) at.push(from);
    else where.set(key, [from]);
    from = e;
  }
  const clipper = new SegmentClipper(previous);
  const out: RecipeSegment[] = clipper.clip(0, prefix);
  let run: [number, number] | undefined; // [start, end) in old of the run being taken
  let fresh = prefix; // where in bytes the new bytes not yet emitted start
  const flush = (upTo: number) => {
    if (run) out.push(...clipper.clip(run[0], run[1]));
    else if (upTo > fresh) out.push({ type: 'literal', bytes: bytes.subarray(fresh, upTo) });
    run = undefined;
    fresh = upTo;
  };
  const equal = (at: number, from: number, len: number) => at + len <= oldEnd && old.compare(bytes, from, from + len, at, at + len) === 0;
  from = prefix;
  for (const e of prefix < end ? tokenEnds(bytes, prefix, end) : []) {
    const len = e - from;
    if (run && equal(run[1], from, len)) run[1] += len;
    else {
      const next = takeFrom(where.get(tokenKey(bytes, from, e)), run?.[1] ?? 0, (a) => equal(a, from, len));
      if (next !== undefined) {
        flush(from);
        run = [next, next + len];
      } else if (run) flush(from);
    }
    from = e;
    if (run) fresh = e;
  }
  flush(end);
  out.push(...clipper.clip(oldEnd, old.length));
  return joinSegments(out);
}

/**
 * The recipe of `bytes`, the new answer of `path`, over its answer in `base`, when that answer is
 * a stored document or a recipe of at most {@link DELTA_MAX_BYTES}, reads back whole (a damaged
 * one is not used) and the recipe is at most {@link DELTA_SAVES} of `storedBytes` (what the
 * document would take stored); else undefined.
 */
export async function deltaOf(base: PackReader, path: string, bytes: Uint8Array, storedBytes: number): Promise<RecipeSegment[] | undefined> {
  const rec = await base.lookup(path);
  if (!rec || rec.size > DELTA_MAX_BYTES || rec.kind === Kind.HEX) return undefined;
  let previous: RecipeSegment[];
  let old: Buffer;
  try {
    previous = rec.kind === Kind.RECIPE ? await base.recipe(path, rec) : [{ type: 'range', blob: blobOf(rec), start: 0, length: rec.size }];
    const pieces: Uint8Array[] = [];
    for await (const piece of base.assemble(previous, path)) pieces.push(piece);
    old = Buffer.concat(pieces);
  } catch {
    return undefined; // a previous answer that cannot be read (damaged): the document is stored, naming none of it
  }
  if (old.length !== rec.size) return undefined;
  const segments = deltaSegments(previous, old, bytes);
  return encodeRecipe(segments).length <= storedBytes * DELTA_SAVES ? segments : undefined;
}
