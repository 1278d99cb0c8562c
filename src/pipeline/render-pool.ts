import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { ShardSpec } from '../contract/shard.js';
import type { ChainIndex } from '../index/query.js';
import type { SiteWriter } from '../publish/site-writer.js';
import { WorkerThread } from '../runtime/thread.js';
import { Renderer, type RenderReply, type RenderRequest, type RenderTask, type RenderWorkerData } from './render-worker.js';
import { MAX_TEXT_FILES, TxTextStore } from './tx-text-store.js';
import { noReuse, type AddressReuseCounts, type ChangedTxs } from './address-document.js';
import { ThreadGate } from '../runtime/thread-gate.js';
import { removeHints } from '../pack/hints.js';

/** One render thread a core; each has a scratch file of tx texts, and two are the store's own. */
const POOL_SIZE = Math.max(1, Math.min(availableParallelism(), MAX_TEXT_FILES - 2));
/** Tasks queued a thread: one running and the next ready, so a thread never waits for the main thread. */
const TASKS_PER_THREAD = 2;
import { BLOCK_DOCUMENT_KINDS, type BlockDocumentCounts } from './block-files.js';

interface Thread {
  worker: WorkerThread<RenderRequest, RenderReply>;
  /** Its file number in the tx text store. */
  file: number;
  /** Tasks posted and not answered yet, with what to call when each is done. */
  sent: Map<number, () => void>;
  textsSent: boolean;
}

export interface RenderPoolOptions {
  pretty: boolean;
  /** The base name of the threads' tx text scratch files (tx-text-store.ts). */
  textsBase: string;
  /** Txids that occur more than once in the chain (their files are left to the main thread). */
  duplicates: readonly string[];
  /** True when the scan wrote the `.bin` and `.hex` files (writeRawFiles): the threads write only the documents. */
  rawWritten: boolean;
  /** A stage of at most this many txs or address outputs runs on the main thread (default 4096). */
  threadsAbove?: number;
  /** A shard build: the threads write only this shard's files and open the index read-only. */
  shard?: ShardSpec;
  /** A pack build: the base name of the threads' recipe hints files (see hintFiles). */
  hintsBase?: string;
  /** A pack build's private tree: its address documents listed (a fresh build), or the pack they are in (RenderWorkerData.listAddresses, previousPack). */
  pack?: PackRender;
}

/** How a pack build's render threads treat its address documents (site/build/pack.ts listsAddresses; RenderWorkerData). */
export interface PackRender {
  listAddresses: boolean;
  previousPack?: string;
}

/**
 * The txs, blocks and address documents rendered and written on a pool of threads
 * (render-worker.ts), one per core: the main thread hands out tasks (consecutive heights,
 * consecutive addresses) to the least busy thread and counts the answers through the writer
 * (each thread keeps the manifest rows of its files: `seal` writes out the last ones). Every
 * document depends only on the index, so the output does not depend on which thread rendered
 * what, nor in which order. A stage with little work (at most
 * `threadsAbove` txs or address outputs) runs its tasks on the main thread instead, with the same
 * code (starting threads costs more than such a stage).
 */
export class RenderPool {
  readonly texts: TxTextStore;
  /** An incremental build's changed txs, sent with the texts before the first addresses task (address-document.ts). */
  changedTxs: ChangedTxs | undefined;
  /** What the address documents reused from their previous versions (incremental builds). */
  readonly addressReuse: AddressReuseCounts = noReuse();
  private threads: Thread[] | undefined;
  private nextId = 0;
  private readonly gate = new ThreadGate();
  private skipped: [number, number][] = [];
  /** How the block documents were made so far. */
  readonly blockDocuments: BlockDocumentCounts = { rendered: 0, spliced: 0, fallback: 0 };
  private inline: Renderer | undefined;
  private inlineStage = false;
  private inlineTexts = false;

  constructor(
    private readonly index: ChainIndex,
    private readonly writer: SiteWriter,
    private readonly opts: RenderPoolOptions,
  ) {
    this.texts = new TxTextStore(opts.textsBase);
    removeHints(this.hintFiles); // a killed build's are not this one's
  }

  /** The recipe hints files the renderers write (src/pack/hints.ts): one a thread and the main thread's, those that exist. */
  get hintFiles(): string[] {
    if (this.opts.hintsBase === undefined) return [];
    return [...Array.from({ length: POOL_SIZE }, (_, i) => this.hintsFile(i)!), this.hintsFile('m')!].filter((f) => existsSync(f));
  }

  private hintsFile(thread: number | 'm'): string | undefined {
    return this.opts.hintsBase === undefined ? undefined : `${this.opts.hintsBase}.${thread}`;
  }

  /** How many render threads were started (0: everything ran on the main thread). */
  get threadCount(): number {
    return this.threads?.length ?? 0;
  }

  private data(): Omit<RenderWorkerData, 'textFile' | 'rowsName'> {
    return {
      kind: 'snapshot-render',
      stateDir: this.index.store.dir,
      spill: this.index.spill.path,
      network: this.index.net.name,
      pretty: this.opts.pretty,
      root: this.writer.root,
      update: this.writer.update,
      duplicates: [...this.opts.duplicates],
      rowsDir: this.writer.rowsDir,
      rawWritten: this.opts.rawWritten,
      listTxRaw: this.writer.listTxRaw,
      listAddresses: this.opts.pack?.listAddresses ?? false,
      ...(this.opts.pack?.previousPack !== undefined && { previousPack: this.opts.pack.previousPack }),
      ...(this.opts.shard && { shard: this.opts.shard }),
    };
  }

