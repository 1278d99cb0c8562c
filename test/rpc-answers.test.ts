// What the RPC source takes from the node is checked before use: heights, counts and hashes out of
// range fail naming the URL (without its password), the method and the field; redirects are not
// followed (the node's URL is the one the user gave); an answer that is not a JSON-RPC success
// names the HTTP status.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { openRpc, type RpcOptions } from '../src/source/rpc.js';
import { FakeNode, fakeNodesFor, loadBlocks } from './support/fake-node.js';
import { nodeArgs, REPO } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

const REGTEST = NETWORKS['bitcoin-regtest'];
// Short back-off: a case that was (wrongly) retried shows up as a log line, not as a slow test.
const FAST: RpcOptions = { network: REGTEST, retryInitialMs: 5, retryMaxMs: 20, giveUpMs: 200, timeoutMs: 5000, log: () => undefined };
const HEIGHT_RANGE = 'not a height (0 … 2^31-1)';

const tmp = mkdtempSync(join(tmpdir(), 'rpc-answers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** `url` with user `u` and password `pw` in it, and how errors must name it (no password). */
const withPassword = (url: string) => ({ url: url.replace('http://', 'http://u:pw@'), where: url.replace('http://', 'http://u@') });

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const cli = (...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> =>
  new Promise((ok) => {
    execFile(process.execPath, [...nodeArgs('src/cli.ts'), ...args], { cwd: REPO, encoding: 'utf8' }, (err, stdout, stderr) =>
      ok({ status: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });

describeShared('chaindata')('RPC answers out of range (fake node over real regtest blocks)', () => {
  const main = loadBlocks();
  const startNode = fakeNodesFor(main);

  /** Opens the source on `node` (password in the URL); the error, the retry lines printed and the node's request count. */
  async function failingOpen(node: FakeNode): Promise<{ message: string; where: string; lines: string[] }> {
    const { url, where } = withPassword(node.url);
    const lines: string[] = [];
    const err = await openRpc(url, { ...FAST, log: (l) => lines.push(l) }).then(
      () => new Error('opened'),
      (e: unknown) => e as Error,
    );
    expect(err.message).not.toContain('pw');
    return { message: err.message, where, lines };
  }

  const badHeights: [unknown, string][] = [
    [2 ** 31, '2147483648'],
    [2 ** 40, '1099511627776'],
    [1e20, '100000000000000000000'],
    [-1, '-1'],
    [null, 'null'],
    [1.5, '1.5'],
    ['103', '"103"'],
    [undefined, 'missing'],
  ];

  it('getblockchaininfo blocks of 2^31, 2^40, 1e20, -1, null (…): rejected naming URL, method and field; not retried', async () => {
    const node = await startNode();
    for (const [blocks, shown] of badHeights) {
      node.rewrite.getblockchaininfo = (r) => ({ ...(r as object), blocks });
      const before = node.requests;
      const { message, where, lines } = await failingOpen(node);
      expect(message, String(blocks)).toBe(`RPC ${where}: getblockchaininfo: blocks is ${shown}, ${HEIGHT_RANGE}`);
      expect(lines).toEqual([]);
      expect(node.requests - before).toBe(1);
    }
    // the bounds themselves are heights
    node.rewrite.getblockchaininfo = (r) => ({ ...(r as object), blocks: 0 });
    expect((await openRpc(node.url, FAST)).network).toBe(REGTEST);
  });

  it('a tip that turns bad after the source opened is rejected by tip() too', async () => {
    const node = await startNode();
    const src = await openRpc(node.url, FAST);
    expect((await src.tip()).height).toBe(103);
    node.rewrite.getblockchaininfo = (r) => ({ ...(r as object), blocks: 2 ** 40 });
    await expect(src.tip()).rejects.toThrow(`RPC ${node.url}: getblockchaininfo: blocks is 1099511627776, ${HEIGHT_RANGE}`);
    node.rewrite.getblockchaininfo = (r) => ({ ...(r as object), bestblockhash: 42 });
    await expect(src.tip()).rejects.toThrow(`RPC ${node.url}: getblockchaininfo: bestblockhash is 42, not a block hash (64 hex digits)`);
  });

  it('a claimed tip of 2^31-1 (in range, not on the node): the scan fails naming the URL, not a buffer size', async () => {
    const node = await startNode();
    node.rewrite.getblockchaininfo = (r) => ({ ...(r as object), blocks: 2 ** 31 - 1 });
    const src = await openRpc(node.url, FAST);
    expect((await src.tip()).height).toBe(2 ** 31 - 1);
    const err = (await collect(src.mainChain(2 ** 31 - 1)).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(new RegExp(`^RPC ${escape(node.url)}: getblockhash: heights \\d+–\\d+ are no longer on the node's chain \\(tip now height 2147483647\\)`));
  });

  it('pruneheight, getchaintxstats txcount, getchaintips heights and getblockhash results are checked by name', async () => {
    const node = await startNode();
    node.rewrite.getblockchaininfo = (r) => ({ ...(r as object), pruned: true, pruneheight: 2 ** 40 });
    expect((await failingOpen(node)).message).toMatch(/: getblockchaininfo: pruneheight is 1099511627776, not a height \(0 … 2\^31-1\)$/);
    delete node.rewrite.getblockchaininfo;

    const src = await openRpc(node.url, FAST);
    for (const [txcount, shown] of [[-5, '-5'], [1e20, '100000000000000000000'], [null, 'null']] as const) {
      node.rewrite.getchaintxstats = (r) => ({ ...(r as object), txcount });
      await expect(src.scanWork!(103, 0)).rejects.toThrow(`RPC ${node.url}: getchaintxstats: txcount is ${shown}, not a count (0 … 2^53-1)`);
    }
    delete node.rewrite.getchaintxstats;
    expect(await src.scanWork!(103, 0)).toMatchObject({ unit: 'txs' });

    const tip = (r: unknown) => (r as object[])[0]!;
    for (const [field, value, shown] of [['height', 2 ** 40, '1099511627776'], ['height', -1, '-1'], ['branchlen', null, 'null']] as const) {
      node.rewrite.getchaintips = (r) => [tip(r), { height: 50, hash: '11'.repeat(32), branchlen: 1, status: 'valid-fork', [field]: value }];
      await expect(collect(src.offChain(103))).rejects.toThrow(`RPC ${node.url}: getchaintips: tips[1].${field} is ${shown}, not a`);
    }
    node.rewrite.getchaintips = (r) => [tip(r), { height: 50, hash: '11'.repeat(32), branchlen: 51, status: 'valid-fork' }];
    await expect(collect(src.offChain(103))).rejects.toThrow(`RPC ${node.url}: getchaintips: tips[1].branchlen is 51, more than its height 50`);
    delete node.rewrite.getchaintips;

    for (const [value, shown] of [[5, '5'], [null, 'null'], ['zz'.repeat(32), `"${'zz'.repeat(32)}"`]] as const) {
      node.rewrite.getblockhash = () => value;
      await expect(src.hashAt(3)).rejects.toThrow(`RPC ${node.url}: getblockhash: result is ${shown}, not a block hash (64 hex digits)`);
      await expect(collect(src.mainChain(103, 50))).rejects.toThrow(`RPC ${node.url}: getblockhash: result is ${shown}, not a block hash (64 hex digits)`);
    }
  });

  it('redirects (301, 302, 307, 308) to another loopback port are not followed: the status and Location are named', async () => {
    const node = await startNode();
    const other = await startNode();
    for (const status of [301, 302, 307, 308]) {
      node.redirect(status, other.url);
      const before = node.requests;
      const { message, where, lines } = await failingOpen(node);
      expect(message).toBe(`RPC ${where}: getblockchaininfo: HTTP ${status} redirect to ${other.url} (not followed: give the node's own RPC URL)`);
      expect(lines).toEqual([]);
      expect(node.requests - before).toBe(1);
      expect(other.requests).toBe(0);
    }
    // a relative Location is named as the absolute URL it points to, and a password in it is left out
    node.redirect(307, '/wallet/w1');
    expect((await failingOpen(node)).message).toMatch(new RegExp(`HTTP 307 redirect to ${escape(node.url)}wallet/w1 \\(not followed`));
    node.redirect(308, other.url.replace('http://', 'http://eve:secret@'));
    const m = (await failingOpen(node)).message;
    expect(m).toContain(`HTTP 308 redirect to ${other.url.replace('http://', 'http://eve@')} (not followed`);
    expect(m).not.toContain('secret');
    expect(other.requests).toBe(0);
  });

  it('an answer that is not a JSON-RPC success names the HTTP status', async () => {
    const node = await startNode();
    const answer = (status: number, body: string) => {
      node.fault = (_req, res) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
        return true;
      };
    };
    // a result with a 4xx status is not a success
    answer(404, JSON.stringify({ id: 1, error: null, result: { chain: 'regtest', blocks: 103 } }));
    expect((await failingOpen(node)).message).toMatch(/^RPC http:\/\/u@127\.0\.0\.1:\d+\/: getblockchaininfo: HTTP 404 with a result and no error/);
  });

  it('an error that is not {code, message} names the HTTP status and the error, not "undefined (code undefined)"', async () => {
    const node = await startNode();
    const answer = (status: number, body: string) => {
      node.fault = (_req, res) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
        return true;
      };
    };
    for (const error of ['boom', { code: 'x', message: 'm' }, { message: 'no code' }, 7]) {
      answer(500, JSON.stringify({ id: 1, result: null, error }));
      const { message, lines } = await failingOpen(node);
      expect(message, JSON.stringify(error)).toMatch(/^RPC http:\/\/u@127\.0\.0\.1:\d+\/: getblockchaininfo: HTTP 500, the error is not a JSON-RPC error \(code and message\): /);
      expect(message).toContain(JSON.stringify(error));
      expect(message).not.toContain('undefined');
      expect(lines).toEqual([]);
    }
  });

  it('snapshot build --source rpc:<url>: exit 1, one line naming the URL without password, the method and the field', async () => {
    const node = await startNode();
    const negative = await startNode();
    const bad = await startNode();
    const other = await startNode();
    node.rewrite.getblockchaininfo = (r) => ({ ...(r as object), blocks: 2 ** 40 });
    negative.rewrite.getblockchaininfo = (r) => ({ ...(r as object), blocks: -1 });
    bad.redirect(308, other.url);
    const run = (n: FakeNode, name: string) =>
      cli('build', '--source', `rpc:${withPassword(n.url).url}`, '--network', 'bitcoin-regtest', '--out', join(tmp, name));
    const [height, minus, redirect] = await Promise.all([run(node, 'height'), run(negative, 'minus'), run(bad, 'redirect')]);
    expect(height.status, height.stderr).toBe(1);
    expect(height.stderr).toBe(`snapshot: RPC ${withPassword(node.url).where}: getblockchaininfo: blocks is 1099511627776, ${HEIGHT_RANGE}\n`);
    expect(minus.status, minus.stderr).toBe(1);
    expect(minus.stderr).toBe(`snapshot: RPC ${withPassword(negative.url).where}: getblockchaininfo: blocks is -1, ${HEIGHT_RANGE}\n`);
    expect(redirect.status, redirect.stderr).toBe(1);
    expect(redirect.stderr).toBe(
      `snapshot: RPC ${withPassword(bad.url).where}: getblockchaininfo: HTTP 308 redirect to ${other.url} (not followed: give the node's own RPC URL)\n`,
    );
    expect(other.requests).toBe(0);
    for (const name of ['height', 'minus', 'redirect']) expect(existsSync(join(tmp, name)), name).toBe(false);
  }, 60_000);
});
