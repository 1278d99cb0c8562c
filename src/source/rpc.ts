/**
 * Chain source over a Bitcoin Core / Namecoin Core JSON-RPC endpoint.
 *
 * Blocks come from batched `getblockhash` + `getblock <hash> 0` calls, a
 * bounded window of batches in flight (p-limit), yielded strictly in height
 * order, so memory does not grow with the chain height. Every block must link
 * to the one yielded before it and a re-check at the end confirms the node's
 * chain did not change: a reorg during the scan is an error naming the fork
 * height, never a mix of two chains.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { HEADER_SIZE } from '../chain/block.js';
import { fromDisplayHex, sha256d, toDisplayHex } from '../chain/hash.js';
import { NETWORKS, type Network, type NetworkName } from '../chain/networks.js';
import type { ChainSource, ChainTip, OffChainBlock, SourceBlock } from './types.js';

export interface RpcOptions {
  /** The network; when absent it is taken from the node (genesis hash), failing when ambiguous. */
  network?: Network;
  /** Cookie file (`__cookie__:<password>`); default: the node's cookie for the network when it exists. */
  cookieFile?: string;
  /** Per-request timeout (default 120 s). */
  timeoutMs?: number;
  /** Batches in flight at once (default 4). */
  concurrency?: number;
  /**
   * Back-off budget of one failing call (default 120 s): it is tried
   * `retryAttempts(giveUpMs, retryInitialMs, retryMaxMs)` times at most (20 with the
   * defaults), so it gives up after giveUpMs plus the time the attempts themselves took.
   */
  giveUpMs?: number;
  /** First back-off delay (default 250 ms); doubles per retry up to retryMaxMs (default 8 s). */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** Where each retry is announced, one line each (default: stderr). */
  log?: (line: string) => void;
  /** Most blocks per getblock batch (default 50); batches aim at batchBytes (default 4 MiB) of blocks. */
  maxBlockBatch?: number;
  batchBytes?: number;
  /** Home directory for the default cookie path (default os.homedir()). */
  homeDir?: string;
}

export interface RpcSource extends ChainSource {
  /** Calls one RPC method (with the source's retry rules). */
  call<T = unknown>(method: string, params?: unknown[]): Promise<T>;
}

/** An error answer of the node (code + message), not retried (except -28). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    readonly rpcMessage: string,
    readonly method: string,
    where: string,
  ) {
    super(`RPC ${where}: ${method} failed: ${rpcMessage} (code ${code})`);
    this.name = 'RpcError';
  }
}

class TransientError extends Error {}
/** Not worth retrying (authentication). */
class FatalError extends Error {}

/** Node's chain name (getblockchaininfo `chain`) per network. */
const CHAIN_NAMES: Record<NetworkName, string> = {
  bitcoin: 'main',
  'bitcoin-testnet': 'test',
  'bitcoin-testnet4': 'testnet4',
  'bitcoin-signet': 'signet',
  'bitcoin-regtest': 'regtest',
  namecoin: 'main',
  'namecoin-testnet': 'test',
  'namecoin-regtest': 'regtest',
};

/** The default cookie file a node writes for a network. */
export function defaultCookiePath(network: Network, home = homedir()): string {
  const dataDir = network.name.startsWith('namecoin') ? '.namecoin' : '.bitcoin';
  return join(home, dataDir, network.cookieDir, '.cookie');
}

/** The URL as shown in logs and errors: no password. */
export function redactUrl(url: URL): string {
  const u = new URL(url.href);
  u.password = '';
  return u.href;
}

/** Attempts of one call the retry policy allows: the first, plus every back-off wait that fits in `giveUpMs`. */
export function retryAttempts(giveUpMs: number, initialMs: number, maxMs: number): number {
  let attempts = 1;
  let waited = 0;
  for (let delay = initialMs; waited + delay <= giveUpMs; delay = Math.min(delay * 2, maxMs)) {
    waited += delay;
    attempts++;
  }
  return attempts;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string } | null;
  id?: unknown;
}

function errorText(e: unknown): string {
  if (e instanceof Error) {
    const cause = (e as Error & { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as NodeJS.ErrnoException).code;
      return `${e.message}: ${code ? `${code} ` : ''}${cause.message}`;
    }
    return e.message;
  }
  return String(e);
}

