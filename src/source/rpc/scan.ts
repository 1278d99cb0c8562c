/**
 * The RPC source's main-chain scan: batched `getblockhash` + `getblock <hash> 0` calls, a
 * bounded window of batches in flight (p-limit), yielded strictly in height order. Every block
 * must link to the one yielded before it (the first to the block below `from`, the anchor of a
 * re-run) and a re-check at the end confirms the node's chain did not change; a reorg is an
 * error naming the fork height, found by binary search over the hashes delivered.
 */
import pLimit from 'p-limit';
import { HEADER_SIZE } from '../../chain/block.js';
import { fromDisplayHex, sha256d, toDisplayHex } from '../../chain/hash.js';
import type { ChainTip, SourceBlock } from '../types.js';
import { hashIn } from './answers.js';
import { RpcError, strict, type RpcClient } from './client.js';

export interface ScanOptions {
  /** Batches in flight at once. */
  concurrency: number;
  /** Most blocks per getblock batch; batches aim at batchBytes of blocks. */
  maxBlockBatch: number;
  batchBytes: number;
  /** The source's description (error on a close during the scan). */
  description: string;
  isClosed(): boolean;
  tip(): Promise<ChainTip>;
}

/** A getblock answer as block bytes, checked to hash to `hash`. */
export function rawBlock(where: string, hex: unknown, hash: string, method: string): Buffer {
  if (typeof hex !== 'string' || hex.length < HEADER_SIZE * 2 || hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
    throw new Error(`RPC ${where}: ${method} ${hash} did not return raw block hex`);
  }
  const raw = Buffer.from(hex, 'hex');
  const got = toDisplayHex(sha256d(raw.subarray(0, HEADER_SIZE)));
  if (got !== hash) throw new Error(`RPC ${where}: getblock ${hash} returned block ${got}`);
  return raw;
}

/**
 * The hashes delivered, by height from `lo` on (internal byte order), in one buffer that grows as
 * the scan goes: its size follows the blocks the node actually delivered, not the tip it claims.
 */
class DeliveredHashes {
  private buf: Buffer;
  constructor(
    readonly lo: number,
    expected: number,
  ) {
    this.buf = Buffer.alloc(32 * Math.max(1, Math.min(expected, 1 << 16)));
  }
  set(height: number, hash: Buffer): void {
    const at = (height - this.lo) * 32;
    if (at + 32 > this.buf.length) {
      const grown = Buffer.alloc(Math.max(this.buf.length * 2, at + 32));
      this.buf.copy(grown);
      this.buf = grown;
    }
    hash.copy(this.buf, at);
  }
  /** The hash at `height` in display order ('?' above the buffer: nothing delivered there). */
  at(height: number): string {
    const at = (height - this.lo) * 32;
    return at + 32 <= this.buf.length ? toDisplayHex(this.buf.subarray(at, at + 32)) : '?';
  }
}

/** The node's getblockhash answer at `h`, checked to be a hash; '' when the node has no block there (-8 and the like). */
async function nodeHashOrNone(client: RpcClient, h: number): Promise<string> {
  try {
    return hashIn(client.where, 'getblockhash', 'result', await client.call('getblockhash', [h]));
  } catch (e) {
    if (e instanceof RpcError) return '';
    throw e;
  }
}

/**
 * Lowest height in lo..upTo where the node's chain differs from ours (`ours` holds our
 * hashes from `lo` on); -1 when the node agrees at `upTo`. A difference at `lo` itself means
 * the fork is at or below `lo`.
 */
async function findFork(client: RpcClient, ours: DeliveredHashes, lo: number, upTo: number): Promise<{ height: number; theirs: string }> {
  const nodeHash = async (h: number): Promise<string> => (await nodeHashOrNone(client, h)) || '(none: above the node tip)';
  const oursAt = (h: number): string => ours.at(h);
  let hi = upTo;
  let theirs = await nodeHash(hi);
  if (theirs === oursAt(hi)) return { height: -1, theirs };
  // Invariant: differs at hi.
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const t = await nodeHash(mid);
    if (t === oursAt(mid)) lo = mid + 1;
    else {
      hi = mid;
      theirs = t;
    }
  }
  return { height: hi, theirs: hi === upTo ? theirs : await nodeHash(hi) };
}

