/**
 * The machinery of the pack host tests (test/pack-hosts.test.ts on the demo chain,
 * test/pack-hosts-chains.test.ts on real chains): the targets of a tree (every manifest path and
 * the conformance-table rows, as a platform passes them on), `snapshot serve`'s answer to each on
 * the tree (the reference), and the run of every target through a front end over the pack, plain
 * and with gzip accepted, compared with the reference and with its storage reads counted:
 *   - the pack's Cloudflare Worker in workerd with wrangler's local R2 ({@link runWorkerd});
 *   - the pack's Netlify Edge Function in Deno reading the pack by HTTP Range ({@link runDeno}).
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { expect } from 'vitest';
import { MANIFEST_PATH, SITE_INFO_PATH, type SiteInfo } from '../../src/contract/layout.js';
import { PACK_POINTER } from '../../src/contract/pack-format.js';
import { makeRouterSite, route, type RouterSite } from '../../src/contract/router.js';
import { PACK_WORKER_DIR } from '../../src/hosts/pack-glue.js';
import { startServer } from '../../src/serve/server.js';
import { startDenoNetlify, startPackWorker, type RuntimeProcess } from '../runtimes/launch.js';
import { buildTable, listFiles, namesOf } from './conformance-rows.js';
import { keepAliveRequest, type RawResponse } from './http-raw.js';
import { histogram, recipeReadBounds } from './pack-compare.js';
import { rangeServer } from './range-server.js';

const require = createRequire(import.meta.url);

export interface Answer {
  status: number;
  type: string;
  cache: string;
  cors: string;
  body: string;
}

/** What a front end answered, the body decoded when it came gzip (latin1 text: compared byte for byte). */
export function answerOf(r: { status: number; header(name: string): string | undefined; body: Buffer }, acceptGzip: boolean): Answer & { gzip: boolean } {
  const encoding = r.header('content-encoding');
  if (encoding !== undefined && !(acceptGzip && encoding === 'gzip')) throw new Error(`Content-Encoding ${encoding} for a request that ${acceptGzip ? 'accepts gzip' : 'does not accept gzip'}`);
  const body = encoding === 'gzip' ? gunzipSync(r.body) : r.body;
  return { status: r.status, type: r.header('content-type') ?? '', cache: r.header('cache-control') ?? '', cors: r.header('access-control-allow-origin') ?? '', body: body.toString('latin1'), gzip: encoding === 'gzip' };
}

export const fromRaw = (r: RawResponse, gzip: boolean) => answerOf({ status: r.status, header: (n) => r.headers[n], body: r.body }, gzip);

/** A tree, the pack made from it, and what every front end over the pack must answer. */
export interface HostCase {
  tree: string;
  pack: string;
  info: SiteInfo;
  /** Paths of the tree's `_manifest.json`, each with its leading '/'. */
  manifestPaths: string[];
  /** Request targets as an edge platform passes them on (WHATWG-parsed), each once. */
  targets: string[];
  /** `snapshot serve` on the tree: the reference answer of each target. */
  want: Map<string, Answer>;
  /** The most range reads a recipe's answer may take, by file (a file not in it is no recipe). */
  recipeBound: Map<string, number>;
}

/**
 * The case of `tree` and `pack`: the conformance rows of the tree (`richName`: the name asked in
 * every query spelling) and every manifest path, parsed as a platform does (a target no URL
 * parser accepts is left out), and `snapshot serve`'s answer to each.
 */
export async function hostCase(tree: string, pack: string, label: string, richName?: Buffer): Promise<HostCase> {
  const info = JSON.parse(readFileSync(join(tree, SITE_INFO_PATH), 'utf8')) as SiteInfo;
  const rows = buildTable({ label, dir: tree, info, names: namesOf(listFiles(tree)), richName });
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
  const targets = [...seen];
  const recipeBound = await recipeReadBounds(pack, manifestPaths.map((m) => m.slice(1)));
  const want = new Map<string, Answer>();
  const node = await startServer({ dir: tree, port: 0 });
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  try {
    for (const t of targets) {
      const { gzip: _, ...answer } = fromRaw(await keepAliveRequest(agent, node.url, t), false);
      want.set(t, answer);
    }
  } finally {
    agent.destroy();
    await node.close();
  }
  return { tree, pack, info, manifestPaths, targets, want, recipeBound };
}

