import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Database } from 'lmdb';
import { ioError, onPath } from '../index/io-error.js';
import { manifestValue } from '../index/rows.js';

/**
 * The file-writing thread. In `fresh` mode it writes every file; in `update`
 * mode (a staging tree hard-linked to the published one) it leaves files whose
 * bytes are unchanged alone — so they keep their mtime — and replaces the
 * others by write-to-temp + rename, which never touches the published copy.
 * A null payload deletes the file. It answers each batch with the sha256 of
 * the files it wrote. Plain JS so it runs the same from sources and from dist.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { mkdirSync, writeFileSync, readFileSync, renameSync, rmSync } = require('node:fs');
const { createHash } = require('node:crypto');
const { dirname, join } = require('node:path');
const dirs = new Set();
const update = workerData.mode === 'update';
parentPort.on('message', ({ paths, ends, data: block }) => {
  // One transferred buffer per batch (no per-file copies between threads); -1: delete.
  const bytesOf = Buffer.from(block);
  let start = 0;
  const batch = paths.map((rel, i) => {
    if (ends[i] < 0) return [rel, null];
    const d = bytesOf.subarray(start, ends[i]);
    start = ends[i];
    return [rel, d];
  });
  const digests = Buffer.alloc(batch.length * 32);
  const status = new Uint8Array(batch.length); // 0 written, 1 unchanged, 2 deleted, 3 absent
  let bytes = 0;
  let path = workerData.root;
  try {
    batch.forEach(([rel, data], i) => {
      path = join(workerData.root, rel);
      if (data === null) {
        let existed = true;
        try { rmSync(path); } catch (e) { if (e.code !== 'ENOENT') throw e; existed = false; }
        status[i] = existed ? 2 : 3;
        return;
      }
      bytes += data.length;
      const dir = dirname(path);
      if (!dirs.has(dir)) { mkdirSync(dir, { recursive: true }); dirs.add(dir); }
      if (update) {
        let old;
        try { old = readFileSync(path); } catch (e) { if (e.code !== 'ENOENT') throw e; }
        if (old && Buffer.compare(old, data) === 0) { status[i] = 1; return; }
        const tmp = path + '.tmp-write';
        writeFileSync(tmp, data);
        renameSync(tmp, path);
      } else {
        writeFileSync(path, data);
      }
      createHash('sha256').update(data).digest().copy(digests, i * 32);
    });
    parentPort.postMessage({ digests, status, bytes }, [digests.buffer, status.buffer]);
  } catch (e) {
    parentPort.postMessage({ error: String((e && e.message) || e), code: e && e.code, path });
  }
});
`;

type Entry = [string, Uint8Array | null];

export type WriteMode = 'fresh' | 'update';

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

  constructor(
    readonly root: string,
    private readonly files: Database<Buffer, string>,
    mode: WriteMode,
    threads = 2,
    private readonly maxInFlight = 32 << 20,
  ) {
    this.lanes = Array.from({ length: threads }, () => {
      const lane: Lane = { worker: new Worker(WORKER_SOURCE, { eval: true, workerData: { root, mode } }), batch: [], batchBytes: 0, sent: [] };
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
        if (status[i] === 1) this.counts.unchanged++;
        else if (status[i] === 2 || status[i] === 3) {
          if (status[i] === 2) this.counts.deleted++;
          this.files.remove(rel);
        } else {
          this.files.put(rel, manifestValue.encode({ size: sizes[i]!, sha256: digests.subarray(i * 32, i * 32 + 32) }));
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

interface WorkerReply {
  digests?: Uint8Array;
  status?: Uint8Array;
  bytes?: number;
  error?: string;
  code?: string;
  path?: string;
}

/**
 * Writes the manifest, `sha256 size path` per line sorted by path, streaming
 * from the database; returns the file count (manifest included), total bytes
 * and the manifest's own sha256 (the tree's generation id). `onProgress(listed)` after every
 * chunk of lines.
 */
export function writeManifest(
  files: Database<Buffer, string>,
  path: string,
  onProgress?: (listed: number) => void,
): { files: number; bytes: number; sha256: string } {
  return onPath(path, 'writing', () => writeManifestTo(files, path, onProgress));
}

function writeManifestTo(
  files: Database<Buffer, string>,
  path: string,
  onProgress?: (listed: number) => void,
): { files: number; bytes: number; sha256: string } {
  const fd = openSync(path, 'w');
  const hash = createHash('sha256');
  let count = 0;
  let bytes = 0;
  let chunk: string[] = [];
  const flushChunk = () => {
    const buf = Buffer.from(chunk.join(''), 'utf8');
    writeSync(fd, buf);
    hash.update(buf);
    chunk = [];
  };
  try {
    for (const { key, value } of files.getRange()) {
      const { size, sha256 } = manifestValue.decode(value);
      chunk.push(`${sha256.toString('hex')} ${size} ${key}\n`);
      bytes += size;
      if (++count % 4096 === 0) {
        flushChunk();
        onProgress?.(count);
      }
    }
    flushChunk();
    onProgress?.(count);
  } finally {
    closeSync(fd);
  }
  return { files: count + 1, bytes, sha256: hash.digest('hex') };
}
