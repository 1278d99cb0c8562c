/**
 * Recipe hints: what a render thread knows of each compact address or block document it writes —
 * which of its byte ranges are which tx's /tx document (or, in a block document, its prefix
 * without the placement fields), verbatim, and which are copied from the document's previous
 * version — kept for the pack phase of the same build, which turns each such document into its
 * recipe (embedded.ts) without reading the file back and scanning it. A hint is taken only when
 * each of its tx ranges is the tx document (or prefix) the pack holds, by length and CRC-32 (the
 * same check the scan makes of a candidate span), and it then gives exactly the segments the scan
 * would: a document whose hint fails is read and scanned.
 *
 * A scratch file of the build (one per render thread, in the state dir, removed with the
 * build's other scratch files): records, each
 *   u32 length of the rest ‖ u16 path length ‖ path (UTF-8) ‖ f64 document size ‖ segments
 * to the record's end, each 0 ‖ u32 n ‖ n literal bytes, or 1 ‖ txid (32 bytes, the hex's
 * order) ‖ u32 length ‖ u32 CRC-32 of the tx document, or 2 ‖ f64 size of the previous version
 * ‖ f64 start ‖ f64 length: bytes of the document's previous version (an incremental build's
 * address document copies the entries of its unchanged txs from it: address-document.ts), which
 * the pack appended to answers for the same path (the tree it was made from is the one the
 * previous version was read from); their recipe is that answer's, clipped (delta.ts).
 */
import { closeSync, fstatSync, openSync, readSync, rmSync } from 'node:fs';
import type { RecipeSegment } from '../contract/pack-format.js';
import { crc32 } from 'node:zlib';
import { onPath } from '../runtime/io-error.js';
import { joinSegments, SegmentClipper } from './delta.js';
import { MIN_REFERENCE } from './embedded.js';
import { OutFile } from './out-file.js';
import { CRC_UNKNOWN, type TxBlobs } from './tx-blobs.js';

const LITERAL = 0;
const TX = 1;
const PREVIOUS = 2;
const TXID_BYTES = 32;
const WHAT = 'recipe hints scratch file';
/** The bytes of a hints file read at once when a record is asked for (RecipeHints). */
const RECORD_WINDOW = 1 << 20;

/** A part of a document that is a tx's document, as the renderer knows it. */
export interface EmbeddedTx {
  txid: string;
  crc: number;
}

/**
 * A render thread's hints: each document's record encoded as its parts are taken by whatever
 * writes them, in one buffer reused from document to document (no allocation a part), then
 * appended to the thread's file.
 */
export class HintWriter {
  private readonly out: OutFile;
  private buf = Buffer.allocUnsafe(1 << 20);
  private at = 0;
  /** Where the open literal segment's length is, or -1. */
  private literalAt = -1;
  private size = 0;
  private refs = 0;
  private nameLength = 0;
  private complete = false;

  constructor(path: string) {
    this.out = new OutFile(path, { scratch: true });
  }

  /**
   * `parts` of the document at `path`, passed through, each recorded: a tx's document when
   * `txOf` names one, bytes of `previous` (the document's previous version) when it is a view of
   * them, else literal bytes. Once all are taken, {@link keep} appends the record.
   */
  *recording(path: string, parts: Iterable<Uint8Array>, txOf: (part: Uint8Array) => EmbeddedTx | undefined, previous?: Uint8Array): Generator<Uint8Array> {
    this.complete = false;
    this.at = 0;
    this.literalAt = -1;
    this.size = 0;
    this.refs = 0;
    this.nameLength = Buffer.byteLength(path, 'utf8');
    this.room(4 + 2 + this.nameLength + 8);
    this.buf.writeUInt16LE(this.nameLength, 4);
    this.buf.write(path, 6, 'utf8');
    this.at = 6 + this.nameLength + 8;
    for (const p of parts) {
      const tx = txOf(p);
      if (tx) this.tx(tx, p.length);
      else if (previous && p.length > 0 && p.buffer === previous.buffer && p.byteOffset >= previous.byteOffset && p.byteOffset + p.length <= previous.byteOffset + previous.length) {
        this.previous(previous.length, p.byteOffset - previous.byteOffset, p.length);
      } else this.literal(p);
      this.size += p.length;
      yield p;
    }
    this.closeLiteral();
    this.complete = true;
  }

