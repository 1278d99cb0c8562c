/**
 * Reads a tree's files ahead of their use, and hashes them, on a thread of its own
 * (tree-read-worker.ts): packing a tree is one pass over its files in manifest order, and
 * opening, reading and hashing them on the main thread left the other core idle. Files go to the
 * thread in batches; a few batches are in flight at once, and items come out in the order they
 * went in.
 *
 * One thread: the pass before the address and block documents is shared between it and the
 * main thread, which gzips every other document stored gzip. A second read thread,
 * measured, shortened the 200k-tx pack phase by about 16 s but added up to 90 MiB at the pack
 * build's peak, taking it over 1 GiB (docs/benchmarks.md, "Where the memory goes"). In the pass
 * over the address and block documents, which a build's hints make recipes unread, the thread
 * makes those recipes (useHints).
 */
import { WorkerThread } from '../runtime/thread.js';
import type { TxPlace } from './block-txs.js';
import type { PreparedManifest } from './manifest-chunks.js';
import type { TxBlobs } from './tx-blobs.js';
import type { Batch, TreeReadReply, TreeReadRequest, TreeReadWorkerData } from './tree-read-worker.js';

/** A file's bytes, the hex sha256 of them and, when asked for, their gzip at the reader's level. */
export interface FileRead {
  bytes: Buffer;
  sha: string;
  gzip?: Buffer;
  /** For a block's `.bin` read with `blockTxs`: where its txs sit, each with its document (undefined when there is none). */
  txs?: (TxPlace & { doc: FileRead | undefined })[];
  /** The item asked for as a recipe was made from its hint: `bytes` are the encoded recipe (sha, gzip of them), not the file's. */
  recipe?: true;
}

/** The files of a batch the read thread sent (undefined for a missing one). */
function filesOf(b: Batch): (FileRead | undefined)[] {
  const out: (FileRead | undefined)[] = [];
  let at = 0;
  let gzAt = 0;
  b.lengths.forEach((n, i) => {
    if (n < 0) return void out.push(undefined);
    const z = b.gzipLengths[i]!;
    const bytes = Buffer.from(b.bytes.buffer, b.bytes.byteOffset + at, n);
    out.push({
      bytes,
      sha: b.shas[i]!,
      ...(z >= 0 && { gzip: Buffer.from(b.gzipped.buffer, b.gzipped.byteOffset + gzAt, z) }),
      ...(b.recipes?.[i] === 1 && { recipe: true as const }),
    });
    at += n;
    if (z >= 0) gzAt += z;
  });
  return out;
}

/**
 * A batch ends at this many files or bytes (by the manifest's sizes); up to this many batches,
 * and bytes, are read ahead of the one in use (a batch of one large file goes alone).
 */
const BATCH_FILES = 128;
const BATCH_BYTES = 4 << 20;
const BATCHES_AHEAD = 4;
const BYTES_AHEAD = 16 << 20;
/**
 * A block's `.bin` read with its txs' documents counts as this many times its size toward those
 * bounds: the documents of a block's txs are about 4× its raw bytes (3.95× on the 200k-tx
 * real-profile chain).
 */
const WITH_TXS_WEIGHT = 5;
/** A document asked for as a recipe counts as this fraction of its size: a recipe is a few percent of its document's bytes. */
const RECIPE_WEIGHT = 1 / 8;

/** The read thread of one packFromTree run. */
export class TreeReader {
  private readonly thread: WorkerThread<TreeReadRequest, TreeReadReply>;
  private readonly pending = new Map<number, { resolve: (r: (FileRead | undefined)[]) => void; reject: (e: Error) => void }>();
  private readonly manifests = new Map<number, { resolve: (r: PreparedManifest) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private failure: Error | undefined;

  constructor(
    private readonly root: string,
    readonly gzipLevel: number,
  ) {
    const data: TreeReadWorkerData = { kind: 'snapshot-tree-read', root, gzipLevel };
    this.thread = new WorkerThread<TreeReadRequest, TreeReadReply>(
      'tree read thread',
      import.meta.url,
      './tree-read-worker',
      data,
      { message: (m) => this.answer(m), failed: (e) => this.fail(e) },
      { before: 'the end of the pack' },
    );
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const p of [...this.pending.values(), ...this.manifests.values()]) p.reject(e);
    this.pending.clear();
    this.manifests.clear();
  }

