/**
 * The index file's parts (header, part table, directory records and slots), the part files'
 * header, and `pack.json`: what a reader decodes before it reaches a blob.
 */
import { Cursor, concatBytes, crc32, compareKeys, getU64, setU64, utf8, utf8Decoder, view } from './pack-bytes.js';
import {
  Encoding,
  HEADER_SIZE,
  INDEX_MAGIC,
  KEY_BYTES,
  Kind,
  PACK_FORMAT_NAME,
  PACK_VERSION,
  PART_HEADER_SIZE,
  PART_MAGIC,
  PackFormatError,
  RECORD_SIZE,
  SLOT_HEADER,
} from './pack-constants.js';

// ---------------------------------------------------------------------------------------------
// Header (bytes 0–127 of the index file)

export interface PackHeader {
  version: number;
  bucketBits: number;
  /** Records a slot has room for; every slot is SLOT_HEADER + slotCapacity × RECORD_SIZE bytes. */
  slotCapacity: number;
  partCount: number;
  entries: number;
  /** Distinct blobs the entries point at (after dedup). */
  blobs: number;
  slotsOffset: number;
  slotsLength: number;
  partTableOffset: number;
  partTableLength: number;
  /** 1 for a first build; each run that adds parts to an older pack adds 1. */
  generation: number;
}

export function slotSize(h: Pick<PackHeader, 'slotCapacity'>): number {
  return SLOT_HEADER + h.slotCapacity * RECORD_SIZE;
}

export function encodeHeader(h: PackHeader): Uint8Array {
  const b = new Uint8Array(HEADER_SIZE);
  const v = view(b);
  b.set(utf8.encode(INDEX_MAGIC), 0);
  v.setUint16(8, h.version, true);
  b[10] = KEY_BYTES;
  b[11] = RECORD_SIZE;
  b[12] = h.bucketBits;
  v.setUint32(16, h.slotCapacity, true);
  v.setUint32(20, h.partCount, true);
  setU64(v, 24, h.entries);
  setU64(v, 32, h.slotsOffset);
  setU64(v, 40, h.slotsLength);
  setU64(v, 48, h.partTableOffset);
  setU64(v, 56, h.partTableLength);
  setU64(v, 64, h.blobs);
  setU64(v, 72, h.generation);
  v.setUint32(124, crc32(b.subarray(0, 124)), true);
  return b;
}

/** Decodes and checks the header at the start of `b` (the index file `where`). */
export function decodeHeader(b: Uint8Array, where: string): PackHeader {
  if (b.length < HEADER_SIZE) throw new PackFormatError(where, b.length, `is ${b.length} bytes, shorter than the ${HEADER_SIZE}-byte pack header`);
  const magic = String.fromCharCode(...b.subarray(0, 8));
  if (magic !== INDEX_MAGIC) throw new PackFormatError(where, 0, `is not a pack index (magic ${JSON.stringify(magic)}, expected ${INDEX_MAGIC})`);
  const v = view(b);
  const version = v.getUint16(8, true);
  if (version !== PACK_VERSION) throw new PackFormatError(where, 8, `has pack format version ${version}; this reader reads version ${PACK_VERSION}`);
  const crc = v.getUint32(124, true);
  if (crc !== crc32(b.subarray(0, 124))) throw new PackFormatError(where, 124, 'header checksum mismatch (bytes 0–123 are damaged)');
  if (b[10] !== KEY_BYTES || b[11] !== RECORD_SIZE) throw new PackFormatError(where, 10, `key size ${b[10]} / record size ${b[11]} are not ${KEY_BYTES} / ${RECORD_SIZE}`);
  const bucketBits = b[12]!;
  if (bucketBits > 32) throw new PackFormatError(where, 12, `bucket bits ${bucketBits} > 32`);
  return {
    version,
    bucketBits,
    slotCapacity: v.getUint32(16, true),
    partCount: v.getUint32(20, true),
    entries: getU64(v, 24),
    slotsOffset: getU64(v, 32),
    slotsLength: getU64(v, 40),
    partTableOffset: getU64(v, 48),
    partTableLength: getU64(v, 56),
    blobs: getU64(v, 64),
    generation: getU64(v, 72),
  };
}

// ---------------------------------------------------------------------------------------------
// Part table and part header

export interface PartInfo {
  /** File name in the pack directory (`<32 hex>.part`). */
  name: string;
  /** Bytes, part header included. */
  size: number;
  /** sha256 of the whole file. */
  sha256: Uint8Array;
}

