// npm run bench:build [-- --tx 200000 --runs 3 --scale 4 --dir /dev/shm --profile real|bench]
// Builds a builder-made Namecoin regtest chain (real-world profile unless --profile bench:
// see bench/chain.ts and docs/benchmarks.md) through the blocks-dir source and
// compares it with a plain writer that writes the same files (same paths and
// bytes) with no chain work, `--runs` times (build and plain writer alternate, so both see
// the same machine), printing min/median/max of each and of the ratio. Each measured run is
// a child process, so peak RSS is its own. With --scale K, also builds a chain K× larger to
// compare ratio and RSS. Ends with a projection to Namecoin and Bitcoin mainnet from the
// measured per-tx rates. With --format pack, builds the chain as a tree and as a pack instead
// (alternating, `--runs` times): wall, CPU-s, peak RSS, files and bytes of each, the pack phase
// alone, and the pack against the targets. With --scan-threads 1,2,… (bench/scan.ts), measures
// the scan stage alone with each number of scan threads instead.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSnapshot } from '../src/site/build.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { PACK_POINTER } from '../src/contract/pack-format.js';
import { UI_FILES } from '../src/contract/paths.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { net, numberArg as arg, profileArg, writeBenchChain } from './chain.js';
import { manifestLines, plainWrite, settle } from './plain.js';
import { measureScan, scanChild } from './scan.js';

const HERE = fileURLToPath(import.meta.url);

interface RunResult {
  seconds: number;
  files: number;
  bytes: number;
  txs: number;
  maxRssMiB: number;
  /** Peak anonymous memory (heap, buffers, thread stacks): RSS less mapped file pages (LMDB's index). */
  maxAnonMiB: number;
  /** user + system CPU seconds of the whole child process (all threads). */
  cpuSeconds?: number;
  /** --format pack: files and bytes in --out; the glue dirs/files are counted apart. */
  outFiles?: number;
  outBytes?: number;
  glueFiles?: number;
  packSeconds?: number;
}

/** Samples RssAnon from /proc/self/status (Linux) every 100 ms; returns a function giving the peak in MiB. */
function anonSampler(): () => number {
  let peak = 0;
  const sample = () => {
    const m = /RssAnon:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) peak = Math.max(peak, Number(m[1]) / 1024);
  };
  const timer = setInterval(sample, 100);
  timer.unref();
  return () => {
    sample();
    clearInterval(timer);
    return peak;
  };
}

async function child(): Promise<void> {
  const [, , , mode, a, b] = process.argv as string[];
  const anonPeak = anonSampler();
  const t0 = performance.now();
  if (mode === 'seq') {
    // The pack's own files (pack.json, the index, the parts) written again one after the other.
    const paths = readdirSync(a!).filter((f) => f === PACK_POINTER || f.endsWith('.idx') || f.endsWith('.part'));
    const res: RunResult = { ...plainWrite(a!, paths, b!), txs: 0, maxRssMiB: process.resourceUsage().maxRSS / 1024, maxAnonMiB: anonPeak() };
    process.stdout.write(JSON.stringify(res));
    return;
  }
  if (mode !== 'build') {
    // The plain writer (bench/plain.ts): same paths and bytes, each chunk removed from the built
    // tree once read (the bench deletes that tree next anyway), so the two copies never both fill
    // the disk: a 200k real-profile tree (12 GB) fits on a 24 GiB tmpfs only this way.
    const paths = manifestLines(join(a!, MANIFEST_PATH)).map((l) => l.split(' ')[2]!);
    const plain = plainWrite(a!, paths, b!, true);
    const res: RunResult = { ...plain, txs: 0, maxRssMiB: process.resourceUsage().maxRSS / 1024, maxAnonMiB: anonPeak() };
    process.stdout.write(JSON.stringify(res));
    return;
  }
  const source = await openBlocksDir(a!, net);
  const format = process.argv[6] === 'pack' ? 'pack' : 'tree';
  const report = await buildSnapshot({ source, outDir: b!, format });
  const { files, bytes, txs } = report;
  await source.close();
  const seconds = (performance.now() - t0) / 1000;
  const ru = process.resourceUsage();
  const res: RunResult = { seconds, files, bytes, txs, maxRssMiB: ru.maxRSS / 1024, maxAnonMiB: anonPeak(), cpuSeconds: (ru.userCPUTime + ru.systemCPUTime) / 1e6 };
  if (process.argv[6]) {
    const out = countOut(b!, format === 'pack');
    Object.assign(res, { outFiles: out.files, outBytes: out.bytes, glueFiles: out.glue, packSeconds: report.stageSeconds.find(([s]) => s === 'pack')?.[1] });
  }
  process.stdout.write(JSON.stringify(res));
}

