// The scan stage alone, with each number of scan threads (`npm run bench:build -- --scan-threads 1,2`):
// a full build of the bench chain (bench/chain.ts) through the blocks-dir source, stopped once
// the scan ends, `--runs` times per thread count (the counts alternate, so each sees the same
// machine). Prints the scan's wall and CPU seconds (the whole process, and its main thread
// alone: the part that stays serial however many scan threads parse) min / median / max, the
// per-core scan rate, and what that rate gives for Bitcoin mainnet on many cores.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { BuildCounts } from '../src/runtime/build-eta.js';
import { Progress } from '../src/runtime/progress.js';
import { buildSnapshot } from '../src/site/build.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { net, profileArg, writeBenchChain } from './chain.js';
import { settle } from './plain.js';

interface ScanRun {
  threads: number;
  /** Most OS threads of the process during the scan (scan threads, index write thread, writer threads, Node's own): n scan threads add n. */
  osThreads: number;
  wall: number;
  /** CPU seconds of the whole process (every thread) during the scan. */
  cpu: number;
  /** CPU seconds of the main thread during the scan. */
  mainCpu: number;
  txs: number;
  bytes: number;
}

/** CPU seconds of this process (all threads) and of its main thread (Linux: /proc/self/task/<pid>/stat, in USER_HZ ticks). */
function cpuNow(): { all: number; main: number } {
  const ru = process.resourceUsage();
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // from field 3 (state) on: utime is field 14, stime 15
  return { all: (ru.userCPUTime + ru.systemCPUTime) / 1e6, main: (Number(f[11]) + Number(f[12])) / 100 };
}

class StopAfterScan extends Error {}

/** Records the scan stage's times and stops the build when the next stage begins. */
class ScanProgress extends Progress {
  private counts: (() => BuildCounts) | undefined;
  private start: { t: number; cpu: ReturnType<typeof cpuNow> } | undefined;
  result: Omit<ScanRun, 'threads'> | undefined;

  constructor() {
    super(null);
  }

  override stages(names: readonly string[], counts?: () => BuildCounts): void {
    this.counts = counts;
    super.stages(names, counts);
  }

  private osThreads = 0;
  private sampled = 0;

  override update(done: number, total: number, unit: string): void {
    const now = performance.now();
    if (now - this.sampled > 200) {
      this.sampled = now;
      this.osThreads = Math.max(this.osThreads, readdirSync('/proc/self/task').length);
    }
    super.update(done, total, unit);
  }

  override begin(stage: string): void {
    if (stage === 'scan') this.start = { t: performance.now(), cpu: cpuNow() };
    else if (this.start) {
      const cpu = cpuNow();
      const c = this.counts!();
      this.result = { osThreads: this.osThreads, wall: (performance.now() - this.start.t) / 1000, cpu: cpu.all - this.start.cpu.all, mainCpu: cpu.main - this.start.cpu.main, txs: c.txs, bytes: c.size };
      throw new StopAfterScan('scan done');
    }
    super.begin(stage);
  }
}

/** The child: `scan-child <blocksDir> <out> <threads>`; prints its ScanRun as JSON. */
export async function scanChild(): Promise<void> {
  const [, , , blocksDir, out, n] = process.argv as string[];
  const threads = Number(n);
  const progress = new ScanProgress();
  const source = await openBlocksDir(blocksDir!, net);
  try {
    await buildSnapshot({ source, outDir: out!, progress, scanThreads: threads });
  } catch (e) {
    if (!(e instanceof StopAfterScan)) throw e;
  }
  await source.close();
  process.stdout.write(JSON.stringify({ threads, ...progress.result! }));
}

function spread(xs: number[], digits = 2): string {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0]!.toFixed(digits)} / ${median(s).toFixed(digits)} / ${s[s.length - 1]!.toFixed(digits)}`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** Bitcoin mainnet's transactions, for the projection. */
const BITCOIN_TXS = 1.2e9;

export async function measureScan(txCount: number, root: string, runs: number, counts: number[], script: string): Promise<void> {
  const blocksDir = join(root, `blocks-${txCount}`);
  writeBenchChain(blocksDir, { txCount, txPerBlock: 1000, profile: profileArg() });
  const out = join(root, 'out');
  const byCount = new Map<number, ScanRun[]>(counts.map((n) => [n, []]));
  for (let i = 0; i < runs; i++) {
    for (const n of counts) {
      for (const p of ['', '.releases', '.state']) rmSync(`${out}${p}`, { recursive: true, force: true });
      settle();
      const r = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', script, 'scan-child', blocksDir, out, String(n)], { encoding: 'utf8', maxBuffer: 1 << 24 })) as ScanRun;
      byCount.get(n)!.push(r);
      console.log(`run ${i + 1}/${runs}, --scan-threads ${n} (${r.osThreads} OS threads): scan wall ${r.wall.toFixed(2)} s, CPU ${r.cpu.toFixed(2)} s (main thread ${r.mainCpu.toFixed(2)} s), ${r.txs} txs, ${(r.bytes / 1e6).toFixed(1)} MB`);
    }
  }
  for (const p of ['', '.releases', '.state']) rmSync(`${out}${p}`, { recursive: true, force: true });
  rmSync(blocksDir, { recursive: true, force: true });
  const txs = byCount.get(counts[0]!)![0]!.txs;
  console.log(`scan of ${txs} txs; min / median / max of ${runs} runs:`);
  console.log('| scan threads | wall s | CPU s | main thread CPU s | txs/s | txs per CPU-s (per core) |');
  console.log('|---|---|---|---|---|---|');
  for (const [n, rs] of byCount) {
    console.log(`| ${n} | ${spread(rs.map((r) => r.wall))} | ${spread(rs.map((r) => r.cpu))} | ${spread(rs.map((r) => r.mainCpu))} | ${median(rs.map((r) => r.txs / r.wall)).toFixed(0)} | ${median(rs.map((r) => r.txs / r.cpu)).toFixed(0)} |`);
  }
  // The projection takes the run with the most threads: its main thread is the serial part (apply, index rows), the rest spreads over the cores.
  const most = byCount.get(Math.max(...counts))!;
  const cpuPerTx = median(most.map((r) => r.cpu / r.txs));
  const serialPerTx = median(most.map((r) => r.mainCpu / r.txs));
  const hours = (machines: number, cores: number) => Math.max((serialPerTx * BITCOIN_TXS) / machines, (cpuPerTx * BITCOIN_TXS) / (machines * cores)) / 3600;
  console.log(`projection for Bitcoin mainnet (${BITCOIN_TXS / 1e9}B txs) from the ${Math.max(...counts)}-thread runs (medians: ${(cpuPerTx * 1e6).toFixed(1)} CPU-µs/tx in all, ${(serialPerTx * 1e6).toFixed(1)} µs/tx on the main thread):`);
  console.log(`  per-core scan rate ${(1 / cpuPerTx).toFixed(0)} txs/s; the main thread alone bounds the scan at ${(1 / serialPerTx).toFixed(0)} txs/s`);
  console.log(`  1 machine × 64 cores: ${hours(1, 64).toFixed(1)} h; 16 machines × 16 cores (the chain split by height, one index each): ${hours(16, 16).toFixed(1)} h`);
}
