/**
 * The pack reader without Node APIs (docs/pack-format.md), shipped as is to edge runtimes
 * (workerd, Deno) by src/hosts/ship.ts and bundled into the browsing UI (src/ui/pack.ts); it sits in
 * src/contract, beside the codec, so both layers can import it: bytes come from a RangeSource, gzip is undone with the
 * web-standard DecompressionStream unless the caller passes its own, CRC-32 is the codec's.
 * Opening reads `pack.json` and the first 16 KiB of the index (header and part table), which stay
 * cached; a lookup then costs at most one range read of its directory slot (none when the slot is
 * among the recently used ones) and one of its blob. Every range read is counted.
 */
import {
  Encoding,
  Kind,
  PACK_POINTER,
  PART_HEADER_SIZE,
  RECORD_SIZE,
  ROOT_READ,
  SLOT_HEADER,
  checkSlot,
  crc32 as codecCrc32,
  decodeHeader,
  decodePartTable,
  decodePointer,
  decodeRecipe,
  decodeRecord,
  findInSlot,
  hexBytes,
  packKey,
  slotOf,
  sameStored,
  slotSize,
  type BlobRef,
  type PackHeader,
  type PackRecord,
  type PartInfo,
  type RecipeSegment,
} from './pack-format.js';
import { PackCorruptError, acceptsGzip, type GetOptions, type PackAnswer } from './pack-answer.js';
import type { RangeSource } from './pack-source.js';
import { TwoGenerationCache } from '../chain/two-gen-cache.js';

export interface CoreOptions {
  /** Directory slots kept after use: up to this many, the most recently used (default 64). */
  slotCache?: number;
  /** CRC-32 of bytes, continuing from `start` (default: the codec's; Node passes zlib's, which is faster). */
  crc32?: (bytes: Uint8Array, start?: number) => number;
  /** Decodes one gzip member (default: DecompressionStream). */
  gunzip?: (bytes: Uint8Array) => Uint8Array | Promise<Uint8Array>;
  /**
   * Bytes of decoded blobs that recipes' ranges name kept for other recipes, least recently used
   * first out (default 0: only the last one). For a reader that assembles many recipes over the
   * same tx documents (verify: each is in a few address documents, a hub's in thousands).
   */
  decodedCache?: number;
}

/** One gzip member decoded with the web-standard DecompressionStream (workerd, Deno, Node ≥ 18). */
export async function webGunzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** What opening a pack reads: the current index's name, header and part table. */
export interface PackRoot {
  index: string;
  header: PackHeader;
  parts: readonly PartInfo[];
  /** Reads it took (pack.json, the root, the rest of a large part table). */
  reads: number;
}

/** The index `pack.json` names. */
export async function readPointer(source: RangeSource): Promise<string> {
  return decodePointer(await source.readAll(PACK_POINTER), source.describe(PACK_POINTER)).index;
}

/** Reads the root of `index` (header and part table). */
export async function readRoot(source: RangeSource, index: string): Promise<PackRoot> {
  const where = source.describe(index);
  let reads = 1;
  let root = await source.read(index, 0, ROOT_READ);
  const header = decodeHeader(root, where);
  const tableEnd = header.partTableOffset + header.partTableLength;
  if (tableEnd > root.length) {
    root = await source.read(index, header.partTableOffset, header.partTableLength);
    reads++;
  } else root = root.subarray(header.partTableOffset, tableEnd);
  const parts = decodePartTable(root, header.partCount, where, header.partTableOffset);
  return { index, header, parts, reads };
}

/** Blobs of one recipe this close to each other in a part are fetched with one range read… */
export const COALESCE_GAP = 64 * 1024;
/** …of at most this many bytes. */
export const COALESCE_BYTES = 1024 * 1024;

/**
 * The byte range [from, to) of the read that fetches the blob of range segment `i` and of as many
 * of the range segments after it as lie in the same part, each within COALESCE_GAP of the range
 * so far, the whole within COALESCE_BYTES (segment `i`'s blob alone when larger).
 */
export function coalesce(segments: readonly RecipeSegment[], i: number): [number, number] {
  const first = segments[i] as RecipeSegment & { type: 'range' };
  let from = first.blob.offset;
  let to = from + first.blob.stored;
  for (let j = i + 1; j < segments.length; j++) {
    const s = segments[j]!;
    if (s.type === 'literal') continue;
    const b = s.blob;
    if (b.part !== first.blob.part) break;
    const lo = Math.min(from, b.offset);
    const hi = Math.max(to, b.offset + b.stored);
    const gap = Math.max(b.offset - to, from - (b.offset + b.stored), 0);
    if (gap > COALESCE_GAP || hi - lo > COALESCE_BYTES) break;
    from = lo;
    to = hi;
  }
  return [from, to];
}