  /**
   * Appends the record of the document whose parts were all just taken, when it embeds a tx
   * document (else there is nothing to hint); whether it did.
   */
  keep(): boolean {
    if (!this.complete || this.refs === 0) return false;
    this.complete = false;
    this.buf.writeUInt32LE(this.at - 4, 0);
    this.buf.writeDoubleLE(this.size, 6 + this.nameLength);
    this.out.write(this.buf.subarray(0, this.at));
    return true;
  }

  /** Room for `n` more bytes. */
  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.at + n));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }

  private literal(p: Uint8Array): void {
    if (this.literalAt < 0) {
      this.room(5);
      this.buf[this.at] = LITERAL;
      this.literalAt = this.at + 1;
      this.at += 5;
    }
    this.room(p.length);
    this.buf.set(p, this.at);
    this.at += p.length;
  }

  private closeLiteral(): void {
    if (this.literalAt < 0) return;
    this.buf.writeUInt32LE(this.at - this.literalAt - 4, this.literalAt);
    this.literalAt = -1;
  }

  private tx({ txid, crc }: EmbeddedTx, length: number): void {
    this.closeLiteral();
    this.room(1 + TXID_BYTES + 8);
    const b = this.buf;
    b[this.at] = TX;
    b.write(txid, this.at + 1, TXID_BYTES, 'hex');
    b.writeUInt32LE(length, this.at + 1 + TXID_BYTES);
    b.writeUInt32LE(crc, this.at + 5 + TXID_BYTES);
    this.at += 1 + TXID_BYTES + 8;
    this.refs++;
  }

  private previous(size: number, start: number, length: number): void {
    this.closeLiteral();
    this.room(25);
    const b = this.buf;
    b[this.at] = PREVIOUS;
    b.writeDoubleLE(size, this.at + 1);
    b.writeDoubleLE(start, this.at + 9);
    b.writeDoubleLE(length, this.at + 17);
    this.at += 25;
    this.refs++;
  }

  close(): void {
    this.out.close();
  }
}

/**
 * A 52-bit map key of `path` (a string, or its UTF-8 bytes: the same key) that keeps no string:
 * its CRC-32 and 20 bits of its FNV-1a (a CRC-32 with another start value is no second hash: it
 * follows from the first and the length).
 */
function pathKey(path: string | Uint8Array): number {
  const b = typeof path === 'string' ? Buffer.from(path, 'utf8') : path;
  let fnv = 0x811c9dc5;
  for (let i = 0; i < b.length; i++) fnv = Math.imul(fnv ^ b[i]!, 0x01000193);
  return crc32(b) * 2 ** 20 + (fnv >>> 12);
}

/** Where each hinted document's record is, read from the hints files. */
export class RecipeHints {
  /**
   * Each hinted path's record, by a 52-bit hash of the path (no string kept a document): its
   * number here; its file and offset in `where` (offset × 16 + file), its length in `lengths`.
   * Paths that share the hash (or a path hinted twice) have no hint; a record is taken only for
   * the path it names.
   */
  private readonly at = new Map<number, number>();
  private readonly fds: number[] = [];
  private where = new Float64Array(1024);
  private lengths = new Uint32Array(1024);
  private count = 0;
  /**
   * Each file's window of records read ahead: the pack's second pass asks for the records in path
   * order, which is nearly the order each render thread wrote them in, so one read brings the
   * next few thousand (a record larger than the window is read alone into `record`). A hint's
   * literal segments point into these buffers: they are valid until the record of another path is
   * read.
   */
  private readonly windows: { bytes: Buffer; base: number; have: number }[] = [];
  private record = Buffer.allocUnsafe(0);
  /** The record last read into it, by path. */
  private last: { path: string; record: { b: Buffer; segmentsAt: number } | undefined } | undefined;

  constructor(private readonly files: readonly string[]) {
    if (files.length > 16) throw new Error(`internal: ${files.length} recipe hints files, at most 16`);
    for (const [i, file] of files.entries()) {
      const fd = onPath(file, WHAT, () => openSync(file, 'r'));
      this.fds.push(fd);
      this.windows.push({ bytes: Buffer.allocUnsafe(RECORD_WINDOW), base: 0, have: 0 });
      this.scan(i, fd);
    }
  }

