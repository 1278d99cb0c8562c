// Range requests on `snapshot serve` (RFC 9110 §14): one satisfiable byte range → 206 with those
// bytes; unknown units, invalid syntax and multiple ranges → the whole file as 200; an
// unsatisfiable range → 416 with `Content-Range: bytes */<length>` and a JSON error body. The
// expected bytes are read from the files on disk; the rules are the RFC's. Every case runs against
// the server with its file cache, without it, and with a cache too small for the file (disk path).
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideRange, ifRangeAllows } from '../src/serve/range.js';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { freePort, nodeArgs, REPO } from './support/helpers.js';
import { rawRequest, type RawResponse } from './support/http-raw.js';
import { writeTestTree, type TestTree } from './support/site-tree.js';

const JSON_T = 'application/json; charset=utf-8';

function expectJsonError(r: RawResponse, status: number, what: string): { error: string } {
  expect(r.status, what).toBe(status);
  expect(r.headers['content-type'], what).toBe(JSON_T);
  expect(Number(r.headers['content-length']), what).toBe(r.body.length);
  const doc = JSON.parse(r.body.toString('utf8')) as { error: string };
  expect(Object.keys(doc), what).toEqual(['error']);
  expect(typeof doc.error).toBe('string');
  return doc;
}

describe('decideRange: the Range header of a GET (RFC 9110 §14.1.2, §14.2)', () => {
  const part = (start: number, end: number) => ({ kind: 'partial', start, end });
  const WHOLE = { kind: 'whole' };
  const NONE = { kind: 'unsatisfiable' };

  it("the RFC's examples for a 10000-byte representation", () => {
    expect(decideRange('bytes=0-499', 10000)).toEqual(part(0, 499)); // the first 500 bytes
    expect(decideRange('bytes=500-999', 10000)).toEqual(part(500, 999)); // the second 500 bytes
    expect(decideRange('bytes=-500', 10000)).toEqual(part(9500, 9999)); // the final 500 bytes
    expect(decideRange('bytes=9500-', 10000)).toEqual(part(9500, 9999));
    // Several ranges (first and last bytes; first, middle and last 1000; non-canonical spellings): the whole file.
    for (const r of ['bytes=0-0,-1', 'bytes= 0-999, 4500-5499, -1000', 'bytes=500-600,601-999', 'bytes=500-700,601-999']) expect(decideRange(r, 10000), r).toEqual(WHOLE);
  });

  it('reversed, suffix, one-byte, non-numeric, empty-suffix and other-unit ranges', () => {
    expect(decideRange('bytes=5-2', 21)).toEqual(WHOLE);
    expect(decideRange('bytes=-5', 21)).toEqual(part(16, 20));
    expect(decideRange('bytes=0-0', 21)).toEqual(part(0, 0));
    expect(decideRange('bytes=abc', 21)).toEqual(WHOLE);
    expect(decideRange('bytes=-0', 21)).toEqual(NONE);
    expect(decideRange('items=0-5', 21)).toEqual(WHOLE);
  });

  it('edges: no header, the end of the file, empty files, huge numbers, empty list elements', () => {
    expect(decideRange(undefined, 10)).toEqual(WHOLE);
    expect(decideRange('bytes=9-', 10)).toEqual(part(9, 9));
    expect(decideRange('bytes=10-', 10)).toEqual(NONE);
    expect(decideRange('bytes=0-', 0)).toEqual(NONE);
    expect(decideRange('bytes=-1', 0)).toEqual(WHOLE); // the whole (empty) representation
    expect(decideRange('bytes=-0', 0)).toEqual(NONE);
    expect(decideRange(`bytes=0-${'9'.repeat(400)}`, 10)).toEqual(part(0, 9));
    expect(decideRange(`bytes=${'9'.repeat(400)}-`, 10)).toEqual(NONE);
    expect(decideRange(`bytes=-${'9'.repeat(400)}`, 10)).toEqual(part(0, 9));
    expect(decideRange('bytes=0007-0008', 10)).toEqual(part(7, 8));
    // last-pos below first-pos by one, at a size where floating point would round both alike.
    expect(decideRange(`bytes=${'9'.repeat(29)}1-${'9'.repeat(29)}0`, 10)).toEqual(WHOLE);
    expect(decideRange('bytes=000000000000000000000000000005-4', 10)).toEqual(WHOLE);
    expect(decideRange('Bytes=1-1', 10)).toEqual(part(1, 1));
    expect(decideRange('bytes=, 1-1 ,\t,', 10)).toEqual(part(1, 1));
    for (const r of ['bytes=', 'bytes=,', 'bytes', '', '=', 'bytes=1-1,x', 'bytes=1-1,2-1', 'bytes=--1', 'bytes=1--1', 'bytes=-1-', 'bytes =1-1', 'bytes=1 - 1', 'bytes=١-٢'])
      expect(decideRange(r, 10), JSON.stringify(r)).toEqual(WHOLE);
    expect(decideRange('bytes=10-,-0', 10)).toEqual(NONE);
    expect(decideRange('bytes=10-,-1', 10)).toEqual(WHOLE); // one of several satisfiable
  });

  const size = fc.integer({ min: 0, max: 1_000_000 });
  const pos = fc.oneof(fc.integer({ min: 0, max: 2_000_000 }), fc.bigInt({ min: 0n, max: 10n ** 30n }));

  it('never throws, and a partial range always lies inside the file (any header text)', () => {
    const header = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom(...'bytes=-,0123456789 \t'.split('')) }).map((x) => `bytes=${x}`));
    fc.assert(
      fc.property(header, size, (h, n) => {
        const d = decideRange(h, n);
        if (d.kind === 'partial') return Number.isSafeInteger(d.start) && Number.isSafeInteger(d.end) && 0 <= d.start && d.start <= d.end && d.end < n;
        return true;
      }),
      { numRuns: 5000 },
    );
  });

  it('first-last: satisfiable when first < size (last clamped), invalid (ignored) when last < first', () => {
    fc.assert(
      fc.property(pos, pos, size, (a, b, n) => {
        const d = decideRange(`bytes=${a}-${b}`, n);
        const want = BigInt(b) < BigInt(a) ? WHOLE : BigInt(a) >= BigInt(n) ? NONE : part(Number(a), Number(BigInt(b) < BigInt(n - 1) ? b : n - 1));
        expect(d).toEqual(want);
      }),
      { numRuns: 2000 },
    );
  });

  it('suffix -n: the last n bytes (the whole file when shorter); -0 unsatisfiable', () => {
    fc.assert(
      fc.property(pos, size, (k, n) => {
        const d = decideRange(`bytes=-${k}`, n);
        const want = BigInt(k) === 0n ? NONE : n === 0 ? WHOLE : part(BigInt(k) >= BigInt(n) ? 0 : n - Number(k), n - 1);
        expect(d).toEqual(want);
      }),
      { numRuns: 2000 },
    );
  });

  it('other units are ignored; several satisfiable ranges give the whole file', () => {
    const unit = fc.string({ minLength: 1, maxLength: 10, unit: fc.constantFrom(...'abcdeiostyBY!#$%&*+.^_|~0123456789'.split('')) }).filter((u) => u.toLowerCase() !== 'bytes');
    fc.assert(
      fc.property(unit, pos, pos, size, (u, a, b, n) => {
        expect(decideRange(`${u}=${a}-${b}`, n)).toEqual(WHOLE);
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 99 }), { minLength: 2, maxLength: 20 }), fc.integer({ min: 100, max: 10_000 }), (starts, n) => {
        expect(decideRange(`bytes=${starts.map((a) => `${a}-${a + 5}`).join(',')}`, n)).toEqual(WHOLE);
      }),
      { numRuns: 500 },
    );
  });
});