export function encodePartTable(parts: readonly PartInfo[]): Uint8Array {
  const chunks: Uint8Array[] = [];
  for (const p of parts) {
    const name = utf8.encode(p.name);
    if (name.length > 0xffff) throw new RangeError(`part name too long: ${p.name}`);
    const b = new Uint8Array(8 + 32 + 2 + name.length);
    const v = view(b);
    setU64(v, 0, p.size);
    b.set(p.sha256, 8);
    v.setUint16(40, name.length, true);
    b.set(name, 42);
    chunks.push(b);
  }
  const out = concatBytes(chunks, 4);
  const at = out.length - 4;
  view(out).setUint32(at, crc32(out.subarray(0, at)), true);
  return out;
}

/** `b` is the part table (`base`: its offset in the index file `where`). */
export function decodePartTable(b: Uint8Array, count: number, where: string, base: number): PartInfo[] {
  if (b.length < 4) throw new PackFormatError(where, base, 'part table shorter than its checksum');
  const end = b.length - 4;
  if (view(b).getUint32(end, true) !== crc32(b.subarray(0, end))) throw new PackFormatError(where, base, 'part table checksum mismatch');
  const c = new Cursor(b.subarray(0, end), where, base);
  const parts: PartInfo[] = [];
  for (let i = 0; i < count; i++) {
    const fixed = c.bytes(42);
    const v = view(fixed);
    const nameLen = v.getUint16(40, true);
    const name = utf8Decoder.decode(c.bytes(nameLen));
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) c.fail(`part name ${JSON.stringify(name)} is not a plain file name`);
    parts.push({ size: getU64(v, 0), sha256: fixed.slice(8, 40), name });
  }
  if (c.at !== end) c.fail(`${end - c.at} bytes after ${count} parts`);
  return parts;
}

/** The first bytes of every part file: magic, format version, the part's number in its pack. */
export function encodePartHeader(number: number): Uint8Array {
  const b = new Uint8Array(PART_HEADER_SIZE);
  b.set(utf8.encode(PART_MAGIC), 0);
  view(b).setUint16(8, PACK_VERSION, true);
  view(b).setUint32(12, number, true);
  return b;
}

export function checkPartHeader(b: Uint8Array, where: string): void {
  if (b.length < PART_HEADER_SIZE || String.fromCharCode(...b.subarray(0, 8)) !== PART_MAGIC) throw new PackFormatError(where, 0, `is not a pack part (no ${PART_MAGIC} magic)`);
  const version = view(b).getUint16(8, true);
  if (version !== PACK_VERSION) throw new PackFormatError(where, 8, `has pack format version ${version}; this reader reads version ${PACK_VERSION}`);
}

// ---------------------------------------------------------------------------------------------
// Directory records and slots

/** Where an entry's blob is and how to turn it into the answer. */
export interface BlobRef {
  part: number;
  offset: number;
  /** Bytes stored. */
  stored: number;
  encoding: Encoding;
  /** CRC-32 of the stored bytes. */
  crc: number;
}

/** A record's blob fields alone (a record also holds its key, kind and size). */
export const blobOf = (b: BlobRef): BlobRef => ({ part: b.part, offset: b.offset, stored: b.stored, encoding: b.encoding, crc: b.crc });

/** Whether `a` and `b` are the same stored blob (its place and length: parts are never rewritten). */
export const sameBlob = (a: BlobRef, b: BlobRef): boolean => a.part === b.part && a.offset === b.offset && a.stored === b.stored;

/** Whether two references name the same stored bytes checked by the same CRC-32 and decoded the same way (a decoded copy of one serves the other). */
export const sameStored = (a: BlobRef, b: BlobRef): boolean => sameBlob(a, b) && a.encoding === b.encoding && a.crc === b.crc;

export interface PackRecord extends BlobRef {
  key: Uint8Array;
  kind: Kind;
  /** Bytes of the answer (uncompressed; for HEX twice the blob's decoded size). */
  size: number;
}

const MAX_U48 = 2 ** 48 - 1;

/** Writes `r` as RECORD_SIZE bytes at `out[at…]`. */
export function encodeRecord(r: PackRecord, out: Uint8Array, at = 0): void {
  if (r.part > 0xffff || r.offset > MAX_U48 || r.stored > 0xffffffff || r.size > 0xffffffff) {
    throw new RangeError(`record out of range: part ${r.part}, offset ${r.offset}, stored ${r.stored}, size ${r.size}`);
  }
  const v = new DataView(out.buffer, out.byteOffset + at, RECORD_SIZE);
  out.set(r.key.subarray(0, KEY_BYTES), at);
  v.setUint8(16, r.kind);
  v.setUint8(17, r.encoding);
  v.setUint16(18, r.part, true);
  v.setUint32(20, r.offset % 2 ** 32, true);
  v.setUint16(24, Math.floor(r.offset / 2 ** 32), true);
  v.setUint16(26, 0, true);
  v.setUint32(28, r.stored, true);
  v.setUint32(32, r.size, true);
  v.setUint32(36, r.crc, true);
}

