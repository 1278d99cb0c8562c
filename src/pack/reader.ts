/**
 * Reads a pack (docs/pack-format.md) from a local directory or a base URL (HTTP Range through
 * fetch). Opening reads `pack.json` and the first 16 KiB of the index (header and part table),
 * which stay cached; a lookup then costs at most one range read of its directory slot (none when
 * the slot is among the recently used ones) and one of its blob. Every range read is counted.
 */
import { crc32 as zcrc32, gunzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import {
  Encoding,
  HEADER_SIZE,
  Kind,
  PACK_POINTER,
  PART_HEADER_SIZE,
  RECORD_SIZE,
  ROOT_READ,
  SLOT_HEADER,
  checkPartHeader,
  checkSlot,
  decodeHeader,
  decodePartTable,
  decodePointer,
  decodeRecipe,
  decodeRecord,
  findInSlot,
  hexBytes,
  packKey,
  slotOf,
  slotSize,
  type BlobRef,
  type PackHeader,
  type PackRecord,
  type PartInfo,
} from '../contract/pack-format.js';
import { PackCorruptError, acceptsGzip, type GetOptions, type PackAnswer } from './answer.js';
import { DirSource, HttpSource, type RangeSource } from './source.js';

// Re-exported so importers of the reader keep one module path.
export { DirSource, HttpSource, type RangeSource } from './source.js';
export { PackCorruptError, acceptsGzip, answerBytes, type GetOptions, type PackAnswer } from './answer.js';

export interface OpenOptions {
  /** Directory slots kept after use (default 64). */
  slotCache?: number;
}

export class PackReader {
  /** Range reads issued since open (pack.json and the root included); tests and benches read it. */
  reads = 0;
  bytesRead = 0;
  private readonly slots = new Map<number, { bytes: Uint8Array; count: number }>();
  private readonly slotCache: number;

  private constructor(
    readonly source: RangeSource,
    readonly index: string,
    readonly header: PackHeader,
    readonly parts: readonly PartInfo[],
    opts: OpenOptions,
  ) {
    this.slotCache = opts.slotCache ?? 64;
  }

  /** Opens the pack a directory or base URL holds (the file `pack.json` names its index). */
  static async open(location: string | URL | RangeSource, opts: OpenOptions = {}): Promise<PackReader> {
    const source =
      typeof location === 'object' && 'read' in location ? location : /^https?:\/\//i.test(String(location)) ? new HttpSource(location) : new DirSource(String(location));
    try {
      const pointer = decodePointer(await source.readAll(PACK_POINTER), source.describe(PACK_POINTER));
      const where = source.describe(pointer.index);
      let reads = 2;
      let root = await source.read(pointer.index, 0, ROOT_READ);
      const header = decodeHeader(root, where);
      const tableEnd = header.partTableOffset + header.partTableLength;
      if (tableEnd > root.length) {
        root = await source.read(pointer.index, header.partTableOffset, header.partTableLength);
        reads++;
      } else root = root.subarray(header.partTableOffset, tableEnd);
      const parts = decodePartTable(root, header.partCount, where, header.partTableOffset);
      const r = new PackReader(source, pointer.index, header, parts, opts);
      r.reads = reads;
      return r;
    } catch (e) {
      await source.close();
      throw e;
    }
  }

  async close(): Promise<void> {
    await this.source.close();
  }

  private async range(name: string, offset: number, length: number): Promise<Uint8Array> {
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
    let slot = this.slots.get(s);
    if (slot) {
      this.slots.delete(s);
    } else {
      const bytes = await this.range(this.index, base, size);
      const count = checkSlot(bytes, h.slotCapacity, this.source.describe(this.index), base);
      slot = { bytes, count };
      if (this.slots.size >= this.slotCache && this.slots.size > 0) this.slots.delete(this.slots.keys().next().value!);
    }
    if (this.slotCache > 0) this.slots.set(s, slot);
    return findInSlot(slot.bytes, slot.count, key, this.source.describe(this.index), base);
  }

  /** A blob's stored bytes, checked against its CRC-32 (one range read). */
  async blob(b: BlobRef, what: string): Promise<Uint8Array> {
    const part = this.parts[b.part];
    if (!part) throw new Error(`${this.source.describe(this.index)}: ${what} points at part ${b.part}; the pack has ${this.parts.length}`);
    const file = this.source.describe(part.name);
    if (b.offset < PART_HEADER_SIZE || b.offset + b.stored > part.size) {
      throw new Error(`${file}: ${what} points at bytes ${b.offset}–${b.offset + b.stored - 1}, outside the part's ${part.size} bytes`);
    }
    const bytes = b.stored === 0 ? new Uint8Array(0) : await this.range(part.name, b.offset, b.stored);
    if (bytes.length !== b.stored) throw new PackCorruptError(file, b.offset, b.stored, `${what}: the part ends after ${bytes.length} of them`);
    if (zcrc32(bytes) !== b.crc) throw new PackCorruptError(file, b.offset, b.stored, what);
    return bytes;
  }

  private async decoded(b: BlobRef, what: string): Promise<Uint8Array> {
    const stored = await this.blob(b, what);
    return b.encoding === Encoding.IDENTITY ? stored : this.gunzip(stored, b, what);
  }

  /** The answer for a tree path, or undefined when the pack has no such file. */
  async get(path: string, opts: GetOptions = {}): Promise<PackAnswer | undefined> {
    const rec = await this.lookup(path);
    if (!rec) return undefined;
    const what = `entry ${path}`;
    if (rec.kind === Kind.STORED) {
      const stored = await this.blob(rec, what);
      if (rec.encoding === Encoding.GZIP && acceptsGzip(opts.acceptEncoding)) return { kind: rec.kind, contentEncoding: 'gzip', size: stored.length, bytes: stored };
      const bytes = rec.encoding === Encoding.GZIP ? this.gunzip(stored, rec, what) : stored;
      return { kind: rec.kind, contentEncoding: 'identity', size: bytes.length, bytes };
    }
    if (rec.kind === Kind.HEX) {
      const stored = await this.blob(rec, what);
      const raw = rec.encoding === Encoding.GZIP ? this.gunzip(stored, rec, what) : stored;
      return { kind: rec.kind, contentEncoding: 'identity', size: raw.length * 2, bytes: hexBytes(raw) };
    }
    const recipe = await this.decoded(rec, what);
    const segments = decodeRecipe(recipe, `${this.source.describe(this.parts[rec.part]!.name)} (recipe of ${path})`, rec.offset);
    return { kind: rec.kind, contentEncoding: 'identity', size: rec.size, stream: this.assemble(segments, path) };
  }

  private gunzip(stored: Uint8Array, b: BlobRef, what: string): Uint8Array {
    try {
      return new Uint8Array(gunzipSync(stored));
    } catch (e) {
      throw new Error(`${this.source.describe(this.parts[b.part]!.name)}: bytes ${b.offset}–${b.offset + b.stored - 1} (${what}) are not gzip: ${(e as Error).message}`, { cause: e });
    }
  }

  /** Yields a recipe's pieces in order; holds at most one referenced blob at a time. */
  private async *assemble(segments: ReturnType<typeof decodeRecipe>, path: string): AsyncGenerator<Uint8Array> {
    for (const [i, s] of segments.entries()) {
      if (s.type === 'literal') {
        if (s.bytes.length > 0) yield s.bytes;
        continue;
      }
      const bytes = await this.decoded(s.blob, `segment ${i} of the recipe of ${path}`);
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
      const count = checkSlot(bytes, h.slotCapacity, where, base);
      for (let i = 0; i < count; i++) yield decodeRecord(bytes, SLOT_HEADER + i * RECORD_SIZE, where, base);
    }
  }

  /**
   * Checks the whole pack: each part's header and sha256 against the part table, every slot's
   * checksum and every record's blob CRC-32. Returns the problems found (empty: the pack is sound),
   * each naming the file and the absolute offset.
   */
  async verify(): Promise<string[]> {
    const problems: string[] = [];
    const chunk = 1 << 22;
    for (const p of this.parts) {
      const file = this.source.describe(p.name);
      try {
        const hash = createHash('sha256');
        let at = 0;
        while (at < p.size) {
          const b = await this.range(p.name, at, Math.min(chunk, p.size - at));
          if (at === 0) checkPartHeader(b, file);
          if (b.length === 0) break;
          hash.update(b);
          at += b.length;
        }
        if (at !== p.size) problems.push(`${file}: ${at} bytes, the part table says ${p.size}`);
        else if (!Buffer.from(p.sha256).equals(hash.digest())) problems.push(`${file}: sha256 differs from the part table's`);
      } catch (e) {
        problems.push((e as Error).message);
      }
    }
    const seen = new Set<string>();
    try {
      for await (const r of this.records()) {
        const id = `${r.part}:${r.offset}:${r.stored}`;
        if (seen.has(id)) continue;
        // Bounded: forgetting only means a shared blob may be checked again.
        if (seen.size >= 1 << 20) seen.clear();
        seen.add(id);
        try {
          await this.blob(r, `entry key ${Buffer.from(r.key).toString('hex')}`);
        } catch (e) {
          problems.push((e as Error).message);
        }
      }
    } catch (e) {
      problems.push((e as Error).message);
    }
    if (this.header.slotsOffset < HEADER_SIZE) problems.push(`${this.source.describe(this.index)}: slots at ${this.header.slotsOffset}, inside the header`);
    return problems;
  }
}
