import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { FileCache } from '../src/serve/file-cache.js';
import { writeTestTree, type TestTree } from './support/site-tree.js';
import { rawExchange, rawRequest, type RawResponse } from './support/http-raw.js';

const strip = (r: RawResponse) => ({ status: r.status, headers: Object.entries(r.headers).filter(([k]) => k !== 'date'), body: r.body.toString('latin1') });

describe('snapshot serve', () => {
  let t: TestTree;
  let s: RunningServer;
  beforeAll(async () => {
    t = await writeTestTree({ hosts: [] });
    s = await startServer({ dir: t.dir, port: 0 });
  });
  afterAll(async () => {
    await s?.close();
    if (t) rmSync(t.dir, { recursive: true, force: true });
  });

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

  /** A JSON error document `{"error": …}` with a JSON content type and a matching length. */
  const jsonError = (r: RawResponse, status: number, what: string): string => {
    expect(r.status, what).toBe(status);
    expect(r.headers['content-type'], what).toBe('application/json; charset=utf-8');
    expect(r.headers['content-length'], what).toBe(String(r.body.length));
    const doc = JSON.parse(r.body.toString('utf8')) as { error: unknown };
    expect(Object.keys(doc), what).toEqual(['error']);
    expect(typeof doc.error, what).toBe('string');
    return doc.error as string;
  };

  it('answers CONNECT with a JSON 405 (GET, HEAD allowed)', async () => {
    const u = new URL(s.url);
    for (const target of [u.host, 'example.com:443']) {
      const r = await rawExchange(s.url, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
      expect(jsonError(r, 405, target)).toBe('Method not allowed.');
      expect(r.headers['allow']).toBe('GET, HEAD');
      expect(r.headers['access-control-allow-origin']).toBe('*');
    }
  });

  it('answers an HTTP/1.1 request without a Host header, or with two, with a JSON 400 (RFC 9112 §3.2)', async () => {
    const none = await rawExchange(s.url, 'GET /stats.json HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(jsonError(none, 400, 'no Host')).toMatch(/Host/);
    const two = await rawExchange(s.url, 'GET /stats.json HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n');
    expect(jsonError(two, 400, 'two Host')).toMatch(/Host/);
    // HTTP/1.0 needs none.
    const old = await rawExchange(s.url, 'GET /stats.json HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
    expect(old.body.equals(readFileSync(join(t.dir, 'stats.json')))).toBe(true);
  });

  it('answers an unknown Expect with a JSON 417, and 100-continue with 100 then the file', async () => {
    const r = await rawExchange(s.url, 'GET /stats.json HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n');
    expect(jsonError(r, 417, 'Expect')).toMatch(/something-else/);
    const raw = await new Promise<string>((ok, bad) => {
      const u = new URL(s.url);
      const sock = net.connect(Number(u.port), u.hostname);
      let got = '';
      sock.on('data', (c) => (got += c.toString('latin1')));
      sock.on('error', bad);
      sock.on('close', () => ok(got));
      sock.setTimeout(10_000, () => sock.destroy());
      sock.write('GET /stats.json HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n');
    });
    expect(raw.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n'), raw).toBe(true);
    expect(raw.endsWith(readFileSync(join(t.dir, 'stats.json'), 'latin1'))).toBe(true);
  });

  it('answers a client that half-closes after its request (file cached or not, found or not)', async () => {
    const s2 = await startServer({ dir: t.dir, port: 0 });
    try {
      const tx = `/tx/${t.txids[1]}.json`;
      const want = readFileSync(join(t.dir, `tx/${t.txids[1]}.json`));
      for (const round of ['not cached', 'cached']) {
        const r = await rawExchange(s2.url, `GET ${tx} HTTP/1.1\r\nHost: x\r\n\r\n`, { halfClose: true });
        expect(r.status, round).toBe(200);
        expect(r.body.equals(want), round).toBe(true);
        const miss = await rawExchange(s2.url, `GET /tx/${'cd'.repeat(32)}.json HTTP/1.1\r\nHost: x\r\n\r\n`, { halfClose: true });
        expect(jsonError(miss, 404, round)).toBe(`Tx ${'cd'.repeat(32)} not found.`);
      }
      // Two pipelined requests, then the half-close: both answered, in order.
      const two = await new Promise<string>((ok, bad) => {
        const u = new URL(s2.url);
        const sock = net.connect(Number(u.port), u.hostname);
        let got = '';
        sock.on('data', (c) => (got += c.toString('latin1')));
        sock.on('error', bad);
        sock.on('close', () => ok(got));
        sock.setTimeout(10_000, () => sock.destroy());
        sock.end(`GET /block/${t.blocks[0]}.json HTTP/1.1\r\nHost: x\r\n\r\nGET ${tx} HTTP/1.1\r\nHost: x\r\n\r\n`);
      });
      expect(two.match(/HTTP\/1\.1 200 OK/g)?.length, two).toBe(2);
      expect(two.endsWith(want.toString('latin1'))).toBe(true);
    } finally {
      await s2.close();
    }
  });

  it('a client gone mid-file (reset while the server streams): the file is closed and the server keeps answering', async () => {
    const t2 = await writeTestTree({ hosts: [] });
    const big = join(t2.dir, `block/${t2.blocks[0]}.hex`);
    writeFileSync(big, Buffer.alloc(16 * 1024 * 1024, 0x61));
    const s2 = await startServer({ dir: t2.dir, port: 0 });
    // This process's descriptors open on the big file (Linux /proc).
    const openOnBig = () => readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === big;
      } catch {
        return false;
      }
    }).length;
    const waitFor = async (what: string, cond: () => boolean) => {
      for (const until = Date.now() + 10_000; !cond(); await new Promise((r) => setTimeout(r, 20))) if (Date.now() > until) throw new Error(`timed out waiting: ${what}`);
    };
    try {
      for (const extra of ['', 'Range: bytes=100-\r\n']) {
        const u = new URL(s2.url);
        const sock = net.connect(Number(u.port), u.hostname);
        sock.on('error', () => undefined);
        const first = new Promise((r) => sock.once('data', r));
        sock.write(`GET /block/${t2.blocks[0]}.hex HTTP/1.1\r\nHost: x\r\n${extra}\r\n`);
        await first;
        sock.pause(); // the server's writes back up while the file is open
        await waitFor('the file open while streaming', () => openOnBig() === 1);
        sock.resetAndDestroy();
        await waitFor('the file closed after the reset', () => openOnBig() === 0);
        const r = await rawRequest(s2.url, `/tx/${t2.txids[0]}.json`);
        expect(r.status, extra).toBe(200);
      }
    } finally {
      await s2.close();
      rmSync(t2.dir, { recursive: true, force: true });
    }
  });

  it('closes gracefully: in-flight requests finish, new connections are refused', async () => {
    const s2 = await startServer({ dir: t.dir, port: 0 });
    // Closed once the server has the request (a fixed wait lost the race on a loaded machine).
    const received = new Promise((r) => s2.server.once('request', r));
    const inflight = rawRequest(s2.url, `/block/${t.blocks[0]}.hex`);
    await received;
    await s2.close();
    expect((await inflight).status).toBe(200);
    await expect(rawRequest(s2.url, '/stats.json')).rejects.toThrow();
  });

  it('answers from its file cache with the same bytes as from disk (GET, HEAD, 304, Range, misses, large files)', async () => {
    const plain = await startServer({ dir: t.dir, port: 0, cache: false });
    // Files over 40 bytes are streamed from disk; smaller ones are cached.
    const small = await startServer({ dir: t.dir, port: 0, cache: { maxFileBytes: 40 } });
    try {
      const targets = [`/tx/${t.txids[0]}.json`, `/tx/${t.txids[0]}.bin`, `/block/${t.blocks[0]}.hex`, `/address/${t.capped}.json`, `/address/${t.addresses[0]}.json`,
        '/name/d/bitcoin.json?history', '/stats.json', '/name/d/nope.json', `/tx/${'ab'.repeat(32)}.json`, '/', '/assets/app.js', '/assets/nope.js'];
      for (const target of targets) {
        const etag = (await rawRequest(plain.url, target)).headers['etag'];
        for (const [method, extra] of [['GET', ''], ['HEAD', ''], ['GET', `If-None-Match: ${etag}\r\n`], ['HEAD', `If-None-Match: ${etag}\r\n`], ['GET', 'If-None-Match: W/"1-2"\r\n'], ['GET', 'Range: bytes=1-5\r\n']] as const) {
          const want = strip(await rawRequest(plain.url, target, method, extra));
          for (const srv of [s, s, small, small]) expect(strip(await rawRequest(srv.url, target, method, extra)), `${method} ${target} ${extra}`).toEqual(want);
        }
      }
    } finally {
      await plain.close();
      await small.close();
    }
  });

  it('notices a rebuild (the tree directory swapped) within the revalidation interval, including _site.json', async () => {
    const root = mkdtempSync(join(tmpdir(), 'serve-swap-'));
    const out = join(root, 'out');
    const a = await writeTestTree({ hosts: [] });
    renameSync(a.dir, out);
    const srv = await startServer({ dir: out, port: 0, cache: { revalidateMs: 50 } });
    try {
      const tx = `/tx/${a.txids[0]}.json`;
      const before = await rawRequest(srv.url, tx);
      expect((await rawRequest(srv.url, `/address/${a.capped}.json`)).status).toBe(500);
      // A rebuild: new tree written beside, then renamed onto out (as publish() does).
      const b = join(root, 'out.tmp');
      cpSync(out, b, { recursive: true });
      writeFileSync(join(b, `tx/${a.txids[0]}.json`), '{"rebuilt":true}');
      writeFileSync(join(b, '_site.json'), JSON.stringify({ ...a.info, cappedAddresses: [] }));
      renameSync(out, join(root, 'old'));
      renameSync(b, out);
      rmSync(join(root, 'old'), { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 80));
      const after = await rawRequest(srv.url, tx);
      expect(before.body.toString()).not.toBe(after.body.toString());
      expect(after.body.toString()).toBe('{"rebuilt":true}');
      expect(after.headers['content-length']).toBe('16');
      expect((await rawRequest(srv.url, `/address/${a.capped}.json`)).status).toBe(200);
    } finally {
      await srv.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('FileCache: bounded bytes, least recently used evicted, absent and large files remembered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'file-cache-'));
    try {
      for (let i = 0; i < 10; i++) writeFileSync(join(dir, `f${i}`), Buffer.alloc(100, i));
      writeFileSync(join(dir, 'big'), Buffer.alloc(5000));
      const cache = new FileCache(dir, { maxBytes: 3 * (100 + 200 + 4), maxFileBytes: 1000 });
      for (let i = 0; i < 3; i++) expect((await cache.load(`f${i}`)).kind).toBe('file');
      expect(cache.get('f0')?.kind).toBe('file'); // f0 now most recently used
      await cache.load('f3');
      expect(cache.size).toBe(3);
      expect(cache.bytes).toBeLessThanOrEqual(cache.maxBytes);
      expect(cache.get('f1')).toBeUndefined();
      expect(cache.get('f0')?.kind).toBe('file');
      expect((await cache.load('nope')).kind).toBe('absent');
      expect((await cache.load('big')).kind).toBe('large');
      const [x, y] = await Promise.all([cache.load('f9'), cache.load('f9')]);
      expect(x).toBe(y);
      const e = cache.get('f9');
      expect(e?.kind === 'file' && e.body.equals(Buffer.alloc(100, 9))).toBe(true);
      cache.clear();
      expect(cache.size).toBe(0);
      expect(cache.bytes).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