interface ChainInfo {
  chain: string;
  blocks: number;
  bestblockhash: string;
  pruned?: boolean;
  pruneheight?: number;
}

interface ChainTipInfo {
  height: number;
  hash: string;
  branchlen: number;
  status: string;
}

/** Opens a JSON-RPC source: checks the connection, credentials and network. */
export async function openRpc(url: string, opts: RpcOptions = {}): Promise<RpcSource> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`RPC URL "${url.replace(/\/\/[^@/]*@/, '//***@')}" is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`RPC URL ${redactUrl(parsed)}: only http: and https: are supported`);
  }
  const where = redactUrl(parsed);
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const giveUpMs = opts.giveUpMs ?? 120_000;
  const retryInitialMs = opts.retryInitialMs ?? 250;
  const retryMaxMs = opts.retryMaxMs ?? 8_000;
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  const maxBlockBatch = Math.max(1, opts.maxBlockBatch ?? 50);
  const batchBytes = opts.batchBytes ?? 4 * 1024 * 1024;
  const maxAttempts = retryAttempts(giveUpMs, retryInitialMs, retryMaxMs);
  const log = opts.log ?? ((line: string) => void process.stderr.write(line + '\n'));
  const warnings: string[] = [];
  const MAX_RETRY_WARNINGS = 50;
  let retryWarnings = 0;

  // ---- credentials ----
  let authorization: string | undefined;
  let authFrom = 'no credentials';
  if (parsed.username || parsed.password) {
    const user = decodeURIComponent(parsed.username);
    const pass = decodeURIComponent(parsed.password);
    authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    authFrom = 'the user and password in the URL';
  } else {
    let cookie = opts.cookieFile;
    let explicit = true;
    if (cookie === undefined) {
      explicit = false;
      const net = opts.network ?? Object.values(NETWORKS).find((n) => String(n.rpcPort) === parsed.port);
      if (net) cookie = defaultCookiePath(net, opts.homeDir);
    }
    if (cookie !== undefined && (explicit || existsSync(cookie))) {
      let text: string;
      try {
        text = readFileSync(cookie, 'utf8').trim();
      } catch (e) {
        throw new Error(`RPC ${where}: cannot read cookie file ${cookie} (${(e as Error).message})`);
      }
      if (!text.includes(':')) throw new Error(`RPC ${where}: cookie file ${cookie} does not hold "user:password"`);
      authorization = `Basic ${Buffer.from(text).toString('base64')}`;
      authFrom = `cookie file ${cookie}`;
    }
  }
  const endpoint = new URL(parsed.href);
  endpoint.username = '';
  endpoint.password = '';

  // ---- transport with retries ----
  let nextId = 1;

  async function post(body: unknown, what: string): Promise<{ status: number; json: unknown }> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (authorization) headers.authorization = authorization;
    let res: Response;
    let text: string;
    try {
      res = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
      if (res.status === 401 || res.status === 403) {
        await res.body?.cancel().catch(() => undefined);
        throw new FatalError(
          `RPC ${where}: authentication failed (HTTP ${res.status}) using ${authFrom}; give rpc:http://user:password@host:port or --rpc-cookie <path>`,
        );
      }
      text = await res.text();
    } catch (e) {
      if (e instanceof FatalError) throw e;
      if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
        throw new TransientError(`${what}: no answer within ${timeoutMs} ms`);
      }
      const cause = e instanceof Error ? (e as Error & { cause?: Error & { code?: string } }).cause : undefined;
      if (cause?.message === 'bad port') {
        throw new FatalError(
          `RPC ${where}: port ${endpoint.port} is refused by Node ("bad port": reserved for another protocol); give the node's RPC port (e.g. 8332 for Bitcoin, 8336 for Namecoin)`,
        );
      }
      if (cause?.code?.startsWith('HPE_')) {
        throw new FatalError(`RPC ${where}: ${what}: the answer is not HTTP (${cause.code}: ${cause.message}); is this the node's RPC port (not its P2P port)?`);
      }
      if (cause?.code === 'ENOTFOUND') throw new FatalError(`RPC ${where}: ${what}: host ${endpoint.hostname} not found`);
      throw new TransientError(`${what}: ${errorText(e)}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const isAnswer = (a: unknown) => typeof a === 'object' && a !== null && !Array.isArray(a) && ('result' in a || 'error' in a);
    if (!(Array.isArray(body) ? Array.isArray(json) ? json.every(isAnswer) : isAnswer(json) : isAnswer(json))) {
      if (res.status >= 500) throw new TransientError(`${what}: HTTP ${res.status}`);
      const type = res.headers.get('content-type')?.split(';')[0] ?? 'no content type';
      throw new FatalError(
        `RPC ${where}: ${what}: the answer is not JSON-RPC (HTTP ${res.status}, ${type}, ${text.length} bytes: ${JSON.stringify(text.slice(0, 60))}); is this a node's RPC endpoint?`,
      );
    }
    return { status: res.status, json };
  }

  /** Runs `attempt` until it succeeds, retrying TransientErrors with capped exponential back-off (each retry logged). */
  async function withRetry<T>(attempt: () => Promise<T>): Promise<T> {
    const started = Date.now();
    let delay = retryInitialMs;
    let tries = 0;
    for (;;) {
      try {
        return await attempt();
      } catch (e) {
        if (!(e instanceof TransientError)) throw e;
        tries++;
        const elapsed = Date.now() - started;
        if (tries >= maxAttempts) {
          throw new Error(`RPC ${where}: giving up after ${tries} attempt${tries === 1 ? '' : 's'} over ${elapsed} ms: ${e.message}`);
        }
        log(`RPC ${where}: ${e.message}; attempt ${tries}/${maxAttempts}, next in ${delay} ms`);
        if (retryWarnings < MAX_RETRY_WARNINGS) warnings.push(`RPC ${where}: ${e.message}; retrying in ${delay} ms`);
        else if (retryWarnings === MAX_RETRY_WARNINGS) warnings.push(`RPC ${where}: more transient failures (not listed)`);
        retryWarnings++;
        await sleep(delay);
        delay = Math.min(delay * 2, retryMaxMs);
      }
    }
  }

  function checkAnswer(a: RpcAnswer | undefined, method: string, status: number): unknown {
    if (!a || typeof a !== 'object') throw new TransientError(`${method}: malformed answer`);
    if (a.error) {
      if (a.error.code === -28) throw new TransientError(`${method}: node not ready (${a.error.message}, code -28)`);
      throw new RpcError(a.error.code, a.error.message, method, where);
    }
    if (status >= 500) throw new TransientError(`${method}: HTTP ${status}`);
    return a.result;
  }

  async function call<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    return withRetry(async () => {
      const { status, json } = await post({ jsonrpc: '1.0', id: nextId++, method, params }, method);
      return checkAnswer(json as RpcAnswer, method, status) as T;
    });
  }

  /** One batch; per-item answers in request order (RpcError objects for failed items). */
  async function batch(method: string, paramsList: unknown[][]): Promise<(unknown | RpcError)[]> {
    if (paramsList.length === 0) return [];
    return withRetry(async () => {
      const first = nextId;
      nextId += paramsList.length;
      const body = paramsList.map((params, k) => ({ jsonrpc: '1.0', id: first + k, method, params }));
      const { status, json } = await post(body, `${method} batch`);
      if (!Array.isArray(json)) {
        checkAnswer(json as RpcAnswer, method, status); // throws for an error object
        throw new TransientError(`${method} batch: answer is not an array`);
      }
      const byId = new Map<unknown, RpcAnswer>();
      for (const a of json as RpcAnswer[]) if (a && typeof a === 'object') byId.set(a.id, a);
      return paramsList.map((_, k) => {
        try {
          return checkAnswer(byId.get(first + k), method, 200);
        } catch (e) {
          if (e instanceof RpcError) return e;
          throw e; // transient: retry the whole batch
        }
      });
    });
  }

  const strict = (results: (unknown | RpcError)[]): unknown[] =>
    results.map((r) => {
      if (r instanceof RpcError) throw r;
      return r;
    });

  // ---- network ----
  const info = await call<ChainInfo>('getblockchaininfo');
  const genesis = await call<string>('getblockhash', [0]);
  let network: Network;
  if (opts.network) {
    network = opts.network;
    if (genesis !== network.genesis) {
      throw new Error(`RPC ${where}: the node's genesis block ${genesis} (chain "${info.chain}") is not the ${network.name} genesis ${network.genesis}`);
    }
  } else {
    const candidates = Object.values(NETWORKS).filter((n) => n.genesis === genesis);
    if (candidates.length === 0) {
      throw new Error(`RPC ${where}: the node's chain "${info.chain}" (genesis ${genesis}) is none of the known networks`);
    }
    if (candidates.length > 1) {
      throw new Error(
        `RPC ${where}: chain "${info.chain}" with genesis ${genesis} could be ${candidates.map((n) => n.name).join(' or ')}; pass --network`,
      );
    }
    network = candidates[0]!;
    if (CHAIN_NAMES[network.name] !== info.chain) {
      warnings.push(`RPC ${where}: node reports chain "${info.chain}", genesis says ${network.name}`);
    }
  }
  if (info.pruned && (info.pruneheight ?? 0) > 0) {
    throw new Error(
      `RPC ${where}: the node is pruned: blocks at heights 0–${info.pruneheight! - 1} are deleted, so the chain from genesis is not available`,
    );
  }

  const description = `rpc ${where}`;

  const tip = async (): Promise<ChainTip> => {
    const i = await call<ChainInfo>('getblockchaininfo');
    return { height: i.blocks, hash: i.bestblockhash };
  };

  const aboveTip = async (height: number): Promise<void> => {
    const t = await tip();
    if (height > t.height) throw new Error(`RPC ${where}: height ${height} is above the node's tip (height ${t.height}, ${t.hash})`);
  };

  const toBlock = (hex: unknown, hash: string, method: string): Buffer => {
    if (typeof hex !== 'string' || hex.length < HEADER_SIZE * 2 || hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
      throw new Error(`RPC ${where}: ${method} ${hash} did not return raw block hex`);
    }
    const raw = Buffer.from(hex, 'hex');
    const got = toDisplayHex(sha256d(raw.subarray(0, HEADER_SIZE)));
    if (got !== hash) throw new Error(`RPC ${where}: getblock ${hash} returned block ${got}`);
    return raw;
  };

  /**
   * Lowest height in lo..upTo where the node's chain differs from ours (`ours` holds our
   * hashes from `lo` on); -1 when the node agrees at `upTo`. A difference at `lo` itself means
   * the fork is at or below `lo`.
   */
  async function findFork(ours: Buffer, lo: number, upTo: number): Promise<{ height: number; theirs: string }> {
    const nodeHash = async (h: number): Promise<string> => {
      try {
        return await call<string>('getblockhash', [h]);
      } catch (e) {
        if (e instanceof RpcError) return '(none: above the node tip)';
        throw e;
      }
    };
    const oursAt = (h: number): string => toDisplayHex(ours.subarray(h * 32, h * 32 + 32));
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

  async function reorgError(ours: Buffer, lo: number, upTo: number, detectedAt: number): Promise<Error> {
    let fork: { height: number; theirs: string };
    try {
      fork = await findFork(ours, lo, upTo);
    } catch {
      fork = { height: -1, theirs: '?' };
    }
    const h = fork.height >= 0 ? fork.height : detectedAt;
    const oursHash = fork.height >= 0 ? toDisplayHex(ours.subarray(h * 32, h * 32 + 32)) : '?';
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

  let closed = false;

  const source: RpcSource = {
    network,
    description,
    warnings,
    call,
    tip,
    async hashAt(height: number): Promise<string> {
      if (!Number.isInteger(height) || height < 0) throw new Error(`${description}: invalid height ${height}`);
      await aboveTip(height);
      return call<string>('getblockhash', [height]);
    },
    async scanWork(height: number, from: number) {
      // The node's cumulative tx count (getchaintxstats 0 <hash>: nChainTx); unknown on nodes without it.
      const txsTo = async (h: number): Promise<number | undefined> => {
        if (h < 0) return 0;
        try {
          const s = await call<{ txcount?: number }>('getchaintxstats', [0, await call<string>('getblockhash', [h])]);
          return s.txcount;
        } catch (e) {
          if (e instanceof RpcError) return undefined;
          throw e;
        }
      };
      const [to, below] = [await txsTo(height), await txsTo(from - 1)];
      return to !== undefined && below !== undefined ? { unit: 'txs' as const, total: Math.max(0, to - below) } : undefined;
    },
    async *mainChain(height: number, from = 0): AsyncGenerator<SourceBlock> {
      if (closed) throw new Error(`${description}: source is closed`);
      if (!Number.isInteger(height) || height < 0) throw new Error(`${description}: invalid height ${height}`);
      await aboveTip(height);
      const limit = pLimit(concurrency);
      const ours = Buffer.alloc((height + 1) * 32); // our hashes (internal order) from `lo` on
      // The block below `from` anchors the scan: the first block must build on it, and the
      // final re-check (and the fork search) only looks at heights from it up.
      const lo = Math.max(0, from - 1);
      let prev: Buffer | undefined;
      if (from > 0) {
        if (from > height + 1) throw new Error(`${description}: scan from ${from} starts above height ${height} + 1`);
        prev = fromDisplayHex(await call<string>('getblockhash', [from - 1]));
        prev.copy(ours, lo * 32);
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
          hashes = strict(await batch('getblockhash', heights)) as string[];
        } catch (e) {
          if (e instanceof RpcError && e.code === -8) {
            const t = await tip().catch(() => undefined);
            throw new Error(
              `RPC ${where}: heights ${from}–${to - 1} are no longer on the node's chain (tip now ${t ? `height ${t.height}` : 'unknown'}): reorg during the scan; run again`,
            );
          }
          throw e;
        }
        const results = await batch('getblock', hashes.map((h) => [h, 0]));
        const raws = results.map((r, k) => {
          if (r instanceof RpcError) {
            if (r.code === -1 || /prune/i.test(r.rpcMessage)) {
              throw new Error(`RPC ${where}: block ${hashes[k]} at height ${from + k} is not available (${r.rpcMessage}): pruned node?`);
            }
            throw new Error(`RPC ${where}: getblock ${hashes[k]} (height ${from + k}) failed: ${r.rpcMessage} (code ${r.code})`);
          }
          return toBlock(r, hashes[k]!, 'getblock');
        });
        return { from, hashes, raws };
      };
      const fill = (): void => {
        while (scheduled <= height && queue.length <= concurrency) {
          const size = sizeSamples === 0 ? Math.min(8, maxBlockBatch) : Math.max(1, Math.min(maxBlockBatch, Math.floor(batchBytes / Math.max(1, avgSize))));
          const from = scheduled;
          const to = Math.min(height + 1, from + size);
          scheduled = to;
          const p = limit(() => (closed ? Promise.reject(new Error(`${description}: source is closed`)) : fetchChunk(from, to)));
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
              throw await reorgError(ours, lo, h - 1, h - 1);
            }
            prev = sha256d(raw.subarray(0, HEADER_SIZE));
            prev.copy(ours, h * 32);
            yield { height: h, hash: chunk.hashes[k]!, raw };
          }
        }
        // Final re-check: the node's block at `height` is still the one we delivered.
        const now = await call<string>('getblockhash', [height]).catch((e: unknown) => {
          if (e instanceof RpcError) return '';
          throw e;
        });
        if (now !== toDisplayHex(ours.subarray(height * 32, height * 32 + 32))) {
          throw await reorgError(ours, lo, height, height);
        }
      } finally {
        limit.clearQueue();
      }
    },
    async *offChain(height: number): AsyncGenerator<OffChainBlock> {
      if (closed) throw new Error(`${description}: source is closed`);
      await aboveTip(height);
      const tips = await call<ChainTipInfo[]>('getchaintips');
      const wanted = new Map<string, number>(); // hash -> height
      for (const t of tips) {
        if (t.status === 'active' || t.branchlen <= 0) continue;
        const fork = t.height - t.branchlen;
        if (fork >= height) continue;
        let hash = t.hash;
        for (let h = t.height; h > fork; h--) {
          if (wanted.has(hash)) break;
          wanted.set(hash, h);
          if (h - 1 === fork) break;
          const hdr = await call<{ previousblockhash?: string; height: number }>('getblockheader', [hash, true]);
          if (!hdr.previousblockhash) break;
          hash = hdr.previousblockhash;
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
          yield { kind: 'side', hash, height: h, raw: toBlock(r, hash, 'getblock') };
        }
      }
    },
    async close() {
      closed = true;
    },
  };
  return source;
}