  /** Reads the records' heads (a path each) through a 4 MiB window, skipping their bodies. */
  private scan(file: number, fd: number): void {
    const window = Buffer.allocUnsafe(4 << 20);
    let base = 0; // file offset of window[0]
    let have = 0;
    /** Whether `n` bytes at file offset `pos` are in the window (moved there when they are not). */
    const ensure = (pos: number, n: number): boolean => {
      if (pos >= base && pos + n <= base + have) return true;
      base = pos;
      have = onPath(this.files[file]!, WHAT, () => readSync(fd, window, 0, window.length, pos));
      return n <= have;
    };
    let pos = 0;
    while (ensure(pos, 6)) {
      const rest = window.readUInt32LE(pos - base);
      const nameLength = window.readUInt16LE(pos - base + 4);
      if (!ensure(pos, 6 + nameLength)) break;
      this.add(window.subarray(pos - base + 6, pos - base + 6 + nameLength), file, pos + 4, rest);
      pos += 4 + rest;
    }
    const size = fstatSync(fd).size;
    if (pos !== size) throw new Error(`${this.files[file]}: ${size} bytes, its last record cut short at offset ${pos}`);
  }

  private add(path: Uint8Array, file: number, offset: number, length: number): void {
    if (this.count === this.where.length) {
      const where = new Float64Array(2 * this.count);
      where.set(this.where);
      this.where = where;
      const lengths = new Uint32Array(2 * this.count);
      lengths.set(this.lengths);
      this.lengths = lengths;
    }
    this.where[this.count] = offset * 16 + file;
    this.lengths[this.count] = length;
    // A path hinted twice (not a build's way) has no hint it can be sure of: it is read.
    const key = pathKey(path);
    this.at.set(key, this.at.has(key) ? -1 : this.count);
    this.count++;
  }

  /** Whether `path` has a hint (its document need not be read if the hint holds). */
  has(path: string): boolean {
    return (this.at.get(pathKey(path)) ?? -1) >= 0;
  }

  /**
   * The recipe segments of the document at `path` of `size` bytes from its hint, when it has one,
   * each tx range in it is the document `txs` holds for that txid (length and CRC-32) and, for
   * bytes of the previous version, `previous` are the segments of that version's answer in the
   * pack appended to, of the size the hint says; undefined otherwise (the document is to be
   * read). The literal segments' bytes are valid until another path's record is read.
   */
  segments(path: string, size: number, txs: TxBlobs, previous?: readonly RecipeSegment[]): RecipeSegment[] | undefined {
    const r = this.recordOf(path);
    if (!r) return undefined;
    const { b } = r;
    let p = r.segmentsAt;
    if (b.readDoubleLE(p - 8) !== size) return undefined;
    const segs: RecipeSegment[] = [];
    let total = 0;
    let clipper: SegmentClipper | undefined;
    while (p < b.length) {
      if (b[p] === LITERAL) {
        if (p + 5 > b.length) return undefined;
        const len = b.readUInt32LE(p + 1);
        if (p + 5 + len > b.length) return undefined;
        segs.push({ type: 'literal', bytes: b.subarray(p + 5, p + 5 + len) });
        p += 5 + len;
        total += len;
        continue;
      }
      if (b[p] === PREVIOUS) {
        if (!previous || p + 25 > b.length) return undefined;
        clipper ??= new SegmentClipper(previous);
        const [was, start, len] = [b.readDoubleLE(p + 1), b.readDoubleLE(p + 9), b.readDoubleLE(p + 17)];
        if (was !== clipper.size || !(start >= 0 && len >= 0 && start + len <= was)) return undefined;
        segs.push(...clipper.clip(start, start + len));
        p += 25;
        total += len;
        continue;
      }
      if (b[p] !== TX || p + 9 + TXID_BYTES > b.length) return undefined;
      const txid = b.toString('hex', p + 1, p + 1 + TXID_BYTES);
      const len = b.readUInt32LE(p + 1 + TXID_BYTES);
      const crc = b.readUInt32LE(p + 5 + TXID_BYTES);
      const t = txs.doc(txid);
      // The tx document, or (a block document's element) its prefix without the placement fields.
      const whole = t?.size === len && t.crc === crc && t.crc !== CRC_UNKNOWN;
      if (!t || !(whole || (t.prefix === len && t.prefixCrc === crc)) || len < MIN_REFERENCE) return undefined;
      segs.push({ type: 'range', blob: t.blob, start: 0, length: len });
      p += 9 + TXID_BYTES;
      total += len;
    }
    // A damaged record (segments cut short, or not the document's bytes in all) gives no recipe.
    if (total !== size) return undefined;
    // Pieces of the previous answer's literals next to this one's are one literal, as the scan gives.
    return clipper ? joinSegments(segs) : segs;
  }

