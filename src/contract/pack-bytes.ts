/**
 * The small codecs the pack format is built from: CRC-32, keys and slots, hex, u64 and varint
 * fields, and a bounds-checked cursor. `view`, the u64 helpers, `utf8*` and `Cursor` are for the
 * codec's own modules; pack-format.ts re-exports only the public functions.
 */
import { sha256, toHex } from './sha256.js';
import { KEY_BYTES, MAX_BUCKET_BITS, PackFormatError, TARGET_SLOT_ENTRIES } from './pack-constants.js';

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

export const utf8 = new TextEncoder();
export const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/** Where packKey encodes a path (a UTF-8 path is at most 3 bytes a UTF-16 unit: longer ones are encoded apart). */
const PATH_BYTES = new Uint8Array(3072);

/** The directory key of a tree path (its canonical request key): the first 128 bits of sha256(path). */
export function packKey(path: string): Uint8Array {
  const bytes = path.length * 3 <= PATH_BYTES.length ? PATH_BYTES.subarray(0, utf8.encodeInto(path, PATH_BYTES).written) : utf8.encode(path);
  return sha256(bytes).subarray(0, KEY_BYTES);
}

export function keyHex(key: Uint8Array): string {
  return toHex(key);
}

/** -1, 0, 1 as the key at `a[aAt]` sorts before, equal to, after the key at `b[bAt]` (bytewise). */
export function compareKeys(a: Uint8Array, b: Uint8Array, aAt = 0, bAt = 0): number {
  for (let i = 0; i < KEY_BYTES; i++) if (a[aAt + i] !== b[bAt + i]) return a[aAt + i]! < b[bAt + i]! ? -1 : 1;
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

/** `chunks` joined, with `extra` zero bytes after them. */
export function concatBytes(chunks: readonly Uint8Array[], extra = 0): Uint8Array {
  let len = extra;
  for (const c of chunks) len += c.length;
  const out = new Uint8Array(len);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

export function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

export function setU64(v: DataView, at: number, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a u64 in the safe range: ${n}`);
  v.setUint32(at, n % 2 ** 32, true);
  v.setUint32(at + 4, Math.floor(n / 2 ** 32), true);
}

export function getU64(v: DataView, at: number): number {
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

export class Cursor {
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
