import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { writeTestTree, type TestTree } from './site-tree.js';
import { rawRequest } from './http-raw.js';
import http from 'node:http';

describe('snapshot serve', () => {
  let t: TestTree;
  let s: RunningServer;
  beforeAll(async () => {
    t = await writeTestTree({ hosts: [] });
    s = await startServer({ dir: t.dir, port: 0 });
  });
  afterAll(async () => s?.close());

  it('answers HEAD with the GET headers and no body', async () => {
    const target = `/tx/${t.txids[0]}.bin`;
    const get = await rawRequest(s.url, target);
    const head = await rawRequest(s.url, target, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(get.body.length));
    expect(head.headers['content-type']).toBe('application/octet-stream');
    const miss = await rawRequest(s.url, '/tx/abc.json', 'HEAD');
    expect(miss.status).toBe(404);
    expect(miss.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('sends ETags and answers If-None-Match with 304 (keeping CORS and cache headers)', async () => {
    const target = `/name/d/bitcoin.json?history`;
    const first = await rawRequest(s.url, target);
    const etag = first.headers['etag']!;
    expect(etag).toMatch(/^W\/"/);
    const again = await rawRequest(s.url, target, 'GET', `If-None-Match: ${etag}\r\n`);
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers['access-control-allow-origin']).toBe('*');
    expect(again.headers['cache-control']).toBe('public, max-age=60');
  });

  it('refuses other methods with a JSON 405', async () => {
    const r = await rawRequest(s.url, '/stats.json', 'POST', 'Content-Length: 0\r\n');
    expect(r.status).toBe(405);
    expect(r.headers['allow']).toBe('GET, HEAD');
    expect(r.body.toString()).toBe('{"error":"Method not allowed."}');
  });

  it('answers unparsable requests with a JSON 400 and stays up', async () => {
    for (const bad of ['/a\x00b', '/a b', '/\x7f', 'x', '*']) {
      const r = await rawRequest(s.url, bad);
      expect([400, 404], JSON.stringify(bad)).toContain(r.status);
      expect(r.body.toString()).toMatch(/^\{"error":"[^"]+"\}$/);
    }
  });

  it('survives 10k fuzzed requests and still answers correctly', async () => {
    let seed = 1234;
    const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const pieces = ['/', '//', '.', '..', '%', '%2e', '%2E', '%2f', '%2F', '%00', '%ff', '%C0%AE', '%zz', '\\', '?', '&', '=', '#', 'tx', 'block', 'address', 'name', 'v',
      '_site.json', '.json', '.bin', '.hex', 'history', 'with_all', 'with_', '~', '~2E', '~x', 'd', 'a'.repeat(300), '\u00e9', '"', "'", '<', ' ', '\t', t.txids[0]!, t.addresses[0]!];
    const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
    const one = (i: number) =>
      new Promise<number>((ok) => {
        let p = '/';
        const n = 1 + Math.floor(rand() * 12);
        for (let j = 0; j < n; j++) p += pieces[Math.floor(rand() * pieces.length)];
        if (i % 7 === 0) p = p.replace(/[^\x21-\x7e]/g, '');
        let req: http.ClientRequest;
        try {
          req = http.request(s.url + '/', { agent, path: encodeURI(p).replace(/%25/g, '%'), method: i % 11 ? 'GET' : 'HEAD' }, (res) => {
            res.resume();
            res.on('end', () => ok(res.statusCode ?? 0));
          });
        } catch {
          // The client refused to send it; send it raw instead.
          return rawRequest(s.url, p).then((r) => ok(r.status), () => ok(-1));
        }
        req.on('error', () => ok(-1));
        req.end();
      });
    const statuses = new Map<number, number>();
    for (let i = 0; i < 10_000; i += 200) {
      const batch = await Promise.all(Array.from({ length: 200 }, (_, k) => one(i + k)));
      for (const st of batch) statuses.set(st, (statuses.get(st) ?? 0) + 1);
    }
    agent.destroy();
    expect([...statuses.keys()].every((st) => [200, 400, 404, 405, 414, 500].includes(st)), JSON.stringify([...statuses])).toBe(true);
    expect(statuses.get(500) ?? 0).toBe(0);
    const ok = await rawRequest(s.url, `/tx/${t.txids[0]}.json`);
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body.toString()).hash).toBe(t.txids[0]);
  });

  it('closes gracefully: in-flight requests finish, new connections are refused', async () => {
    const s2 = await startServer({ dir: t.dir, port: 0 });
    const inflight = rawRequest(s2.url, `/block/${t.blocks[0]}.hex`);
    await new Promise((r) => setTimeout(r, 5));
    await s2.close();
    expect((await inflight).status).toBe(200);
    await expect(rawRequest(s2.url, '/stats.json')).rejects.toThrow();
  });
});
