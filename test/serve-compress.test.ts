// Compression: `snapshot serve` answers text documents of 1 KiB and more with gzip or brotli to
// clients that accept them (decoded bytes equal the file), with Vary and an ETag of the encoded
// representation; Range requests, .bin files and small documents stay identity. The generated
// nginx.conf gzips JSON too (real nginx).
import { chmodSync, mkdtempSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nginxConfig } from '../src/hosts/nginx.js';
import { Progress } from '../src/runtime/progress.js';
import { startServer, readSiteInfo, type RunningServer } from '../src/serve/server.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { freePort } from './support/helpers.js';
import { rawRequest, type RawResponse } from './support/http-raw.js';
import { HAVE_NGINX, startNginx } from './support/nginx.js';

const silent = new Progress({ write: () => true } as unknown as NodeJS.WriteStream, false);
let tmp: string;
let dir: string;
/** Files of the demo tree chosen by size and kind. */
const pick: Record<'big' | 'mid' | 'small' | 'hex' | 'bin', string> = { big: '', mid: '', small: '', hex: '', bin: '' };

const size = (rel: string) => statSync(join(dir, rel)).size;
const file = (rel: string) => readFileSync(join(dir, rel));
const get = (base: string, target: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> =>
  rawRequest(base, target, method, Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join(''));

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'serve-compress-'));
  chmodSync(tmp, 0o755); // nginx workers run as an unprivileged user
  await buildSnapshot({ source: demoSource(), outDir: join(tmp, 'out'), hosts: ['nginx'], progress: silent });
  dir = realpathSync(join(tmp, 'out'));
  const bySize = (sub: string, ext: string) =>
    readdirSync(join(dir, sub))
      .filter((f) => f.endsWith(ext))
      .map((f) => `${sub}/${f}`)
      .sort((a, b) => size(b) - size(a));
  const addresses = bySize('address', '.json');
  pick.big = addresses[0]!;
  pick.mid = addresses.find((f) => size(f) > 4096 && size(f) < 65536)!;
  pick.small = bySize('tx', '.json').at(-1)!;
  pick.hex = bySize('tx', '.hex')[0]!;
  pick.bin = bySize('block', '.bin')[0]!;
  // The largest address document is streamed from disk (above the 64 KiB cache bound), the others are held in memory.
  expect([size(pick.big) > 65536, size(pick.hex) >= 1024, size(pick.bin) >= 1024, size(pick.small) < 1024]).toEqual([true, true, true, true]);
});
afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const decode = (r: RawResponse): Buffer => {
  const enc = r.headers['content-encoding'];
  return enc === 'gzip' ? gunzipSync(r.body) : enc === 'br' ? brotliDecompressSync(r.body) : r.body;
};

