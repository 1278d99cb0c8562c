/**
 * The pack glue (src/hosts/pack-glue.ts) answers like `snapshot serve` on the tree the pack was
 * made from: for the demo chain, every target of the conformance table (test/support/
 * conformance-rows.ts: every endpoint, name variant by query, error case) and every path of the
 * tree's `_manifest.json`, as the platform parses it, gets the same status, content type, cache
 * policy, CORS header and bytes, with and without `Accept-Encoding: gzip` (a gzip answer is
 * decoded and compared). Once the pack's root is read, no request costs more than 2 range reads
 * (a recipe: 2 plus its groups of nearby tx blobs), counted at the storage one request at a time:
 *   - the generated Cloudflare Worker, in-process with an R2-like bucket over the pack directory;
 *   - the same Worker in workerd with wrangler's local R2 (objects put with `wrangler r2 bulk put
 *     --local`), reads counted by a probe module around the worker;
 *   - the generated Netlify Edge Function in Deno (test/runtimes/netlify-host.ts), reading the
 *     pack by HTTP Range from a local static server (SNAPSHOT_PACK_URL), reads counted there.
 * The runtimes are skipped with the reason when their binaries cannot run here.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_PATH, SITE_INFO_PATH, type SiteInfo } from '../src/contract/layout.js';
import { PACK_POINTER } from '../src/contract/pack-format.js';
import { makeRouterSite, route, type RouterSite } from '../src/contract/router.js';
import { histogram, recipeReadBounds } from './support/pack-compare.js';
import { PACK_WORKER, PACK_WORKER_DIR, writePackHostGlue } from '../src/hosts/pack-glue.js';
import { cloudflarePackWorker } from '../src/hosts/cloudflare-pack-worker.js';
import { INTERNAL_HEADER } from '../src/hosts/netlify-edge.js';
import { netlifyPackFunction } from '../src/hosts/netlify-pack-edge.js';
import { packFromTree } from '../src/pack/from-tree.js';
import { PackReader } from '../src/pack/reader.js';
import { PackWriter } from '../src/pack/writer.js';
import { Progress } from '../src/runtime/progress.js';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { buildTable, listFiles, namesOf } from './support/conformance-rows.js';
import { keepAliveRequest, type RawResponse } from './support/http-raw.js';
import { tempDir } from './support/memory-builds.js';
import { rangeServer } from './support/range-server.js';
import { denoBinary, startDenoNetlify, startPackWorker, workerdBinary } from './runtimes/launch.js';

const require = createRequire(import.meta.url);
const dir = tempDir('snapshot-pack-hosts-');
const silent = new Progress({ write: () => true } as unknown as NodeJS.WriteStream, false);
const BUCKET = 'snapshot-test';
const DENO = denoBinary();
const WORKERD = workerdBinary();

interface Answer {
  status: number;
  type: string;
  cache: string;
  cors: string;
  body: string;
}

/** What a front end answered, the body decoded when it came gzip (latin1 text: compared byte for byte). */
function answerOf(r: { status: number; header(name: string): string | undefined; body: Buffer }, acceptGzip: boolean): Answer & { gzip: boolean } {
  const encoding = r.header('content-encoding');
  if (encoding !== undefined && !(acceptGzip && encoding === 'gzip')) throw new Error(`Content-Encoding ${encoding} for a request that ${acceptGzip ? 'accepts gzip' : 'does not accept gzip'}`);
  const body = encoding === 'gzip' ? gunzipSync(r.body) : r.body;
  return { status: r.status, type: r.header('content-type') ?? '', cache: r.header('cache-control') ?? '', cors: r.header('access-control-allow-origin') ?? '', body: body.toString('latin1'), gzip: encoding === 'gzip' };
}

const fromRaw = (r: RawResponse, gzip: boolean) => answerOf({ status: r.status, header: (n) => r.headers[n], body: r.body }, gzip);

let tree: string;
let pack: string;
let info: SiteInfo;
/** Request targets as an edge platform passes them on (WHATWG-parsed), each once. */
let targets: string[];
/** `snapshot serve` on the tree: the reference answer of each target. */
const want = new Map<string, Answer>();
let node: RunningServer;