/** The glue a pack build writes beside the pack (docs/deploy.md: the hosts' and the browsing UI's), not part of the pack's bytes. */
const GLUE = new Set(['_pack-worker', '_netlify', 'netlify.toml', ...UI_FILES.map((f) => f.split('/')[0]!)]);

/** Files and bytes under `dir`; with `apart`, the top-level glue entries are counted apart (files only). */
function countOut(dir: string, apart: boolean): { files: number; bytes: number; glue: number } {
  const r = { files: 0, bytes: 0, glue: 0 };
  const walk = (d: string, glue: boolean) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      const g = glue || (apart && d === dir && GLUE.has(e.name));
      if (e.isDirectory()) walk(p, g);
      else if (g) r.glue++;
      else {
        r.files++;
        r.bytes += statSync(p).size;
      }
    }
  };
  walk(dir, false);
  return r;
}

function run(mode: string, a: string, b: string, format?: 'tree' | 'pack'): RunResult {
  settle();
  const out = execFileSync(process.execPath, ['--import', 'tsx', HERE, 'child', mode, a, b, ...(format ? [format] : [])], { encoding: 'utf8', maxBuffer: 1 << 24 });
  return JSON.parse(out) as RunResult;
}

function line(label: string, r: RunResult): string {
  const mb = r.bytes / 1e6;
  return `${label.padEnd(14)} ${r.seconds.toFixed(1).padStart(7)} s  ${(r.txs / r.seconds).toFixed(0).padStart(7)} tx/s  ${(r.files / r.seconds).toFixed(0).padStart(7)} files/s  ${(mb / r.seconds).toFixed(1).padStart(6)} MB/s  peak RSS ${r.maxRssMiB.toFixed(0)} MiB (anonymous ${r.maxAnonMiB.toFixed(0)} MiB)`;
}

interface Measured {
  txs: number;
  files: number;
  bytes: number;
  build: RunResult[];
  plain: RunResult[];
}

