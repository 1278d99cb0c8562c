import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { addressPath } from '../contract/layout.js';
import type { ChainIndex } from '../index/query.js';
import type { SiteWriter } from '../publish/writer.js';
import { startWorker } from '../publish/worker-start.js';
import type { AddressReply, AddressTask, AddressWorkerData } from './address-worker.js';
import type { TxTextStore } from './tx-text-store.js';

interface Thread {
  worker: Worker;
  /** Tasks posted and not answered yet: their addresses and work. */
  sent: Map<number, { addresses: string[]; work: number }>;
}

/**
 * Address documents rendered and written on a pool of threads (address-worker.ts), one per
 * core: the main thread hands out tasks of consecutive addresses to the least busy thread and
 * records the answers in the manifest through the writer. Every document depends only on the
 * index, so the output does not depend on which thread rendered what, nor in which order.
 */
export class AddressPool {
  private threads: Thread[] | undefined;
  private nextId = 0;
  private failure: Error | undefined;
  private waiters: (() => void)[] = [];
  private exited = false;

  constructor(
    private readonly index: ChainIndex,
    private readonly writer: SiteWriter,
    private readonly pretty: boolean,
    private readonly texts: TxTextStore,
    private readonly onDone: (work: number) => void,
    private readonly size = Math.max(1, Math.min(availableParallelism(), 4)),
    private readonly perThread = 2,
  ) {}

  private start(): Thread[] {
    const data: AddressWorkerData = {
      kind: 'snapshot-address-render',
      stateDir: dirname((this.index.store.root as unknown as { path: string }).path),
      spill: this.index.spill.path,
      network: this.index.net.name,
      pretty: this.pretty,
      root: this.writer.root,
      mode: this.writer.mode,
      texts: this.texts.table(),
    };
    return Array.from({ length: this.size }, () => {
      const t: Thread = { worker: startWorker(import.meta.url, './address-worker', data), sent: new Map() };
      t.worker.on('message', (m: AddressReply) => this.answer(t, m));
      t.worker.on('error', (e) => this.fail(e));
      t.worker.on('exit', (code) => {
        if (!this.exited) this.fail(new Error(`address render thread exited (code ${code}) before the end of the stage`));
      });
      return t;
    });
  }

  private answer(t: Thread, m: AddressReply): void {
    const task = t.sent.get(m.id)!;
    t.sent.delete(m.id);
    try {
      if (m.rendering) throw new Error(`rendering address ${m.path}: ${m.error}`);
      this.writer.recordWritten(task.addresses.map(addressPath), m.sizes!, m);
    } catch (e) {
      return this.fail(e as Error);
    }
    this.onDone(task.work);
    this.wake();
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private async waitUntil(done: () => boolean): Promise<void> {
    while (!done() && !this.failure) await new Promise<void>((r) => this.waiters.push(r));
    if (this.failure) throw this.failure;
  }

  /** Hands `addresses` (`work`: their outputs, for progress) to the least busy thread once one has room. */
  async submit(addresses: string[], work: number): Promise<void> {
    const threads = (this.threads ??= this.start());
    const least = () => threads.reduce((a, b) => (b.sent.size < a.sent.size ? b : a));
    await this.waitUntil(() => least().sent.size < this.perThread);
    const t = least();
    const id = this.nextId++;
    t.sent.set(id, { addresses, work });
    t.worker.postMessage({ id, addresses } satisfies AddressTask);
  }

  /** Waits for every task's answer, then ends the threads. */
  async finish(): Promise<void> {
    const threads = this.threads ?? [];
    await this.waitUntil(() => threads.every((t) => t.sent.size === 0));
    this.exited = true;
    await Promise.all(
      threads.map(
        (t) =>
          new Promise<void>((resolve) => {
            t.worker.once('exit', () => resolve());
            t.worker.postMessage('close');
          }),
      ),
    );
  }

  /** Ends the threads at once (after a failure). */
  async close(): Promise<void> {
    this.exited = true;
    await Promise.all((this.threads ?? []).map((t) => t.worker.terminate()));
  }
}