  /**
   * What `path`'s hint needs before segments() (undefined without a hint): the txids of the tx
   * documents it names, in order, for their blobs to be looked up, and the size of the previous
   * version it takes bytes of, if it does, for that version's recipe to be read.
   */
  needs(path: string): { txids: string[]; previous?: number } | undefined {
    const r = this.recordOf(path);
    if (!r) return undefined;
    const { b } = r;
    const out: { txids: string[]; previous?: number } = { txids: [] };
    for (let p = r.segmentsAt; p < b.length; ) {
      if (b[p] === LITERAL && p + 5 <= b.length) p += 5 + b.readUInt32LE(p + 1);
      else if (b[p] === TX && p + 9 + TXID_BYTES <= b.length) {
        out.txids.push(b.toString('hex', p + 1, p + 1 + TXID_BYTES));
        p += 9 + TXID_BYTES;
      } else if (b[p] === PREVIOUS && p + 25 <= b.length) {
        out.previous = b.readDoubleLE(p + 1);
        p += 25;
      } else break; // damaged: segments() gives no recipe
    }
    return out;
  }

  /** The hint record of `path` (read into the shared buffer) and where its segments start; undefined without one, or when it names another path. */
  private recordOf(path: string): { b: Buffer; segmentsAt: number } | undefined {
    // needs() then segments() ask for the same record: read once (it stays in the shared buffer).
    if (this.last?.path === path) return this.last.record;
    const record = this.readRecord(path);
    this.last = { path, record };
    return record;
  }

  private readRecord(path: string): { b: Buffer; segmentsAt: number } | undefined {
    const i = this.at.get(pathKey(path)) ?? -1;
    if (i < 0) return undefined;
    const file = this.where[i]! % 16;
    const offset = (this.where[i]! - file) / 16;
    const length = this.lengths[i]!;
    const b = this.bytesAt(file, offset, length);
    const nameLength = length >= 2 ? b.readUInt16LE(0) : length;
    if (2 + nameLength + 8 > length || b.toString('utf8', 2, 2 + nameLength) !== path) return undefined;
    return { b, segmentsAt: 2 + nameLength + 8 };
  }

  /** The `length` bytes at `offset` of hints file `file`: in its window (read there from `offset` on when they are not), or read alone when larger. */
  private bytesAt(file: number, offset: number, length: number): Buffer {
    const w = this.windows[file]!;
    const read = (into: Buffer) => onPath(this.files[file]!, WHAT, () => readSync(this.fds[file]!, into, 0, into.length, offset));
    if (length > w.bytes.length) {
      if (this.record.length < length) this.record = Buffer.allocUnsafe(length);
      const b = this.record.subarray(0, length);
      const n = read(b);
      if (n !== length) throw new Error(`${this.files[file]}: truncated at offset ${offset + n}`);
      return b;
    }
    if (offset < w.base || offset + length > w.base + w.have) {
      w.base = offset;
      w.have = read(w.bytes);
      if (w.have < length) throw new Error(`${this.files[file]}: truncated at offset ${offset + w.have}`);
    }
    return w.bytes.subarray(offset - w.base, offset - w.base + length);
  }

  close(): void {
    for (const fd of this.fds.splice(0)) closeSync(fd);
    this.windows.length = 0;
  }
}

/** Removes hints files (a build's scratch). */
export function removeHints(files: readonly string[]): void {
  for (const f of files) rmSync(f, { force: true });
}