export interface Tally {
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

/** A front end's answer to one target (gzip accepted or not) and the storage reads it took. */
export type Ask = (target: string, gzip: boolean) => Promise<{ answer: Answer & { gzip: boolean }; reads: number }>;

/**
 * How a front end is run. `once`: each target and gzip choice is asked once, the counted third
 * (alternately plain and with gzip accepted, each its target's first request) one at a time and
 * the rest concurrently. `after`: a further check on it.
 */
export interface RunOptions {
  once?: boolean;
  after?: After;
}

/**
 * Every target, plain and with gzip accepted, compared with the reference. First a third of the
 * targets one request at a time, each request's storage reads counted (`reads`; the first
 * request warms the pack's root), then all of them `concurrency` at a time (most answers then
 * come from the answer cache, where the runtime has one). With `once` (see {@link RunOptions})
 * no target and gzip choice is asked twice.
 */
export async function runAll(c: HostCase, front: string, ask: Ask, concurrency = 1, once = false): Promise<Tally> {
  const [tally, site]: [Tally, RouterSite] = [{ requests: 0, counted: 0, maxReads: 0, reads: 0, gzipAnswers: 0, recipeReads: [], recipeOver: [] }, makeRouterSite(c.info)];
  await ask('/stats.json', false);
  const differences: string[] = [];
  const one = async (t: string, gzip: boolean, count: boolean) => {
    const { answer, reads } = await ask(t, gzip).catch((e: unknown) => {
      throw new Error(`${front} ${t.slice(0, 120)}${gzip ? ' (gzip accepted)' : ''}: ${(e as Error).message}`, { cause: e });
    });
    const { gzip: wasGzip, ...got } = answer;
    const ref = c.want.get(t)!;
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
    const bound = r.type === 'file' ? c.recipeBound.get(r.file) : undefined;
    if (bound === undefined) tally.maxReads = Math.max(tally.maxReads, reads);
    else if (tally.recipeReads.push(reads) && reads > bound) tally.recipeOver.push(`${t}: ${reads} reads, at most ${bound}`);
  };
  const t0 = performance.now();
  const all = [false, true].flatMap((gzip) => c.targets.map((t, i) => ({ t, gzip, i })));
  const counted = once ? all.filter(({ gzip, i }) => i % 3 === 0 && gzip === (i % 6 === 3)) : all.filter(({ i }) => i % 3 === 0);
  for (const { t, gzip } of counted) await one(t, gzip, true);
  const t1 = performance.now();
  const done = new Set(counted);
  const jobs = (once ? all.filter((j) => !done.has(j)) : all).map(({ t, gzip }) => [t, gzip] as const);
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
  const s = (from: number, to: number) => `${((to - from) / 1000).toFixed(1)} s`;
  console.log(
    `pack hosts: ${front}: ${tally.requests} requests, 0 differences; ${tally.counted} counted one at a time (${s(t0, t1)}): ${tally.reads} storage reads, at most ${tally.maxReads} in one request for a stored entry; ` +
      `${tally.recipeReads.length} recipe answers, reads: count ${histogram(tally.recipeReads)}; ${tally.gzipAnswers} gzip answers; the rest ${concurrency} at a time in ${s(t1, performance.now())}`,
  );
  return tally;
}

/** Lower bounds of a run, so that a run that saw too little cannot pass. */
export interface TallyFloor {
  counted: number;
  recipes: number;
  gzipAnswers: number;
}

/** What every front end must show: every target plain and with gzip (and the counted third again unless `once`), each request within its read bound. */
export function expectTally(c: HostCase, t: Tally, floor: TallyFloor, once = false): void {
  expect(t.requests).toBe(c.targets.length * 2 + (once ? 0 : t.counted));
  expect(t.counted).toBeGreaterThan(floor.counted);
  expect(t.maxReads).toBeLessThanOrEqual(2);
  expect(t.recipeReads.length).toBeGreaterThan(floor.recipes);
  expect(t.recipeOver).toEqual([]);
  // The counting sees reads: the first request of a document needs its slot or its blob.
  expect(t.reads).toBeGreaterThan(t.counted / 4);
  expect(t.gzipAnswers).toBeGreaterThan(floor.gzipAnswers);
}

/** The objects of the pack: pack.json, the index and the parts. */
export const packObjects = (pack: string) => readdirSync(pack).filter((f) => f === PACK_POINTER || /\.(idx|part)$/.test(f));

/** A further check on a running front end (e.g. {@link expectConditional}). */
export type After = (agent: Agent, url: string) => Promise<void>;

/**
 * The pack's Cloudflare Worker (`<pack>/_pack-worker`) in workerd, its objects put in wrangler's
 * local R2 (in `scratch`, a fresh directory), every target run through it; reads counted by the
 * probe around the worker (test/fixtures/pack-worker-host.ts).
 */
export async function runWorkerd(c: HostCase, front: string, scratch: string, bucket: string, floor: TallyFloor, o: RunOptions = {}): Promise<Tally> {
  const state = join(scratch, 'wrangler-state');
  const t0 = performance.now();
  const list = join(scratch, 'r2-objects.json');
  writeFileSync(list, JSON.stringify(packObjects(c.pack).map((f) => ({ key: f, file: join(c.pack, f) }))));
  const r = spawnSync(process.execPath, [require.resolve('wrangler/bin/wrangler.js'), 'r2', 'bulk', 'put', bucket, '--filename', list, '--local', '--persist-to', state], {
    cwd: join(c.pack, PACK_WORKER_DIR),
    encoding: 'utf8',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
    timeout: 120_000,
  });
  expect(r.status, `wrangler r2 bulk put: ${r.stderr}${r.stdout}`).toBe(0);
  console.log(`pack hosts: wrangler r2 bulk put --local: ${packObjects(c.pack).length} objects in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const runtime = await startPackWorker(join(c.pack, PACK_WORKER_DIR), join(state, 'v3', 'r2'), bucket);
  return throughRuntime(c, front, floor, o, runtime, async (agent, url, target, gzip) => {
    const r = await keepAliveRequest(agent, url, target, 'GET', gzip ? { 'Accept-Encoding': 'gzip' } : {});
    return { answer: fromRaw(r, gzip), reads: Number(r.headers['x-test-bucket-gets']) };
  });
}

/** Every target through a started runtime (8 at a time), the tally checked, `o.after` run; the runtime stopped, its output shown on a failure. */
async function throughRuntime(
  c: HostCase,
  front: string,
  floor: TallyFloor,
  o: RunOptions,
  runtime: RuntimeProcess,
  ask: (agent: Agent, url: string, target: string, gzip: boolean) => ReturnType<Ask>,
  done?: () => void,
): Promise<Tally> {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  try {
    const url = runtime.urls[0]!;
    const tally = await runAll(c, front, (target, gzip) => ask(agent, url, target, gzip), 8, o.once);
    expectTally(c, tally, floor, o.once);
    await o.after?.(agent, url);
    return tally;
  } catch (e) {
    console.error(runtime.output().slice(-3000));
    throw e;
  } finally {
    agent.destroy();
    await runtime.stop();
    done?.();
  }
}

/**
 * The pack's Netlify Edge Function in Deno (test/runtimes/netlify-host.ts, the pack directory as
 * the site), reading the pack by HTTP Range from a local static server (SNAPSHOT_PACK_URL), every
 * target run through it; reads counted at that server. `denoDir`: a fresh directory.
 */
export async function runDeno(c: HostCase, front: string, deno: string, denoDir: string, floor: TallyFloor, o: RunOptions = {}): Promise<Tally> {
  const files = await rangeServer(c.pack);
  // A fresh Deno cache directory: the function's Cache API entries must not outlive this run.
  const runtime = await startDenoNetlify(deno, [c.pack], undefined, { SNAPSHOT_PACK_URL: files.url, DENO_DIR: denoDir });
  // The pointer's periodic re-read (src/hosts/pack-edge.ts) is the pack's root, not the request's.
  const reads = () => files.requests() - files.requests(PACK_POINTER);
  return throughRuntime(c, front, floor, o, runtime, async (agent, url, target, gzip) => {
    const before = reads();
    const r = await keepAliveRequest(agent, url, target, 'GET', gzip ? { 'Accept-Encoding': 'gzip' } : {});
    return { answer: fromRaw(r, gzip), reads: reads() - before };
  }, () => files.server.close());
}

/** HEAD sends the GET's headers without a body; If-None-Match with the ETag answers 304. */
export async function expectConditional(c: HostCase, agent: Agent, url: string): Promise<void> {
  const sample = c.targets.filter((t) => c.want.get(t)!.status === 200 && /^\/(tx|block)\/[0-9a-f]{64}\.(json|bin|hex)$/.test(t)).slice(0, 6);
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
    expect(again.headers['cache-control'], t).toBe(c.want.get(t)!.cache);
  }
}
