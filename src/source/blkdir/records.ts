/**
 * The record scanner of a blk file: `<magic><length LE32><block>` records, XOR-decoded with the
 * xor.dat key by absolute file offset. Core ≥ 28 pre-allocates blk files with raw zeros that
 * never went through the XOR stream: those are padding, skipped silently, even where the key
 * decodes them into bytes of the magic. Anything else that is not a record (junk, a record cut
 * off by the end of the file, an interrupted write) is skipped up to the next magic with one
 * warning naming the absolute offset.
 *
 * It reads through a {@link ByteWindow}: a file ({@link FileWindow}, 64 KiB at a time) or a
 * Buffer holding the bytes from a base offset on ({@link BufferWindow}, for tests and small
 * inputs); offsets are always absolute file offsets.
 */
import type { FileHandle } from 'node:fs/promises';
import { xorObfuscate } from '../../chain/blkfile.js';
import { HEADER_SIZE } from '../../chain/block.js';

/** Bytes read at once (pass 1 window); also the most a window holds. */
export const WINDOW = 64 * 1024;

/** Decoded bytes around an absolute offset, and which of them are raw zeros on disk. */
export abstract class ByteWindow {
  protected win = Buffer.alloc(0);
  protected winStart = 0;

  constructor(
    /** End of the data: absolute offset one past the last byte. */
    readonly size: number,
    protected readonly key: Uint8Array | undefined,
  ) {}

  /** Ensures [pos, pos+n) is in the window (n <= WINDOW, clipped at the end) and returns the window. */
  abstract at(pos: number, n: number): Promise<{ buf: Buffer; start: number }>;

  /**
   * Whether byte k of a window that starts at file offset `start` is zero on
   * disk. Core ≥ 28 pre-allocates blk files with raw zeros that never went
   * through the XOR stream, so padding is tested before decoding.
   */
  rawZero(buf: Buffer, start: number, k: number): boolean {
    return buf[k] === (this.key ? this.key[(start + k) % 8]! : 0);
  }

  /** Whether bytes [k, k+n) of the window (clipped at its end) are all zero on disk. */
  rawZeros(buf: Buffer, start: number, k: number, n: number): boolean {
    for (let i = k, end = Math.min(k + n, buf.length); i < end; i++) if (!this.rawZero(buf, start, i)) return false;
    return true;
  }
}

/** Windowed, XOR-decoding positional reader over one open file. */
export class FileWindow extends ByteWindow {
  bytesRead = 0;

  constructor(
    private readonly fh: FileHandle,
    size: number,
    key: Uint8Array | undefined,
  ) {
    super(size, key);
  }

  async at(pos: number, n: number): Promise<{ buf: Buffer; start: number }> {
    const end = Math.min(pos + n, this.size);
    if (pos < this.winStart || end > this.winStart + this.win.length) {
      const len = Math.min(WINDOW, this.size - pos);
      const buf = Buffer.allocUnsafe(len);
      const { bytesRead } = await this.fh.read(buf, 0, len, pos);
      this.bytesRead += bytesRead;
      this.win = buf.subarray(0, bytesRead);
      this.winStart = pos;
      xorObfuscate(this.win, pos, this.key);
    }
    return { buf: this.win, start: this.winStart };
  }
}

/** The bytes of a file from absolute offset `base` on, held in memory (still obfuscated as on disk). */
export class BufferWindow extends ByteWindow {
  private readonly decoded: Buffer;

  constructor(
    raw: Buffer,
    readonly base: number,
    key: Uint8Array | undefined,
  ) {
    super(base + raw.length, key);
    this.decoded = Buffer.from(raw);
    xorObfuscate(this.decoded, base, key);
  }

  async at(pos: number): Promise<{ buf: Buffer; start: number }> {
    // Windows of at most WINDOW bytes, as from a file, so scans cross window edges the same way.
    const start = Math.max(this.base, pos);
    return { buf: this.decoded.subarray(start - this.base, Math.min(this.decoded.length, start - this.base + WINDOW)), start };
  }
}

export interface RecordScanOptions {
  /** The network's magic (4 bytes) and name (warnings). */
  magic: Buffer;
  networkName: string;
  /** Largest record length accepted as a block. */
  maxBlockSize: number;
}

