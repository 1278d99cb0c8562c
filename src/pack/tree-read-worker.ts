/**
 * The tree read thread (read-ahead.ts): reads batches of a tree's files, their sha256 and, for
 * the files asked so, their gzip for packFromTree, so that opening, reading, hashing and
 * compressing a tree's files is off the main thread. For a block's `.bin` asked so, it also
 * finds where its txs sit (with the sha256 of each tx's bytes and of their hex, which its
 * `.bin` and `.hex` lines are checked against instead of reading those files) and reads their
 * documents: the main thread, which stores a block's tx documents next to it, then never waits
 * for a read of its own. Given the build's recipe hints and the tx documents' blobs (sent once
 * the tx documents are packed), it makes the recipes of the documents asked so from their hints
 * (encoded, hashed and gzipped as the pack writer stores them), reading only those whose hint
 * does not hold: the second pass of a pack build leaves the main thread only the records.
 */
import { hash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { encodeRecipe } from '../contract/pack-recipe.js';
import { blockTxPlaces, type TxPlace } from './block-txs.js';
import { RecipeHints } from './hints.js';
import { prepareManifest, previousChunks, type Pause, type PreparedManifest } from './manifest-chunks.js';
import { PackReader } from './reader.js';
import { TxBlobs, type TxDocsCopy } from './tx-blobs.js';
import { RECIPE_GZIP_MIN } from './writer.js';

export interface TreeReadWorkerData {
  /** Marks a tree read thread. */
  kind: 'snapshot-tree-read';
  root: string;
  /** The level files are gzipped at. */
  gzipLevel: number;
}

/**
 * A batch of paths below the root; `missing: true` lets a file that is not there answer -1;
 * `gzip[i]`: also gzip file i; `blockTxs[i]`: file i is a block's `.bin`, also give its txs'
 * places and documents (`tx/<txid>.json`, gzipped; missing ones allowed); `recipes[i]` (≥ 0):
 * the manifest's size of document i, whose recipe is made from its hint when that holds (else
 * the file is read). `hints`: the recipe hints files and the tx documents' blobs they are
 * checked against, for the `recipes` of the batches after it. `manifest`: the manifest's chunks
 * made ready to store (manifest-chunks.ts prepareManifest), their stored bytes written to
 * `scratch`, the chunks of the manifest in the pack at `base` kept.
 */
export type TreeReadRequest =
  | { id: number; paths: string[]; missing: boolean; gzip: boolean[]; blockTxs?: boolean[]; recipes?: number[] }
  | { hints: readonly string[]; txs: TxDocsCopy }
  | { id: number; manifest: { path: string; scratch: string; keepGzipRatio: number; base?: string } }
  | 'close';

/**
 * The files of a batch, one after the other in `bytes`; a length of -1 is a missing file. The
 * gzip of those asked for is in `gzipped` likewise, with a length of -1 for the others. Where
 * `recipes[i]` is 1, item i is not the file but its recipe (encodeRecipe's bytes, their sha256,
 * and their gzip when the writer would try it: RECIPE_GZIP_MIN).
 */
export type Batch = { bytes: Uint8Array; lengths: Float64Array; shas: string[]; gzipped: Uint8Array; gzipLengths: Float64Array; recipes?: Uint8Array };

/** What `blockTxs` asked for: per block file (by its index in the batch), its txs' places; their documents in one batch, in the same order. */
export interface BlockTxsReply {
  places: { of: number; txs: TxPlace[] }[];
  docs: Batch;
}

export type TreeReadReply =
  | ({ id: number; blockTxs?: BlockTxsReply } & Batch)
  | { id: number; manifest: PreparedManifest }
  | { id: number; error: string; code?: string; path: string };

/** The ArrayBuffers of a batch, to transfer. */
const transfers = (b: Batch): ArrayBuffer[] => [b.bytes.buffer as ArrayBuffer, b.gzipped.buffer as ArrayBuffer];

/** The places of the txs of the blocks `blockTxs` marks, and their documents read. */
function readBlockTxs(root: string, batch: Batch, blockTxs: readonly boolean[], gzipLevel: number): BlockTxsReply {
  const places: BlockTxsReply['places'] = [];
  let at = 0;
  batch.lengths.forEach((n, i) => {
    if (n < 0) return;
    if (blockTxs[i]) places.push({ of: i, txs: blockTxPlaces(Buffer.from(batch.bytes.buffer, batch.bytes.byteOffset + at, n)) });
    at += n;
  });
  const paths = places.flatMap((b) => b.txs.map((t) => `tx/${t.txid}.json`));
  // This thread bounds the pass that reads these (the main thread waits on it about 60% of the
  // time): every other document is left for the main thread to gzip. A tx of an off-chain block
  // has no document: missing files are allowed.
  return { places, docs: readBatch(root, paths, true, paths.map((_, i) => i % 2 === 0), gzipLevel) };
}

/** The recipes this thread makes from hints (TreeReadRequest's `hints`). */
interface Recipes {
  hints: RecipeHints;
  txs: TxBlobs;
}

/** The encoded recipe of the document at `path` of `size` bytes from its hint, when it has one that holds. */
function recipeOf(r: Recipes, path: string, size: number): Uint8Array | undefined {
  // The literal segments point into the hints' read window: encoded before the next record is read.
  const segments = r.hints.segments(path, size, r.txs);
  return segments && encodeRecipe(segments);
}

function readBatch(root: string, paths: readonly string[], missing: boolean, gzip: readonly boolean[], gzipLevel: number, recipes?: { sizes: readonly number[]; from: Recipes }): Batch {
  const lengths = new Float64Array(paths.length);
  const fds: (number | undefined)[] = [];
  const made: (Uint8Array | undefined)[] = [];
  try {
    let total = 0;
    paths.forEach((rel, i) => {
      const size = recipes?.sizes[i] ?? -1;
      const recipe = size >= 0 ? recipeOf(recipes!.from, rel, size) : undefined;
      made.push(recipe);
      if (recipe) {
        fds.push(undefined);
        lengths[i] = recipe.length;
        total += recipe.length;
        return;
      }
      try {
        const fd = openSync(join(root, rel), 'r');
        fds.push(fd);
        lengths[i] = fstatSync(fd).size;
        total += lengths[i]!;
      } catch (e) {
        if (!missing || (e as NodeJS.ErrnoException).code !== 'ENOENT') throw Object.assign(e as Error, { path: rel });
        fds.push(undefined);
        lengths[i] = -1;
      }
    });
    // One buffer for the batch, each file read into its place: the reply transfers it whole.
    const bytes = new Uint8Array(total);
    const shas: string[] = [];
    const gzips: Uint8Array[] = [];
    const gzipLengths = new Float64Array(paths.length).fill(-1);
    let at = 0;
    paths.forEach((rel, i) => {
      const recipe = made[i];
      if (recipe) {
        bytes.set(recipe, at);
        shas.push(hash('sha256', recipe, 'hex'));
        if (recipe.length >= RECIPE_GZIP_MIN) {
          const z = gzipSync(recipe, { level: gzipLevel });
          gzips.push(z);
          gzipLengths[i] = z.length;
        }
        at += recipe.length;
        return;
      }
      const fd = fds[i];
      if (fd === undefined) return void shas.push('');
      const size = lengths[i]!;
      let got = 0;
      try {
        while (got < size) {
          const n = readSync(fd, bytes, at + got, size - got, null);
          if (n === 0) throw new Error(`${size - got} bytes short of the ${size} it had when opened (changed while read)`);
          got += n;
        }
      } catch (e) {
        throw Object.assign(e as Error, { path: rel });
      }
      const file = bytes.subarray(at, at + size);
      shas.push(hash('sha256', file, 'hex'));
      if (gzip[i] && size > 0) {
        const z = gzipSync(file, { level: gzipLevel });
        gzips.push(z);
        gzipLengths[i] = z.length;
      }
      at += size;
    });
    // The gzip bytes in one buffer of their own, exactly their size: the reply transfers it whole.
    const gzipped = new Uint8Array(gzips.reduce((n, z) => n + z.length, 0));
    let gzAt = 0;
    for (const z of gzips) {
      gzipped.set(z, gzAt);
      gzAt += z.length;
    }
    return { bytes, lengths, shas, gzipped, gzipLengths, ...(recipes && { recipes: Uint8Array.from(made, (m) => (m ? 1 : 0)) }) };
  } finally {
    for (const fd of fds) if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The manifest's chunks made ready (prepareManifest), those equal to a chunk of the manifest in
 * the pack at `base` (the pack appended to) kept from it: its chunks read with a reader of this
 * thread's; one that cannot be read (damaged) only leaves its chunks to be stored again.
 */
async function manifestReady(path: string, scratch: string, gzipLevel: number, keepGzipRatio: number, base: string | undefined, pause: Pause): Promise<PreparedManifest> {
  const reader = base === undefined ? undefined : await PackReader.open(base, { syncReads: true, slotCache: 16 });
  try {
    const previous = reader && (await previousChunks(reader, pause).catch(() => undefined));
    return await prepareManifest(path, scratch, gzipLevel, keepGzipRatio, previous, pause);
  } finally {
    await reader?.close();
  }
}

if (parentPort && (workerData as TreeReadWorkerData | undefined)?.kind === 'snapshot-tree-read') {
  const port = parentPort;
  const { root, gzipLevel } = workerData as TreeReadWorkerData;
  let recipes: Recipes | undefined;
  let closing = false;
  // The manifest's chunks are made a few at a time, so that the batches of reads asked meanwhile
  // are not held up; a close stops them.
  const pause: Pause = () => (closing ? Promise.reject(new Error('the tree read thread is closing')) : new Promise<void>((resolve) => setImmediate(resolve)));
  port.on('message', (m: TreeReadRequest) => {
    if (m === 'close') {
      closing = true;
      recipes?.hints.close();
      return port.close();
    }
    if ('hints' in m) {
      // A hints file that cannot be read fails the thread, and with it the pack (as on the main thread).
      recipes = { hints: new RecipeHints(m.hints), txs: TxBlobs.ofDocs(m.txs) };
      return;
    }
    if ('manifest' in m) {
      const { path, scratch, keepGzipRatio, base } = m.manifest;
      void manifestReady(path, scratch, gzipLevel, keepGzipRatio, base, pause).then(
        (manifest) => port.postMessage({ id: m.id, manifest } satisfies TreeReadReply, [manifest.sizes.buffer, manifest.as.buffer, manifest.stored.buffer, manifest.shas.buffer] as ArrayBuffer[]),
        (e: NodeJS.ErrnoException) => port.postMessage({ id: m.id, error: e.message, code: e.code, path: '' } satisfies TreeReadReply),
      );
      return;
    }
    try {
      const r = readBatch(root, m.paths, m.missing, m.gzip, gzipLevel, m.recipes && recipes && { sizes: m.recipes, from: recipes });
      const blockTxs = m.blockTxs?.some(Boolean) ? readBlockTxs(root, r, m.blockTxs, gzipLevel) : undefined;
      const reply: TreeReadReply = { id: m.id, ...r, ...(blockTxs && { blockTxs }) };
      port.postMessage(reply, [...transfers(r), ...(blockTxs ? transfers(blockTxs.docs) : [])]);
    } catch (e) {
      const err = e as NodeJS.ErrnoException & { path?: string };
      port.postMessage({ id: m.id, error: err.message, code: err.code, path: err.path ?? '' } satisfies TreeReadReply);
    }
  });
}
