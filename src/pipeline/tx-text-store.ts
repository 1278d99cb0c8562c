import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { onPath } from '../index/io-error.js';

/**
 * The /tx documents the txs stage rendered, for the address render threads (which embed each
 * tx in the documents of its addresses): the bytes appended to a scratch file beside the block
 * spill, and where each one is in a table shared with the threads (SharedArrayBuffer, open
 * addressing by the txid's first 8 bytes). Memory: 16 bytes a slot, at most half the slots
 * used; the texts stay in the file (the OS caches it). A reader checks that the text it found
 * is that txid's, so a key collision costs a re-render, never a wrong document.
 */
export interface TxTextTable {
  path: string;
  slots: SharedArrayBuffer;
}

/** Per slot: key high, key low, offset low 32 bits, offset high 8 bits << 24 | length (0: empty). */
const WORDS = 4;
const MAX_LENGTH = (1 << 24) - 1;
const MAX_OFFSET = 2 ** 40;

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

/** The main thread's side: appends texts (first one of a txid wins, like the /tx cache did). */
export class TxTextStore {
  private readonly fd: number;
  private size = 0;
  private slots = newSlots(1 << 16);
  private used = 0;
  private chunk = Buffer.allocUnsafe(1 << 20);
  private chunkLength = 0;

  constructor(readonly path: string) {
    this.fd = onPath(path, 'tx text scratch file', () => openSync(path, 'w+'));
  }

  add(txid: string, text: Uint8Array): void {
    if (text.length === 0 || text.length > MAX_LENGTH || this.size + text.length > MAX_OFFSET) return;
    const [k1, k2] = keyOf(txid);
    let w = slotOf(this.slots, k1, k2);
    if (this.slots[w + 3] !== 0) return;
    if (++this.used * 2 > this.slots.length / WORDS) {
      this.grow();
      w = slotOf(this.slots, k1, k2);
    }
    const offset = this.size;
    this.slots.set([k1, k2, offset >>> 0, (Math.floor(offset / 2 ** 32) << 24) | text.length], w);
    if (this.chunkLength + text.length > this.chunk.length) this.flushChunk();
    if (text.length > this.chunk.length) this.writeAll(text);
    else {
      this.chunk.set(text, this.chunkLength);
      this.chunkLength += text.length;
    }
    this.size += text.length;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = newSlots((old.length / WORDS) * 2);
    for (let w = 0; w < old.length; w += WORDS) if (old[w + 3] !== 0) this.slots.set(old.subarray(w, w + WORDS), slotOf(this.slots, old[w]!, old[w + 1]!));
  }

  private writeAll(bytes: Uint8Array): void {
    onPath(this.path, 'tx text scratch file', () => {
      for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done);
    });
  }

  private flushChunk(): void {
    this.writeAll(this.chunk.subarray(0, this.chunkLength));
    this.chunkLength = 0;
  }

  /** Everything added so far, for the readers. */
  table(): TxTextTable {
    this.flushChunk();
    return { path: this.path, slots: this.slots.buffer as SharedArrayBuffer };
  }

  /** Closes and removes the scratch file. */
  close(): void {
    closeSync(this.fd);
    rmSync(this.path, { force: true });
  }
}

/** A render thread's side. */
export class TxTextReader {
  private readonly fd: number;
  private readonly slots: Uint32Array;

  constructor(private readonly table: TxTextTable) {
    this.fd = onPath(table.path, 'tx text scratch file', () => openSync(table.path, 'r'));
    this.slots = new Uint32Array(table.slots);
  }

  /** The text of `txid` (display hex) if the txs stage stored it. */
  find(txid: string): Buffer | undefined {
    const [k1, k2] = keyOf(txid);
    const w = slotOf(this.slots, k1, k2);
    const last = this.slots[w + 3]!;
    if (last === 0) return undefined;
    const length = last & MAX_LENGTH;
    const offset = this.slots[w + 2]! + (last >>> 24) * 2 ** 32;
    const text = Buffer.allocUnsafe(length);
    for (let done = 0; done < length; ) {
      const n = onPath(this.table.path, 'tx text scratch file', () => readSync(this.fd, text, done, length - done, offset + done));
      if (n === 0) throw new Error(`tx text scratch file ${this.table.path} ends early at offset ${offset + done}`);
      done += n;
    }
    // The first 8 bytes of a txid may be another's: the document names its tx near its start.
    return text.subarray(0, 100).includes(txid) ? text : undefined;
  }

  close(): void {
    closeSync(this.fd);
  }
}