export class PackCore {
  /** Range reads issued since open (pack.json and the root included); tests and benches read it. */
  reads = 0;
  bytesRead = 0;
  readonly index: string;
  readonly header: PackHeader;
  readonly parts: readonly PartInfo[];
  /** Checked directory slots by number (two generations of half the slotCache each; none when it is 0). */
  private readonly slots: TwoGenerationCache<number, { bytes: Uint8Array; count: number }> | undefined;
  private readonly crc: (bytes: Uint8Array, start?: number) => number;
  private readonly gunzipFn: (bytes: Uint8Array) => Uint8Array | Promise<Uint8Array>;
  /** Decoded blobs by place (decodedCache), with the reference they were checked against. */
  private readonly decodedBlobs: TwoGenerationCache<string, { blob: BlobRef; bytes: Uint8Array }> | undefined;
  private readonly decodedMax: number;

  constructor(
    readonly source: RangeSource,
    root: PackRoot,
    opts: CoreOptions = {},
  ) {
    this.index = root.index;
    this.header = root.header;
    this.parts = root.parts;
    this.reads = root.reads;
    const slotCache = opts.slotCache ?? 64;
    this.slots = slotCache > 0 ? new TwoGenerationCache(Math.ceil(slotCache / 2)) : undefined;
    this.crc = opts.crc32 ?? codecCrc32;
    this.gunzipFn = opts.gunzip ?? webGunzip;
    this.decodedMax = opts.decodedCache ?? 0;
    this.decodedBlobs = this.decodedMax > 0 ? new TwoGenerationCache(this.decodedMax / 2, (e) => e.bytes.length) : undefined;
  }

  /** Opens the pack `source` holds (`pack.json` names its index). */
  static async openSource(source: RangeSource, opts: CoreOptions = {}): Promise<PackCore> {
    const root = await readRoot(source, await readPointer(source));
    root.reads++;
    return new PackCore(source, root, opts);
  }

  async close(): Promise<void> {
    await this.source.close();
  }

  protected async range(name: string, offset: number, length: number): Promise<Uint8Array> {
    this.reads++;
    const b = await this.source.read(name, offset, length);
    this.bytesRead += b.length;
    return b;
  }

  /** The directory record of `path`, or undefined (at most one range read). */
  async lookup(path: string): Promise<PackRecord | undefined> {
    const key = packKey(path);
    const h = this.header;
    const s = slotOf(key, h.bucketBits);
    const size = slotSize(h);
    const base = h.slotsOffset + s * size;
    let slot = this.slots?.get(s);
    if (!slot) {
      const bytes = await this.range(this.index, base, size);
      const count = checkSlot(bytes, h.slotCapacity, this.source.describe(this.index), base, this.crc);
      slot = { bytes, count };
      this.slots?.set(s, slot);
    }
    return findInSlot(slot.bytes, slot.count, key, this.source.describe(this.index), base);
  }

  /** Where blob `b` lies: its part's name, checked to be inside the part. */
  private partOf(b: BlobRef, what: string): string {
    const part = this.parts[b.part];
    if (!part) throw new Error(`${this.source.describe(this.index)}: ${what} points at part ${b.part}; the pack has ${this.parts.length}`);
    if (b.offset < PART_HEADER_SIZE || b.offset + b.stored > part.size) {
      throw new Error(`${this.source.describe(part.name)}: ${what} points at bytes ${b.offset}–${b.offset + b.stored - 1}, outside the part's ${part.size} bytes`);
    }
    return part.name;
  }

  /** `bytes` as read for blob `b`, checked against its length and CRC-32. */
  private checked(b: BlobRef, bytes: Uint8Array, what: string): Uint8Array {
    const file = this.source.describe(this.parts[b.part]!.name);
    if (bytes.length !== b.stored) throw new PackCorruptError(file, b.offset, b.stored, `${what}: the part ends after ${bytes.length} of them`);
    if (this.crc(bytes) !== b.crc) throw new PackCorruptError(file, b.offset, b.stored, what);
    return bytes;
  }

  /** A blob's stored bytes, checked against its CRC-32 (one range read). */
  async blob(b: BlobRef, what: string): Promise<Uint8Array> {
    const name = this.partOf(b, what);
    return this.checked(b, b.stored === 0 ? new Uint8Array(0) : await this.range(name, b.offset, b.stored), what);
  }

  private async decoded(b: BlobRef, what: string): Promise<Uint8Array> {
    const stored = await this.blob(b, what);
    return b.encoding === Encoding.IDENTITY ? stored : this.gunzip(stored, b, what);
  }

  /** The answer for a tree path, or undefined when the pack has no such file. */
  async get(path: string, opts: GetOptions = {}): Promise<PackAnswer | undefined> {
    const rec = await this.lookup(path);
    return rec && this.answer(path, rec, opts);
  }