beforeAll(async () => {
  tree = dir('tree');
  pack = dir('pack');
  await buildSnapshot({ source: demoSource(), outDir: tree, progress: silent });
  await packFromTree(tree, pack);
  info = JSON.parse(readFileSync(join(tree, SITE_INFO_PATH), 'utf8')) as SiteInfo;
  await writePackHostGlue(pack, info, { bucket: BUCKET });
  const rows = buildTable({ label: 'demo', dir: tree, info, names: namesOf(listFiles(tree)), richName: Buffer.from('d/history') });
  const manifestPaths = readFileSync(join(tree, MANIFEST_PATH), 'utf8').trim().split('\n').map((l) => '/' + l.split(' ')[2]);
  const seen = new Set<string>();
  for (const t of [...rows.map((r) => r.target), ...manifestPaths]) {
    let u: URL;
    try {
      u = new URL(t, 'http://site.test');
    } catch {
      continue; // a target no platform would pass on
    }
    seen.add(u.pathname + u.search);
  }
  targets = [...seen];
  recipeBound = await recipeReadBounds(pack, manifestPaths.map((m) => m.slice(1)));
  node = await startServer({ dir: tree, port: 0 });
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  try {
    for (const t of targets) {
      const { gzip: _, ...answer } = fromRaw(await keepAliveRequest(agent, node.url, t), false);
      want.set(t, answer);
    }
  } finally {
    agent.destroy();
  }
}, 300_000);

afterAll(async () => {
  await node?.close();
});

interface Tally {
  requests: number;
  /** Requests whose storage reads were counted. */
  counted: number;
  /** The most reads of one request for a stored or hex entry (or an error). */
  maxReads: number;
  reads: number;
  gzipAnswers: number;
  /** Reads of each counted request for a recipe; those over the format's bound (2 + coalesced groups). */
  recipeReads: number[];
  recipeOver: string[];
}

/** The most range reads a recipe's answer may take, by file (a file not in it is no recipe). */
let recipeBound: Map<string, number>;

/**
 * Every target, plain and with gzip accepted, compared with the reference. First a third of the
 * targets one request at a time, each request's storage reads counted (`reads`; the first
 * request warms the pack's root), then all of them `concurrency` at a time (most answers then
 * come from the answer cache, where the runtime has one).
 */
async function runAll(front: string, ask: (target: string, gzip: boolean) => Promise<{ answer: Answer & { gzip: boolean }; reads: number }>, concurrency = 1): Promise<Tally> {
  const [tally, site]: [Tally, RouterSite] = [{ requests: 0, counted: 0, maxReads: 0, reads: 0, gzipAnswers: 0, recipeReads: [], recipeOver: [] }, makeRouterSite(info)];
  await ask('/stats.json', false);
  const differences: string[] = [];
  const one = async (t: string, gzip: boolean, count: boolean) => {
    const { answer, reads } = await ask(t, gzip);
    const { gzip: wasGzip, ...got } = answer;
    const ref = want.get(t)!;
    if (JSON.stringify(got) !== JSON.stringify(ref)) {
      if (differences.length < 5) expect(got, `${front} ${t.slice(0, 120)}${gzip ? ' (gzip accepted)' : ''}`).toEqual(ref);
      differences.push(t);
    }
    tally.requests++;
    if (wasGzip) tally.gzipAnswers++;
    if (!count) return;
    tally.counted++;
    tally.reads += reads;
    const r = route(t, site);
    const bound = r.type === 'file' ? recipeBound.get(r.file) : undefined;
    if (bound === undefined) tally.maxReads = Math.max(tally.maxReads, reads);
    else if (tally.recipeReads.push(reads) && reads > bound) tally.recipeOver.push(`${t}: ${reads} reads, at most ${bound}`);
  };
  const counted = targets.filter((_, i) => i % 3 === 0);
  for (const gzip of [false, true]) for (const t of counted) await one(t, gzip, true);
  const jobs = [false, true].flatMap((gzip) => targets.map((t) => [t, gzip] as const));
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jobs.length) {
        const [t, gzip] = jobs[next++]!;
        await one(t, gzip, false);
      }
    }),
  );
  expect(differences).toEqual([]);
  console.log(
    `pack hosts: ${front}: ${tally.requests} requests, 0 differences; ${tally.counted} counted one at a time: ${tally.reads} storage reads, at most ${tally.maxReads} in one request for a stored entry; ` +
      `${tally.recipeReads.length} recipe answers, reads: count ${histogram(tally.recipeReads)}; ${tally.gzipAnswers} gzip answers`,
  );
  return tally;
}

