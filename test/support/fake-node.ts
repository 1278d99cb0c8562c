// A small Bitcoin-Core-like JSON-RPC node over fixed blocks, for the RPC source and build tests.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { parseBlock } from '../../src/chain/block.js';
import { sha256d, toDisplayHex } from '../../src/chain/hash.js';
import { chainPath, namecoinRegtestRecords } from './helpers.js';

export const blockId = (raw: Buffer): string => toDisplayHex(sha256d(raw.subarray(0, 80)));

export function loadBlocks(): Buffer[] {
  const json = JSON.parse(readFileSync(chainPath('bitcoin-core', 'rpc_getblockstats.json'), 'utf8')) as { blocks: string[] };
  return json.blocks.map((h) => Buffer.from(h, 'hex'));
}

/**
 * The real Namecoin Core regtest chain (../shared/chaindata/namecoin-core-regtest): every block
 * framed in blocks-manifest.json, read from the node's blk files and de-obfuscated with xor.dat by
 * file offset (independently of the blocks-dir source), each checked against the manifest's hash.
 */
export function loadCoreRegtest(): { main: Buffer[]; stale: Map<number, Buffer> } {
  const main: Buffer[] = [];
  const stale = new Map<number, Buffer>();
  for (const b of namecoinRegtestRecords()) {
    if (blockId(b.data) !== b.hash) throw new Error(`${b.file}: block at height ${b.height} hashes to ${blockId(b.data)}, not ${b.hash}`);
    if (b.chain === 'main') main[b.height] = b.data;
    else stale.set(b.height, b.data);
  }
  return { main, stale };
}

export interface Chain {
  main: Buffer[];
  side: Buffer[]; // side blocks, each a child of main[sideParent]
}

export interface Fault {
  /** Return true when the request was answered by the fault. */
  (req: { methods: string[]; n: number }, res: ServerResponse, body: string): boolean;
}

/** A small Bitcoin-Core-like JSON-RPC server (JSON-RPC 1.0 semantics: errors as HTTP 500 with a JSON body). */
export class FakeNode {
  server: Server;
  url = '';
  requests = 0;
  blocksServed = 0;
  fault: Fault | undefined;
  auth: string | undefined;
  /** Per method, a rewrite of the node's result (e.g. a getblockchaininfo with an impossible `blocks`). */
  rewrite: Record<string, (result: unknown, params: unknown[]) => unknown> = {};
  chain: Chain;
  private byHash = new Map<string, { raw: Buffer; height: number; prev: string | undefined }>();
  private hashes: string[] = [];

  constructor(chain: Chain) {
    this.chain = chain;
    this.setChain(chain);
    this.server = createServer((req, res) => this.handle(req, res));
  }

