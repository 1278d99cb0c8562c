/**
 * The byte layout of a pack (docs/pack-format.md): the same files as a snapshot tree, held in a
 * few immutable range-readable part files plus one index file. Pure functions over Uint8Array
 * (no Node APIs), so the writer, the Node reader and edge readers share one codec.
 *
 * A pack directory holds `pack.json` (the only mutable file: names the current index),
 * `<hex>.idx` (header, part table, directory slots) and `<hex>.part` files (blobs), each named
 * by the sha256 of its bytes so a CDN may cache them forever.
 */
import { sha256, toHex } from './sha256.js';

export const PACK_POINTER = 'pack.json';
export const PACK_FORMAT_NAME = 'chain-snapshot-pack';
export const PACK_VERSION = 1;
export const INDEX_MAGIC = 'SNAPPACK';
export const PART_MAGIC = 'SNAPPART';
export const HEADER_SIZE = 128;
/** A reader's first read of the index: header and (usually) the part table. */
export const ROOT_READ = 16384;
export const PART_HEADER_SIZE = 16;
export const KEY_BYTES = 16;
export const RECORD_SIZE = 40;
export const SLOT_HEADER = 8;
/** Mean entries per slot the writer aims at; slots get larger only past 2^MAX_BUCKET_BITS slots. */
export const TARGET_SLOT_ENTRIES = 512;
export const MAX_BUCKET_BITS = 24;
/** Parts are cut before they would pass this size (a blob larger than it gets a part of its own). */
export const DEFAULT_MAX_PART_BYTES = 1 << 30;

/** What an entry's blob is. */
export const Kind = {
  /** The answer itself (maybe compressed). */
  STORED: 0,
  /** Bytes whose lowercase hex (no newline) is the answer: a `.hex` file made from its `.bin`. */
  HEX: 1,
  /** A recipe (see {@link encodeRecipe}) whose assembled segments are the answer. */
  RECIPE: 2,
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

/** How a blob's bytes are stored. */
export const Encoding = { IDENTITY: 0, GZIP: 1 } as const;
export type Encoding = (typeof Encoding)[keyof typeof Encoding];
export const ENCODING_NAMES: Readonly<Record<Encoding, string>> = { 0: 'identity', 1: 'gzip' };

/** Thrown for bytes that do not decode: `where` names the file and absolute offset. */
export class PackFormatError extends Error {
  constructor(
    readonly where: string,
    readonly offset: number,
    message: string,
  ) {
    super(`${where} at offset ${offset}: ${message}`);
    this.name = 'PackFormatError';
  }
}

// ---------------------------------------------------------------------------------------------
// Small codecs

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE 802.3, as in gzip and zlib.crc32) of `bytes`, continuing from `crc`. */
export function crc32(bytes: Uint8Array, crc = 0): number {
  let c = ~crc >>> 0;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/** The directory key of a tree path (its canonical request key): the first 128 bits of sha256(path). */
export function packKey(path: string): Uint8Array {
  return sha256(utf8.encode(path)).subarray(0, KEY_BYTES);
}

export function keyHex(key: Uint8Array): string {
  return toHex(key);
}

/** -1, 0, 1 as `a` sorts before, equal to, after `b` (bytewise). */
export function compareKeys(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < KEY_BYTES; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}

/** The slot a key lives in: its top `bits` bits. */
export function slotOf(key: Uint8Array, bits: number): number {
  if (bits === 0) return 0;
  const top = ((key[0]! << 24) | (key[1]! << 16) | (key[2]! << 8) | key[3]!) >>> 0;
  return top >>> (32 - bits);
}

/** Bucket bits for `entries` keys: a mean of about {@link TARGET_SLOT_ENTRIES} per slot. */
export function chooseBucketBits(entries: number): number {
  let bits = 0;
  while (bits < MAX_BUCKET_BITS && entries / 2 ** bits > TARGET_SLOT_ENTRIES) bits++;
  return bits;
}

const HEX_DIGITS = utf8.encode('0123456789abcdef');

/** Lowercase hex of `bytes` as ASCII bytes (what the tree's `.hex` files hold: no newline). */
export function hexBytes(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length * 2);
  for (let i = 0; i < bytes.length; i++) {
    out[2 * i] = HEX_DIGITS[bytes[i]! >> 4]!;
    out[2 * i + 1] = HEX_DIGITS[bytes[i]! & 15]!;
  }
  return out;
}

function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

function setU64(v: DataView, at: number, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a u64 in the safe range: ${n}`);
  v.setUint32(at, n % 2 ** 32, true);
  v.setUint32(at + 4, Math.floor(n / 2 ** 32), true);
}

function getU64(v: DataView, at: number): number {
  return v.getUint32(at, true) + v.getUint32(at + 4, true) * 2 ** 32;
}

/** Unsigned LEB128 varint (values up to 2^53). */
export function writeVarint(out: number[], n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a varint: ${n}`);
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
}

