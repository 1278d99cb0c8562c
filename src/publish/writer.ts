import { Worker } from 'node:worker_threads';
import type { Database } from 'lmdb';
import { ioError } from '../index/io-error.js';
import { ABSENT, DELETED, UNCHANGED, type WorkerReply, type WriteMode, type WriterWorkerData } from './writer-worker.js';
import { manifestValue } from '../index/rows.js';

/**
 * The writer thread's module: compiled `.js` next to this file in dist/; from the TypeScript
 * sources (vitest, tsx) the `.ts` module is started through a small tsx loader shim.
 */
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const WORKER_MODULE = new URL(FROM_SOURCES ? './writer-worker.ts' : './writer-worker.js', import.meta.url);

function startWorker(data: WriterWorkerData): Worker {
  if (!FROM_SOURCES) return new Worker(WORKER_MODULE, { workerData: data });
  return new Worker(new URL('./ts-worker.mjs', import.meta.url), { workerData: { ...data, entry: WORKER_MODULE.href } });
}

type Entry = [string, Uint8Array | null];

export type { WriteMode };

export interface WriteCounts {
  written: number;
  unchanged: number;
  deleted: number;
}

/** One writer thread with its pending batch and the batches it has not answered yet. */
interface Lane {
  worker: Worker;
  batch: Entry[];
  batchBytes: number;
  /** Batches posted and not answered yet: their paths and each file's size (-1: a deletion). */
  sent: { paths: string[]; sizes: Int32Array }[];
}

/** FNV-1a of a path: the same path always goes to the same thread, so its writes stay in order. */
function laneOf(rel: string, lanes: number): number {
  let h = 2166136261;
  for (let i = 0; i < rel.length; i++) h = Math.imul(h ^ rel.charCodeAt(i), 16777619);
  return (h >>> 0) % lanes;
}

/**
 * Writes the site's files into a staging directory on worker threads and
 * records each written file's size and sha256 in the manifest database.
 * Callers `await backpressure()` in their loops so that a bounded amount of
 * data is in flight, and `await flush()` before the manifest is written.
 */
export class SiteWriter {
  private readonly lanes: Lane[];
  private inFlightBytes = 0;
  private failure: Error | undefined;
  private waiters: (() => void)[] = [];
  readonly counts: WriteCounts = { written: 0, unchanged: 0, deleted: 0 };
  /** In `update` mode, the paths written or deleted (the tree's change, for the manifest merge and the spare). */
  readonly changed = new Set<string>();
  private readonly collect: boolean;

  constructor(
    readonly root: string,
    private readonly files: Database<Buffer, string>,
    mode: WriteMode,
    threads = 2,
    private readonly maxInFlight = 32 << 20,
  ) {
    this.collect = mode === 'update';
    this.lanes = Array.from({ length: threads }, () => {
      const lane: Lane = { worker: startWorker({ kind: 'snapshot-writer', root, mode }), batch: [], batchBytes: 0, sent: [] };
      lane.worker.on('message', (m: WorkerReply) => this.onDone(lane, m));
      lane.worker.on('error', (e) => this.fail(e));
      return lane;
    });
  }

  private onDone(lane: Lane, m: WorkerReply): void {
    const { paths, sizes } = lane.sent.shift()!;
    if (m.error !== undefined) return this.fail(ioError({ message: m.error, code: m.code }, m.path ?? this.root, 'writing'));
    try {
      this.record(paths, sizes, m);
    } catch (e) {
      return this.fail(ioError(e, (this.files as unknown as { path: string }).path, 'index'));
    }
    this.inFlightBytes -= m.bytes!;
    this.wake();
  }

  /** Records a batch's files in the manifest database. */
  private record(paths: string[], sizes: Int32Array, m: WorkerReply): void {
    const digests = Buffer.from(m.digests!.buffer, m.digests!.byteOffset, m.digests!.byteLength);
    const status = m.status!;
    this.files.transactionSync(() => {
      paths.forEach((rel, i) => {
        if (status[i] === UNCHANGED) return void this.counts.unchanged++;
        if (this.collect) this.changed.add(rel);
        if (status[i] === DELETED || status[i] === ABSENT) {
          if (status[i] === DELETED) this.counts.deleted++;
          void this.files.remove(rel);
        } else {
          void this.files.put(rel, manifestValue.encode({ size: sizes[i]!, sha256: digests.subarray(i * 32, i * 32 + 32) }));
          this.counts.written++;
        }
      });
    });
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

  private push(rel: string, data: Uint8Array | null): void {
    if (this.failure) throw this.failure;
    const lane = this.lanes[laneOf(rel, this.lanes.length)]!;
    lane.batch.push([rel, data]);
    lane.batchBytes += data?.length ?? 0;
    if (lane.batch.length >= 256 || lane.batchBytes >= 1 << 20) this.post(lane);
  }

  write(rel: string, data: string | Buffer): void {
    this.push(rel, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  }

  delete(rel: string): void {
    this.push(rel, null);
  }

  private post(lane: Lane): void {
    if (lane.batch.length === 0) return;
    const data = new Uint8Array(lane.batchBytes);
    const ends = new Int32Array(lane.batch.length);
    const sizes = new Int32Array(lane.batch.length);
    let at = 0;
    lane.batch.forEach(([, bytes], i) => {
      if (bytes === null) ends[i] = sizes[i] = -1;
      else {
        data.set(bytes, at);
        ends[i] = at += bytes.length;
        sizes[i] = bytes.length;
      }
    });
    const paths = lane.batch.map(([rel]) => rel);
    lane.sent.push({ paths, sizes });
    this.inFlightBytes += lane.batchBytes;
    lane.worker.postMessage({ paths, ends, data: data.buffer }, [data.buffer]);
    lane.batch = [];
    lane.batchBytes = 0;
  }

  private async waitUntil(done: () => boolean): Promise<void> {
    while (!done() && !this.failure) await new Promise<void>((r) => this.waiters.push(r));
    if (this.failure) throw this.failure;
  }

  /** Resolves once the data in flight is below the bound. */
  backpressure(): Promise<void> {
    if (this.inFlightBytes < this.maxInFlight && !this.failure) return Promise.resolve();
    return this.waitUntil(() => this.inFlightBytes < this.maxInFlight);
  }

  /** Resolves once everything written so far is on disk and in the manifest database. */
  flush(): Promise<void> {
    for (const lane of this.lanes) this.post(lane);
    return this.waitUntil(() => this.lanes.every((l) => l.sent.length === 0));
  }

  async close(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.worker.terminate()));
  }
}
