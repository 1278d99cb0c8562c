// RPC transport failures: retries are announced one line each; answers that are not JSON-RPC and
// ports Node refuses fail at once, naming the URL without its password.
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { openRpc, retryAttempts, type RpcOptions } from '../src/source/rpc.js';
import { freePort } from './support/helpers.js';

const NET = NETWORKS.bitcoin;
const servers: (HttpServer | NetServer)[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const listen = async (s: HttpServer | NetServer): Promise<number> => {
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
};

/** An HTTP server answering every request with `status`, `type` and `body`. */
const httpAnswering = (status: number, type: string, body: string) =>
  listen(
    createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(status, { 'content-type': type });
        res.end(body);
      });
    }),
  );


/** Opens the source; returns the error, how long it took, and the retry lines printed. */
async function failing(url: string, opts: RpcOptions = {}): Promise<{ err: Error; ms: number; lines: string[] }> {
  const lines: string[] = [];
  const t0 = Date.now();
  const err = (await openRpc(url, { network: NET, retryInitialMs: 20, retryMaxMs: 80, log: (l) => lines.push(l), ...opts }).then(
    () => new Error('opened'),
    (e: unknown) => e as Error,
  )) as Error;
  return { err, ms: Date.now() - t0, lines };
}

describe('RPC transport errors', () => {
  it('the retry policy is bounded: attempts that fit in the give-up time with the back-off schedule', () => {
    // 250, 500, 1000, 2000, 4000, 8000 ms, then 8000 ms each: 19 waits fit in 120 s
    expect(retryAttempts(120_000, 250, 8_000)).toBe(20);
    expect(retryAttempts(0, 250, 8_000)).toBe(1);
    expect(retryAttempts(750, 250, 8_000)).toBe(3);
  });

  it('a node answering 503: every retry prints one line (attempt n/max, cause, next delay), then a clear give-up', async () => {
    const port = await httpAnswering(503, 'text/plain', 'Service Unavailable');
    const url = `http://alice:s3cret@127.0.0.1:${port}/`;
    const { err, lines } = await failing(url, { giveUpMs: 300 });
    const max = retryAttempts(300, 20, 80);
    expect(lines.length).toBe(max - 1);
    lines.forEach((l, i) => {
      expect(l).toMatch(new RegExp(`^RPC http://alice@127\\.0\\.0\\.1:${port}/: getblockchaininfo: HTTP 503; attempt ${i + 1}/${max}, next in \\d+ ms$`));
    });
    expect(max).toBe(6); // waits 20 + 40 + 80 + 80 + 80 = 300 ms
    expect(lines.map((l) => Number(/next in (\d+) ms/.exec(l)![1]))).toEqual([20, 40, 80, 80, 80]);
    expect(err.message).toMatch(new RegExp(`^RPC http://alice@127\\.0\\.0\\.1:${port}/: giving up after ${max} attempts over \\d+ ms: getblockchaininfo: HTTP 503`));
    for (const t of [err.message, ...lines]) expect(t).not.toContain('s3cret');
  });

  it('nothing listening (a stopped node): fails at once naming the URL, without the password', async () => {
    const port = await freePort();
    const { err, ms, lines } = await failing(`http://alice:s3cret@127.0.0.1:${port}/`, { giveUpMs: 60_000 });
    expect(ms).toBeLessThan(5000);
    expect(lines).toEqual([]);
    expect(err.message).toMatch(new RegExp(`^RPC http://alice@127\\.0\\.0\\.1:${port}/: getblockchaininfo: connection refused \\(.*ECONNREFUSED.*\\): is the node running\\? --rpc-wait`));
    expect(err.message).not.toContain('s3cret');
  });

  it('an answer that is not HTTP (e.g. a P2P port) fails at once', async () => {
    const port = await listen(
      createNetServer((c) => {
        c.on('data', () => c.end('\xf9\xbe\xb4\xd9garbage\r\n\r\n'));
      }),
    );
    const { err, ms, lines } = await failing(`http://u:pw@127.0.0.1:${port}/`, { giveUpMs: 60_000 });
    expect(ms).toBeLessThan(5000);
    expect(lines).toEqual([]);
    expect(err.message).toMatch(new RegExp(`^RPC http://u@127\\.0\\.0\\.1:${port}/: getblockchaininfo: the answer is not HTTP .*node's RPC port`));
    expect(err.message).not.toContain(':pw@');
  });

  it('an HTTP answer that is not JSON fails at once', async () => {
    const port = await httpAnswering(200, 'text/html', '<html><body>It works!</body></html>');
    const { err, ms, lines } = await failing(`http://127.0.0.1:${port}/`, { giveUpMs: 60_000 });
    expect(ms).toBeLessThan(5000);
    expect(lines).toEqual([]);
    expect(err.message).toMatch(
      new RegExp(`^RPC http://127\\.0\\.0\\.1:${port}/: getblockchaininfo: the answer is not JSON-RPC \\(HTTP 200, text/html, 35 bytes: "<html><body>It works!`),
    );
  });

  it('JSON that is not a JSON-RPC answer fails at once', async () => {
    for (const body of ['{"hello":"world"}', '[1,2,3]', '42']) {
      const port = await httpAnswering(200, 'application/json', body);
      const { err, ms, lines } = await failing(`http://127.0.0.1:${port}/`, { giveUpMs: 60_000 });
      expect(ms).toBeLessThan(5000);
      expect(lines).toEqual([]);
      expect(err.message).toMatch(new RegExp(`^RPC http://127\\.0\\.0\\.1:${port}/: getblockchaininfo: the answer is not JSON-RPC`));
    }
  });

  it('a port Node refuses ("bad port") fails at once', async () => {
    const { err, ms, lines } = await failing('http://u:pw@127.0.0.1:1/', { giveUpMs: 60_000 });
    expect(ms).toBeLessThan(5000);
    expect(lines).toEqual([]);
    expect(err.message).toMatch(/^RPC http:\/\/u@127\.0\.0\.1:1\/: getblockchaininfo: port 1 is refused by Node \("bad port"/);
  });

  it('HTTP 5xx without JSON is still retried (a proxy in front of a restarting node)', async () => {
    const port = await httpAnswering(502, 'text/plain', 'Bad Gateway');
    const { err, lines } = await failing(`http://127.0.0.1:${port}/`, { giveUpMs: 100 });
    expect(lines.length).toBeGreaterThan(0);
    expect(lines[0]).toMatch(/getblockchaininfo: HTTP 502; attempt 1\/\d+, next in 20 ms$/);
    expect(err.message).toMatch(/giving up after \d+ attempts/);
  });
});
