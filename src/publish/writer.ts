import type { Worker } from 'node:worker_threads';
import type { Database } from 'lmdb';
import { ioError } from '../index/io-error.js';
import { ABSENT, DELETED, UNCHANGED, type WorkerReply, type WriteMode, type WriterWorkerData } from './writer-worker.js';
import { manifestValue } from '../index/rows.js';
import { startWorker } from './worker-start.js';
import { ThreadGate } from './thread-gate.js';

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
  private readonly gate = new ThreadGate();
  readonly counts: WriteCounts = { written: 0, unchanged: 0, deleted: 0 };
  /** In `update` mode, the paths written or deleted (the tree's change, for the manifest merge and the spare). */
  readonly changed = new Set<string>();
  private readonly collect: boolean;

  constructor(
    readonly root: string,
    private readonly files: Database<Buffer, string>,
    readonly mode: WriteMode,
    threads = 2,
    private readonly maxInFlight = 32 << 20,
  ) {
    this.collect = mode === 'update';
    this.lanes = Array.from({ length: threads }, () => {
      const lane: Lane = { worker: startWorker(import.meta.url, './writer-worker', { kind: 'snapshot-writer', root, mode } satisfies WriterWorkerData), batch: [], batchBytes: 0, sent: [] };
      lane.worker.on('message', (m: WorkerReply) => this.onDone(lane, m));
      lane.worker.on('error', (e) => this.gate.fail(e));
      return lane;
    });
  }

  private onDone(lane: Lane, m: WorkerReply): void {
    const { paths, sizes } = lane.sent.shift()!;
    try {
      this.recordWritten(paths, sizes, m);
    } catch (e) {
      return this.gate.fail(e as Error);
    }
    this.inFlightBytes -= m.bytes!;
    this.gate.wake();
  }

  /**
   * Records a batch of files a thread wrote below `root` (a writer thread, or a render thread
   * that writes its own documents with writeFile): their manifest rows and the counts. A
   * failed batch throws its error, naming the file.
   */
  recordWritten(paths: string[], sizes: Int32Array, m: WorkerReply): void {
    if (m.error !== undefined) throw ioError({ message: m.error, code: m.code }, m.path ?? this.root, 'writing');
    try {
      this.record(paths, sizes, m);
    } catch (e) {
      throw ioError(e, (this.files as unknown as { path: string }).path, 'index');
    }
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

  private push(rel: string, data: Uint8Array | null): void {
    if (this.gate.failure) throw this.gate.failure;
    const lane = this.lanes[laneOf(rel, this.lanes.length)]!;
    lane.batch.push([rel, data]);
    lane.batchBytes += data?.length ?? 0;
    if (lane.batch.length >= 256 || lane.batchBytes >= 1 << 20) this.post(lane);
  }

  write(rel: string, data: string | Uint8Array): void {
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

  /** Resolves once the data in flight is below the bound. */
  backpressure(): Promise<void> {
    if (this.inFlightBytes < this.maxInFlight && !this.gate.failure) return Promise.resolve();
    return this.gate.waitUntil(() => this.inFlightBytes < this.maxInFlight);
  }

  /** Resolves once everything written so far is on disk and in the manifest database. */
  flush(): Promise<void> {
    for (const lane of this.lanes) this.post(lane);
    return this.gate.waitUntil(() => this.lanes.every((l) => l.sent.length === 0));
  }

  async close(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.worker.terminate()));
  }
}