/** min / median / max of `xs`. */
function spread(xs: number[], digits = 1): string {
  const s = [...xs].sort((a, b) => a - b);
  const med = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return `${s[0]!.toFixed(digits)} / ${med.toFixed(digits)} / ${s[s.length - 1]!.toFixed(digits)}`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

async function measure(txCount: number, root: string, runs: number): Promise<Measured> {
  const blocksDir = join(root, `blocks-${txCount}`);
  writeBenchChain(blocksDir, { txCount, txPerBlock: 1000, profile: profileArg() });
  const m: Measured = { txs: 0, files: 0, bytes: 0, build: [], plain: [] };
  const out = join(root, `out-${txCount}`);
  for (let i = 0; i < runs; i++) {
    for (const p of ['', '.releases', '.state']) rmSync(`${out}${p}`, { recursive: true, force: true });
    const built = run('build', blocksDir, out);
    const plain = run('plain', out, join(root, `plain-${txCount}`));
    rmSync(join(root, `plain-${txCount}`), { recursive: true, force: true });
    console.log(`run ${i + 1}/${runs}`);
    console.log(line('  build', built));
    console.log(line('  plain writer', plain));
    console.log(`  build/plain time ratio: ${(built.seconds / plain.seconds).toFixed(2)}`);
    m.build.push(built);
    m.plain.push(plain);
    Object.assign(m, { txs: built.txs, files: built.files, bytes: built.bytes });
  }
  for (const p of ['', '.releases', '.state']) rmSync(`${out}${p}`, { recursive: true, force: true });
  rmSync(blocksDir, { recursive: true, force: true });
  console.log(`${txCount} txs, ${m.files} files, ${(m.bytes / 1e6).toFixed(0)} MB; min / median / max of ${runs} runs:`);
  console.log(`  build         ${spread(m.build.map((r) => r.seconds))} s`);
  console.log(`  plain writer  ${spread(m.plain.map((r) => r.seconds))} s`);
  console.log(`  ratio         ${spread(m.build.map((r, i) => r.seconds / m.plain[i]!.seconds), 2)}`);
  console.log(`  peak RSS      ${spread(m.build.map((r) => r.maxRssMiB), 0)} MiB (anonymous ${spread(m.build.map((r) => r.maxAnonMiB), 0)} MiB)`);
  return m;
}

const GiB = 1024 ** 3;

/** --format pack: the chain built as a tree and as a pack, alternating, `runs` times; the pack against the targets. */
async function measurePack(txCount: number, root: string, runs: number): Promise<void> {
  const blocksDir = join(root, `blocks-${txCount}`);
  writeBenchChain(blocksDir, { txCount, txPerBlock: 1000, profile: profileArg() });
  const tree: RunResult[] = [];
  const pack: RunResult[] = [];
  const seq: RunResult[] = [];
  const clean = (out: string) => {
    for (const p of ['', '.releases', '.state']) rmSync(`${out}${p}`, { recursive: true, force: true });
  };
  const show = (label: string, r: RunResult) =>
    `  ${label.padEnd(5)} wall ${r.seconds.toFixed(1).padStart(6)} s  CPU ${r.cpuSeconds!.toFixed(1).padStart(6)} s  peak RSS ${r.maxRssMiB.toFixed(0)} MiB  ${r.outFiles} files, ${(r.outBytes! / 1e6).toFixed(1)} MB` +
    (r.glueFiles ? ` (+ ${r.glueFiles} glue files)` : '') + (r.packSeconds !== undefined ? `  pack phase ${r.packSeconds.toFixed(2)} s` : '');
  for (let i = 0; i < runs; i++) {
    const t = join(root, 'tree');
    const p = join(root, 'pack');
    clean(t);
    clean(p);
    tree.push(run('build', blocksDir, t, 'tree'));
    clean(t);
    pack.push(run('build', blocksDir, p, 'pack'));
    seq.push(run('seq', p, join(root, 'seq')));
    rmSync(join(root, 'seq'), { recursive: true, force: true });
    clean(p);
    console.log(`run ${i + 1}/${runs}`);
    console.log(show('tree', tree[i]!));
    console.log(show('pack', pack[i]!));
    console.log(`  the pack's ${seq[i]!.files} files (${(seq[i]!.bytes / 1e6).toFixed(1)} MB) written again sequentially: ${seq[i]!.seconds.toFixed(2)} s`);
  }
  rmSync(blocksDir, { recursive: true, force: true });
  const pick = (rs: RunResult[], f: (r: RunResult) => number) => rs.map(f);
  console.log(`${tree[0]!.txs} txs; min / median / max of ${runs} runs:`);
  for (const [label, rs] of [['tree', tree], ['pack', pack]] as const) {
    console.log(`  ${label}: wall ${spread(pick(rs, (r) => r.seconds))} s, CPU ${spread(pick(rs, (r) => r.cpuSeconds!))} s, peak RSS ${spread(pick(rs, (r) => r.maxRssMiB), 0)} MiB, ${rs[0]!.outFiles} files, ${(rs[0]!.outBytes! / 1e6).toFixed(1)} MB` + (label === 'pack' ? ` (+ ${rs[0]!.glueFiles} glue files), pack phase ${spread(pick(rs, (r) => r.packSeconds ?? NaN), 2)} s` : ''));
  }
  const bytesRatio = pack[0]!.outBytes! / tree[0]!.outBytes!;
  const timeRatio = pack.map((r, i) => r.seconds / tree[i]!.seconds);
  const packBytes = pack[0]!.outBytes!;
  const fileLimit = Math.ceil(packBytes / GiB);
  const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');
  console.log(`targets (pack against the tree of the same run):`);
  console.log(`  pack bytes / tree bytes ${(bytesRatio * 100).toFixed(1)}% (target ≤ 15%): ${met(bytesRatio <= 0.15)}`);
  console.log(`  files ${pack[0]!.outFiles} for ${(packBytes / GiB).toFixed(3)} GiB (target ≤ one per GiB + a constant: ${fileLimit} + pack.json + index = ${fileLimit + 2}): ${met(pack[0]!.outFiles! <= fileLimit + 2)}`);
  console.log(`  build time pack / tree ${spread(timeRatio, 2)} (target ≤ 0.5): ${met(median(timeRatio) <= 0.5)}`);
  const seqRatio = pack.map((r, i) => r.seconds / seq[i]!.seconds);
  console.log(`  build time pack / writing its bytes sequentially ${spread(seqRatio, 1)} (${spread(pick(seq, (r) => r.seconds), 2)} s; target ≤ 1.5): ${met(median(seqRatio) <= 1.5)}`);
  console.log(`  peak RSS ${spread(pick(pack, (r) => r.maxRssMiB), 0)} MiB (target ≤ 1024 MiB): ${met(Math.max(...pick(pack, (r) => r.maxRssMiB)) <= 1024)}`);
}

/** Files, bytes and build hours for a chain of `txs` transactions at the measured per-tx rates (median run). */
function projection(m: Measured): void {
  const secsPerTx = median(m.build.map((r) => r.seconds)) / m.txs;
  const plainPerTx = median(m.plain.map((r) => r.seconds)) / m.txs;
  console.log(`projection from the measured rates (${m.txs} txs: ${(m.files / m.txs).toFixed(2)} files/tx, ${(m.bytes / m.txs / 1e3).toFixed(1)} kB/tx, ${(secsPerTx * 1e6).toFixed(0)} µs/tx build, ${(plainPerTx * 1e6).toFixed(0)} µs/tx plain writer):`);
  console.log('| chain | txs | files | bytes | build (2 cores) | plain writer |');
  console.log('|---|---|---|---|---|---|');
  for (const [label, txs] of [['Namecoin mainnet', 7e6], ['Bitcoin mainnet', 1.2e9]] as const) {
    const hours = (s: number) => (s * txs) / 3600;
    console.log(`| ${label} | ${(txs / 1e6).toLocaleString('en')}M | ${((m.files / m.txs) * txs / 1e6).toFixed(0)}M | ${((m.bytes / m.txs) * txs / 1e9).toFixed(0)} GB | ${hours(secsPerTx).toFixed(1)} h | ${hours(plainPerTx).toFixed(1)} h |`);
  }
}

async function main(): Promise<void> {
  const txCount = arg('tx', 200_000);
  const scale = arg('scale', 0);
  const runs = arg('runs', 3);
  // --dir /dev/shm (tmpfs) takes the disk's run-to-run noise out of the comparison.
  const dirArg = process.argv.indexOf('--dir');
  const root = mkdtempSync(join(dirArg === -1 ? tmpdir() : process.argv[dirArg + 1]!, 'snapshot-bench-'));
  console.log(`working in ${root}`);
  try {
    const si = process.argv.indexOf('--scan-threads');
    if (si !== -1) {
      await measureScan(txCount, root, runs, process.argv[si + 1]!.split(',').map(Number), HERE);
      return;
    }
    const fi = process.argv.indexOf('--format');
    if (fi !== -1 && process.argv[fi + 1] !== 'tree') {
      if (process.argv[fi + 1] !== 'pack') throw new Error(`--format: expected tree or pack, got ${process.argv[fi + 1]}`);
      await measurePack(txCount, root, runs);
      return;
    }
    const base = await measure(txCount, root, runs);
    if (scale > 1) {
      const big = await measure(txCount * scale, root, runs);
      const ratio = (m: Measured) => median(m.build.map((r, i) => r.seconds / m.plain[i]!.seconds));
      const rss = (m: Measured) => median(m.build.map((r) => r.maxRssMiB));
      const anon = (m: Measured) => median(m.build.map((r) => r.maxAnonMiB));
      const pct = (x: number, y: number) => `${((y / x - 1) * 100).toFixed(0)}%`;
      console.log(`from ${txCount} to ${txCount * scale} txs (medians): ratio ${ratio(base).toFixed(2)} → ${ratio(big).toFixed(2)} (${pct(ratio(base), ratio(big))}), peak RSS ${rss(base).toFixed(0)} → ${rss(big).toFixed(0)} MiB (${pct(rss(base), rss(big))}), anonymous ${anon(base).toFixed(0)} → ${anon(big).toFixed(0)} MiB (${pct(anon(base), anon(big))})`);
      projection(big);
    } else projection(base);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'scan-child') await scanChild();
else if (process.argv[2] === 'child') await child();
else await main();

