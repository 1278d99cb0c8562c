import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { heightValue, type HeightRecord, type OffChainRecord } from './rows.js';

export type { HeightRecord, OffChainRecord };

/** Bumped whenever the layout below changes: an index of another format means a full build. */
export const STORE_FORMAT = 6;

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
  addrCount: Database<Buffer, string>;
  names: Database<Buffer, Buffer>;
  offchain: Database<Buffer, string>;
  close(): Promise<void>;
}

export function openStore(dir: string): Store {
  const path = join(dir, 'lmdb');
  mkdirSync(path, { recursive: true });
  // The whole file mapped (lmdb-js' default on 64-bit), not `remapChunks`: in that mode a read
  // transaction that touches more than 4095 16-page chunks fails with MDB_TXN_FULL (mdb_rpage_get,
  // reference tracking of chunks is imperfect), as a render thread did on a hub address of a
  // 200k-tx chain. The mapping's pages count in RSS as page cache the kernel can reclaim.
  // batchStartThreshold: queued writes (`put` outside a transaction) start on lmdb-js' write
  // thread when the event turn that queued them ends, not after the first 1000: a write thread
  // that catches up with this one would be woken (a futex call) by every further put.
  const options = { path, noSubdir: false, noSync: true, noMemInit: true, maxDbs: 16, remapChunks: false, batchStartThreshold: 2 ** 30 };
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
    addrCount: root.openDB<Buffer, string>('addrCount', { encoding: 'binary' }),
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

/**
 * The commit of an asynchronous LMDB write (lmdb-js gives every write of a transaction the same
 * promise). lmdb-js rejects a failed commit twice: each write's promise ("Commit failed") and,
 * separately, the cause (`commitError`, LMDB's error with its errno). Both are handled here as
 * soon as the write is queued, so neither can end the process as an unhandled rejection while
 * the caller is busy elsewhere; the returned promise rejects with the cause.
 */
export function commitOf(write: Promise<unknown>): Promise<void> {
  const commit = write.then(
    () => undefined,
    async (e: { commitError?: Promise<unknown> } | undefined) => {
      if (e?.commitError) await e.commitError; // rejects with the cause
      throw e;
    },
  );
  commit.catch(() => {}); // awaited later (BlockApplier.settle): not unhandled meanwhile
  return commit;
}

/** An error of lmdb-js' for a failed commit: "Commit failed", the cause in `commitError`. */
function isCommitFailure(e: unknown): e is Error & { commitError: Promise<unknown> } {
  return e instanceof Error && (e as { commitError?: unknown }).commitError instanceof Promise;
}

/**
 * lmdb-js (3.5) opens each event turn's batch of queued writes with a write of its own whose
 * promise nobody holds: when that transaction's commit fails (a full disk), the promise is
 * rejected unhandled, and Node would end the process before the build reports the failure —
 * which it does through the commits it holds (commitOf). Until the returned function is called,
 * such rejections are left to those (and lmdb-js' own handler, attached when the store closes,
 * is not warned about); any other unhandled rejection is thrown, as Node does.
 */
export function leaveCommitFailuresToCommits(): () => void {
  const left = new WeakSet<Promise<unknown>>();
  const unhandled = (e: unknown, p: Promise<unknown>) => {
    if (!isCommitFailure(e)) throw e;
    left.add(p);
    e.commitError.catch(() => {});
  };
  // With a listener, Node leaves the warning to it: given for any other promise, as Node would.
  const handledLater = (p: Promise<unknown>) => {
    if (!left.has(p)) process.emitWarning('Promise rejection was handled asynchronously', 'PromiseRejectionHandledWarning');
  };
  process.on('unhandledRejection', unhandled);
  process.on('rejectionHandled', handledLater);
  // Removed a turn later: Node reports rejections handled late (by closing the store) after the
  // microtasks of the turn in which they were.
  return () =>
    setImmediate(() => {
      process.off('unhandledRejection', unhandled);
      process.off('rejectionHandled', handledLater);
    });
}
