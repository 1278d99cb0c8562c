// A node that is not running: `snapshot build --source rpc:` fails within seconds naming the URL,
// unless --rpc-wait gives a node that is starting time to listen; a node that was answering and
// stops is still retried.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { duration } from '../src/cli-args.js';
import { NETWORKS } from '../src/chain/networks.js';
import { rpcClient } from '../src/source/rpc/client.js';
import { openRpc } from '../src/source/rpc.js';
import { FakeNode, fakeNodesFor, loadBlocks } from './support/fake-node.js';
import { REPO, freePort, nodeArgs } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

const tmp = mkdtempSync(join(tmpdir(), 'snapshot-rpc-wait-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const cli = (...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string; ms: number }> =>
  new Promise((ok) => {
    const t0 = Date.now();
    execFile(process.execPath, [...nodeArgs('src/cli.ts'), ...args], { cwd: REPO, encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      ok({ status: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr, ms: Date.now() - t0 }),
    );
  });

describe('--rpc-wait values', () => {
  it('a number with a unit (ms, s, m, h) or plain seconds; anything else is one clear error', () => {
    expect(['500ms', '30s', '2m', '1h', '45', '1.5s', '0'].map((v) => duration('rpc-wait', v, '30s'))).toEqual([500, 30_000, 120_000, 3_600_000, 45_000, 1500, 0]);
    for (const v of ['', 'abc', '-1s', '10x', 's', '1e3', ' 5s']) {
      expect(() => duration('rpc-wait', v, '30s'), JSON.stringify(v)).toThrow(`--rpc-wait ${JSON.stringify(v)} is not a duration: give a number with ms, s, m or h (e.g. --rpc-wait 30s)`);
    }
  });

  it('the CLI refuses a bad --rpc-wait before doing anything', async () => {
    const r = await cli('build', '--source', 'rpc:http://127.0.0.1:9/', '--rpc-wait', 'soon', '--out', join(tmp, 'bad-wait'));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('--rpc-wait "soon" is not a duration');
  });
});

describe('a node that is not listening', () => {
  it('snapshot build fails within seconds (exit 1), naming the URL and --rpc-wait', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/`;
    const r = await cli('build', '--source', `rpc:${url}`, '--network', 'bitcoin-regtest', '--out', join(tmp, 'refused'));
    expect(r.status).toBe(1);
    expect(r.ms).toBeLessThan(10_000);
    expect(r.stderr).toContain(`RPC ${url}: getblockchaininfo: connection refused`);
    expect(r.stderr).toContain('--rpc-wait');
  });

  it('with a wait (library: waitMs), refusals are retried until it runs out, then one clear error', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/`;
    const lines: string[] = [];
    const t0 = Date.now();
    const err = await openRpc(url, { network: NETWORKS['bitcoin-regtest'], waitMs: 1000, retryInitialMs: 20, retryMaxMs: 80, log: (l) => lines.push(l) }).then(
      () => new Error('opened'),
      (e: unknown) => e as Error,
    );
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(lines.length).toBeGreaterThan(2);
    for (const l of lines) expect(l).toMatch(new RegExp(`^RPC ${url}: getblockchaininfo: .*ECONNREFUSED.*; waiting for the node to listen \\(\\d+ of 1000 ms\\), next in \\d+ ms$`));
    expect(err.message).toMatch(new RegExp(`^RPC ${url}: getblockchaininfo: connection refused .*ECONNREFUSED.*: nothing listened within 1000 ms \\(--rpc-wait\\)$`));
  });
});

describeShared('chaindata')('a node that is starting or restarting', () => {
  const main = loadBlocks();
  const startNode = fakeNodesFor(main);

  it('--rpc-wait: a node that starts listening 1.5 s after the first refused connection is waited for and the build succeeds', async () => {
    const port = await freePort();
    const node = new FakeNode({ main, side: [] });
    let listening: Promise<void> | undefined;
    try {
      const out = join(tmp, 'waited');
      const args = ['build', '--source', `rpc:http://127.0.0.1:${port}/`, '--network', 'bitcoin-regtest', '--rpc-wait', '30s', '--out', out];
      const child = spawn(process.execPath, [...nodeArgs('src/cli.ts'), ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => {
        stderr += d;
        if (listening === undefined && /ECONNREFUSED.*; waiting for the node to listen/.test(stderr)) {
          listening = new Promise<void>((ok) => setTimeout(() => node.server.listen(port, '127.0.0.1', ok), 1500));
        }
      });
      const status = await new Promise<number | null>((ok) => child.once('close', ok));
      expect(listening, stderr).toBeDefined();
      expect({ status, stdout: stdout.split('\n')[0] }, stderr).toEqual({ status: 0, stdout: expect.stringMatching(new RegExp(`^built .*: bitcoin-regtest height ${main.length - 1} `)) });
      expect(node.requests).toBeGreaterThan(0);
    } finally {
      await listening;
      if (node.server.listening) await node.stop();
    }
  });

  it('a node that answered and then stops is retried with the usual policy, not failed at once', async () => {
    const node = await startNode();
    const lines: string[] = [];
    const client = rpcClient(node.url, { retryInitialMs: 20, retryMaxMs: 40, giveUpMs: 300, log: (l) => lines.push(l) });
    expect(await client.call<number>('getblockcount')).toBe(main.length - 1);
    await node.stop();
    await expect(client.call('getblockcount')).rejects.toThrow(new RegExp(`^RPC ${node.url}: giving up after \\d+ attempts over \\d+ ms: getblockcount: .*ECONNREFUSED`));
    expect(lines.length).toBeGreaterThan(2);
    expect(lines[0]).toMatch(/ECONNREFUSED.*; attempt 1\/\d+, next in 20 ms$/);
  });
});
