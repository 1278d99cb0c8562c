import { closeSync, openSync, rmSync } from 'node:fs';
import { onPath, readAll, writeAll } from '../runtime/io-error.js';

/**
 * The /tx documents the txs stage rendered, for the address render threads (which embed each
 * tx in the documents of its addresses): the bytes appended to scratch files beside the block
 * spill (one per thread that renders txs, so none waits for another), and where each one is in
 * a table shared with the threads (SharedArrayBuffer, open addressing by the txid's first 8
 * bytes). Memory: 16 bytes a slot, at most half the slots used; the texts stay in the files
 * (the OS caches them). A reader checks that the text it found is that txid's, so a key
 * collision costs a re-render, never a wrong document.
 */
export interface TxTextTable {
  paths: string[];
  slots: SharedArrayBuffer;
}

/** Texts one thread appended: where each is in its file. */
export interface TxTextEntries {
  txids: string[];
  offsets: Float64Array;
  lengths: Uint32Array;
}

/** Per slot: key high, key low, offset low 32 bits, file << 28 | offset high 4 bits << 24 | length (0: empty). */
const WORDS = 4;
const MAX_LENGTH = (1 << 24) - 1;
const MAX_OFFSET = 2 ** 36;
export const MAX_TEXT_FILES = 16;
const WHAT = 'tx text scratch file';

function keyOf(txid: string): [number, number] {
  return [parseInt(txid.slice(0, 8), 16) >>> 0, parseInt(txid.slice(8, 16), 16) >>> 0];
}

function newSlots(capacity: number): Uint32Array {
  return new Uint32Array(new SharedArrayBuffer(capacity * WORDS * 4));
}

/** The slot of `txid` in `slots`: its own, or the empty one where it would go. */
function slotOf(slots: Uint32Array, k1: number, k2: number): number {
  const mask = slots.length / WORDS - 1;
  for (let i = k2 & mask; ; i = (i + 1) & mask) {
    const w = i * WORDS;
    if (slots[w + 3] === 0 || (slots[w] === k1 && slots[w + 1] === k2)) return w;
  }
}

/** Appends texts to one scratch file (a thread's own), remembering where each went. */
export class TxTextAppender {
  private readonly fd: number;
  private size = 0;
  private chunk = Buffer.allocUnsafe(1 << 20);
  private chunkLength = 0;
  private txids: string[] = [];
  private offsets: number[] = [];
  private lengths: number[] = [];

  constructor(readonly path: string) {
    this.fd = onPath(path, WHAT, () => openSync(path, 'w+'));
  }

  append(txid: string, text: Uint8Array): void {
    if (text.length === 0 || text.length > MAX_LENGTH || this.size + text.length > MAX_OFFSET) return;
    this.txids.push(txid);
    this.offsets.push(this.size);
    this.lengths.push(text.length);
    if (this.chunkLength + text.length > this.chunk.length) this.flush();
    if (text.length > this.chunk.length) this.writeAll(text);
    else {
      this.chunk.set(text, this.chunkLength);
      this.chunkLength += text.length;
    }
    this.size += text.length;
  }

  private writeAll(bytes: Uint8Array): void {
    onPath(this.path, WHAT, () => {
      writeAll(this.fd, bytes);
    });
  }

  private flush(): void {
    this.writeAll(this.chunk.subarray(0, this.chunkLength));
    this.chunkLength = 0;
  }

  /** The texts appended since the last call, all written to the file. */
  take(): TxTextEntries {
    this.flush();
    const e = { txids: this.txids, offsets: Float64Array.from(this.offsets), lengths: Uint32Array.from(this.lengths) };
    this.txids = [];
    this.offsets = [];
    this.lengths = [];
    return e;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * The main thread's side: the shared table, the texts it appends itself (file 0), and the
 * entries of the files the render threads append to (files 1..). The first text of a txid wins.
 */
export class TxTextStore {
  private slots = newSlots(1 << 16);
  private used = 0;
  private own: TxTextAppender | undefined;
  private readonly paths: string[];

  constructor(readonly base: string) {
    this.paths = Array.from({ length: MAX_TEXT_FILES }, (_, i) => `${base}.${i}`);
  }

  /** The scratch file a render thread appends to (1 ≤ file < MAX_TEXT_FILES). */
  path(file: number): string {
    return this.paths[file]!;
  }

  add(txid: string, text: Uint8Array): void {
    (this.own ??= new TxTextAppender(this.paths[0]!)).append(txid, text);
    this.addEntries(0, this.own.take());
  }

  /** Records texts a thread appended to `file` (in this order: the first of a txid wins). */
  addEntries(file: number, { txids, offsets, lengths }: TxTextEntries): void {
    txids.forEach((txid, i) => {
      const [k1, k2] = keyOf(txid);
      let w = slotOf(this.slots, k1, k2);
      if (this.slots[w + 3] !== 0) return;
      if (++this.used * 2 > this.slots.length / WORDS) {
        this.grow();
        w = slotOf(this.slots, k1, k2);
      }
      const offset = offsets[i]!;
      this.slots.set([k1, k2, offset >>> 0, ((file << 28) | (Math.floor(offset / 2 ** 32) << 24) | lengths[i]!) >>> 0], w);
    });
  }

  private grow(): void {
    const old = this.slots;
    this.slots = newSlots((old.length / WORDS) * 2);
    for (let w = 0; w < old.length; w += WORDS) if (old[w + 3] !== 0) this.slots.set(old.subarray(w, w + WORDS), slotOf(this.slots, old[w]!, old[w + 1]!));
  }

  /** Everything recorded so far, for the readers. */
  table(): TxTextTable {
    return { paths: this.paths, slots: this.slots.buffer as SharedArrayBuffer };
  }

  /** Closes and removes the scratch files. */
  close(): void {
    this.own?.close();
    for (const p of this.paths) rmSync(p, { force: true });
  }
}

/** A render thread's side. */
export class TxTextReader {
  private readonly fds: (number | undefined)[] = [];
  private readonly slots: Uint32Array;

  constructor(private readonly table: TxTextTable) {
    this.slots = new Uint32Array(table.slots);
  }

  /** The text of `txid` (display hex) if the txs stage stored it. */
  find(txid: string): Buffer | undefined {
    const [k1, k2] = keyOf(txid);
    const w = slotOf(this.slots, k1, k2);
    const last = this.slots[w + 3]!;
    if (last === 0) return undefined;
    const file = last >>> 28;
    const path = this.table.paths[file]!;
    const fd = (this.fds[file] ??= onPath(path, WHAT, () => openSync(path, 'r')));
    const length = last & MAX_LENGTH;
    const offset = this.slots[w + 2]! + ((last >>> 24) & 15) * 2 ** 32;
    const text = Buffer.allocUnsafe(length);
    readAll(fd, text, length, offset, path, WHAT);
    // The first 8 bytes of a txid may be another's: the document names its tx near its start
    // (at byte 9 of a compact one, `{"hash":"<txid>"`; a little further in a pretty one).
    return text.toString('latin1', 9, 9 + 64) === txid || text.subarray(0, 100).includes(txid) ? text : undefined;
  }

  close(): void {
    for (const fd of this.fds) if (fd !== undefined) closeSync(fd);
  }
}
