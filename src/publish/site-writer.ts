import { ioError } from '../runtime/io-error.js';
import { isTxRawPath } from '../contract/layout.js';
import { CHANGED, DELETED, HEX, LISTED, UNCHANGED, WRITTEN, type UpdateOf, type WorkerReply, type WriteBatch, type WriterWorkerData } from './site-writer-worker.js';
import { WorkerThread } from '../runtime/thread.js';
import { ThreadGate } from '../runtime/thread-gate.js';

/** Writer threads: file system calls overlap on two; more only contend for the same disk. */
const WRITER_THREADS = 2;
/** Bytes sent to the threads and not yet written before `write` waits (bounds the memory held). */
const MAX_IN_FLIGHT = 32 << 20;

/** A path, its bytes (null: delete it) and its flags (site-writer-worker.ts HEX, CHANGED). */
type Entry = [string, Uint8Array | null, number?];

export interface WriteCounts {
  written: number;
  unchanged: number;
  deleted: number;
}

/** One writer thread with its pending batch and the batches it has not answered yet. */
interface Lane {
  worker: WorkerThread<WriteBatch | 'seal', WorkerReply>;
  batch: Entry[];
  batchBytes: number;
  /** Batches posted and not answered yet: their paths. */
  sent: string[][];
  /** Set while its 'seal' is not answered. */
  sealing?: () => void;
}

/** FNV-1a of a path: the same path always goes to the same thread, so its writes stay in order. */
function laneOf(rel: string, lanes: number): number {
  let h = 2166136261;
  for (let i = 0; i < rel.length; i++) h = Math.imul(h ^ rel.charCodeAt(i), 16777619);
  return (h >>> 0) % lanes;
}

/**
 * Writes the site's files into a staging directory on worker threads, which keep the manifest
 * rows of their files (manifest-rows.ts, in `rowsDir`); counts what was written and, in
 * `update` mode, collects the changed paths. Callers `await backpressure()` in their loops so
 * that a bounded amount of data is in flight, and `await seal()` before the manifest is written.
 */
export class SiteWriter {
  private readonly lanes: Lane[];
  private inFlightBytes = 0;
  private readonly gate = new ThreadGate();
  readonly counts: WriteCounts = { written: 0, unchanged: 0, deleted: 0 };
  /** In `update` mode, the paths written or deleted (the tree's change, for the manifest merge and the spare). */
  readonly changed = new Set<string>();
  private readonly collect: boolean;
  /** The stale paths (UpdateOf) no thread has written or deleted yet (staleLeft). */
  private readonly stale: Set<string>;
  private readonly keep: ((rel: string) => boolean) | undefined;
  /** The txs' `.bin` and `.hex` files are listed, not written (the render threads do the same: render-worker.ts). */
  readonly listTxRaw: boolean;

  constructor(
    readonly root: string,
    readonly rowsDir: string,
    /** Absent: `fresh` mode (a new tree); else `update` mode, following that published tree. */
    readonly update: UpdateOf | undefined,
    opts: {
      /** A shard build: the paths it writes (the others are dropped; callers ask {@link keeps} first to skip rendering them). */
      keep?: (rel: string) => boolean;
      /** A pack build's private tree: the txs' `.bin` and `.hex` files are listed in the manifest, not written (site-writer-worker.ts LISTED). */
      listTxRaw?: boolean;
    } = {},
  ) {
    this.keep = opts.keep;
    this.listTxRaw = opts.listTxRaw ?? false;
    this.collect = update !== undefined;
    this.stale = new Set(update?.stale);
    this.lanes = Array.from({ length: WRITER_THREADS }, (_, i) => {
      const data: WriterWorkerData = { kind: 'snapshot-writer', root, update, rowsDir, rowsName: `w${i}` };
      const worker = new WorkerThread<WriteBatch | 'seal', WorkerReply>(`writer thread ${i}`, import.meta.url, './site-writer-worker', data, {
        message: (m) => this.onDone(lane, m), // posted after `lane` is set below
        failed: (e) => this.gate.fail(e),
      }, { before: 'the writer was closed' });
      const lane: Lane = { worker, batch: [], batchBytes: 0, sent: [] };
      return lane;
    });
  }

  private onDone(lane: Lane, m: WorkerReply): void {
    if (m.sealed !== undefined && m.error === undefined) {
      this.sealedRows += m.sealed;
      lane.sealing?.();
      lane.sealing = undefined;
      return this.gate.wake();
    }
    const paths = lane.sent.shift() ?? [];
    try {
      this.recordWritten(paths, m);
    } catch (e) {
      return this.gate.fail(e as Error);
    }
    this.inFlightBytes -= m.bytes ?? 0;
    this.gate.wake();
  }

