/**
 * Conformance: one table of requests derived from a built tree (every endpoint, all 64 name
 * query forms in several spellings, canonical and natural names, upper-case hashes, every error
 * case, hostile raw targets) with expected status, content type, cache policy and body, run
 * against
 *   (a) the node server (`snapshot serve`; also compared header for header with the server
 *       running without its file cache, i.e. every file read from disk),
 *   (b) real nginx with the generated config (proxying what it cannot answer to (a)),
 *   (c) the generated Netlify Edge Function and Cloudflare worker, in-process,
 *   (d) the same glue in the real runtimes: the Cloudflare worker in workerd with `env.ASSETS`
 *       served by wrangler's Pages asset server (what `wrangler pages dev` runs) and the Netlify
 *       function in Deno (test/runtimes/, test/fixtures/pages-host.ts), one process per runtime
 *       for the three trees, skipped with the reason when a binary cannot run here.
 * Every front end must return the same bytes. Edge runtimes only ever see URLs the platform has
 * already parsed (WHATWG: dot segments resolved, '\' → '/'), so for targets that parsing changes
 * they must match the node server's answer for the parsed target.
 *
 * Trees: the demo chain built once with `buildSnapshot` (its names with '/', '..', '%', '?',
 * spaces, '~' and non-UTF-8 bytes), a second build with a small address cap (capped address
 * documents → 500), and a small synthetic tree for what the demo lacks (NUL bytes in names,
 * 255-byte names stored under their hash, static files). nginx runs are skipped when nginx is
 * not installed (.ci/run installs it).
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SITE_INFO_PATH,
  encodeNamePath,
  isCanonicalNamePath,
  variantFromQuery,
  variantKey,
  type SiteInfo,
} from '../src/contract/layout.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { Progress } from '../src/runtime/progress.js';
import { nginxConfig } from '../src/hosts/nginx.js';
import { CLOUDFLARE_WORKER } from '../src/hosts/cloudflare.js';
import { NETLIFY_FUNCTION, INTERNAL_HEADER } from '../src/hosts/netlify.js';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { writeTestTree } from './support/site-tree.js';
import { mapLimit } from './support/helpers.js';
import { HAVE_NGINX, startNginx, type RunningNginx } from './support/nginx.js';
import { BIN_T, HEX_T, JSON_T, buildTable, errRow, listFiles, nameLabel, namesOf, type Row, type Tree } from './support/conformance-rows.js';
import { keepAliveRequest, rawRequest, type RawResponse } from './support/http-raw.js';
import { denoBinary, freePort, startDenoNetlify, startPagesHost, workerdBinary, type Binary, type RuntimeProcess } from './runtimes/launch.js';

interface Got {
  status: number;
  type: string;
  cache: string;
  cors: string;
  body: Buffer;
}

/** Targets a host without a router serves: lower-case hashes, canonical name paths, plain queries. */
function isStaticCanonical(target: string): boolean {
  if (!/^[A-Za-z0-9._~/?&=-]*$/.test(target)) return false;
  const path = target.split('?')[0]!;
  if (/^\/(tx|block)\/[0-9a-f]{64}\.(json|bin|hex)$/.test(path) || /^\/block-height\/(0|[1-9][0-9]*)\.json$/.test(path) || path === '/stats.json' || path === '/names.json') return true;
  if (path === '/openapi.json' || /^\/schemas\/[a-z-]+\.schema\.json$/.test(path)) return true; // the API contract
  return path.startsWith('/name/') && path.endsWith('.json') && isCanonicalNamePath(path.slice(6, -5));
}

function fromRaw(r: RawResponse): Got {
  return { status: r.status, type: r.headers['content-type'] ?? '', cache: r.headers['cache-control'] ?? '', cors: r.headers['access-control-allow-origin'] ?? '', body: r.body };
}

async function fromResponse(r: Response): Promise<Got> {
  return {
    status: r.status,
    type: r.headers.get('content-type') ?? '',
    cache: r.headers.get('cache-control') ?? '',
    cors: r.headers.get('access-control-allow-origin') ?? '',
    body: Buffer.from(await r.arrayBuffer()),
  };
}

function check(front: string, row: Row, got: Got): void {
  if (got.status === row.status && got.type === row.type && got.cache === row.cache && got.cors === '*' && got.body.equals(row.body)) return;
  const label = `${front} ${row.target.slice(0, 120)}`;
  expect({ status: got.status, type: got.type, cache: got.cache, cors: got.cors, body: got.body.toString('latin1') }, label).toEqual({
    status: row.status,
    type: row.type,
    cache: row.cache,
    cors: '*',
    body: row.body.toString('latin1'),
  });
}

