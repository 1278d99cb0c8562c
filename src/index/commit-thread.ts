import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { WorkerThread } from '../runtime/thread.js';
import type { RowBatch } from './row-batch.js';
import type { WriteReply, WriteRequest, WriteWorkerData } from './commit-worker.js';

/**
 * The thread that writes a full build's scan into the index (commit-worker.ts): each batch of
 * rows (RowBatch) is one LMDB transaction there, committed while this thread parses and applies
 * the next batch. Its own thread and transactions rather than lmdb-js' asynchronous writes,
 * whose batches start and finish through this thread's event loop, which the scan keeps busy in
 * long synchronous turns, so the scan would wait for its own commits.
 */
export class IndexWriteThread {
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private seq = 0;
  private failure: Error | undefined;
  private readonly thread: WorkerThread<WriteRequest, never>;
  private readonly replies: MessagePort;

  private constructor(stateDir: string) {
    const { port1, port2 } = new MessageChannel();
    const data: WriteWorkerData = { kind: 'snapshot-index-write', stateDir, replies: port2 };
    this.replies = port1;
    this.replies.on('message', (m: WriteReply) => this.answer(m));
    this.replies.unref();
    this.thread = new WorkerThread('index write thread', import.meta.url, './commit-worker', data, {
      failed: (e) => this.fail(e),
      // A batch still unanswered once the thread is gone (its last answers read first) was lost with it.
      exited: (code) => {
        this.drainReplies();
        if (this.waiting.size > 0) this.fail(new Error(`index write thread exited (code ${code}) before the end of the scan`));
      },
    }, { transferList: [port2], before: 'the end of the scan' });
  }

  static start(stateDir: string): IndexWriteThread {
    return new IndexWriteThread(stateDir);
  }

  private answer(m: WriteReply): void {
    const w = this.waiting.get(m.seq);
    if (!w) return;
    if (!m.error) {
      this.waiting.delete(m.seq);
      return w.resolve();
    }
    // LMDB's errno (a number) and its stack, as the index's own errors carry them (isStoreError, ioError).
    const e = Object.assign(new Error(m.error.message), { code: m.error.code });
    if (m.error.stack) e.stack = m.error.stack;
    this.fail(e); // this batch's and every later one's
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const w of this.waiting.values()) w.reject(this.failure);
    this.waiting.clear();
  }

  private drainReplies(): void {
    for (let m = receiveMessageOnPort(this.replies); m; m = receiveMessageOnPort(this.replies)) this.answer(m.message as WriteReply);
  }

  /** Throws the thread's failure, if a batch failed: its answers are read here at once, not when this thread next waits. */
  check(): void {
    this.drainReplies();
    if (this.failure) throw this.failure;
  }

  /** Sends the batch's rows (their memory moves to the thread); resolves once they are committed. */
  write(batch: RowBatch): Promise<void> {
    if (this.failure) {
      const failed = Promise.reject(this.failure);
      failed.catch(() => {}); // as below
      return failed;
    }
    const seq = this.seq++;
    const rows = batch.bytes();
    const committed = new Promise<void>((resolve, reject) => this.waiting.set(seq, { resolve, reject }));
    committed.catch(() => {}); // awaited later (BlockApplier.settle): not unhandled meanwhile
    this.thread.post({ seq, rows }, [rows.buffer as ArrayBuffer]);
    return committed;
  }

  /** Ends the thread once the batches sent are done, closing its handle on the index. */
  async close(): Promise<void> {
    await this.thread.close('close'); // after a crash at once (its error is the failure)
  }
}
