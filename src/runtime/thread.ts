import type { Transferable, Worker, WorkerOptions } from 'node:worker_threads';
import { startWorker } from './from-source.js';

/** What a {@link WorkerThread}'s owner hears from it. */
export interface ThreadEvents<Reply> {
  /** A message the thread posted. */
  message?(m: Reply): void;
  /**
   * The thread failed: an error it did not catch (its message starts with the thread's name),
   * or it exited before its owner closed it. Called at most once per thread.
   */
  failed(e: Error): void;
  /** The thread exited (after `failed`, if it was not closed). */
  exited?(code: number): void;
}

export interface ThreadOptions {
  /** What `data` hands over to the thread (a MessagePort). */
  transferList?: WorkerOptions['transferList'];
  /** What an unexpected exit came before, for its error: "the end of the build". */
  before?: string;
}

/**
 * One long-lived worker thread of this program (the index write thread, the render threads, the
 * writer threads): started from a module beside the caller (runtime/from-source.ts), its
 * failures reported once and named after it, and closed either by a message it answers by
 * exiting (after the work queued before it) or by terminating it at once.
 */
export class WorkerThread<Request = unknown, Reply = unknown> {
  private readonly worker: Worker;
  private ending = false;
  private done = false;
  private readonly exit: Promise<void>;

  /**
   * `from`: the caller's import.meta.url; `module`: the worker module beside it ('./render-worker');
   * `name`: the thread, as errors name it ("render thread 2").
   */
  constructor(
    readonly name: string,
    from: string,
    module: string,
    data: object,
    events: ThreadEvents<Reply>,
    options: ThreadOptions = {},
  ) {
    this.worker = startWorker(from, module, data, options.transferList);
    let failed = false;
    const fail = (e: Error) => {
      if (failed) return;
      failed = true;
      events.failed(e);
    };
    if (events.message) this.worker.on('message', events.message);
    this.worker.on('error', (e) => fail(named(name, e)));
    this.exit = new Promise((resolve) =>
      this.worker.once('exit', (code) => {
        this.done = true;
        if (!this.ending) fail(new Error(`${name} exited (code ${code}) before ${options.before ?? 'it was closed'}`));
        events.exited?.(code);
        resolve();
      }),
    );
  }

  /** Whether the thread has exited. */
  get exited(): boolean {
    return this.done;
  }

  post(m: Request, transferList?: readonly Transferable[]): void {
    this.worker.postMessage(m, transferList);
  }

  /** Sends `message` (which the thread answers by exiting, after what was sent before) and waits for the exit. */
  async close(message: Request): Promise<void> {
    this.ending = true;
    if (this.done) return;
    this.worker.postMessage(message);
    await this.exit;
  }

  /** Stops the thread at once. */
  async terminate(): Promise<void> {
    this.ending = true;
    if (this.done) return;
    await this.worker.terminate();
    await this.exit;
  }
}

/** An error a thread did not catch, its message prefixed with the thread's name; its stack and errno code kept. */
function named(name: string, e: Error): Error {
  const err = new Error(`${name}: ${e.message}`, { cause: e });
  const code = (e as { code?: unknown }).code;
  if (code !== undefined) Object.assign(err, { code });
  if (e.stack) err.stack = `${name}: ${e.stack}`;
  return err;
}
