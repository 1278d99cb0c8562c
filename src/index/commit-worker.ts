import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { directRows, writeRows } from './row-batch.js';
import { openStore } from './store.js';

/** What the index write thread is started with (commit-thread.ts). */
export interface WriteWorkerData {
  kind: 'snapshot-index-write';
  stateDir: string;
  /** Where the answers go (the main thread reads them synchronously too: IndexWriteThread.check). */
  replies: MessagePort;
}

/** A batch to write: its encoded rows (RowBatch), or the end. */
export type WriteRequest = { seq: number; rows: Uint8Array } | 'close';

/** The answer to a batch: committed, or the error (LMDB's errno in `code`). */
export interface WriteReply {
  seq: number;
  error?: { message: string; code: unknown; stack: string | undefined };
}

if (parentPort && (workerData as WriteWorkerData | undefined)?.kind === 'snapshot-index-write') {
  const port = parentPort;
  const { stateDir, replies } = workerData as WriteWorkerData;
  const store = openStore(stateDir);
  const sink = directRows(store);
  port.on('message', (m: WriteRequest) => {
    if (m === 'close') {
      // The thread then ends, and lmdb-js closes its handle on the index with it (as for the render
      // threads). Not store.close(): after a failed commit its promise never settles.
      replies.close();
      port.close();
      return;
    }
    let reply: WriteReply;
    try {
      store.root.transactionSync(() => writeRows(m.rows, sink));
      reply = { seq: m.seq };
    } catch (e) {
      const err = e as Error & { code?: unknown };
      reply = { seq: m.seq, error: { message: err.message, code: err.code, stack: err.stack } };
    }
    replies.postMessage(reply);
  });
}