describe('ifRangeAllows (RFC 9110 §13.1.5)', () => {
  const lm = 'Fri, 27 Nov 2026 12:00:00 GMT';
  const mtime = Date.parse(lm);
  it('absent: the Range applies; a weak ETag never matches; a strong one must be equal', () => {
    expect(ifRangeAllows(undefined, 'W/"1-2"', lm, mtime, mtime + 5000)).toBe(true);
    expect(ifRangeAllows('W/"1-2"', 'W/"1-2"', lm, mtime, mtime + 5000)).toBe(false);
    expect(ifRangeAllows('"1-2"', 'W/"1-2"', lm, mtime, mtime + 5000)).toBe(false);
    expect(ifRangeAllows('"abc"', '"abc"', lm, mtime, mtime + 5000)).toBe(true);
    expect(ifRangeAllows('"abd"', '"abc"', lm, mtime, mtime + 5000)).toBe(false);
  });
  it('a date: equal to Last-Modified, and that validator strong (a second or more old)', () => {
    expect(ifRangeAllows(lm, 'W/"1-2"', lm, mtime, mtime + 1000)).toBe(true);
    expect(ifRangeAllows(lm, 'W/"1-2"', lm, mtime + 300, mtime + 999)).toBe(false);
    expect(ifRangeAllows('Fri, 27 Nov 2026 12:00:01 GMT', 'W/"1-2"', lm, mtime, mtime + 5000)).toBe(false);
    expect(ifRangeAllows('garbage', 'W/"1-2"', lm, mtime, mtime + 5000)).toBe(false);
  });
});

