import { ParseError } from './errors.js';

/** Core's MAX_SIZE: the largest CompactSize ReadCompactSize accepts for a size or count (serialize.h). */
export const MAX_SIZE = 0x02000000;

/**
 * Bounds-checked little-endian cursor over a Buffer. Every read checks the
 * remaining length first, so a bad length can never read past the end or
 * allocate a huge array: it throws a ParseError naming the offset instead.
 */
export class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  need(n: number, what: string): void {
    if (n > this.end - this.pos) {
      throw new ParseError(`${what}: need ${n} bytes, ${this.end - this.pos} left`, this.pos);
    }
  }

  u8(what = 'byte'): number {
    this.need(1, what);
    return this.buf[this.pos++]!;
  }

  u32(what = 'uint32'): number {
    this.need(4, what);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  i32(what = 'int32'): number {
    this.need(4, what);
    const v = this.buf.readInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  u64(what = 'uint64'): bigint {
    this.need(8, what);
    const v = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    return v;
  }

  /**
   * Bitcoin CompactSize, read as Core's ReadCompactSize (serialize.h, range check on): only the
   * shortest encoding of a value, and nothing above MAX_SIZE. A longer encoding would change a
   * block's bytes and size without changing its hash or merkle root.
   */
  varint(what = 'varint'): number {
    const at = this.pos;
    const first = this.u8(what);
    if (first < 0xfd) return first;
    let v: number;
    let min: number;
    if (first === 0xfd) {
      this.need(2, what);
      v = this.buf.readUInt16LE(this.pos);
      this.pos += 2;
      min = 0xfd;
    } else if (first === 0xfe) {
      v = this.u32(what);
      min = 0x10000;
    } else {
      // Every canonical 9-byte value (≥ 2^32) is above MAX_SIZE.
      const big = this.u64(what);
      if (big >= 0x100000000n) throw new ParseError(`${what}: CompactSize ${big} is above MAX_SIZE ${MAX_SIZE}`, at);
      v = Number(big);
      min = 0x100000000;
    }
    if (v < min) {
      const tail = this.buf.toString('hex', at + 1, this.pos);
      throw new ParseError(`${what}: non-canonical CompactSize (${first.toString(16)} ${tail} encodes ${v})`, at);
    }
    if (v > MAX_SIZE) throw new ParseError(`${what}: CompactSize ${v} is above MAX_SIZE ${MAX_SIZE}`, at);
    return v;
  }

  /**
   * A count of items each at least `minItemSize` bytes long: rejected when the
   * remaining bytes cannot possibly hold that many.
   */
  count(what: string, minItemSize: number): number {
    const at = this.pos;
    const n = this.varint(what);
    if (n * minItemSize > this.end - this.pos) {
      throw new ParseError(`${what}: count ${n} cannot fit in the ${this.end - this.pos} bytes left`, at);
    }
    return n;
  }

  bytes(n: number, what = 'bytes'): Buffer {
    this.need(n, what);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  varBytes(what = 'var bytes'): Buffer {
    const at = this.pos;
    const n = this.varint(`${what} length`);
    if (n > this.end - this.pos) {
      throw new ParseError(`${what}: length ${n} exceeds the ${this.end - this.pos} bytes left`, at);
    }
    return this.bytes(n, what);
  }
}