/** Static file store the way the platforms serve it, for the in-process edge code. */
function staticFile(dir: string, pathname: string, cloudflare: boolean): Response {
  let rel = decodeURIComponent(pathname).slice(1);
  if (cloudflare) {
    if (rel === '' || rel.endsWith('/')) rel += 'index.html';
    else if (!/\.[A-Za-z0-9]+$/.test(rel) && existsSync(join(dir, rel + '.html'))) rel += '.html';
  }
  const abs = join(dir, rel);
  try {
    return new Response(readFileSync(abs), { status: 200, headers: { ETag: '"x"' } });
  } catch {
    return new Response(readFileSync(join(dir, '404.html')), { status: 404, headers: { 'Content-Type': 'text/html' } });
  }
}

if (!HAVE_NGINX) console.warn('nginx is not installed: the nginx conformance runs are skipped (apt-get install nginx-light)');
/** The real edge runtimes (d): each one process for all trees, started in the background once the trees exist. */
const DENO = denoBinary();
const RUNTIMES: { front: string; binary: Binary; start: (dirs: string[]) => Promise<RuntimeProcess> }[] = [
  { front: "Cloudflare _worker.js in workerd (env.ASSETS: wrangler's Pages asset server)", binary: workerdBinary(), start: startPagesHost },
  { front: 'Netlify Edge Function in Deno', binary: DENO, start: (dirs) => startDenoNetlify(DENO.path!, dirs) },
];
for (const r of RUNTIMES) if (r.binary.skip) console.warn(`${r.binary.skip}: its real-runtime conformance run is skipped`);

/** nginx on the tree's generated config (test/support/nginx.ts), with or without the snapshot serve upstream. */
async function startTreeNginx(t: { dir: string; info: SiteInfo }, upstream: string | undefined): Promise<RunningNginx> {
  const port = await freePort();
  return startNginx(nginxConfig({ root: t.dir, listen: `127.0.0.1:${port}`, upstream, info: t.info }), join(dirname(t.dir), `nginx-${port}`), port);
}

const silent = new Progress({ write: () => true } as unknown as NodeJS.WriteStream, false);

/** Names the demo chain must have, with '/' and hostile bytes (see src/builder/demo.ts). */
const DEMO_NAMES = ['d/history', '/lead', 'trail/', '..', 'd/100%', 'd/what?', 'd/with space', '~tilde', 'id/json', 'd/a/b'].map((n) => Buffer.from(n));
const NON_UTF8_NAME = Buffer.from([0x64, 0x2f, 0xff, 0xfe]);

function readInfo(dir: string): SiteInfo {
  return JSON.parse(readFileSync(join(dir, SITE_INFO_PATH), 'utf8')) as SiteInfo;
}

/**
 * The three trees, made concurrently once: the demo chain, the demo chain with a small address
 * cap, and the synthetic tree. The suites below run on them in this order.
 */
const SUITES = [
  'demo chain build',
  'demo chain build with maxAddressTxouts 3 (capped addresses)',
  'synthetic tree (NUL bytes and 255-byte names, static files, base58/bech32/capped)',
];
let made: Promise<{ dirs: string[]; trees: Tree[] }> | undefined;
function allTrees(): Promise<{ dirs: string[]; trees: Tree[] }> {
  made ??= (async () => {
    const root = mkdtempSync(join(tmpdir(), 'conformance-'));
    chmodSync(root, 0o755); // nginx workers run as an unprivileged user
    const demo = join(root, 'demo');
    const capped = join(root, 'capped');
    const [synthetic] = await Promise.all([
      writeTestTree(),
      buildSnapshot({ source: demoSource(), outDir: demo, progress: silent }),
      buildSnapshot({ source: demoSource(), outDir: capped, progress: silent, maxAddressTxouts: 3 }),
    ]);
    const trees: Tree[] = [
      { label: 'demo', dir: demo, info: readInfo(demo), names: namesOf(listFiles(demo)), richName: Buffer.from('d/history') },
      { label: 'capped', dir: capped, info: readInfo(capped), names: [], addressesOnly: true },
      { label: 'synthetic', dir: synthetic.dir, info: synthetic.info, names: synthetic.names },
    ];
    return { dirs: [root, synthetic.dir], trees };
  })();
  return made;
}

/** The real runtimes (d), each serving the three trees (URLs in SUITES order). */
let runtimes: Map<string, Promise<RuntimeProcess>> | undefined;
function startRuntimes(): Map<string, Promise<RuntimeProcess>> {
  runtimes ??= new Map(
    RUNTIMES.filter((r) => !r.binary.skip).map((r) => {
      const started = allTrees().then(({ trees }) => r.start(trees.map((t) => t.dir)));
      started.catch(() => undefined); // reported by its tests
      return [r.front, started] as const;
    }),
  );
  return runtimes;
}

