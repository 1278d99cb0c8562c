/**
 * `npm run bench:serve`: loopback load test of `snapshot serve` (no external tool needed).
 *
 * Builds the demo chain into a temp dir with `buildSnapshot` (or serves BENCH_DIR), derives the
 * request mix from the built tree's `_manifest.json` (every tx and block file in all three
 * formats, every address, every name in all 64 query variants; some hashes upper-cased, some
 * names in their natural percent-encoded spelling, a few misses), starts the server in a child
 * process (its own event loop and core) and drives it from raw keep-alive sockets for a bounded
 * time and request count. Prints req/s, p50/p99 latency and the CPU time of both processes, so
 * a saturated load generator is visible (on 2 cores the generator takes the other one). Then
 * the gzip row: the bytes the server sends for the tree's largest address document to a client
 * that accepts gzip (target: at most 20% of the file), and the time that answer took.
 * Then the pack row (demo only): the same chain built as a pack and served from it, the same
 * load test, req/s against the tree's (target ≥ 0.8×), and the pack's range reads per request
 * after warm-up, counted by replaying the request paths through the server's PackReader.
 *
 *   BENCH_SECONDS (default 10)        BENCH_CONNECTIONS (default 32)
 *   BENCH_PIPELINE (default 1: one request in flight per connection; >1 pipelines)
 *   BENCH_MAX_REQUESTS (default 2e6)  BENCH_DIR (serve an existing tree instead of the demo)
 *   BENCH_NO_CACHE=1 (server without its in-memory file cache: every file read from disk)
 *   BENCH_SERVER_NODE_ARGS (extra node flags for the server process, e.g. --cpu-prof)
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { WITH_FLAGS, decodeNamePathBytes } from '../src/contract/layout.js';
import { startServer } from '../src/serve/server.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const pipeline = Math.max(1, Number(process.env.BENCH_PIPELINE ?? 1));
const maxRequests = Number(process.env.BENCH_MAX_REQUESTS ?? 2_000_000);

if (process.argv[2] === '--server') {
  // Child: the server under test.
  const server = await startServer({ dir: process.argv[3]!, port: 0, ...(process.env.BENCH_NO_CACHE ? { cache: false } : {}) });
  process.send!({ url: server.url });
  process.on('message', (m) => {
    if (m === 'cpu') process.send!({ cpu: process.cpuUsage() });
  });
  process.on('disconnect', () => void server.close(100).then(() => process.exit(0)));
} else {
  await main();
}

/** Deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Percent-encodes name bytes as a client would (unreserved and '/' kept). */
function natural(name: Uint8Array): string {
  let s = '';
  for (const b of name) {
    const c = String.fromCharCode(b);
    s += /[A-Za-z0-9_~-]/.test(c) || b === 0x2f || (b === 0x2e && s !== '' && !s.endsWith('/')) ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return s;
}

interface Mix {
  targets: string[];
  /** The file path each target asks for (the router's lookup key), for the pack reader replay. */
  paths: string[];
  counts: Record<string, number>;
}

/** The request mix, from the files the build wrote. */
function requestMix(dir: string): Mix {
  const rand = prng(42);
  const targets: string[] = [];
  const paths: string[] = [];
  const counts: Record<string, number> = {};
  let path = '';
  const add = (kind: string, t: string) => {
    targets.push(t);
    paths.push(path);
    counts[kind] = (counts[kind] ?? 0) + 1;
  };
  for (const line of readFileSync(join(dir, '_manifest.json'), 'utf8').split('\n')) {
    path = line.split(' ')[2] ?? '';
    if (!path) continue;
    let m: RegExpExecArray | null;
    if ((m = /^(tx|block)\/([0-9a-f]{64})\.(json|bin|hex)$/.exec(path))) {
      add(m[1]!, `/${m[1]}/${rand() < 0.2 ? m[2]!.toUpperCase() : m[2]}.${m[3]}`);
    } else if (/^address\/\w+\.json$/.test(path)) {
      add('address', `/${path}`);
    } else if ((m = /^(?:v\/([a-z_-]+)\/)?name\/(.+)\.json$/.exec(path))) {
      const keys = (m[1] ?? '').split('-').filter(Boolean);
      const query = keys.map((k) => (k === 'history' ? k : `with_${k}`));
      if (rand() < 0.5) query.reverse();
      if (query.length === 6 && rand() < 0.5) query.splice(1, 5, 'with_all');
      const bytes = decodeNamePathBytes(m[2]!);
      const name = bytes && rand() < 0.3 ? natural(bytes) : m[2]!;
      add('name', `/name/${name}.json${query.length ? '?' + query.join('&') : ''}`);
    } else if (path === 'stats.json') {
      add('stats', '/stats.json');
    }
  }
  for (let i = 0; i < 20; i++) {
    path = `tx/${i.toString(16).padStart(64, '0')}.json`;
    add('miss', `/${path}`);
    path = `v/history-${WITH_FLAGS[i % 5]}/name/d/missing-${i}.json`;
    add('miss', `/name/d/missing-${i}.json?history&with_${WITH_FLAGS[i % 5]}`);
  }
  // Shuffle so every connection sees the whole mix.
  for (let i = targets.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [targets[i], targets[j]] = [targets[j]!, targets[i]!];
    [paths[i], paths[j]] = [paths[j]!, paths[i]!];
  }
  return { targets, paths, counts };
}

async function main(): Promise<void> {
  let dir = process.env.BENCH_DIR;
  let tmp: string | undefined;
  let packDir: string | undefined;
  if (!dir) {
    const { buildSnapshot } = await import('../src/site/build.js');
    const { demoSource } = await import('../src/source/demo.js');
    const { Progress } = await import('../src/runtime/progress.js');
    tmp = mkdtempSync(join(tmpdir(), 'bench-serve-'));
    dir = join(tmp, 'out');
    packDir = join(tmp, 'pack');
    const silent = { write: () => true } as unknown as NodeJS.WriteStream;
    await buildSnapshot({ source: demoSource(), outDir: dir, hosts: [], progress: new Progress(silent, false) });
    // The pack row: the same chain as a pack, served from the pack (the server sees pack.json).
    await buildSnapshot({ source: demoSource(), outDir: packDir, hosts: [], format: 'pack', progress: new Progress(silent, false) });
  }
  try {
    const mix = requestMix(dir);
    const tree = await loadTest(dir, mix, 'tree');
    if (packDir) {
      const pack = await loadTest(packDir, mix, 'pack');
      const ratio = pack.reqPerSec / tree.reqPerSec;
      console.log(`pack / tree req/s: ${ratio.toFixed(2)} (target ≥ 0.8)${ratio < 0.8 ? '   BELOW TARGET' : ''}; server CPU per request pack / tree ${(pack.cpuPerReq / tree.cpuPerReq).toFixed(2)}`);
      await packReads(packDir, mix.paths);
    }
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Range reads per request of the pack reader the server uses (src/serve/pack-files.ts: one
 * PackReader with its default slot cache, `lookup` then `get` per request, no Accept-Encoding as
 * the load generator sends none), replayed in this process over the same paths: a warm-up pass
 * over every target, then a second pass counted with the reader's own `reads`.
 */
async function packReads(dir: string, paths: string[]): Promise<void> {
  const { PackReader, answerBytes } = await import('../src/pack/reader.js');
  const reader = await PackReader.open(dir);
  try {
    // Reads per request by entry kind (stored and hex, or recipe: 2 + its groups of nearby blobs).
    const hist = { entry: new Map<number, number>(), recipe: new Map<number, number>() };
    const pass = async (tally: boolean) => {
      for (const p of paths) {
        const before = reader.reads;
        const rec = await reader.lookup(p);
        if (rec === undefined) continue;
        const a = await reader.get(p);
        if (a !== undefined) await answerBytes(a);
        if (!tally) continue;
        const h = rec.kind === 2 ? hist.recipe : hist.entry;
        const n = reader.reads - before;
        h.set(n, (h.get(n) ?? 0) + 1);
      }
    };
    await pass(false);
    const r0 = reader.reads;
    await pass(true);
    const r1 = reader.reads;
    await pass(false);
    const r2 = reader.reads;
    const show = (h: Map<number, number>) => [...h].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}: ${v}`).join(', ');
    console.log(`pack range reads per request after warm-up (PackReader replay of the ${paths.length} targets): ${((r1 - r0) / paths.length).toFixed(2)} (next pass ${((r2 - r1) / paths.length).toFixed(2)})`);
    console.log(`  by request, reads: count — stored/hex entries ${show(hist.entry)}; recipes ${show(hist.recipe)}`);
  } finally {
    await reader.close();
  }
}

interface LoadResult {
  reqPerSec: number;
  /** Server user+system µs per request. */
  cpuPerReq: number;
}

/** The load test of `snapshot serve --dir dir` (a tree, or a pack when dir has pack.json). */
async function loadTest(dir: string, { targets, counts }: Mix, label: string): Promise<LoadResult> {
  const requests = targets.map((t) => Buffer.from(`GET ${t} HTTP/1.1\r\nHost: bench\r\n\r\n`, 'latin1'));

  const child = fork(fileURLToPath(import.meta.url), ['--server', dir], {
    execArgv: ['--import', 'tsx', ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean)],
  });
  const serverUrl = await new Promise<string>((ok) => child.once('message', (m) => ok((m as { url: string }).url)));
  const serverCpu = () =>
    new Promise<NodeJS.CpuUsage>((ok) => {
      child.once('message', (m) => ok((m as { cpu: NodeJS.CpuUsage }).cpu));
      child.send('cpu');
    });
  const { hostname, port } = new URL(serverUrl);

  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let sent = 0;
  let deadline = 0;
  const CL = Buffer.from('\r\nContent-Length: ');

  /**
   * One keep-alive connection over a raw socket (node:http's client costs more CPU than the
   * server under test). Keeps `depth` requests in flight (1 = request, response, request...),
   * parses status and Content-Length in place and skips the body.
   */
  function connection(first: number, bounded: boolean, depth: number): Promise<void> {
    return new Promise((done, fail) => {
      const sock = net.connect(Number(port), hostname);
      sock.setNoDelay(true);
      let i = first;
      let buf: Buffer | undefined;
      const sentAt: number[] = [];
      let stop = false;
      const more = () => !(bounded ? performance.now() >= deadline || sent >= maxRequests : i - first >= requests.length);
      const fill = () => {
        if (stop) return;
        const batch: Buffer[] = [];
        const now = performance.now();
        while (sentAt.length < depth && more()) {
          sent++;
          sentAt.push(now);
          batch.push(requests[i++ % requests.length]!);
        }
        if (batch.length) sock.write(batch.length === 1 ? batch[0]! : Buffer.concat(batch));
        else if (sentAt.length === 0) {
          stop = true;
          sock.end();
        }
      };
      sock.on('data', (chunk: Buffer) => {
        buf = buf ? Buffer.concat([buf, chunk]) : chunk;
        let pos = 0;
        const now = performance.now();
        for (;;) {
          const end = buf.indexOf('\r\n\r\n', pos);
          if (end < 0) break;
          const cl = buf.indexOf(CL, pos);
          let len = 0;
          if (cl >= 0 && cl < end) for (let k = cl + CL.length; buf[k]! >= 0x30 && buf[k]! <= 0x39; k++) len = len * 10 + buf[k]! - 0x30;
          const total = end + 4 + len;
          if (buf.length < total) break;
          const status = (buf[pos + 9]! - 0x30) * 100 + (buf[pos + 10]! - 0x30) * 10 + (buf[pos + 11]! - 0x30);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          latencies.push(now - sentAt.shift()!);
          pos = total;
        }
        buf = pos === buf.length ? undefined : buf.subarray(pos);
        fill();
      });
      sock.on('connect', fill);
      sock.on('close', () => (stop ? done() : fail(new Error('connection closed early'))));
      sock.on('error', fail);
    });
  }

  // Warm-up (every target once, fills the server's cache), then the measured run.
  await connection(0, false, 1);
  latencies.length = 0;
  statuses.clear();
  const cpu0 = process.cpuUsage();
  const srv0 = await serverCpu();
  const start = performance.now();
  deadline = start + seconds * 1000;
  await Promise.all(Array.from({ length: connections }, (_, k) => connection(k * 37, true, pipeline)));
  const elapsed = (performance.now() - start) / 1000;
  const cpu1 = process.cpuUsage(cpu0);
  const srv1 = await serverCpu();
  const gzip = label === 'tree' ? await gzipRow(dir, hostname, Number(port)) : undefined;
  child.disconnect();

  const pctCore = (c: { user: number; system: number }) => `${Math.round((c.user + c.system) / 1e4 / elapsed)}%`;
  const srvMicros = srv1.user - srv0.user + srv1.system - srv0.system;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(2);
  const mix = Object.entries(counts).map(([k, n]) => `${k} ${n}`).join(', ');
  console.log(`snapshot serve of the ${label}${process.env.BENCH_NO_CACHE ? ' (no cache)' : ''}: ${latencies.length} requests in ${elapsed.toFixed(1)} s, ${connections} keep-alive connections × ${pipeline} in flight`);
  console.log(`  mix: ${targets.length} distinct targets (${mix})`);
  console.log(`  ${Math.round(latencies.length / elapsed)} req/s   p50 ${pct(50)} ms   p99 ${pct(99)} ms   max ${latencies[latencies.length - 1]!.toFixed(1)} ms`);
  console.log(`  statuses: ${[...statuses].map(([s, n]) => `${s}×${n}`).join(' ')}`);
  console.log(
    `  CPU (100% = one core): server ${pctCore({ user: srv1.user - srv0.user, system: srv1.system - srv0.system })}, load generator ${pctCore(cpu1)} (same machine)`,
  );
  // Robust against other load on the machine: what one fully available core would sustain.
  const perReq = srvMicros / latencies.length;
  console.log(`  server CPU per request ${perReq.toFixed(1)} µs (user+system) → ~${Math.round(1e6 / perReq)} req/s per server core`);
  if (gzip) {
    const pctOf = (100 * gzip.sent) / gzip.size;
    console.log(`  gzip: largest address document ${gzip.path} ${gzip.size} B → ${gzip.sent} B sent (${pctOf.toFixed(1)}%, target ≤ 20%) in ${gzip.ms.toFixed(1)} ms${pctOf > 20 ? '   ABOVE TARGET' : ''}`);
  }
  return { reqPerSec: latencies.length / elapsed, cpuPerReq: perReq };
}

/** The tree's largest address document asked with Accept-Encoding: gzip; the body bytes sent (chunk framing not counted). */
async function gzipRow(dir: string, host: string, port: number): Promise<{ path: string; size: number; sent: number; ms: number }> {
  let path = '';
  let size = -1;
  for (const line of readFileSync(join(dir, '_manifest.json'), 'utf8').split('\n')) {
    const p = line.split(' ')[2];
    if (p?.startsWith('address/') && statSync(join(dir, p)).size > size) [path, size] = [p, statSync(join(dir, p)).size];
  }
  const t0 = performance.now();
  const { body, encoding } = await new Promise<{ body: Buffer; encoding: string | undefined }>((ok, fail) => {
    const req = http.get({ host, port, path: `/${path}`, headers: { 'Accept-Encoding': 'gzip' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ body: Buffer.concat(chunks), encoding: res.headers['content-encoding'] }));
      res.on('error', fail);
    });
    req.on('error', fail);
  });
  const ms = performance.now() - t0;
  if (encoding !== 'gzip' || !gunzipSync(body).equals(readFileSync(join(dir, path)))) throw new Error(`gzip row: /${path} answered ${encoding ?? 'identity'}, not the file gzipped`);
  return { path, size, sent: body.length, ms };
}