export function decodeRecord(b: Uint8Array, at: number, where: string, base: number): PackRecord {
  const v = new DataView(b.buffer, b.byteOffset + at, RECORD_SIZE);
  const kind = v.getUint8(16);
  const encoding = v.getUint8(17);
  if (kind > Kind.RECIPE) throw new PackFormatError(where, base + at + 16, `unknown entry kind ${kind}`);
  if (encoding > Encoding.GZIP) throw new PackFormatError(where, base + at + 17, `unknown encoding ${encoding}`);
  return {
    key: b.slice(at, at + KEY_BYTES),
    kind: kind as Kind,
    encoding: encoding as Encoding,
    part: v.getUint16(18, true),
    offset: v.getUint32(20, true) + v.getUint16(24, true) * 2 ** 32,
    stored: v.getUint32(28, true),
    size: v.getUint32(32, true),
    crc: v.getUint32(36, true),
  };
}

/** One slot: u32 count, u32 CRC-32 of (count ‖ records), the records sorted by key, zero padding. */
export function encodeSlot(records: Uint8Array, count: number, capacity: number): Uint8Array {
  if (count > capacity) throw new RangeError(`slot of ${count} records over its capacity ${capacity}`);
  const out = new Uint8Array(SLOT_HEADER + capacity * RECORD_SIZE);
  const v = view(out);
  v.setUint32(0, count, true);
  out.set(records.subarray(0, count * RECORD_SIZE), SLOT_HEADER);
  v.setUint32(4, crc32(out.subarray(SLOT_HEADER, SLOT_HEADER + count * RECORD_SIZE), crc32(out.subarray(0, 4))), true);
  return out;
}

/** Checks a slot read from `where` at `base`; returns its record count. */
export function checkSlot(b: Uint8Array, capacity: number, where: string, base: number, crc32Of: (bytes: Uint8Array, start?: number) => number = crc32): number {
  if (b.length < SLOT_HEADER + capacity * RECORD_SIZE) throw new PackFormatError(where, base + b.length, `slot is cut short (${b.length} bytes)`);
  const v = view(b);
  const count = v.getUint32(0, true);
  if (count > capacity) throw new PackFormatError(where, base, `slot claims ${count} records, capacity ${capacity}`);
  const crc = crc32Of(b.subarray(SLOT_HEADER, SLOT_HEADER + count * RECORD_SIZE), crc32Of(b.subarray(0, 4)));
  if (crc !== v.getUint32(4, true)) throw new PackFormatError(where, base, `directory slot checksum mismatch (slot bytes ${base}–${base + b.length - 1} are damaged)`);
  return count;
}

/** Binary search of a checked slot for `key`. */
export function findInSlot(b: Uint8Array, count: number, key: Uint8Array, where: string, base: number): PackRecord | undefined {
  let lo = 0;
  let hi = count - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = SLOT_HEADER + mid * RECORD_SIZE;
    const c = compareKeys(b, key, at);
    if (c === 0) return decodeRecord(b, at, where, base);
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// pack.json

export interface PackPointer {
  format: typeof PACK_FORMAT_NAME;
  version: number;
  /** The current index file's name. */
  index: string;
}

export function encodePointer(index: string): Uint8Array {
  return utf8.encode(JSON.stringify({ format: PACK_FORMAT_NAME, version: PACK_VERSION, index }) + '\n');
}

export function decodePointer(b: Uint8Array, where: string): PackPointer {
  let p: unknown;
  try {
    p = JSON.parse(utf8Decoder.decode(b));
  } catch (e) {
    throw new PackFormatError(where, 0, `is not JSON (${(e as Error).message})`);
  }
  const o = p as Partial<PackPointer>;
  if (o?.format !== PACK_FORMAT_NAME) throw new PackFormatError(where, 0, `format is ${JSON.stringify(o?.format)}, expected ${PACK_FORMAT_NAME}`);
  if (o.version !== PACK_VERSION) throw new PackFormatError(where, 0, `has pack format version ${o.version}; this reader reads version ${PACK_VERSION}`);
  if (typeof o.index !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(o.index)) throw new PackFormatError(where, 0, `index ${JSON.stringify(o.index)} is not a plain file name`);
  return o as PackPointer;
}