beforeAll(() => {
  startRuntimes(); // in the background, while the first suites run on the node server and nginx
});
afterAll(async () => {
  await Promise.all([...(runtimes?.values() ?? [])].map((p) => p.then((r) => r.stop(), () => undefined)));
  // fs/promises: unlinks in parallel (rmSync takes seconds for the ~6000 files on a busy disk).
  await Promise.all((made ? (await made).dirs : []).map((d) => rm(d, { recursive: true, force: true })));
});

for (const [suiteIndex, suite] of SUITES.entries()) {
  describe(`conformance: ${suite}`, () => {
    let t: Tree;
    let rows: Row[];
    let node: RunningServer;
    const nodeGot = new Map<string, Got>();

    beforeAll(async () => {
      t = (await allTrees()).trees[suiteIndex]!;
      rows = buildTable(t);
      node = await startServer({ dir: t.dir, port: 0 });
    });
    afterAll(async () => {
      await node?.close();
    });

    it('table covers the tree', () => {
      expect(new Set(rows.map((r) => r.target)).size).toBe(rows.length);
      if (t.addressesOnly) {
        expect(t.info.cappedAddresses.length).toBeGreaterThan(2);
        expect(rows.filter((r) => r.status === 500).length).toBeGreaterThanOrEqual(t.info.cappedAddresses.length);
        return;
      }
      const variants = (name: Buffer) =>
        new Set(rows.filter((r) => r.status === 200 && r.target.startsWith(`/name/${encodeNamePath(name)}.json`)).map((r) => variantKey(variantFromQuery(r.target.split('?')[1] ?? ''))));
      for (const n of t.names) expect(variants(n).size, nameLabel(n)).toBe(64);
      if (t.label === 'demo') {
        const have = new Set(t.names.map((n) => n.toString('latin1')));
        for (const n of [...DEMO_NAMES, NON_UTF8_NAME]) expect(have.has(n.toString('latin1')), `demo name ${nameLabel(n)}`).toBe(true);
        // The rich name has ≥ 3 operations and is asked in every spelling.
        expect(JSON.parse(readFileSync(join(t.dir, 'v/history/name/d/history.json'), 'utf8')).length).toBeGreaterThanOrEqual(3);
        expect(rows.filter((r) => /^\/name\/d(\/|%2F)history\.json/i.test(r.target)).length).toBeGreaterThan(64 * 3);
        expect(rows.length).toBeGreaterThan(3000);
        // The build wrote the same nginx config the suites generate (absolute root, no upstream).
        expect(readFileSync(join(t.dir, 'nginx.conf'), 'utf8')).toBe(nginxConfig({ root: resolve(t.dir), info: t.info }));
      }
    });

    it('(a) node server (snapshot serve, with its file cache)', async () => {
      const got = await mapLimit(rows, 16, (r) => rawRequest(node.url, r.target));
      rows.forEach((row, i) => {
        check('node', row, fromRaw(got[i]!));
        nodeGot.set(row.target, fromRaw(got[i]!));
      });
    });

    it('(a) node server without the cache (every file from disk) sends the same headers and bytes', async () => {
      const plain = await startServer({ dir: t.dir, port: 0, cache: false });
      try {
        const strip = (r: RawResponse) => ({ status: r.status, headers: Object.entries(r.headers).filter(([k]) => k !== 'date'), body: r.body.toString('latin1') });
        const sample = rows.filter((_, i) => i % 3 === 0);
        const [a, b] = await Promise.all([mapLimit(sample, 8, (r) => rawRequest(plain.url, r.target)), mapLimit(sample, 8, (r) => rawRequest(node.url, r.target))]);
        sample.forEach((row, i) => expect(strip(a[i]!), row.target).toEqual(strip(b[i]!)));
      } finally {
        await plain.close();
      }
    });

    for (const mode of ['proxy', 'static'] as const) {
      it.skipIf(!HAVE_NGINX)(`(b) nginx (${mode === 'proxy' ? 'with snapshot serve upstream: every row' : 'static only: canonical rows'})`, async () => {
        const ng = await startTreeNginx(t, mode === 'proxy' ? new URL(node.url).host : undefined);
        try {
          const selected = mode === 'proxy' ? rows : rows.filter((r) => r.status === 200 && isStaticCanonical(r.target));
          const got = await mapLimit(selected, 16, (r) => rawRequest(ng.url, r.target));
          selected.forEach((row, i) => check(`nginx-${mode}`, row, fromRaw(got[i]!)));
          if (mode === 'static') {
            // Misses answer with the generic per-kind documents.
            for (const [target, msg] of [[`/tx/${'ab'.repeat(32)}.json`, 'Tx not found.'], ['/name/d/nope.json?history', 'Name not found.'], ['/address/foo.json', 'Address not found.'], ['/nope', 'Not found.']] as const) {
              check('nginx-static', errRow(target, 404, msg), fromRaw(await rawRequest(ng.url, target)));
            }
          }
        } catch (e) {
          console.error(ng.errors());
          throw e;
        } finally {
          await ng.stop();
        }
      });
    }

    /**
     * Every row as an edge runtime sees it: the URL the platform parsed (rows WHATWG parsing
     * rejects are left out). Returns the number of requests made.
     */
    async function runEdge(front: string, get: (parsed: URL, target: string) => Promise<Got>, limit = 1): Promise<number> {
      const jobs: { row: Row; parsed: URL; target: string }[] = [];
      for (const row of rows) {
        let parsed: URL;
        try {
          parsed = new URL(row.target, 'http://site.test');
        } catch {
          continue;
        }
        jobs.push({ row, parsed, target: parsed.pathname + parsed.search });
      }
      const got = await mapLimit(jobs, limit, (j) => get(j.parsed, j.target));
      for (const [i, { row, target }] of jobs.entries()) {
        if (target === row.target) check(front, row, got[i]!);
        else {
          const want = nodeGot.get(target) ?? fromRaw(await rawRequest(node.url, target));
          expect({ ...got[i]!, body: got[i]!.body.toString('latin1') }, `${front} ${row.target} (parsed as ${target})`).toEqual({ ...want, body: want.body.toString('latin1') });
        }
      }
      return jobs.length;
    }

    it('(c) Netlify Edge Function, in-process', async () => {
      const mod = (await import(pathToFileURL(join(t.dir, NETLIFY_FUNCTION)).href)) as { default: (r: Request) => Promise<Response | undefined>; config: { path: string } };
      expect(mod.config.path).toBe('/*');
      const realFetch = globalThis.fetch;
      globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
        const req = new Request(input, init);
        // Netlify runs the function for the sub-request too; it must pass it through.
        expect(await mod.default(req)).toBeUndefined();
        expect(req.headers.get(INTERNAL_HEADER)).toBe('1');
        return staticFile(t.dir, new URL(req.url).pathname, false);
      }) as typeof fetch;
      try {
        await runEdge('netlify', async (url) => fromResponse((await mod.default(new Request(url)))!));
      } finally {
        globalThis.fetch = realFetch;
      }
    });

    it('(c) Cloudflare _worker.js, in-process', async () => {
      const mod = (await import(pathToFileURL(join(t.dir, CLOUDFLARE_WORKER)).href)) as { default: { fetch: (r: Request, env: unknown) => Promise<Response> } };
      const env = { ASSETS: { fetch: async (req: Request) => staticFile(t.dir, new URL(req.url).pathname, true) } };
      await runEdge('cloudflare', async (url) => fromResponse(await mod.default.fetch(new Request(url), env)));
    });

    for (const { front, binary } of RUNTIMES) {
      it.skipIf(binary.skip !== undefined)(`(d) ${front}`, { timeout: 180_000 }, async () => {
        const runtime = await startRuntimes().get(front)!;
        const url = runtime.urls[suiteIndex]!;
        const t0 = performance.now();
        const agent = new Agent({ keepAlive: true, maxSockets: 8 });
        try {
          const n = await runEdge(front, async (_url, target) => fromRaw(await keepAliveRequest(agent, url, target)), 8);
          console.log(`conformance ${t.label}: ${front}: ${n} requests, 0 differences, ${((performance.now() - t0) / 1000).toFixed(1)} s`);
          // HEAD and conditional GET through the glue: the platform's ETag, 304 keeping the API's headers.
          const sample = [JSON_T, BIN_T, HEX_T].map((type) => rows.find((r) => r.status === 200 && r.type === type && /^[\w/.-]+$/.test(r.target))).filter((r) => r !== undefined);
          for (const row of sample) {
            const head = await keepAliveRequest(agent, url, row.target, 'HEAD');
            check(`${front} HEAD`, { ...row, body: Buffer.alloc(0) }, fromRaw(head));
            const etag = head.headers['etag'];
            expect(etag, `${front} ETag of ${row.target}`).toBeTruthy();
            const again = await keepAliveRequest(agent, url, row.target, 'GET', { 'If-None-Match': etag! });
            check(`${front} If-None-Match`, { ...row, status: 304, body: Buffer.alloc(0) }, fromRaw(again));
          }
        } catch (e) {
          console.error(runtime.output().slice(-3000));
          throw e;
        } finally {
          agent.destroy();
        }
      });
    }
  });
}

