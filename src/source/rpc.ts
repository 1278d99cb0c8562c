/**
 * Chain source over a Bitcoin Core / Namecoin Core JSON-RPC endpoint, in stages:
 * rpc/client.ts (transport, credentials, batching, retry), rpc/network.ts (which network the
 * node serves), rpc/scan.ts (the main-chain scan in height order and its reorg checks); this
 * module adds the side branches (getchaintips) and wraps the whole in the shared checks
 * (request-checks.ts: heights, tip, use after close).
 */
import type { Network } from '../chain/networks.js';
import { checkedSource } from './request-checks.js';
import { RpcError, rpcClient, type RpcClientOptions } from './rpc/client.js';
import { blockHashAt, countIn, hashIn, heightIn } from './rpc/answers.js';
import { chainInfo, detectNetwork } from './rpc/network.js';
import { rawBlock, scanMainChain } from './rpc/scan.js';
import type { ChainSource, ChainTip, OffChainBlock, SourceBlock } from './types.js';

export { defaultCookiePath, redactUrl, retryAttempts, RpcError } from './rpc/client.js';

export interface RpcOptions extends RpcClientOptions {
  /** The network; when absent it is taken from the node (genesis hash), failing when ambiguous. */
  network?: Network;
  /** Batches in flight at once (default 4). */
  concurrency?: number;
  /** Most blocks per getblock batch (default 50); batches aim at batchBytes (default 4 MiB) of blocks. */
  maxBlockBatch?: number;
  batchBytes?: number;
}

export interface RpcSource extends ChainSource {
  /** Calls one RPC method (with the source's retry rules). */
  call<T = unknown>(method: string, params?: unknown[]): Promise<T>;
}

interface ChainTipInfo {
  height: number;
  hash: string;
  branchlen: number;
  status: string;
}

/** getchaintips' answer, each tip's height, hash and branch length checked (a branch reaches down to genesis at most). */
function chainTips(where: string, tips: unknown): ChainTipInfo[] {
  const method = 'getchaintips';
  if (!Array.isArray(tips)) throw new Error(`RPC ${where}: ${method}: the result is ${JSON.stringify(tips)?.slice(0, 80)}, not an array`);
  return tips.map((t: Record<string, unknown> | null, i) => {
    const field = `tips[${i}]`;
    const height = heightIn(where, method, `${field}.height`, t?.height);
    const branchlen = countIn(where, method, `${field}.branchlen`, t?.branchlen);
    if (branchlen > height) throw new Error(`RPC ${where}: ${method}: ${field}.branchlen is ${branchlen}, more than its height ${height}`);
    return { height, branchlen, hash: hashIn(where, method, `${field}.hash`, t?.hash), status: String(t?.status) };
  });
}

/** Opens a JSON-RPC source: checks the connection, credentials and network. */
export async function openRpc(url: string, opts: RpcOptions = {}): Promise<RpcSource> {
  const client = rpcClient(url, opts);
  const { where, warnings, call, batch } = client;
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  const maxBlockBatch = Math.max(1, opts.maxBlockBatch ?? 50);
  const batchBytes = opts.batchBytes ?? 4 * 1024 * 1024;
  const network = await detectNetwork(client, opts.network);
  const description = `rpc ${where}`;

  const tip = async (): Promise<ChainTip> => {
    const i = await chainInfo(client);
    return { height: i.blocks, hash: i.bestblockhash };
  };

  let closed = false;

  const source: RpcSource = {
    network,
    description,
    warnings,
    call,
    tip,
    hashAt: (height: number) => blockHashAt(client, height),
    async scanWork(height: number, from: number) {
      // The node's cumulative tx count (getchaintxstats 0 <hash>: nChainTx); unknown on nodes without it.
      const txsTo = async (h: number): Promise<number | undefined> => {
        if (h < 0) return 0;
        try {
          const s = await call<{ txcount?: unknown } | null>('getchaintxstats', [0, await blockHashAt(client, h)]);
          return s?.txcount === undefined ? undefined : countIn(where, 'getchaintxstats', 'txcount', s.txcount);
        } catch (e) {
          if (e instanceof RpcError) return undefined;
          throw e;
        }
      };
      const [to, below] = [await txsTo(height), await txsTo(from - 1)];
      return to !== undefined && below !== undefined ? { unit: 'txs' as const, total: Math.max(0, to - below) } : undefined;
    },
    mainChain: (height: number, from = 0): AsyncGenerator<SourceBlock> =>
      scanMainChain(client, height, from, { concurrency, maxBlockBatch, batchBytes, description, isClosed: () => closed, tip }),
    async *offChain(height: number): AsyncGenerator<OffChainBlock> {
      const tips = chainTips(where, await call('getchaintips'));
      const wanted = new Map<string, number>(); // hash -> height
      for (const t of tips) {
        if (t.status === 'active' || t.branchlen === 0) continue;
        const fork = t.height - t.branchlen;
        if (fork >= height) continue;
        let hash = t.hash;
        for (let h = t.height; h > fork; h--) {
          if (wanted.has(hash)) break;
          wanted.set(hash, h);
          if (h - 1 === fork) break;
          const hdr = await call<{ previousblockhash?: unknown } | null>('getblockheader', [hash, true]);
          if (hdr?.previousblockhash === undefined) break;
          hash = hashIn(where, 'getblockheader', 'previousblockhash', hdr.previousblockhash);
        }
      }
      const list = [...wanted].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
      for (let i = 0; i < list.length; i += maxBlockBatch) {
        const part = list.slice(i, i + maxBlockBatch);
        const results = await batch('getblock', part.map(([h]) => [h, 0]));
        for (let k = 0; k < part.length; k++) {
          const [hash, h] = part[k]!;
          const r = results[k];
          if (r instanceof RpcError) {
            warnings.push(`RPC ${where}: side block ${hash} (height ${h}) has no data on the node (${r.rpcMessage}); skipped`);
            continue;
          }
          yield { kind: 'side', hash, height: h, raw: rawBlock(where, r, hash, 'getblock') };
        }
      }
    },
    async close() {
      closed = true;
    },
  };
  return checkedSource(source, { tipName: "the node's tip" });
}