class Cursor {
  at = 0;
  constructor(
    readonly b: Uint8Array,
    readonly where: string,
    readonly base: number,
  ) {}
  fail(msg: string): never {
    throw new PackFormatError(this.where, this.base + this.at, msg);
  }
  byte(): number {
    if (this.at >= this.b.length) this.fail('ends inside a field');
    return this.b[this.at++]!;
  }
  varint(): number {
    let n = 0;
    let mul = 1;
    for (let i = 0; ; i++) {
      if (i > 7) this.fail('varint longer than 8 bytes');
      const c = this.byte();
      n += (c & 0x7f) * mul;
      if ((c & 0x80) === 0) return n;
      mul *= 0x80;
    }
  }
  u32(): number {
    if (this.at + 4 > this.b.length) this.fail('ends inside a field');
    const n = view(this.b).getUint32(this.at, true);
    this.at += 4;
    return n;
  }
  bytes(n: number): Uint8Array {
    if (this.at + n > this.b.length) this.fail(`needs ${n} bytes, has ${this.b.length - this.at}`);
    const out = this.b.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
}

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
  let len = 4;
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
    len += b.length;
  }
  const out = new Uint8Array(len);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
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
export function checkSlot(b: Uint8Array, capacity: number, where: string, base: number): number {
  if (b.length < SLOT_HEADER + capacity * RECORD_SIZE) throw new PackFormatError(where, base + b.length, `slot is cut short (${b.length} bytes)`);
  const v = view(b);
  const count = v.getUint32(0, true);
  if (count > capacity) throw new PackFormatError(where, base, `slot claims ${count} records, capacity ${capacity}`);
  const crc = crc32(b.subarray(SLOT_HEADER, SLOT_HEADER + count * RECORD_SIZE), crc32(b.subarray(0, 4)));
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
    const c = compareKeys(b.subarray(at, at + KEY_BYTES), key);
    if (c === 0) return decodeRecord(b, at, where, base);
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Recipes: an answer assembled from literal bytes and ranges of other blobs' decoded bytes

export type RecipeSegment =
  | { type: 'literal'; bytes: Uint8Array }
  | { type: 'range'; blob: BlobRef; start: number; length: number };

const SEG_LITERAL = 0;
const SEG_RANGE = 1;

/** varint count, then per segment: 0 ‖ varint len ‖ bytes, or 1 ‖ varint part, offset, stored ‖ u8 encoding ‖ u32 crc ‖ varint start, length. */
export function encodeRecipe(segments: readonly RecipeSegment[]): Uint8Array {
  const head: number[] = [];
  const chunks: Uint8Array[] = [];
  writeVarint(head, segments.length);
  let pending = head;
  const flush = () => {
    chunks.push(Uint8Array.from(pending));
    pending = [];
  };
  for (const s of segments) {
    if (s.type === 'literal') {
      pending.push(SEG_LITERAL);
      writeVarint(pending, s.bytes.length);
      flush();
      chunks.push(s.bytes);
    } else {
      pending.push(SEG_RANGE);
      writeVarint(pending, s.blob.part);
      writeVarint(pending, s.blob.offset);
      writeVarint(pending, s.blob.stored);
      pending.push(s.blob.encoding);
      pending.push(s.blob.crc & 0xff, (s.blob.crc >>> 8) & 0xff, (s.blob.crc >>> 16) & 0xff, (s.blob.crc >>> 24) & 0xff);
      writeVarint(pending, s.start);
      writeVarint(pending, s.length);
    }
  }
  flush();
  let len = 0;
  for (const c of chunks) len += c.length;
  const out = new Uint8Array(len);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

export function decodeRecipe(b: Uint8Array, where: string, base: number): RecipeSegment[] {
  const c = new Cursor(b, where, base);
  const n = c.varint();
  const out: RecipeSegment[] = [];
  for (let i = 0; i < n; i++) {
    const t = c.byte();
    if (t === SEG_LITERAL) out.push({ type: 'literal', bytes: c.bytes(c.varint()) });
    else if (t === SEG_RANGE) {
      const part = c.varint();
      const offset = c.varint();
      const stored = c.varint();
      const encoding = c.byte();
      if (encoding > Encoding.GZIP) c.fail(`unknown encoding ${encoding} in recipe segment ${i}`);
      const crc = c.u32();
      out.push({ type: 'range', blob: { part, offset, stored, encoding: encoding as Encoding, crc }, start: c.varint(), length: c.varint() });
    } else c.fail(`unknown recipe segment type ${t}`);
  }
  if (c.at !== b.length) c.fail(`${b.length - c.at} bytes after ${n} recipe segments`);
  return out;
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