  /** Rows the writer threads' logs wrote out (after {@link seal}). */
  sealedRows = 0;
  private sealing = false;

  /**
   * Counts a batch of files a thread wrote below `root` (a writer thread, or a render thread
   * that writes its own documents with writeFile) by their status, and collects the changed
   * paths in `update` mode. A failed batch throws its error, naming the file.
   */
  recordWritten(paths: readonly string[], m: WorkerReply): void {
    if (m.error !== undefined) throw ioError({ message: m.error, code: m.code }, m.path ?? this.root, 'writing');
    const status = m.status ?? [];
    for (let i = 0; i < status.length; i++) {
      const s = status[i];
      if (this.stale.size > 0) this.stale.delete(paths[i]!); // the thread handled it (site-writer-worker.ts writeFile)
      if (s === UNCHANGED) this.counts.unchanged++;
      else {
        if (s === WRITTEN) this.counts.written++;
        else if (s === DELETED) this.counts.deleted++;
        if (this.collect) this.changed.add(paths[i]!);
      }
    }
  }

  /** Whether a file at `rel` is written (always, except in a shard build). */
  keeps(rel: string): boolean {
    return this.keep === undefined || this.keep(rel);
  }

  private push(rel: string, data: Uint8Array | null, flags = 0): void {
    if (this.keep !== undefined && !this.keep(rel)) return;
    if (data !== null && this.listTxRaw && isTxRawPath(rel)) flags |= LISTED;
    if (this.gate.failure) throw this.gate.failure;
    if (this.sealing) throw new Error(`${rel}: written after the manifest rows were sealed`);
    const lane = this.lanes[laneOf(rel, this.lanes.length)]!;
    lane.batch.push(flags ? [rel, data, flags] : [rel, data]);
    lane.batchBytes += data?.length ?? 0;
    if (lane.batch.length >= 256 || lane.batchBytes >= 1 << 20) this.post(lane);
  }

  /** `changed`: the caller knows the bytes differ from the published file's (update mode: not read to compare). */
  write(rel: string, data: string | Uint8Array, changed = false): void {
    this.push(rel, typeof data === 'string' ? Buffer.from(data, 'utf8') : data, changed ? CHANGED : 0);
  }

  /** Writes `raw` as hex text (encoded on the writer thread). */
  writeHex(rel: string, raw: Uint8Array): void {
    this.push(rel, raw, HEX);
  }

  delete(rel: string): void {
    this.push(rel, null);
  }

  private post(lane: Lane): void {
    if (lane.batch.length === 0) return;
    const data = new Uint8Array(lane.batchBytes);
    const ends = new Int32Array(lane.batch.length);
    let at = 0;
    lane.batch.forEach(([, bytes], i) => {
      if (bytes === null) ends[i] = -1;
      else {
        data.set(bytes, at);
        ends[i] = at += bytes.length;
      }
    });
    const paths = lane.batch.map(([rel]) => rel);
    const flags = lane.batch.some((e) => e[2]) ? Uint8Array.from(lane.batch, (e) => e[2] ?? 0) : undefined;
    lane.sent.push(paths);
    this.inFlightBytes += lane.batchBytes;
    lane.worker.post({ paths, ends, data: data.buffer, flags }, [data.buffer]);
    lane.batch = [];
    lane.batchBytes = 0;
  }

  /** Resolves once the data in flight is below the bound. */
  backpressure(): Promise<void> {
    if (this.inFlightBytes < MAX_IN_FLIGHT && !this.gate.failure) return Promise.resolve();
    return this.gate.waitUntil(() => this.inFlightBytes < MAX_IN_FLIGHT);
  }

  /** Resolves once everything written so far is on disk. */
  flush(): Promise<void> {
    for (const lane of this.lanes) this.post(lane);
    return this.gate.waitUntil(() => this.lanes.every((l) => l.sent.length === 0));
  }

  /** Flushes, then has each thread write out its last manifest rows (nothing may be written after). */
  async seal(): Promise<void> {
    await this.flush();
    this.sealing = true;
    let waiting = this.lanes.length;
    for (const lane of this.lanes) {
      lane.sealing = () => waiting--;
      lane.worker.post('seal');
    }
    await this.gate.waitUntil(() => waiting === 0);
  }

  /** The stale paths (UpdateOf) that no file of this run went to, once sealed: still the spare's older copies, to be linked to the published files (staging.ts refreshTree). */
  staleLeft(): string[] {
    return [...this.stale];
  }

  async close(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.worker.terminate()));
  }
}