describe('serve: Range requests (RFC 9110 §14)', () => {
  let t: TestTree;
  const servers: [string, RunningServer][] = [];
  // stats.json (small, cached) and a block's hex file (the largest file of the tree).
  let files: { target: string; bytes: Buffer }[];

  beforeAll(async () => {
    t = await writeTestTree({ hosts: [] });
    // A Last-Modified date is a validator only once the file is a second old (RFC 9110 §13.1.5): made older, so If-Range does not depend on how fast the tree was built.
    utimesSync(join(t.dir, 'stats.json'), 1_700_000_000, 1_700_000_000);
    files = [
      { target: '/stats.json', bytes: readFileSync(join(t.dir, 'stats.json')) },
      { target: `/block/${t.blocks[0]}.hex`, bytes: readFileSync(join(t.dir, `block/${t.blocks[0]}.hex`)) },
    ];
    servers.push(['cache', await startServer({ dir: t.dir, port: 0 })]);
    servers.push(['no cache', await startServer({ dir: t.dir, port: 0, cache: false })]);
    servers.push(['cache of 8-byte files', await startServer({ dir: t.dir, port: 0, cache: { maxFileBytes: 8 } })]);
  });
  afterAll(async () => {
    for (const [, s] of servers) await s.close();
    if (t) rmSync(t.dir, { recursive: true, force: true });
  });

  /** Each (server, file) pair, twice (the second request finds the file cached). */
  async function each(range: string, check: (r: RawResponse, bytes: Buffer, what: string) => void, method = 'GET', extra = ''): Promise<void> {
    for (const [label, s] of servers) {
      for (const { target, bytes } of files) {
        for (const round of [1, 2]) {
          const r = await rawRequest(s.url, target, method, `Range: ${range}\r\n${extra}`);
          check(r, bytes, `${label}: ${method} ${target} Range: ${range} ${extra} (#${round})`);
        }
      }
    }
  }

  const partial = (start: number, end: number) => (r: RawResponse, bytes: Buffer, what: string) => {
    const last = Math.min(end, bytes.length - 1);
    expect(r.status, what).toBe(206);
    expect(r.headers['content-range'], what).toBe(`bytes ${start}-${last}/${bytes.length}`);
    expect(r.headers['content-length'], what).toBe(String(last - start + 1));
    expect(r.body.equals(bytes.subarray(start, last + 1)), what).toBe(true);
  };
  const whole = (r: RawResponse, bytes: Buffer, what: string) => {
    expect(r.status, what).toBe(200);
    expect(r.headers['content-range'], what).toBeUndefined();
    expect(r.headers['content-length'], what).toBe(String(bytes.length));
    expect(r.body.equals(bytes), what).toBe(true);
  };
  const unsatisfiable = (r: RawResponse, bytes: Buffer, what: string) => {
    const doc = expectJsonError(r, 416, what);
    expect(r.headers['content-range'], what).toBe(`bytes */${bytes.length}`);
    expect(doc.error, what).toMatch(/^Range .* is not satisfiable/);
  };

  it('bytes=-5 is the last 5 bytes (a suffix range)', () => each('bytes=-5', (r, b, w) => partial(b.length - 5, b.length - 1)(r, b, w)));
  it('bytes=0-0 is the first byte', () => each('bytes=0-0', partial(0, 0)));
  it('bytes=2- is everything from offset 2; a last-pos past the end is clamped', async () => {
    await each('bytes=2-', partial(2, Infinity));
    await each('bytes=3-99999999999999999999999', partial(3, Infinity));
    await each('bytes=-99999', partial(0, Infinity));
  });
  it('a suffix longer than the file is the whole file as 206', () => each('bytes=-1000000', partial(0, Infinity)));
  it('bytes=5-2 (last-pos before first-pos: invalid) is ignored, and the server stays up', async () => {
    await each('bytes=5-2', whole);
    await each('bytes=5-4', whole);
  });
  it('invalid syntax is ignored: the whole file as 200', async () => {
    for (const range of ['bytes=abc', 'bytes=', 'bytes=-', 'bytes=1-2-3', 'bytes=+1-2', 'bytes=0x1-2', 'bytes 0-5', 'bytes=1.5-2', 'bytes=0-1;', '=0-5']) await each(range, whole);
  });
  it('an unknown range unit is ignored: items=0-5 is the whole file as 200', () => each('items=0-5', whole));
  it('bytes=-0 and ranges starting at or past the end are 416 with Content-Range bytes */len and a JSON body', async () => {
    await each('bytes=-0', unsatisfiable);
    for (const { target, bytes } of files) {
      for (const [, s] of servers) {
        unsatisfiable(await rawRequest(s.url, target, 'GET', `Range: bytes=${bytes.length}-\r\n`), bytes, `${target} from its length`);
        unsatisfiable(await rawRequest(s.url, target, 'GET', `Range: bytes=${bytes.length + 7}-${bytes.length + 9}\r\n`), bytes, `${target} past its end`);
      }
    }
    await each('bytes=99999999999999999999-', unsatisfiable);
    await each('bytes=-0,99999-', unsatisfiable);
  });
  it('the unit is case-insensitive; empty list elements and whitespace around them are allowed', async () => {
    await each('BYTES=0-0', partial(0, 0));
    await each('bytes= 1-2 ,', partial(1, 2));
    await each('bytes=,,1-2', partial(1, 2));
  });
  it('several ranges: the whole file as 200 (multipart/byteranges is not sent)', async () => {
    await each('bytes=0-1,3-4', whole);
    await each('bytes=0-0,-1', whole);
    await each('bytes=0-1, 9999-', whole);
  });
  it('Range applies to GET only: HEAD answers the whole file headers', () =>
    each('bytes=0-0', (r, b, w) => {
      expect(r.status, w).toBe(200);
      expect(r.headers['content-length'], w).toBe(String(b.length));
      expect(r.headers['content-range'], w).toBeUndefined();
    }, 'HEAD'));
  it('If-Range: a weak ETag never matches (whole file); the Last-Modified date matches, another date does not', async () => {
    const [, s] = servers[0]!;
    const { target, bytes } = files[0]!;
    const first = await rawRequest(s.url, target);
    expect(first.headers['etag']).toMatch(/^W\//);
    const lastModified = first.headers['last-modified']!;
    expect(new Date(lastModified).getTime()).toBe(Math.floor(statSync(join(t.dir, 'stats.json')).mtimeMs / 1000) * 1000);
    await each('bytes=0-0', whole, 'GET', `If-Range: ${first.headers['etag']}\r\n`);
    await each('bytes=0-0', whole, 'GET', 'If-Range: "strong-but-unknown"\r\n');
    await each('bytes=0-0', whole, 'GET', 'If-Range: Thu, 01 Jan 1970 00:00:00 GMT\r\n');
    for (const [label, srv] of servers) partial(0, 0)(await rawRequest(srv.url, target, 'GET', `Range: bytes=0-0\r\nIf-Range: ${lastModified}\r\n`), bytes, `${label} If-Range: ${lastModified}`);
  });
  it('If-None-Match is evaluated before Range: a matching ETag is a 304', async () => {
    for (const [label, s] of servers) {
      const etag = (await rawRequest(s.url, '/stats.json')).headers['etag'];
      const r = await rawRequest(s.url, '/stats.json', 'GET', `If-None-Match: ${etag}\r\nRange: bytes=0-0\r\n`);
      expect(r.status, label).toBe(304);
      expect(r.body.length).toBe(0);
    }
  });
  it('a Range on a missing file or an error document changes nothing', async () => {
    for (const [label, s] of servers) {
      const miss = await rawRequest(s.url, `/tx/${'ab'.repeat(32)}.json`, 'GET', 'Range: bytes=0-0\r\n');
      expect(expectJsonError(miss, 404, label)).toEqual({ error: `Tx ${'ab'.repeat(32)} not found.` });
      const capped = await rawRequest(s.url, `/address/${t.capped}.json`, 'GET', 'Range: bytes=0-0\r\n');
      expect(capped.status, label).toBe(500);
      expect(capped.body.equals(readFileSync(join(t.dir, `address/${t.capped}.json`))), label).toBe(true);
    }
  });
});

describe('snapshot serve (the CLI process) survives a reversed Range', () => {
  it('bytes=5-2 is answered, then the next request too; SIGTERM stops it', async () => {
    const t = await writeTestTree({ hosts: [] });
    const port = await freePort();
    const child = spawn(process.execPath, [...nodeArgs('src/cli.ts'), 'serve', '--dir', t.dir, '--port', String(port)], { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<NodeJS.Signals | number | null>((ok) => child.on('exit', (code, signal) => ok(signal ?? code)));
    try {
      const base = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 60_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`snapshot serve exited: ${stderr}`);
        if (await rawRequest(base, '/stats.json').then(() => true, () => false)) break;
        if (Date.now() > deadline) throw new Error(`snapshot serve did not start: ${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const stats = readFileSync(join(t.dir, 'stats.json'));
      for (const range of ['bytes=5-2', 'bytes=-0', 'bytes=0-0']) {
        const r = await rawRequest(base, '/stats.json', 'GET', `Range: ${range}\r\n`).catch((e: Error) => ({ status: -1, error: `${e.message}; stderr: ${stderr}` }));
        expect(r.status, `${range}: ${JSON.stringify(r)}`).toBe(range === 'bytes=5-2' ? 200 : range === 'bytes=-0' ? 416 : 206);
      }
      const after = await rawRequest(base, '/stats.json');
      expect(after.body.equals(stats)).toBe(true);
      expect(child.exitCode).toBeNull();
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stderr).toContain('Shutting down');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(t.dir, { recursive: true, force: true });
    }
  }, 90_000);
});