  setChain(chain: Chain): void {
    this.chain = chain;
    this.hashes = chain.main.map(blockId);
    for (const [h, raw] of chain.main.entries()) this.byHash.set(blockId(raw), { raw, height: h, prev: h ? this.hashes[h - 1] : undefined });
    for (const raw of chain.side) {
      const prev = toDisplayHex(raw.subarray(4, 36));
      const parent = this.byHash.get(prev)!;
      this.byHash.set(blockId(raw), { raw, height: parent.height + 1, prev });
    }
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** Answers every request with HTTP `status` and `location` (a redirect), nothing else. */
  redirect(status: number, location: string): void {
    this.fault = (_req, res) => {
      res.writeHead(status, { location, 'content-type': 'text/plain' });
      res.end(`moved to ${location}`);
      return true;
    };
  }

  private answer(method: string, params: unknown[]): { result?: unknown; error?: { code: number; message: string } } {
    const a = this.answerAsNode(method, params);
    const rewrite = this.rewrite[method];
    return rewrite && !a.error ? { result: rewrite(a.result, params) } : a;
  }

  private answerAsNode(method: string, params: unknown[]): { result?: unknown; error?: { code: number; message: string } } {
    const tip = this.hashes.length - 1;
    switch (method) {
      case 'getblockchaininfo':
        return { result: { chain: 'regtest', blocks: tip, bestblockhash: this.hashes[tip], pruned: false } };
      case 'getchaintxstats': {
        // nChainTx: the txs of the chain up to the block (nblocks 0: no window statistics)
        const b = this.byHash.get(params[1] as string);
        if (!b) return { error: { code: -5, message: 'Block not found' } };
        let txcount = 0;
        for (let at: string | undefined = params[1] as string; at !== undefined; at = this.byHash.get(at)!.prev) {
          txcount += parseBlock(this.byHash.get(at)!.raw, { auxpow: true }).txs.length;
        }
        return { result: { time: 0, txcount, window_final_block_hash: params[1], window_final_block_height: b.height, window_block_count: 0 } };
      }
      case 'getblockcount':
        return { result: tip };
      case 'getblockhash': {
        const h = params[0] as number;
        if (!(h >= 0 && h <= tip)) return { error: { code: -8, message: 'Block height out of range' } };
        return { result: this.hashes[h] };
      }
      case 'getblock': {
        const b = this.byHash.get(params[0] as string);
        if (!b) return { error: { code: -5, message: 'Block not found' } };
        this.blocksServed++;
        return { result: b.raw.toString('hex') };
      }
      case 'getblockheader': {
        const b = this.byHash.get(params[0] as string);
        if (!b) return { error: { code: -5, message: 'Block not found' } };
        return { result: { hash: params[0], height: b.height, previousblockhash: b.prev } };
      }
      case 'getchaintips': {
        const tips: unknown[] = [{ height: tip, hash: this.hashes[tip], branchlen: 0, status: 'active' }];
        // A side block no other side block builds on is a tip; its branch runs down to the main chain.
        const sideIds = new Set(this.chain.side.map(blockId));
        const parents = new Set(this.chain.side.map((raw) => toDisplayHex(raw.subarray(4, 36))));
        const onMain = (id: string) => this.hashes[this.byHash.get(id)!.height] === id;
        for (const id of sideIds) {
          if (parents.has(id) || onMain(id)) continue;
          const b = this.byHash.get(id)!;
          let branchlen = 0;
          for (let at: string | undefined = id; at !== undefined && !onMain(at); at = this.byHash.get(at)!.prev) branchlen++;
          tips.push({ height: b.height, hash: id, branchlen, status: 'valid-fork' });
        }
        return { result: tips };
      }
      default:
        return { error: { code: -32601, message: 'Method not found' } };
    }
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      this.requests++;
      if (this.auth !== undefined && req.headers.authorization !== this.auth) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="jsonrpc"' });
        res.end();
        return;
      }
      // As Bitcoin Core's HTTP server: only POST, and a body that is not JSON is a parse error (-32700).
      if (req.method !== 'POST') {
        res.writeHead(405, { 'content-type': 'text/plain' });
        res.end('JSONRPC server handles only POST requests');
        return;
      }
      type Request = { id: unknown; method: string; params: unknown[] };
      let parsed: Request | Request[];
      try {
        parsed = JSON.parse(body) as Request | Request[];
      } catch {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ result: null, error: { code: -32700, message: 'Parse error' }, id: null }));
        return;
      }
      const list = Array.isArray(parsed) ? parsed : [parsed];
      if (this.fault?.({ methods: list.map((r) => r.method), n: this.requests }, res, body)) return;
      const answers = list.map((r) => ({ ...this.answer(r.method, r.params), id: r.id }));
      if (Array.isArray(parsed)) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answers.map((a) => ({ result: null, error: null, ...a }))));
      } else {
        const a = answers[0]!;
        res.writeHead(a.error ? (a.error.code === -32601 ? 404 : 500) : 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ result: null, error: null, ...a }));
      }
    });
  }
}


/** Starts fake nodes serving `main` (no side blocks) for the tests of a suite; each is stopped after its test. */
export function fakeNodesFor(main: Buffer[]): () => Promise<FakeNode> {
  const nodes: FakeNode[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.stop()));
  });
  return async () => {
    const n = await new FakeNode({ main, side: [] }).start();
    nodes.push(n);
    return n;
  };
}