for (const cache of [true, false]) {
  describe(`snapshot serve ${cache ? 'with its file cache' : 'without the cache (every file from disk)'}`, () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await startServer({ dir, port: 0, ...(cache ? {} : { cache: false }) });
    });
    afterAll(async () => {
      await server?.close();
    });

    it('gzip and brotli to clients that accept them: the decoded bytes are the file, Vary, an ETag of its own', async () => {
      for (const rel of [pick.big, pick.mid, pick.hex]) {
        const plain = await get(server.url, `/${rel}`);
        expect(plain.headers['content-encoding'], rel).toBeUndefined();
        expect(plain.body.equals(file(rel)), rel).toBe(true);
        expect(plain.headers['vary'], rel).toBe('Accept-Encoding');
        for (const [accept, coding] of [['gzip', 'gzip'], ['gzip, deflate, br', 'br'], ['br;q=0.5, gzip', 'gzip'], ['*', 'br'], ['identity, gzip;q=0.1', 'gzip']] as const) {
          const r = await get(server.url, `/${rel}`, { 'Accept-Encoding': accept });
          const label = `${rel} Accept-Encoding: ${accept}`;
          expect({ status: r.status, coding: r.headers['content-encoding'], vary: r.headers['vary'], type: r.headers['content-type'] }, label).toEqual({
            status: 200,
            coding,
            vary: 'Accept-Encoding',
            type: plain.headers['content-type'],
          });
          expect(decode(r).equals(file(rel)), label).toBe(true);
          expect(r.body.length, label).toBeLessThan(file(rel).length);
          expect(r.headers['etag'], label).not.toBe(plain.headers['etag']);
          if (r.headers['content-length'] !== undefined) expect(Number(r.headers['content-length'])).toBe(r.body.length);
        }
      }
    });

    it('If-None-Match: 304 for the encoded ETag when encoding, for the plain one when not', async () => {
      for (const rel of [pick.big, pick.mid]) {
        const gz = await get(server.url, `/${rel}`, { 'Accept-Encoding': 'gzip' });
        const plain = await get(server.url, `/${rel}`);
        const again = await get(server.url, `/${rel}`, { 'Accept-Encoding': 'gzip', 'If-None-Match': gz.headers['etag']! });
        expect({ status: again.status, vary: again.headers['vary'], body: again.body.length }, rel).toEqual({ status: 304, vary: 'Accept-Encoding', body: 0 });
        expect((await get(server.url, `/${rel}`, { 'If-None-Match': plain.headers['etag']! })).status, rel).toBe(304);
        // The other representation's ETag does not match: the full answer.
        expect((await get(server.url, `/${rel}`, { 'If-None-Match': gz.headers['etag']! })).status, rel).toBe(200);
        expect((await get(server.url, `/${rel}`, { 'Accept-Encoding': 'gzip', 'If-None-Match': plain.headers['etag']! })).status, rel).toBe(200);
      }
    });

    it('a Range request gets identity bytes of the file', async () => {
      for (const rel of [pick.big, pick.mid]) {
        const r = await get(server.url, `/${rel}`, { 'Accept-Encoding': 'gzip, br', Range: 'bytes=10-99' });
        expect({ status: r.status, coding: r.headers['content-encoding'], range: r.headers['content-range'] }, rel).toEqual({ status: 206, coding: undefined, range: `bytes 10-99/${size(rel)}` });
        expect(r.body.equals(file(rel).subarray(10, 100)), rel).toBe(true);
      }
    });

    it('HEAD sends the headers GET sends', async () => {
      for (const rel of [pick.big, pick.mid, pick.bin]) {
        const a = await get(server.url, `/${rel}`, { 'Accept-Encoding': 'gzip' }, 'HEAD');
        const b = await get(server.url, `/${rel}`, { 'Accept-Encoding': 'gzip' });
        const strip = (r: RawResponse) => ({ status: r.status, headers: Object.entries(r.headers).filter(([k]) => k !== 'date' && k !== 'transfer-encoding') });
        expect(strip(a), rel).toEqual(strip(b));
      }
    });

    it('not encoded: .bin (raw bytes), documents under 1 KiB, a client that refuses every coding', async () => {
      for (const [rel, accept] of [[pick.bin, 'gzip, br'], [pick.small, 'gzip, br'], [pick.mid, 'gzip;q=0, br;q=0'], [pick.mid, 'identity'], [pick.mid, 'compress']] as const) {
        const r = await get(server.url, `/${rel}`, { 'Accept-Encoding': accept });
        expect({ status: r.status, coding: r.headers['content-encoding'], same: r.body.equals(file(rel)) }, `${rel} ${accept}`).toEqual({ status: 200, coding: undefined, same: true });
      }
      expect((await get(server.url, `/${pick.bin}`)).headers['vary']).toBeUndefined();
      expect((await get(server.url, `/${pick.small}`)).headers['vary']).toBeUndefined();
    });
  });
}

describe.skipIf(!HAVE_NGINX)('the generated nginx.conf (real nginx, static only)', () => {
  it('answers gzip for a large JSON document to a client that accepts it, with Vary; identity otherwise', async () => {
    const port = await freePort();
    const nginx = await startNginx(nginxConfig({ root: dir, listen: `127.0.0.1:${port}`, info: readSiteInfo(dir) }), join(tmp, 'nginx'), port);
    try {
      for (const rel of [pick.big, pick.mid]) {
        const gz = await get(nginx.url, `/${rel}`, { 'Accept-Encoding': 'gzip' });
        expect({ status: gz.status, coding: gz.headers['content-encoding'], vary: gz.headers['vary'] }, rel).toEqual({ status: 200, coding: 'gzip', vary: 'Accept-Encoding' });
        expect(gunzipSync(gz.body).equals(file(rel)), rel).toBe(true);
        const plain = await get(nginx.url, `/${rel}`);
        expect({ coding: plain.headers['content-encoding'], same: plain.body.equals(file(rel)) }, rel).toEqual({ coding: undefined, same: true });
      }
      const bin = await get(nginx.url, `/${pick.bin}`, { 'Accept-Encoding': 'gzip' });
      expect({ coding: bin.headers['content-encoding'], same: bin.body.equals(file(pick.bin)) }).toEqual({ coding: undefined, same: true });
    } catch (e) {
      console.error(nginx.errors());
      throw e;
    } finally {
      await nginx.stop();
    }
  });
});