  private start(): Thread[] {
    const data = this.data();
    return Array.from({ length: POOL_SIZE }, (_, i) => {
      const file = i + 1;
      const init: RenderWorkerData = { ...data, textFile: this.texts.path(file), rowsName: `r${i}`, hintsFile: this.hintsFile(i) };
      const worker = new WorkerThread<RenderRequest, RenderReply>(`render thread ${i}`, import.meta.url, './render-worker', init, {
        message: (m) => this.answer(t, m), // posted after `t` is set below
        failed: (e) => this.gate.fail(e),
      }, { before: 'the end of the build' });
      const t: Thread = { worker, file, sent: new Map(), textsSent: false };
      return t;
    });
  }

  private answer(t: Thread, m: RenderReply): void {
    const done = t.sent.get(m.id)!;
    t.sent.delete(m.id);
    this.record(t.file, m, done);
  }

  private record(file: number, m: RenderReply, done: () => void): void {
    try {
      if (m.rendering) throw new Error(`rendering ${m.path}: ${m.error}`);
      this.writer.recordWritten(m.paths ?? [], m);
      this.sealedRows += m.sealed ?? 0;
      if (m.texts) this.texts.addEntries(file, m.texts);
      for (const kind of BLOCK_DOCUMENT_KINDS) this.blockDocuments[kind] += m.blockDocuments?.[kind] ?? 0;
      if (m.reuse) for (const k of Object.keys(m.reuse) as (keyof AddressReuseCounts)[]) this.addressReuse[k] += m.reuse[k];
      for (let i = 0; i < (m.skipped?.length ?? 0); i += 2) this.skipped.push([m.skipped![i]!, m.skipped![i + 1]!]);
    } catch (e) {
      return this.gate.fail(e as Error);
    }
    done();
    this.gate.wake();
  }

  /** Starts a stage of `work` txs or address outputs: on the main thread if small and no thread runs yet. */
  plan(work: number): void {
    this.inlineStage = this.threads === undefined && work <= (this.opts.threadsAbove ?? 4096);
  }

  /**
   * Hands a task to the least busy thread once one has room; `onDone` runs when it is
   * answered. Address tasks wait for every heights task (they read the texts those stored).
   */
  async submit(task: Exclude<RenderTask, { kind: 'texts' | 'seal' }>, onDone: () => void): Promise<void> {
    if (this.inlineStage) {
      const file = MAX_TEXT_FILES - 1;
      this.inline ??= new Renderer(this.index, { ...this.data(), textFile: this.texts.path(file), rowsName: 'm', hintsFile: this.hintsFile('m') });
      if (task.kind === 'addresses' && !this.inlineTexts) {
        await this.inline.run(-1, { kind: 'texts', table: this.texts.table(), changed: this.changedTxs });
        this.inlineTexts = true;
      }
      this.record(file, (await this.inline.run(-1, task))![0], onDone);
      if (this.gate.failure) throw this.gate.failure;
      return;
    }
    const threads = (this.threads ??= this.start());
    if (task.kind === 'addresses' && threads.some((t) => !t.textsSent)) {
      await this.drain();
      const table = this.texts.table();
      for (const t of threads) {
        t.worker.post({ id: -1, task: { kind: 'texts', table, changed: this.changedTxs } });
        t.textsSent = true;
      }
    }
    const least = () => threads.reduce((a, b) => (b.sent.size < a.sent.size ? b : a));
    await this.gate.waitUntil(() => least().sent.size < TASKS_PER_THREAD);
    const t = least();
    const id = this.nextId++;
    t.sent.set(id, onDone);
    t.worker.post({ id, task });
  }

  /** Rows the threads' logs wrote out (after {@link seal}). */
  sealedRows = 0;

  /** After the last task: every thread (and the main thread's renderer) writes out its last manifest rows. */
  async seal(): Promise<void> {
    await this.drain();
    if (this.inline) this.record(-1, (await this.inline.run(-1, { kind: 'seal' }))![0], () => undefined);
    if (this.gate.failure) throw this.gate.failure;
    for (const t of this.threads ?? []) {
      const id = this.nextId++;
      t.sent.set(id, () => undefined);
      t.worker.post({ id, task: { kind: 'seal' } });
    }
    await this.drain();
  }

  /** Waits until every task is answered. */
  drain(): Promise<void> {
    return this.gate.waitUntil(() => (this.threads ?? []).every((t) => t.sent.size === 0));
  }

  /** The [height, txIndex] of the duplicate txids the threads left out so far, in chain order. */
  takeSkipped(): [number, number][] {
    const s = this.skipped.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    this.skipped = [];
    return s;
  }

  /** Ends the threads (at once after a failure) and removes the text scratch files. */
  async close(): Promise<void> {
    const threads = this.threads ?? [];
    if (this.gate.failure || threads.some((t) => t.sent.size > 0)) await Promise.all(threads.map((t) => t.worker.terminate()));
    else await Promise.all(threads.map((t) => t.worker.close('close')));
    await this.inline?.close();
    this.texts.close();
  }
}
