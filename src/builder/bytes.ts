/** Growable little-endian byte writer: one buffer, reused, no per-field allocation. */
export class ByteWriter {
  buf: Buffer;
  pos = 0;

  constructor(initialSize = 4096) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  u16(v: number): void {
    this.ensure(2);
    this.buf.writeUInt16LE(v, this.pos);
    this.pos += 2;
  }

  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(v >>> 0, this.pos);
    this.pos += 4;
  }

  i32(v: number): void {
    this.ensure(4);
    this.buf.writeInt32LE(v | 0, this.pos);
    this.pos += 4;
  }

  /** uint64 from a non-negative safe integer or a bigint. */
  u64(v: number | bigint): void {
    this.ensure(8);
    if (typeof v === 'bigint') {
      this.buf.writeBigUInt64LE(v, this.pos);
    } else {
      this.buf.writeUInt32LE(v % 0x100000000, this.pos);
      this.buf.writeUInt32LE(Math.floor(v / 0x100000000), this.pos + 4);
    }
    this.pos += 8;
  }

  /** Bitcoin CompactSize. */
  varint(n: number): void {
    if (n < 0xfd) return this.u8(n);
    if (n <= 0xffff) {
      this.u8(0xfd);
      return this.u16(n);
    }
    if (n <= 0xffffffff) {
      this.u8(0xfe);
      return this.u32(n);
    }
    this.u8(0xff);
    this.u64(n);
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  varBytes(b: Uint8Array): void {
    this.varint(b.length);
    this.bytes(b);
  }

  reset(): void {
    this.pos = 0;
  }

  /** A view of [start, pos) — valid until the next write that grows the buffer. */
  view(start = 0, end = this.pos): Buffer {
    return this.buf.subarray(start, end);
  }

  /** A copy of [start, pos). */
  copy(start = 0, end = this.pos): Buffer {
    return Buffer.from(this.buf.subarray(start, end));
  }
}
