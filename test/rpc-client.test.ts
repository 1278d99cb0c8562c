// The RPC client on its own (src/source/rpc/client.ts) against the fake node: framing of single
// calls and batches, error answers, the retry of "node not ready" (-28) with one log line per
// retry, credentials from the URL or a cookie file, and authentication failing at once.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { RpcError, rpcClient, type RpcClientOptions } from '../src/source/rpc/client.js';
import { blockId, fakeNodesFor, loadBlocks } from './support/fake-node.js';
import { describeShared } from './support/shared-data.js';


const FAST: RpcClientOptions = { retryInitialMs: 5, retryMaxMs: 20, giveUpMs: 2000, timeoutMs: 5000, log: () => undefined };
const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describeShared('chaindata')('RPC client (fake node over real regtest blocks)', () => {
  const main = loadBlocks();
  const startNode = fakeNodesFor(main);

  it('a call answers with the result; an error answer is an RpcError with code and method, not retried', async () => {
    const node = await startNode();
    const client = rpcClient(node.url, FAST);
    expect(client.where).toBe(node.url);
    expect(await client.call<string>('getblockhash', [5])).toBe(blockId(main[5]!));
    const before = node.requests;
    const err = (await client.call('getblockhash', [main.length]).catch((e: unknown) => e)) as RpcError;
    expect(err).toBeInstanceOf(RpcError);
    expect(err.code).toBe(-8);
    expect(err.method).toBe('getblockhash');
    expect(err.message).toBe(`RPC ${node.url}: getblockhash failed: Block height out of range (code -8)`);
    expect(node.requests - before).toBe(1);
  });

  it('a batch is one request; answers come back in request order, failed items as RpcError objects', async () => {
    const node = await startNode();
    const client = rpcClient(node.url, FAST);
    const before = node.requests;
    const heights = [7, 0, main.length + 5, 3];
    const answers = await client.batch('getblockhash', heights.map((h) => [h]));
    expect(node.requests - before).toBe(1);
    expect(answers[0]).toBe(blockId(main[7]!));
    expect(answers[1]).toBe(blockId(main[0]!));
    expect(answers[2]).toBeInstanceOf(RpcError);
    expect((answers[2] as RpcError).code).toBe(-8);
    expect(answers[3]).toBe(blockId(main[3]!));
    expect(await client.batch('getblockhash', [])).toEqual([]);
  });

  it('"node not ready" (-28) is retried, one log line and one warning per retry', async () => {
    const node = await startNode();
    let refused = 0;
    node.fault = (_req, res) => {
      if (refused >= 2) return false;
      refused++;
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ result: null, error: { code: -28, message: 'Loading block index...' }, id: 1 }));
      return true;
    };
    const lines: string[] = [];
    const client = rpcClient(node.url, { ...FAST, log: (l) => lines.push(l) });
    expect(await client.call<string>('getblockhash', [1])).toBe(blockId(main[1]!));
    expect(refused).toBe(2);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^RPC ${node.url}: getblockhash: node not ready \\(Loading block index\\.\\.\\., code -28\\); attempt 1/\\d+, next in 5 ms$`));
    expect(lines[1]).toMatch(/attempt 2\/\d+, next in 10 ms$/);
    expect(client.warnings).toHaveLength(2);
  });

  it('credentials from the URL or a cookie file; wrong ones fail at once naming where they came from', async () => {
    const node = await startNode();
    node.auth = `Basic ${Buffer.from('alice:s3cret').toString('base64')}`;
    const withUrl = new URL(node.url);
    withUrl.username = 'alice';
    withUrl.password = 's3cret';
    const client = rpcClient(withUrl.href, FAST);
    expect(client.where).not.toContain('s3cret');
    expect(await client.call<string>('getblockhash', [0])).toBe(blockId(main[0]!));

    const dir = mkdtempSync(join(tmpdir(), 'rpc-client-'));
    temps.push(dir);
    const cookie = join(dir, '.cookie');
    writeFileSync(cookie, 'alice:s3cret\n');
    expect(await rpcClient(node.url, { ...FAST, cookieFile: cookie }).call<string>('getblockhash', [2])).toBe(blockId(main[2]!));

    writeFileSync(cookie, 'alice:wrong');
    const before = node.requests;
    const err = (await rpcClient(node.url, { ...FAST, cookieFile: cookie }).call('getblockhash', [0]).catch((e: unknown) => e)) as Error;
    expect(err.message).toBe(
      `RPC ${node.url}: getblockhash: authentication failed (HTTP 401) using cookie file ${cookie}; give rpc:http://user:password@host:port or --rpc-cookie <path>`,
    );
    expect(node.requests - before).toBe(1);
  });
});
