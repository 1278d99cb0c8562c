import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { LMDB_DIR } from './files.js';
import { heightValue, type HeightRecord, type OffChainRecord } from './rows.js';

export type { HeightRecord, OffChainRecord };

/** Bumped whenever the layout below changes: an index of another format means a full build. */
export const STORE_FORMAT = 8;

/**
 * The persistent index (LMDB) beside the output: everything that needs
 * global knowledge and would not fit in JS maps on a real chain, kept
 * between runs so that the next build only does the new work. The tables and
 * their row layouts: docs/index-schema.md; the row codecs: rows.ts.
 */
export interface Store {
  /** The state directory it was opened in (the index is its `lmdb/`). */
  dir: string;
  root: RootDatabase;
  meta: Database<Buffer, string>;
  heights: Database<Buffer, number>;
  spent: Database<Buffer, Buffer>;
  coinbases: Database<Buffer, Buffer>;
  txloc: Database<Buffer, Buffer>;
  addrOuts: Database<Buffer, Buffer>;
  names: Database<Buffer, Buffer>;
  offchain: Database<Buffer, string>;
  close(): Promise<void>;
}

/** `readOnly`: many processes may read one index at once (shard builds); nothing is created or written in `dir`. */
export function openStore(dir: string, { readOnly = false }: { readOnly?: boolean } = {}): Store {
  const path = join(dir, LMDB_DIR);
  if (!readOnly) mkdirSync(path, { recursive: true });
  // The whole file mapped (lmdb-js' default on 64-bit), not `remapChunks`: in that mode a read
  // transaction that touches more than 4095 16-page chunks fails with MDB_TXN_FULL (mdb_rpage_get,
  // reference tracking of chunks is imperfect), as a render thread can on a hub address. The
  // mapping's pages count in RSS as page cache the kernel can reclaim.
  // `mapSize` 1 TiB of address space (the file still grows only as it is written): lmdb-js
  // starts at 128 KB and doubles the map as the file grows, keeping every older map for readers
  // still on it, so each page read through two maps would count twice in RSS. Mapped once at
  // this size, an index is counted once.
  // Every write is synchronous (`putSync`, `transactionSync`; a full build's scan on its own
  // thread: commit-thread.ts): a failed write throws LMDB's error where it happened, and no
  // asynchronous commit of lmdb-js can fail with nobody holding its promise.
  const options = { path, noSubdir: false, noSync: true, noMemInit: true, maxDbs: 16, remapChunks: false, mapSize: 2 ** 40, readOnly };
  const root = open(options) as RootDatabase;
  const binary = { keyEncoding: 'binary', encoding: 'binary' } as const;
  return {
    dir,
    root,
    meta: root.openDB<Buffer, string>('meta', { encoding: 'binary' }),
    heights: root.openDB<Buffer, number>('heights', { keyEncoding: 'uint32', encoding: 'binary' }),
    spent: root.openDB<Buffer, Buffer>('spent', binary),
    coinbases: root.openDB<Buffer, Buffer>('coinbases', binary),
    txloc: root.openDB<Buffer, Buffer>('txloc', binary),
    addrOuts: root.openDB<Buffer, Buffer>('addrOuts', binary),
    names: root.openDB<Buffer, Buffer>('names', binary),
    offchain: root.openDB<Buffer, string>('offchain', { encoding: 'binary' }),
    close: () => root.close(),
  };
}

/** True for an error thrown by LMDB (its errno is a number; Node's are strings). */
export function isStoreError(e: unknown): boolean {
  return typeof (e as { code?: unknown })?.code === 'number' || /[\\/]lmdb[\\/]/.test(String((e as Error)?.stack ?? ''));
}

/** The record of main-chain block `height`, if indexed. */
export function heightRecordAt(store: Store, height: number): HeightRecord | undefined {
  const v = store.heights.get(height);
  return v ? heightValue.decode(v) : undefined;
}
