/**
 * `npm run bench:serve`: loopback load test of `snapshot serve` (no external tool needed).
 * Writes a test tree (or serves BENCH_DIR), then runs keep-alive node:http clients for a
 * bounded time and request count over a mix of tx, block, address and name-variant requests
 * (plus misses), and prints req/s and p50/p99 latency.
 *   BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 64), BENCH_MAX_REQUESTS (default 2e6)
 */
import { fork } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { ALL_NAME_VARIANTS, WITH_FLAGS, encodeNamePath } from '../src/site/layout.js';
import { startServer } from '../src/serve/server.js';
import { writeTestTree } from '../test/site-tree.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const maxRequests = Number(process.env.BENCH_MAX_REQUESTS ?? 2_000_000);

if (process.argv[2] === '--server') {
  // Child: the server under test, in its own process (own event loop and core).
  const server = await startServer({ dir: process.argv[3]!, port: 0 });
  process.send!(server.url);
  process.on('disconnect', () => void server.close().then(() => process.exit(0)));
} else {
  await main();
}

async function main(): Promise<void> {
const tree = await writeTestTree({ hosts: [] });
const child = fork(fileURLToPath(import.meta.url), ['--server', tree.dir], { execArgv: ['--import', 'tsx'] });
const serverUrl = await new Promise<string>((ok) => child.once('message', (m) => ok(String(m))));

const targets: string[] = [];
for (const id of tree.txids) for (const ext of ['json', 'bin', 'hex']) targets.push(`/tx/${id}.${ext}`);
for (const id of tree.blocks) for (const ext of ['json', 'bin', 'hex']) targets.push(`/block/${id}.${ext}`);
for (const a of tree.addresses) targets.push(`/address/${a}.json`);
for (const n of tree.names.slice(0, 3)) {
  const enc = encodeNamePath(n);
  ALL_NAME_VARIANTS.forEach((v, i) => {
    if (i % 4) return;
    const q = [...(v.history ? ['history'] : []), ...WITH_FLAGS.filter((f) => v.with.has(f)).map((f) => `with_${f}`)].join('&');
    targets.push(`/name/${enc}.json${q ? '?' + q : ''}`);
  });
}
targets.push('/stats.json', `/tx/${'00'.repeat(32)}.json`, '/name/d/missing.json?history');

const { hostname, port } = new URL(serverUrl);
const latencies: number[] = [];
const statuses = new Map<number, number>();
let sent = 0;
let deadline = 0;

/**
 * One keep-alive connection over a raw socket (node:http's client costs more CPU than the
 * server under test): send a request, parse status + Content-Length, read the body, repeat.
 */
function connection(first: number, bounded: boolean): Promise<void> {
  return new Promise((done, fail) => {
    const sock = net.connect(Number(port), hostname);
    sock.setNoDelay(true);
    let i = first;
    let buf = Buffer.alloc(0);
    let t0 = 0;
    let stop = false;
    const next = () => {
      if ((bounded && (performance.now() >= deadline || sent >= maxRequests)) || (!bounded && i - first >= targets.length)) {
        stop = true;
        sock.end();
        return;
      }
      sent++;
      t0 = performance.now();
      sock.write(`GET ${targets[i++ % targets.length]} HTTP/1.1\r\nHost: bench\r\n\r\n`);
    };
    sock.on('data', (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const m = /\r\ncontent-length: *(\d+)/i.exec(head);
        const total = end + 4 + (m ? Number(m[1]) : 0);
        if (buf.length < total) return;
        const status = Number(head.slice(9, 12));
        buf = buf.subarray(total);
        latencies.push(performance.now() - t0);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        next();
      }
    });
    sock.on('connect', next);
    sock.on('close', () => (stop ? done() : fail(new Error('connection closed early'))));
    sock.on('error', fail);
  });
}

// Warm-up, then the measured run.
await connection(0, false);
latencies.length = 0;
statuses.clear();
const start = performance.now();
deadline = start + seconds * 1000;
await Promise.all(Array.from({ length: connections }, (_, k) => connection(k * 7, true)));
const elapsed = (performance.now() - start) / 1000;
child.disconnect();

latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(2);
console.log(`snapshot serve: ${latencies.length} requests in ${elapsed.toFixed(1)} s over ${connections} keep-alive connections, ${targets.length} distinct targets`);
console.log(`  ${Math.round(latencies.length / elapsed)} req/s   p50 ${pct(50)} ms   p99 ${pct(99)} ms   max ${latencies[latencies.length - 1]!.toFixed(1)} ms`);
console.log(`  statuses: ${[...statuses].map(([s, n]) => `${s}×${n}`).join(' ')}`);
console.log('  (server in a child process; the load generator shares the machine\'s cores)');
}
