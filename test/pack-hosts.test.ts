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
 * The runtimes are skipped with the reason when their binaries cannot run here. The machinery is
 * test/support/pack-hosts.ts (shared with test/pack-hosts-chains.test.ts, the same on real chains).
 */
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_PATH, SITE_INFO_PATH, type SiteInfo } from '../src/contract/layout.js';
import { PACK_POINTER } from '../src/contract/pack-format.js';
import { PACK_WORKER, writePackHostGlue } from '../src/hosts/pack-glue.js';
import { cloudflarePackWorker } from '../src/hosts/cloudflare-pack-worker.js';
import { INTERNAL_HEADER } from '../src/hosts/netlify-edge.js';
import { netlifyPackFunction } from '../src/hosts/netlify-pack-edge.js';
import { packFromTree } from '../src/pack/from-tree.js';
import { PackReader } from '../src/pack/reader.js';
import { PackWriter } from '../src/pack/writer.js';
import { Progress } from '../src/runtime/progress.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { tempDir } from './support/memory-builds.js';
import { answerOf, expectConditional, expectTally, hostCase, runAll, runDeno, runWorkerd, type HostCase, type TallyFloor } from './support/pack-hosts.js';
import { rangeServer } from './support/range-server.js';
import { denoBinary, workerdBinary } from './runtimes/launch.js';

const dir = tempDir('snapshot-pack-hosts-');
const silent = new Progress({ write: () => true } as unknown as NodeJS.WriteStream, false);
const BUCKET = 'snapshot-test';
const DENO = denoBinary();
const WORKERD = workerdBinary();
/** What every front end must show on the demo chain. */
const FLOOR: TallyFloor = { counted: 2000, recipes: 100, gzipAnswers: 100 };

let tree: string;
let pack: string;
let info: SiteInfo;
let c: HostCase;

beforeAll(async () => {
  tree = dir('tree');
  pack = dir('pack');
  await buildSnapshot({ source: demoSource(), outDir: tree, progress: silent });
  await packFromTree(tree, pack);
  info = JSON.parse(readFileSync(join(tree, SITE_INFO_PATH), 'utf8')) as SiteInfo;
  await writePackHostGlue(pack, info, { bucket: BUCKET });
  c = await hostCase(tree, pack, 'demo', Buffer.from('d/history'));
}, 300_000);

describe('pack host glue', () => {
  it('the targets cover the tree: every manifest path and the conformance rows', () => {
    const manifest = readFileSync(join(tree, MANIFEST_PATH), 'utf8').trim().split('\n').length;
    expect(c.targets.length).toBeGreaterThan(manifest + 2000);
    expect([...c.want.values()].filter((a) => a.status === 200).length).toBeGreaterThan(manifest / 2);
    const statuses = new Set([...c.want.values()].map((a) => a.status));
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
    const tally = await runAll(c, 'Cloudflare Worker in-process', async (target, gzip) => {
      const before = gets;
      const res = await mod.default.fetch(new Request(new URL(target, 'http://site.test'), { headers: gzip ? { 'Accept-Encoding': 'gzip, br' } : {} }), env);
      const body = Buffer.from(await res.arrayBuffer());
      return { answer: answerOf({ status: res.status, header: (n) => res.headers.get(n) ?? undefined, body }, gzip), reads: gets - before };
    });
    expectTally(c, tally, FLOOR);
  });

  it.skipIf(WORKERD.skip !== undefined)(`Cloudflare Worker in workerd with wrangler's local R2${WORKERD.skip ? ` (${WORKERD.skip})` : ''}`, { timeout: 600_000 }, async () => {
    await runWorkerd(c, 'Cloudflare Worker in workerd (local R2)', dir(), BUCKET, FLOOR, { after: (agent, url) => expectConditional(c, agent, url) });
  });

  it.skipIf(DENO.skip !== undefined)(`Netlify Edge Function in Deno over HTTP Range${DENO.skip ? ` (${DENO.skip})` : ''}`, { timeout: 300_000 }, async () => {
    await runDeno(c, 'Netlify Edge Function in Deno (HTTP Range)', DENO.path!, dir('deno-dir'), FLOOR, { after: (agent, url) => expectConditional(c, agent, url) });
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
