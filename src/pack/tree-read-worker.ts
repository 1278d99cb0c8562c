/**
 * The tree read thread (read-ahead.ts): reads batches of a tree's files, their sha256 and, for
 * the files asked so, their gzip for packFromTree, so that opening, reading, hashing and
 * compressing a tree's files is off the main thread. For a block's `.bin` asked so, it also
 * finds where its txs sit (with the sha256 of each tx's bytes and of their hex, which its
 * `.bin` and `.hex` lines are checked against instead of reading those files) and reads their
 * documents: the main thread, which stores a block's tx documents next to it, then never waits
 * for a read of its own.
 */
import { hash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { blockTxPlaces, type TxPlace } from './block-txs.js';

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
 * places and documents (`tx/<txid>.json`, gzipped; missing ones allowed).
 */
export type TreeReadRequest = { id: number; paths: string[]; missing: boolean; gzip: boolean[]; blockTxs?: boolean[] } | 'close';

/**
 * The files of a batch, one after the other in `bytes`; a length of -1 is a missing file. The
 * gzip of those asked for is in `gzipped` likewise, with a length of -1 for the others.
 */
export type Batch = { bytes: Uint8Array; lengths: Float64Array; shas: string[]; gzipped: Uint8Array; gzipLengths: Float64Array };

/** What `blockTxs` asked for: per block file (by its index in the batch), its txs' places; their documents in one batch, in the same order. */
export interface BlockTxsReply {
  places: { of: number; txs: TxPlace[] }[];
  docs: Batch;
}

export type TreeReadReply = ({ id: number; blockTxs?: BlockTxsReply } & Batch) | { id: number; error: string; code?: string; path: string };

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

function readBatch(root: string, paths: readonly string[], missing: boolean, gzip: readonly boolean[], gzipLevel: number): Batch {
  const lengths = new Float64Array(paths.length);
  const fds: (number | undefined)[] = [];
  try {
    let total = 0;
    paths.forEach((rel, i) => {
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
    return { bytes, lengths, shas, gzipped, gzipLengths };
  } finally {
    for (const fd of fds) if (fd !== undefined) closeSync(fd);
  }
}

if (parentPort && (workerData as TreeReadWorkerData | undefined)?.kind === 'snapshot-tree-read') {
  const port = parentPort;
  const { root, gzipLevel } = workerData as TreeReadWorkerData;
  port.on('message', (m: TreeReadRequest) => {
    if (m === 'close') return port.close();
    try {
      const r = readBatch(root, m.paths, m.missing, m.gzip, gzipLevel);
      const blockTxs = m.blockTxs?.some(Boolean) ? readBlockTxs(root, r, m.blockTxs, gzipLevel) : undefined;
      const reply: TreeReadReply = { id: m.id, ...r, ...(blockTxs && { blockTxs }) };
      port.postMessage(reply, [...transfers(r), ...(blockTxs ? transfers(blockTxs.docs) : [])]);
    } catch (e) {
      const err = e as NodeJS.ErrnoException & { path?: string };
      port.postMessage({ id: m.id, error: err.message, code: err.code, path: err.path ?? '' } satisfies TreeReadReply);
    }
  });
}
