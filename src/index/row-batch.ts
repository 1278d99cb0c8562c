import type { Database } from 'lmdb';
import type { Store } from './store.js';

/** The tables the scan writes, numbered as in an encoded batch. */
const TABLES = ['heights', 'spent', 'coinbases', 'txloc', 'addrOuts', 'names'] as const;
export type RowTable = (typeof TABLES)[number];
type Key = Buffer | number;

const TABLE_ID = new Map<RowTable, number>(TABLES.map((t, i) => [t, i]));
const REMOVE = 0x80;

/** Where the rows of a batch go: the index in the current transaction, or a {@link RowBatch}. */
export interface RowSink {
  put(table: RowTable, key: Key, value: Buffer): void;
  remove(table: RowTable, key: Key): void;
}

const table = (store: Store, t: RowTable) => store[t] as unknown as Database<Buffer, Key>;

/** Writes each row at once into the transaction this thread holds (inside `transactionSync`). */
export function directRows(store: Store): RowSink {
  return {
    put: (t, key, value) => void table(store, t).putSync(key, value),
    remove: (t, key) => void table(store, t).removeSync(key),
  };
}

/**
 * The rows of one batch of the scan as bytes, for the index write thread (commit-worker.ts),
 * which writes them in one transaction with {@link writeRows}. A row: u8 table number (| 0x80
 * for a removal) ‖ key ‖ (put only) u32 LE value length ‖ value. The key: `heights` u32 LE,
 * the others u16 LE length ‖ bytes.
 */
export class RowBatch implements RowSink {
  private buf = Buffer.from(new ArrayBuffer(1 << 20));
  private at = 0;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.from(new ArrayBuffer(Math.max(this.buf.length * 2, this.at + n)));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }

  private key(t: RowTable, op: number, key: Key): void {
    if (typeof key === 'number') {
      if (t !== 'heights') throw new Error(`internal: a number key for ${t}`);
      this.room(5);
      this.buf[this.at] = TABLE_ID.get(t)! | op;
      this.buf.writeUInt32LE(key, this.at + 1);
      this.at += 5;
      return;
    }
    this.room(3 + key.length + 4);
    this.buf[this.at] = TABLE_ID.get(t)! | op;
    this.buf.writeUInt16LE(key.length, this.at + 1);
    key.copy(this.buf, this.at + 3);
    this.at += 3 + key.length;
  }

  put(t: RowTable, key: Key, value: Buffer): void {
    this.key(t, 0, key);
    this.room(4 + value.length);
    this.buf.writeUInt32LE(value.length, this.at);
    value.copy(this.buf, this.at + 4);
    this.at += 4 + value.length;
  }

  remove(t: RowTable, key: Key): void {
    this.key(t, REMOVE, key);
  }

  /** The encoded rows (the batch is not to be used afterwards: its memory may be transferred). */
  bytes(): Uint8Array {
    return new Uint8Array(this.buf.buffer, 0, this.at);
  }
}

/** Writes the rows of an encoded {@link RowBatch} into `sink` (the write thread: the index, in its transaction). */
export function writeRows(bytes: Uint8Array, sink: RowSink): void {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  while (at < buf.length) {
    const head = buf[at]!;
    const t = TABLES[head & ~REMOVE];
    if (t === undefined) throw new Error(`internal: row batch: table number ${head & ~REMOVE} at byte ${at}`);
    let key: Key;
    if (t === 'heights') {
      key = buf.readUInt32LE(at + 1);
      at += 5;
    } else {
      const n = buf.readUInt16LE(at + 1);
      key = buf.subarray(at + 3, at + 3 + n);
      at += 3 + n;
    }
    if (head & REMOVE) {
      sink.remove(t, key);
      continue;
    }
    const n = buf.readUInt32LE(at);
    sink.put(t, key, buf.subarray(at + 4, at + 4 + n));
    at += 4 + n;
  }
}
