/**
 * Reads a tree's files ahead of their use, and hashes them, on a thread of their own
 * (tree-read-worker.ts): packing a tree is one pass over its files in manifest order, and
 * opening, reading and hashing them on the main thread left the other core idle. Files go to the
 * thread in batches; a few batches are in flight at once, and items come out in the order they
 * went in.
 */
import { WorkerThread } from '../runtime/thread.js';
import type { TreeReadReply, TreeReadRequest, TreeReadWorkerData } from './tree-read-worker.js';

/** A file's bytes, the hex sha256 of them and, when asked for, their gzip at the reader's level. */
export interface FileRead {
  bytes: Buffer;
  sha: string;
  gzip?: Buffer;
}

/**
 * A batch ends at this many files or bytes (by the manifest's sizes); up to this many batches,
 * and bytes, are read ahead of the one in use (a batch of one large file goes alone).
 */
const BATCH_FILES = 128;
const BATCH_BYTES = 4 << 20;
const BATCHES_AHEAD = 4;
const BYTES_AHEAD = 16 << 20;

/** The read thread of one packFromTree run. */
export class TreeReader {
  private readonly thread: WorkerThread<TreeReadRequest, TreeReadReply>;
  private readonly pending = new Map<number, { resolve: (r: (FileRead | undefined)[]) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private failure: Error | undefined;

  constructor(
    private readonly root: string,
    readonly gzipLevel: number,
  ) {
    const data: TreeReadWorkerData = { kind: 'snapshot-tree-read', root, gzipLevel };
    this.thread = new WorkerThread<TreeReadRequest, TreeReadReply>('tree read thread', import.meta.url, './tree-read-worker', data, {
      message: (m) => this.answer(m),
      failed: (e) => this.fail(e),
    }, { before: 'the end of the pack' });
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  private answer(m: TreeReadReply): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if ('error' in m) {
      const err = new Error(`${this.root}/${m.path}: ${m.error}`);
      if (m.code !== undefined) Object.assign(err, { code: m.code });
      return p.reject(err);
    }
    const out: (FileRead | undefined)[] = [];
    let at = 0;
    let gzAt = 0;
    m.lengths.forEach((n, i) => {
      if (n < 0) return void out.push(undefined);
      const z = m.gzipLengths[i]!;
      out.push({ bytes: Buffer.from(m.bytes, at, n), sha: m.shas[i]!, ...(z >= 0 && { gzip: Buffer.from(m.gzipped, gzAt, z) }) });
      at += n;
      if (z >= 0) gzAt += z;
    });
    p.resolve(out);
  }

  /**
   * The files at `paths` (below the root) with their sha256, and their gzip where `gzip` says;
   * with `missing`, a file that is not there is undefined.
   */
  read(paths: string[], missing = false, gzip: boolean[] = []): Promise<(FileRead | undefined)[]> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    const p = new Promise<(FileRead | undefined)[]>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.thread.post({ id, paths, missing, gzip });
    return p;
  }

  async close(): Promise<void> {
    if (this.failure) await this.thread.terminate();
    else await this.thread.close('close');
  }

  /**
   * Yields each item of `items` with its file's read started a few batches earlier, or undefined
   * when `wanted` says it is not needed (asked when its batch is sent); gzipped too when
   * `gzip` says. A read that fails rejects only when its item's promise is awaited.
   */
  async *ahead<T extends { path: string; size: number }>(items: AsyncIterable<T>, wanted: (item: T) => boolean, gzip: (item: T) => boolean): AsyncGenerator<[T, Promise<FileRead> | undefined]> {
    const batches: [T, Promise<FileRead> | undefined][][] = [];
    const batchBytes: number[] = [];
    let ahead = 0;
    let batch: T[] = [];
    let bytes = 0;
    const send = () => {
      batchBytes.push(bytes);
      ahead += bytes;
      const want = batch.filter(wanted);
      const read = want.length ? this.read(want.map((i) => i.path), false, want.map(gzip)) : undefined;
      read?.catch(() => undefined); // thrown when an item's promise is awaited
      const at = new Map(want.map((item, i) => [item, i]));
      batches.push(
        batch.map((item) => {
          const i = at.get(item);
          if (i === undefined) return [item, undefined];
          const one = read!.then((r) => r[i]!);
          one.catch(() => undefined);
          return [item, one];
        }),
      );
      batch = [];
      bytes = 0;
    };
    for await (const item of items) {
      batch.push(item);
      bytes += item.size;
      if (batch.length >= BATCH_FILES || bytes >= BATCH_BYTES) send();
      while (batches.length > BATCHES_AHEAD || (ahead > BYTES_AHEAD && batches.length > 1)) {
        ahead -= batchBytes.shift()!;
        yield* batches.shift()!;
      }
    }
    if (batch.length) send();
    for (const b of batches) yield* b;
  }
}