export interface RecordVisitor {
  /** A record: its absolute offset (of the magic), its length, and the decoded 80-byte block header. */
  record(pos: number, len: number, header: Buffer): void | Promise<void>;
  /** Bytes [from, to) that are not a record nor padding. */
  skipped(from: number, to: number, why: string): void;
}

/** Scans the records of `r` from absolute offset `from` (default its start) to its end. */
export async function scanRecords(r: ByteWindow, opts: RecordScanOptions, visit: RecordVisitor, from = 0): Promise<void> {
  const { magic, maxBlockSize } = opts;
  const magicU32 = magic.readUInt32LE(0);
  const size = r.size;

  /** Next offset >= from where the magic starts, or the end; also the end of non-zero data before it. */
  const scanForMagic = async (from: number): Promise<{ next: number; dataEnd: number }> => {
    let pos = from;
    let dataEnd = from;
    while (pos < size) {
      const { buf, start } = await r.at(pos, WINDOW);
      const rel = pos - start;
      const found = buf.indexOf(magic, rel);
      const stop = found === -1 ? buf.length : found;
      for (let k = stop - 1; k >= rel; k--) {
        if (!r.rawZero(buf, start, k)) {
          dataEnd = Math.max(dataEnd, start + k + 1);
          break;
        }
      }
      if (found !== -1) return { next: start + found, dataEnd: start + found };
      if (start + buf.length >= size) break;
      pos = start + buf.length - (magic.length - 1); // overlap so a magic across windows is found
      if (pos <= from) pos = from + 1;
    }
    return { next: size, dataEnd };
  };

  let pos = from;
  while (pos < size) {
    const { buf, start } = await r.at(pos, 8 + HEADER_SIZE);
    const rel = pos - start;
    const avail = buf.length - rel;
    // A key that shares bytes with the magic decodes raw zeros into it: 8 raw zero bytes are padding, not a record.
    if (avail >= 4 && buf.readUInt32LE(rel) === magicU32 && !r.rawZeros(buf, start, rel, 8)) {
      const len = avail >= 8 ? buf.readUInt32LE(rel + 4) : -1;
      let bad: string | undefined;
      if (len < 0) bad = 'record header cut off at end of file';
      else if (len < HEADER_SIZE) bad = `record length ${len} is below ${HEADER_SIZE}`;
      else if (len > maxBlockSize) bad = `record length ${len} is above ${maxBlockSize}`;
      else if (pos + 8 + len > size) bad = `record of ${len} bytes truncated by end of file (${size - pos - 8} left)`;
      else if (avail >= 12 && buf.readUInt32LE(rel + 8) === magicU32) bad = 'record body starts with the magic again (interrupted write)';
      if (bad !== undefined) {
        const { next, dataEnd } = await scanForMagic(pos + 1);
        visit.skipped(pos, Math.max(dataEnd, Math.min(pos + 8, size)), bad);
        pos = next;
        continue;
      }
      const done = visit.record(pos, len, buf.subarray(rel + 8, rel + 8 + HEADER_SIZE));
      if (done) await done;
      pos += 8 + len;
    } else if (r.rawZero(buf, start, rel)) {
      // Zero padding (pre-allocated file tail, raw zeros on disk even with xor.dat): skip silently.
      let p = pos;
      for (;;) {
        const w = await r.at(p, WINDOW);
        let k = p - w.start;
        while (k < w.buf.length && r.rawZero(w.buf, w.start, k)) {
          // A key byte equal to the magic's makes a record's first raw bytes zero: stop at its magic.
          if (w.buf[k] === magic[0]) {
            if (k + 8 > w.buf.length && w.start + w.buf.length < size) break; // header may straddle: re-read from here
            if (k + 4 <= w.buf.length && w.buf.readUInt32LE(k) === magicU32 && !r.rawZeros(w.buf, w.start, k, 8)) break;
          }
          k++;
        }
        p = w.start + k;
        if (k < w.buf.length || p >= size) break;
      }
      if (p >= size) break;
      pos = p; // magic or junk: handled by the next round
    } else {
      const { next, dataEnd } = await scanForMagic(pos + 1);
      visit.skipped(pos, dataEnd, `no ${opts.networkName} magic ${magic.toString('hex')}`);
      pos = next;
    }
  }
}