  private answer(m: TreeReadReply): void {
    const prepared = this.manifests.get(m.id);
    if (prepared || 'manifest' in m) {
      this.manifests.delete(m.id);
      if ('manifest' in m) prepared?.resolve(m.manifest);
      else if ('error' in m) prepared?.reject(new Error(m.error));
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if ('error' in m) {
      const err = new Error(`${this.root}/${m.path}: ${m.error}`);
      if (m.code !== undefined) Object.assign(err, { code: m.code });
      return p.reject(err);
    }
    const out = filesOf(m);
    if (m.blockTxs) {
      const docs = filesOf(m.blockTxs.docs);
      let d = 0;
      for (const { of, txs } of m.blockTxs.places) out[of]!.txs = txs.map((t) => ({ ...t, doc: docs[d++] }));
    }
    p.resolve(out);
  }

  /**
   * The files at `paths` (below the root) with their sha256, and their gzip where `gzip` says;
   * with `missing`, a file that is not there is undefined. `blockTxs[i]`: file i is a block's
   * `.bin`: its `txs` too (FileRead.txs). `recipes[i]` ≥ 0: the manifest's size of document i,
   * whose recipe from its hint is given instead of the file when one holds (FileRead.recipe; useHints).
   */
  read(paths: string[], missing = false, gzip: boolean[] = [], blockTxs?: boolean[], recipes?: number[]): Promise<(FileRead | undefined)[]> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    const p = new Promise<(FileRead | undefined)[]>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.thread.post({ id, paths, missing, gzip, ...(blockTxs && { blockTxs }), ...(recipes && { recipes }) });
    return p;
  }

  /**
   * The chunks of the manifest at `path` made ready to store by the thread, after the reads asked
   * before (manifest-chunks.ts prepareManifest: their stored bytes in `scratch`; those of the
   * manifest in the pack at `base` kept).
   */
  prepareManifest(path: string, scratch: string, keepGzipRatio: number, base?: string): Promise<PreparedManifest> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    const p = new Promise<PreparedManifest>((resolve, reject) => this.manifests.set(id, { resolve, reject }));
    this.thread.post({ id, manifest: { path, scratch, keepGzipRatio, base } });
    return p;
  }

  /**
   * The recipe hints files (hints.ts) and the tx documents packed so far, which they are checked
   * against: the items ahead() is asked recipes of from now on are made from their hints.
   */
  useHints(files: readonly string[], txs: TxBlobs): void {
    const copy = txs.docsCopy();
    const arrays = [copy.keys, copy.rows, ...Object.values(copy.columns).filter((v) => ArrayBuffer.isView(v))];
    this.thread.post({ hints: files, txs: copy }, arrays.map((a) => a.buffer as ArrayBuffer));
  }

  async close(): Promise<void> {
    await (this.failure ? this.thread.terminate() : this.thread.close('close'));
  }

  /**
   * Yields each item of `items` with its file's read started a few batches earlier, or undefined
   * when `wanted` says it is not needed (asked when its batch is sent); gzipped too when
   * `gzip` says, with its block's txs when `blockTxs` says. Where `recipe` says, the item's
   * recipe made from its hint (FileRead.recipe; useHints) or, when none holds, its file, which
   * may be missing (undefined). A read that fails rejects only when its item's promise is awaited.
   */
  async *ahead<T extends { path: string; size: number }>(
    items: AsyncIterable<T> | Iterable<T>,
    wanted: (item: T) => boolean,
    gzip: (item: T) => boolean,
    blockTxs: (item: T) => boolean = () => false,
    recipe: (item: T) => boolean = () => false,
  ): AsyncGenerator<[T, Promise<FileRead | undefined> | undefined]> {
    const batches: [T, Promise<FileRead | undefined> | undefined][][] = [];
    const batchBytes: number[] = [];
    let ahead = 0;
    let batch: T[] = [];
    let bytes = 0;
    const send = () => {
      batchBytes.push(bytes);
      ahead += bytes;
      const want = batch.filter(wanted);
      const recipes = want.map((i) => (recipe(i) ? i.size : -1));
      const asRecipes = recipes.some((r) => r >= 0);
      const read = want.length ? this.read(want.map((i) => i.path), asRecipes, want.map(gzip), want.map(blockTxs), asRecipes ? recipes : undefined) : undefined;
      read?.catch(() => undefined); // thrown when an item's promise is awaited
      const at = new Map(want.map((item, i) => [item, i]));
      batches.push(
        batch.map((item) => {
          const i = at.get(item);
          if (i === undefined) return [item, undefined];
          const one = read!.then((r) => r[i]);
          one.catch(() => undefined);
          return [item, one];
        }),
      );
      batch = [];
      bytes = 0;
    };
    for await (const item of items) {
      batch.push(item);
      bytes += blockTxs(item) ? item.size * WITH_TXS_WEIGHT : recipe(item) ? item.size * RECIPE_WEIGHT : item.size;
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