/** What every front end must show. */
function expectTally(t: Tally): void {
  expect(t.requests).toBe(targets.length * 2 + t.counted);
  expect(t.counted).toBeGreaterThan(2000);
  expect(t.maxReads).toBeLessThanOrEqual(2);
  expect(t.recipeReads.length).toBeGreaterThan(100);
  expect(t.recipeOver).toEqual([]);
  // The counting sees reads: the first request of a document needs its slot or its blob.
  expect(t.reads).toBeGreaterThan(t.counted / 4);
  expect(t.gzipAnswers).toBeGreaterThan(100);
}

const packFiles = () => readdirSync(pack).filter((f) => f === PACK_POINTER || /\.(idx|part)$/.test(f));

describe('pack host glue', () => {
  it('the targets cover the tree: every manifest path and the conformance rows', () => {
    const manifest = readFileSync(join(tree, MANIFEST_PATH), 'utf8').trim().split('\n').length;
    expect(targets.length).toBeGreaterThan(manifest + 2000);
    expect([...want.values()].filter((a) => a.status === 200).length).toBeGreaterThan(manifest / 2);
    const statuses = new Set([...want.values()].map((a) => a.status));
    for (const s of [200, 400, 404, 414]) expect(statuses.has(s), `a target answered ${s}`).toBe(true);
  });

  it('Cloudflare Worker, in-process, with an R2-like bucket over the pack directory', async () => {
    const mod = (await import(pathToFileURL(join(pack, PACK_WORKER)).href)) as { default: { fetch(r: Request, env: unknown): Promise<Response> } };
    let gets = 0;
    const env = {
      BUCKET: {
        async get(key: string, o?: { range?: { offset: number; length: number } }) {
          gets++;
          let bytes: Buffer;
          try {
            bytes = readFileSync(join(pack, key));
          } catch {
            return null;
          }
          const b = o?.range ? bytes.subarray(o.range.offset, o.range.offset + o.range.length) : bytes;
          return { arrayBuffer: async () => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) };
        },
      },
    };
    const tally = await runAll('Cloudflare Worker in-process', async (target, gzip) => {
      const before = gets;
      const res = await mod.default.fetch(new Request(new URL(target, 'http://site.test'), { headers: gzip ? { 'Accept-Encoding': 'gzip, br' } : {} }), env);
      const body = Buffer.from(await res.arrayBuffer());
      return { answer: answerOf({ status: res.status, header: (n) => res.headers.get(n) ?? undefined, body }, gzip), reads: gets - before };
    });
    expectTally(tally);
  });

  it.skipIf(WORKERD.skip !== undefined)(`Cloudflare Worker in workerd with wrangler's local R2${WORKERD.skip ? ` (${WORKERD.skip})` : ''}`, { timeout: 600_000 }, async () => {
    const state = dir('wrangler-state');
    const t0 = performance.now();
    const list = dir('r2-objects.json');
    writeFileSync(list, JSON.stringify(packFiles().map((f) => ({ key: f, file: join(pack, f) }))));
    const r = spawnSync(process.execPath, [require.resolve('wrangler/bin/wrangler.js'), 'r2', 'bulk', 'put', BUCKET, '--filename', list, '--local', '--persist-to', state], {
      cwd: join(pack, PACK_WORKER_DIR),
      encoding: 'utf8',
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
      timeout: 120_000,
    });
    expect(r.status, `wrangler r2 bulk put: ${r.stderr}${r.stdout}`).toBe(0);
    console.log(`pack hosts: wrangler r2 bulk put --local: ${packFiles().length} objects in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const runtime = await startPackWorker(join(pack, PACK_WORKER_DIR), join(state, 'v3', 'r2'), BUCKET);
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    try {
      const url = runtime.urls[0]!;
      const tally = await runAll('Cloudflare Worker in workerd (local R2)', async (target, gzip) => {
        const r = await keepAliveRequest(agent, url, target, 'GET', gzip ? { 'Accept-Encoding': 'gzip' } : {});
        return { answer: fromRaw(r, gzip), reads: Number(r.headers['x-test-bucket-gets']) };
      }, 8);
      expectTally(tally);
      await expectConditional(agent, url);
    } catch (e) {
      console.error(runtime.output().slice(-3000));
      throw e;
    } finally {
      agent.destroy();
      await runtime.stop();
    }
  });

  it.skipIf(DENO.skip !== undefined)(`Netlify Edge Function in Deno over HTTP Range${DENO.skip ? ` (${DENO.skip})` : ''}`, { timeout: 300_000 }, async () => {
    const files = await rangeServer(pack);
    // A fresh Deno cache directory: the function's Cache API entries must not outlive this run.
    const runtime = await startDenoNetlify(DENO.path!, [pack], undefined, { SNAPSHOT_PACK_URL: files.url, DENO_DIR: dir('deno-dir') });
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    try {
      const url = runtime.urls[0]!;
      const tally = await runAll('Netlify Edge Function in Deno (HTTP Range)', async (target, gzip) => {
        const before = files.requests();
        const r = await keepAliveRequest(agent, url, target, 'GET', gzip ? { 'Accept-Encoding': 'gzip' } : {});
        return { answer: fromRaw(r, gzip), reads: files.requests() - before };
      }, 8);
      expectTally(tally);
      await expectConditional(agent, url);
    } catch (e) {
      console.error(runtime.output().slice(-3000));
      throw e;
    } finally {
      agent.destroy();
      await runtime.stop();
      files.server.close();
    }
  });
});

describe('pack host glue: generations and failures', () => {
  /** An R2-like bucket over a map of objects (the test swaps `pack.json`). */
  const bucketOf = (objects: Map<string, Buffer>) => ({
    async get(key: string, o?: { range?: { offset: number; length: number } }) {
      const b = objects.get(key);
      if (!b) return null;
      const r = o?.range ? b.subarray(o.range.offset, o.range.offset + o.range.length) : b;
      return { arrayBuffer: async () => r.buffer.slice(r.byteOffset, r.byteOffset + r.byteLength) };
    },
  });
  const filesOf = (d: string) => new Map(readdirSync(d).filter((f) => f === PACK_POINTER || /\.(idx|part)$/.test(f)).map((f) => [f, readFileSync(join(d, f))] as const));
  const get = async (worker: ReturnType<typeof cloudflarePackWorker>, env: unknown, target: string) => {
    const res = await worker.fetch(new Request(new URL(target, 'http://site.test')), env as never);
    return { status: res.status, body: await res.text(), cache: res.headers.get('cache-control') };
  };

  it('a new pack.json is picked up after the re-check interval; its own _site.json drives the router; a broken new index keeps the old pack', async () => {
    // Generation B: a small pack of its own, whose _site.json caps one address of the demo.
    const packB = dir('pack-b');
    mkdirSync(packB);
    const address = readdirSync(join(tree, 'address'))[0]!.replace(/\.json$/, '');
    const w = new PackWriter(packB);
    w.add('stats.json', Buffer.from('{"generation":"b"}'));
    w.add(`address/${address}.json`, Buffer.from('{"error":"capped in b"}'));
    w.add(SITE_INFO_PATH, Buffer.from(JSON.stringify({ ...info, cappedAddresses: [address] })));
    w.finish();
    const a = filesOf(pack);
    const b = filesOf(packB);
    const objects = new Map([...a, ...b]);
    objects.set(PACK_POINTER, a.get(PACK_POINTER)!);
    let clock = 1_000_000;
    const worker = cloudflarePackWorker(info, { now: () => clock, recheckSeconds: 60 });
    const env = { BUCKET: bucketOf(objects) };
    const statsA = readFileSync(join(tree, 'stats.json'), 'utf8');
    expect((await get(worker, env, '/stats.json')).body).toBe(statsA);
    expect((await get(worker, env, `/address/${address}.json`)).status).toBe(200);

    objects.set(PACK_POINTER, b.get(PACK_POINTER)!);
    clock += 59_000;
    expect((await get(worker, env, '/stats.json')).body, 'within the interval: the open pack').toBe(statsA);
    clock += 2_000;
    expect((await get(worker, env, '/stats.json')).body, 'after it: the new index').toBe('{"generation":"b"}');
    expect(await get(worker, env, `/address/${address}.json`)).toEqual({ status: 500, body: '{"error":"capped in b"}', cache: 'public, max-age=60' });

    // A pointer to an index that is not there: the re-check fails, the open pack keeps answering.
    objects.set(PACK_POINTER, Buffer.from('{"format":"chain-snapshot-pack","version":1,"index":"00000000000000000000000000000000.idx"}\n'));
    clock += 61_000;
    expect((await get(worker, env, '/stats.json')).body).toBe('{"generation":"b"}');
  });

  it('a bucket without the pack answers 503 with a JSON error and no caching; a damaged blob 500', async () => {
    const worker = cloudflarePackWorker(info);
    expect(await get(worker, { BUCKET: bucketOf(new Map()) }, '/stats.json')).toEqual({ status: 503, body: '{"error":"Snapshot unavailable."}', cache: 'no-store' });
    // The stats.json blob's first byte flipped: it fails its CRC-32.
    const objects = filesOf(pack);
    const reader = await PackReader.open(pack);
    const rec = (await reader.lookup('stats.json'))!;
    const part = reader.parts[rec.part]!.name;
    await reader.close();
    const bytes = Buffer.from(objects.get(part)!);
    bytes[rec.offset] = bytes[rec.offset]! ^ 0xff;
    objects.set(part, bytes);
    const damaged = cloudflarePackWorker(info);
    expect(await get(damaged, { BUCKET: bucketOf(objects) }, '/stats.json')).toEqual({ status: 500, body: '{"error":"Internal error."}', cache: 'no-store' });
  });
});

describe('pack host glue: Netlify without a pack URL', () => {
  it('reads the pack from the site itself with marked sub-requests the function lets through', async () => {
    const files = await rangeServer(pack);
    const fn = netlifyPackFunction(info);
    const realFetch = globalThis.fetch;
    const seen: string[] = [];
    globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const req = new Request(input, init);
      const u = new URL(req.url);
      seen.push(u.pathname);
      // Netlify runs the function for its own sub-request too: it must pass it through.
      expect(await fn(req), u.pathname).toBeUndefined();
      expect(req.headers.get(INTERNAL_HEADER), u.pathname).toBe('1');
      expect(u.origin).toBe('https://snapshot.example');
      return realFetch(new URL(u.pathname, files.url), { headers: req.headers });
    }) as typeof fetch;
    try {
      for (const file of ['stats.json', `tx/${readdirSync(join(tree, 'tx'))[0]}`]) {
        const res = (await fn(new Request(`https://snapshot.example/${file}`)))!;
        expect(res.status, file).toBe(200);
        expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(join(tree, file))), file).toBe(true);
      }
    } finally {
      globalThis.fetch = realFetch;
      files.server.close();
    }
    expect(seen).toContain('/pack.json');
    expect(seen.some((p) => p.endsWith('.part'))).toBe(true);
  });
});

/** HEAD sends the GET's headers without a body; If-None-Match with the ETag answers 304. */
async function expectConditional(agent: Agent, url: string): Promise<void> {
  const sample = targets.filter((t) => want.get(t)!.status === 200 && /^\/(tx|block)\/[0-9a-f]{64}\.(json|bin|hex)$/.test(t)).slice(0, 6);
  expect(sample.length).toBe(6);
  for (const t of sample) {
    const get = await keepAliveRequest(agent, url, t);
    const head = await keepAliveRequest(agent, url, t, 'HEAD');
    expect(head.status, t).toBe(200);
    expect(head.body.length, t).toBe(0);
    expect(head.headers['etag'], t).toBe(get.headers['etag']);
    expect(get.headers['etag'], t).toMatch(/^"[0-9a-f]{16}-[0-9a-f]+-[0-9a-f]+-[0-9a-f]+"$/);
    const again = await keepAliveRequest(agent, url, t, 'GET', { 'If-None-Match': get.headers['etag']! });
    expect(again.status, t).toBe(304);
    expect(again.headers['cache-control'], t).toBe(want.get(t)!.cache);
  }
}
