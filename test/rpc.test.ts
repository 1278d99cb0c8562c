import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { sha256d, toDisplayHex } from '../src/chain/hash.js';
import { NETWORKS } from '../src/chain/networks.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { openSource } from '../src/source/index.js';
import { defaultCookiePath, openRpc, type RpcOptions } from '../src/source/rpc.js';
import { blockId, FakeNode, loadBlocks, type Chain } from './support/fake-node.js';
import { describeShared } from './support/shared-data.js';


const REGTEST = NETWORKS['bitcoin-regtest'];
const TIP_103 = '7474991c2ae3c94c4813d75b4c752028304b773dd4dce8d460dfa2d1e7b542a3';
const FAST: RpcOptions = { retryInitialMs: 5, retryMaxMs: 40, giveUpMs: 3000, timeoutMs: 5000, log: () => undefined };

/** A copy of `raw` with a new prev hash (internal order) and nonce: a different block at the same height. */
function variant(raw: Buffer, prev: Buffer | undefined, nonceXor: number): Buffer {
  const b = Buffer.from(raw);
  if (prev) prev.copy(b, 4);
  b.writeUInt32LE((b.readUInt32LE(76) ^ nonceXor) >>> 0, 76);
  return b;
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describeShared('chaindata')('JSON-RPC source (fake node over real regtest blocks)', () => {
  const main = loadBlocks();
  const sideBlock = variant(main[100]!, undefined, 0x5a5a5a5a); // child of block 99
  const chain: Chain = { main, side: [sideBlock] };
  const nodes: FakeNode[] = [];
  const startNode = async (c: Chain = chain): Promise<FakeNode> => {
    const n = await new FakeNode(c).start();
    nodes.push(n);
    return n;
  };
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.stop()));
  });

  it('delivers the same chain and side blocks as a blocks dir built from the same blocks', async () => {
    const node = await startNode();
    const src = await openRpc(node.url, { ...FAST, network: REGTEST, concurrency: 3, maxBlockBatch: 7 });
    expect(src.network.name).toBe('bitcoin-regtest');
    expect(src.description).toBe(`rpc ${node.url}`);
    expect(await src.tip()).toEqual({ height: 103, hash: TIP_103 });
    const rpcBlocks = await collect(src.mainChain(103));
    const rpcSide = await collect(src.offChain(103));
    await src.close();

    const dir = mkdtempSync(join(tmpdir(), 'rpc-test-'));
    temps.push(dir);
    const magic = Buffer.from(REGTEST.magic, 'hex');
    const framed = [...main, sideBlock].flatMap((b) => {
      const len = Buffer.alloc(4);
      len.writeUInt32LE(b.length);
      return [magic, len, b];
    });
    writeFileSync(join(dir, 'blk00000.dat'), Buffer.concat(framed));
    const blk = await openBlocksDir(dir, REGTEST);
    const blkBlocks = await collect(blk.mainChain(103));
    const blkSide = await collect(blk.offChain(103));
    await blk.close();

    expect(rpcBlocks.map((b) => b.height)).toEqual([...Array(104).keys()]);
    expect(rpcBlocks.at(-1)!.hash).toBe(TIP_103);
    expect(rpcBlocks[0]!.hash).toBe(REGTEST.genesis);
    expect(rpcBlocks.map((b) => [b.height, b.hash, b.raw.toString('hex')])).toEqual(blkBlocks.map((b) => [b.height, b.hash, b.raw.toString('hex')]));
    expect(rpcSide.map((b) => [b.kind, b.hash, b.height])).toEqual([['side', blockId(sideBlock), 100]]);
    expect(rpcSide.map((b) => [b.kind, b.hash, b.height, b.raw.toString('hex')])).toEqual(blkSide.map((b) => [b.kind, b.hash, b.height, b.raw.toString('hex')]));
    // below the fork the side block is not off the snapshot's chain
    expect(await collect((await openRpc(node.url, { ...FAST, network: REGTEST })).offChain(99))).toEqual([]);
    expect(src.warnings).toEqual([]);
  });

  it('keeps memory bounded: only a window of blocks is fetched ahead of the consumer', async () => {
    const node = await startNode();
    const src = await openRpc(node.url, { ...FAST, network: REGTEST, concurrency: 2, maxBlockBatch: 5 });
    const it = src.mainChain(103)[Symbol.asyncIterator]();
    await it.next();
    await new Promise((r) => setTimeout(r, 150));
    expect(node.blocksServed).toBeLessThanOrEqual((2 + 2) * 5);
    await it.return?.();
  });

  it('retries HTTP 500, -28 (warming up) and connections closed mid-response', async () => {
    const node = await startNode();
    let failures = 0;
    let getblocks = 0;
    node.fault = ({ methods, n }, res, body) => {
      if (methods[0] === 'getblock') getblocks++;
      if (n <= 2) {
        res.writeHead(500);
        res.end('Internal Server Error');
        failures++;
        return true;
      }
      if (n <= 4) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ result: null, error: { code: -28, message: 'Loading block index…' }, id: 1 }));
        failures++;
        return true;
      }
      if (methods[0] === 'getblock' && (getblocks === 2 || getblocks === 4)) {
        // a batch item says -28
        const ids = (JSON.parse(body) as { id: number }[]).map((r) => r.id);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(ids.map((id) => ({ id, result: null, error: { code: -28, message: 'Verifying blocks…' } }))));
        failures++;
        return true;
      }
      if (methods[0] === 'getblock' && (getblocks === 6 || getblocks === 8)) {
        // close the connection mid-response
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
        res.write('[{"result":"0100', () => res.destroy());
        failures++;
        return true;
      }
      return false;
    };
    const src = await openRpc(node.url, { ...FAST, network: REGTEST, concurrency: 2, maxBlockBatch: 10 });
    const blocks = await collect(src.mainChain(103));
    expect(blocks.map((b) => b.hash)).toEqual(main.map(blockId));
    expect(blocks.map((b) => b.raw.equals(main[b.height]!))).not.toContain(false);
    expect(failures).toBe(8);
    expect(src.warnings.length).toBe(8);
    expect(src.warnings.some((w) => /HTTP 500; retrying/.test(w))).toBe(true);
    expect(src.warnings.some((w) => /code -28/.test(w))).toBe(true);
    expect(src.warnings.some((w) => /getblock batch: .*(terminated|closed|socket)/i.test(w))).toBe(true);
  });

  it('gives up after the configured time with a clear error naming the URL', async () => {
    const node = await startNode();
    node.fault = (_r, res) => {
      res.writeHead(503);
      res.end();
      return true;
    };
    const t0 = Date.now();
    await expect(openRpc(node.url, { ...FAST, giveUpMs: 300, network: REGTEST })).rejects.toThrow(
      new RegExp(`^RPC ${node.url}: giving up after \\d+ attempts over \\d+ ms: getblockchaininfo: HTTP 503`),
    );
    expect(Date.now() - t0).toBeLessThan(2000);
    // connection refused: nothing listens any more
    const url = node.url;
    await node.stop();
    nodes.splice(nodes.indexOf(node), 1);
    await expect(openRpc(url, { ...FAST, giveUpMs: 200, network: REGTEST })).rejects.toThrow(/connection refused .*ECONNREFUSED.*is the node running/);
  });

  it('401 is an immediate clear error, without the password', async () => {
    const node = await startNode();
    node.auth = `Basic ${Buffer.from('alice:right').toString('base64')}`;
    const withPw = node.url.replace('http://', 'http://alice:wrongsecret@');
    const t0 = Date.now();
    const err = (await openRpc(withPw, { ...FAST, giveUpMs: 60_000, network: REGTEST }).catch((e: unknown) => e)) as Error;
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(err.message).toMatch(/authentication failed \(HTTP 401\) using the user and password in the URL/);
    expect(err.message).toContain(node.url.replace('http://', 'http://alice@'));
    expect(err.message).not.toContain('wrongsecret');
    expect(node.requests).toBe(1);
    // right password in the URL works
    const ok = await openRpc(node.url.replace('http://', 'http://alice:right@'), { ...FAST, network: REGTEST });
    expect((await ok.tip()).height).toBe(103);
  });

  it('reads credentials from a cookie file (explicit, or the default path for the network)', async () => {
    const node = await startNode();
    node.auth = `Basic ${Buffer.from('__cookie__:c00k1e').toString('base64')}`;
    const home = mkdtempSync(join(tmpdir(), 'rpc-home-'));
    temps.push(home);
    const cookie = defaultCookiePath(REGTEST, home);
    expect(cookie).toBe(join(home, '.bitcoin', 'regtest', '.cookie'));
    expect(defaultCookiePath(NETWORKS.namecoin, home)).toBe(join(home, '.namecoin', '.cookie'));
    mkdirSync(join(home, '.bitcoin', 'regtest'), { recursive: true });
    writeFileSync(cookie, '__cookie__:c00k1e\n');
    const a = await openRpc(node.url, { ...FAST, network: REGTEST, cookieFile: cookie });
    expect((await a.tip()).hash).toBe(TIP_103);
    const b = await openRpc(node.url, { ...FAST, network: REGTEST, homeDir: home });
    expect((await b.tip()).hash).toBe(TIP_103);
    await expect(openRpc(node.url, { ...FAST, network: REGTEST, homeDir: join(home, 'nowhere') })).rejects.toThrow(/HTTP 401\) using no credentials/);
    await expect(openRpc(node.url, { ...FAST, network: REGTEST, cookieFile: join(home, 'missing') })).rejects.toThrow(/cannot read cookie file/);
  });

  it('a reorg during the scan fails clearly naming the fork height', async () => {
    const node = await startNode();
    // the alternative chain: blocks 50.. replaced (different nonces, relinked)
    const alt = main.slice(0, 50);
    for (let h = 50; h < main.length; h++) alt.push(variant(main[h]!, h === 50 ? undefined : sha256d(alt[h - 1]!.subarray(0, 80)), 0x01010101));
    let switched = false;
    node.fault = ({ methods }) => {
      if (!switched && methods[0] === 'getblock' && node.blocksServed >= 60) {
        switched = true;
        node.setChain({ main: alt, side: [] });
      }
      return false;
    };
    const src = await openRpc(node.url, { ...FAST, network: REGTEST, concurrency: 1, maxBlockBatch: 10 });
    const got: string[] = [];
    const err = (await (async () => {
      for await (const b of src.mainChain(103)) got.push(b.hash);
    })().catch((e: unknown) => e)) as Error;
    expect(switched).toBe(true);
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(
      new RegExp(`^RPC ${node.url}: the node's chain changed during the scan \\(reorg\\) at height 50: block ${blockId(main[50]!)} was replaced by ${blockId(alt[50]!)}`),
    );
    // what was delivered is one chain: every block links to the one before
    for (let h = 1; h < got.length; h++) expect(toDisplayHex(main[h]!.subarray(4, 36))).toBe(got[h - 1]);
  });

  it('a reorg after the last block is caught by the final re-check', async () => {
    const node = await startNode();
    const alt = main.slice(0, 103);
    alt.push(variant(main[103]!, undefined, 0x77));
    const src = await openRpc(node.url, { ...FAST, network: REGTEST });
    const err = (await (async () => {
      for await (const b of src.mainChain(103)) if (b.height === 103) node.setChain({ main: alt, side: [] });
    })().catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/reorg\) at height 103: block 7474991c.* was replaced by/);
  });

  it('a scan from a later height: nothing above the tip is a no-op; the block below anchors the scan', async () => {
    const node = await startNode();
    const src = await openRpc(node.url, { ...FAST, network: REGTEST, maxBlockBatch: 5 });
    expect(await collect(src.mainChain(103, 104))).toEqual([]);
    expect(await collect(src.mainChain(80, 81))).toEqual([]);
    expect((await collect(src.mainChain(103, 90))).map((b) => b.hash)).toEqual(main.slice(90).map(blockId));
    // the block below `from` changed (a reorg at 60 while the scan starts at 91): named, not "height 0"
    const alt = main.slice(0, 60);
    for (let h = 60; h < main.length; h++) alt.push(variant(main[h]!, h === 60 ? undefined : sha256d(alt[h - 1]!.subarray(0, 80)), 0x0f0f0f0f));
    const err = (await (async () => {
      for await (const b of src.mainChain(103, 91)) if (b.height === 100) node.setChain({ main: alt, side: [] });
    })().catch((e: unknown) => e)) as Error;
    expect(err.message, err.message).toMatch(new RegExp(`reorg\\) at or below height 90: block ${blockId(main[90]!)} was replaced by ${blockId(alt[90]!)}`));
    await src.close();
  });

  it('network: taken from the node when unambiguous, else --network is required; mismatches are errors', async () => {
    const node = await startNode();
    await expect(openRpc(node.url, FAST)).rejects.toThrow(/chain "regtest" with genesis 0f9188f1.* could be bitcoin-regtest or namecoin-regtest; pass --network/);
    await expect(openRpc(node.url, { ...FAST, network: NETWORKS.namecoin })).rejects.toThrow(/genesis block 0f9188f1.* is not the namecoin genesis/);
    const nmc = await openRpc(node.url, { ...FAST, network: NETWORKS['namecoin-regtest'] });
    expect(nmc.network.name).toBe('namecoin-regtest');
    // the network through openSource, and a height above the tip
    const src = await openSource(`rpc:${node.url}`, REGTEST, { rpc: FAST });
    await expect(collect(src.mainChain(104))).rejects.toThrow(/height 104 is above the node's tip \(height 103, 7474991c/);
    await expect(openSource('rpc:', REGTEST)).rejects.toThrow(/URL is missing/);
  });

  it('a pruned node is a clear error', async () => {
    const node = await startNode();
    node.fault = ({ methods }, res) => {
      if (methods[0] !== 'getblockchaininfo') return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 1, error: null, result: { chain: 'regtest', blocks: 103, bestblockhash: TIP_103, pruned: true, pruneheight: 40 } }));
      return true;
    };
    await expect(openRpc(node.url, { ...FAST, network: REGTEST })).rejects.toThrow(/the node is pruned: blocks at heights 0–39 are deleted/);
  });
});