  /** The answer a record found for `path` stands for (one range read for stored and hex entries). */
  async answer(path: string, rec: PackRecord, opts: GetOptions = {}): Promise<PackAnswer> {
    const what = `entry ${path}`;
    if (rec.kind === Kind.STORED) {
      const stored = await this.blob(rec, what);
      if (rec.encoding === Encoding.GZIP && acceptsGzip(opts.acceptEncoding)) return { kind: rec.kind, contentEncoding: 'gzip', size: stored.length, bytes: stored };
      const bytes = rec.encoding === Encoding.GZIP ? await this.gunzip(stored, rec, what) : stored;
      return { kind: rec.kind, contentEncoding: 'identity', size: bytes.length, bytes };
    }
    if (rec.kind === Kind.HEX) {
      const stored = await this.blob(rec, what);
      const raw = rec.encoding === Encoding.GZIP ? await this.gunzip(stored, rec, what) : stored;
      return { kind: rec.kind, contentEncoding: 'identity', size: raw.length * 2, bytes: hexBytes(raw) };
    }
    return { kind: rec.kind, contentEncoding: 'identity', size: rec.size, stream: this.assemble(await this.recipe(path, rec), path) };
  }

  /** The segments of the recipe a record of kind RECIPE found for `path` holds (one range read). */
  async recipe(path: string, rec: PackRecord): Promise<RecipeSegment[]> {
    const recipe = await this.decoded(rec, `entry ${path}`);
    return decodeRecipe(recipe, `${this.source.describe(this.parts[rec.part]!.name)} (recipe of ${path})`, rec.offset);
  }

  private async gunzip(stored: Uint8Array, b: BlobRef, what: string): Promise<Uint8Array> {
    try {
      return await this.gunzipFn(stored);
    } catch (e) {
      throw new Error(`${this.source.describe(this.parts[b.part]!.name)}: bytes ${b.offset}–${b.offset + b.stored - 1} (${what}) are not gzip: ${(e as Error).message}`, { cause: e });
    }
  }

  /**
   * Yields a recipe's pieces in order. Consecutive range segments whose blobs lie in one part
   * within {@link COALESCE_GAP} of each other are fetched with one range read of at most
   * {@link COALESCE_BYTES} (or one blob, when larger): memory holds one such group at a time.
   */
  async *assemble(segments: readonly RecipeSegment[], path: string): AsyncGenerator<Uint8Array> {
    let group: { part: number; from: number; bytes: Uint8Array } | undefined;
    // The last blob decoded: a delta's ranges take turns with literals over one blob (delta.ts).
    let last: { blob: BlobRef; bytes: Uint8Array } | undefined;
    for (const [i, s] of segments.entries()) {
      if (s.type === 'literal') {
        if (s.bytes.length > 0) yield s.bytes;
        continue;
      }
      const what = `segment ${i} of the recipe of ${path}`;
      const b = s.blob;
      let bytes: Uint8Array;
      const place = `${b.part}:${b.offset}`;
      const hit = this.decodedBlobs?.get(place);
      const kept = last && sameStored(last.blob, b) ? last.bytes : hit && sameStored(hit.blob, b) ? hit.bytes : undefined;
      if (kept) bytes = kept;
      else {
        const name = this.partOf(b, what);
        if (!group || group.part !== b.part || b.offset < group.from || b.offset + b.stored > group.from + group.bytes.length) {
          const [from, to] = coalesce(segments, i);
          group = { part: b.part, from, bytes: to > from ? await this.range(name, from, to - from) : new Uint8Array(0) };
        }
        const stored = this.checked(b, group.bytes.subarray(b.offset - group.from, b.offset - group.from + b.stored), what);
        bytes = b.encoding === Encoding.IDENTITY ? stored : await this.gunzip(stored, b, what);
        // A view into a larger read (an identity blob of a group) would keep all of it: a copy is kept.
        if (this.decodedBlobs && bytes.length <= this.decodedMax / 8) this.decodedBlobs.set(place, { blob: b, bytes: bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice() });
      }
      last = { blob: b, bytes };
      if (s.start + s.length > bytes.length) {
        throw new Error(`recipe of ${path}: segment ${i} asks for bytes ${s.start}–${s.start + s.length - 1} of a blob of ${bytes.length}`);
      }
      yield bytes.subarray(s.start, s.start + s.length);
    }
  }

  /** Every directory record, in key order (reads each slot once, outside the cache). */
  async *records(): AsyncGenerator<PackRecord> {
    const h = this.header;
    const size = slotSize(h);
    const where = this.source.describe(this.index);
    for (let s = 0; s < 2 ** h.bucketBits; s++) {
      const base = h.slotsOffset + s * size;
      const bytes = await this.range(this.index, base, size);
      const count = checkSlot(bytes, h.slotCapacity, where, base, this.crc);
      for (let i = 0; i < count; i++) yield decodeRecord(bytes, SLOT_HEADER + i * RECORD_SIZE, where, base);
    }
  }
}