async function reorgError(client: RpcClient, ours: DeliveredHashes, lo: number, upTo: number, detectedAt: number): Promise<Error> {
  const where = client.where;
  let fork: { height: number; theirs: string };
  try {
    fork = await findFork(client, ours, lo, upTo);
  } catch {
    fork = { height: -1, theirs: '?' };
  }
  const h = fork.height >= 0 ? fork.height : detectedAt;
  const oursHash = fork.height >= 0 ? ours.at(h) : '?';
  const at = fork.height === lo && lo > 0 ? 'at or below' : 'at';
  return new Error(
    `RPC ${where}: the node's chain changed during the scan (reorg) ${at} height ${h}` +
      (fork.height >= 0 ? `: block ${oursHash} was replaced by ${fork.theirs}` : ` (seen at height ${detectedAt})`) +
      `; stopped without mixing chains, run again`,
  );
}

interface Chunk {
  from: number;
  hashes: string[];
  raws: Buffer[];
}

/** Main-chain blocks from..height of the node (bounds checked by the caller). */
export async function* scanMainChain(client: RpcClient, height: number, from: number, opts: ScanOptions): AsyncGenerator<SourceBlock> {
  const { where } = client;
  const { concurrency, maxBlockBatch, batchBytes } = opts;
  const limit = pLimit(concurrency);
  // The block below `from` anchors the scan: the first block must build on it, and the
  // final re-check (and the fork search) only looks at heights from it up.
  const lo = Math.max(0, from - 1);
  const ours = new DeliveredHashes(lo, height - lo + 1);
  let prev: Buffer | undefined;
  if (from > 0) {
    prev = fromDisplayHex(hashIn(where, 'getblockhash', 'result', await client.call('getblockhash', [from - 1])));
    ours.set(lo, prev);
  }
  let avgSize = 0;
  let sizeSamples = 0;
  let scheduled = from; // next height to schedule
  const queue: Promise<Chunk>[] = [];
  const fetchChunk = async (from: number, to: number): Promise<Chunk> => {
    const heights: unknown[][] = [];
    for (let h = from; h < to; h++) heights.push([h]);
    let hashes: string[];
    try {
      hashes = strict(await client.batch('getblockhash', heights)).map((r) => hashIn(where, 'getblockhash', 'result', r));
    } catch (e) {
      if (e instanceof RpcError && e.code === -8) {
        const t = await opts.tip().catch(() => undefined);
        throw new Error(
          `RPC ${where}: getblockhash: heights ${from}–${to - 1} are no longer on the node's chain (tip now ${t ? `height ${t.height}` : 'unknown'}): reorg during the scan; run again`,
          { cause: e },
        );
      }
      throw e;
    }
    const results = await client.batch('getblock', hashes.map((h) => [h, 0]));
    const raws = results.map((r, k) => {
      if (r instanceof RpcError) {
        if (r.code === -1 || /prune/i.test(r.rpcMessage)) {
          throw new Error(`RPC ${where}: getblock ${hashes[k]} (height ${from + k}): the block is not available (${r.rpcMessage}): pruned node?`);
        }
        throw new Error(`RPC ${where}: getblock ${hashes[k]} (height ${from + k}) failed: ${r.rpcMessage} (code ${r.code})`);
      }
      return rawBlock(where, r, hashes[k]!, 'getblock');
    });
    return { from, hashes, raws };
  };
  const fill = (): void => {
    while (scheduled <= height && queue.length <= concurrency) {
      const size = sizeSamples === 0 ? Math.min(8, maxBlockBatch) : Math.max(1, Math.min(maxBlockBatch, Math.floor(batchBytes / Math.max(1, avgSize))));
      const from = scheduled;
      const to = Math.min(height + 1, from + size);
      scheduled = to;
      const p = limit(() => (opts.isClosed() ? Promise.reject(new Error(`${opts.description}: source is closed`)) : fetchChunk(from, to)));
      p.catch(() => undefined); // surfaced when awaited in order
      queue.push(p);
    }
  };
  try {
    fill();
    while (queue.length > 0) {
      const chunk = await queue.shift()!;
      for (const r of chunk.raws) {
        avgSize = (avgSize * sizeSamples + r.length) / (sizeSamples + 1);
        sizeSamples = Math.min(sizeSamples + 1, 1000);
      }
      fill();
      for (let k = 0; k < chunk.raws.length; k++) {
        const h = chunk.from + k;
        const raw = chunk.raws[k]!;
        if (prev && !raw.subarray(4, 36).equals(prev)) {
          throw await reorgError(client, ours, lo, h - 1, h - 1);
        }
        prev = sha256d(raw.subarray(0, HEADER_SIZE));
        ours.set(h, prev);
        yield { height: h, hash: chunk.hashes[k]!, raw };
      }
    }
    // Final re-check: the node's block at `height` is still the one we delivered.
    if ((await nodeHashOrNone(client, height)) !== ours.at(height)) {
      throw await reorgError(client, ours, lo, height, height);
    }
  } finally {
    limit.clearQueue();
  }
}
