// npm run bench:progress [-- --tx 50000 --runs 3 --dir /dev/shm --profile real|bench --weights --trace]
// How good is the whole build's ETA? Builds a builder-made Namecoin regtest chain (real-world
// profile unless --profile bench: bench/chain.ts) through the blocks-dir source `--runs` times,
// each in a child process (as `snapshot build` runs), records every progress sample, and
// compares the overall ETA the build showed at 10%, 25% and 50% of its whole time (from the
// build's call to its return) with the time really left then.
// --weights: each stage's start-up and time per unit relative to the scan's time per byte over
// its latter half (what src/runtime/build-eta.ts STAGE_WEIGHTS holds). --trace: the overall share
// and ETA at every tenth of the build, and each stage's work done against its time.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Progress, type ProgressSample } from '../src/runtime/progress.js';
import { buildSnapshot } from '../src/site/build.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { net, numberArg as arg, profileArg, writeBenchChain } from './chain.js';
import { settle } from './plain.js';

const HERE = fileURLToPath(import.meta.url);
const POINTS = [0.1, 0.25, 0.5];

/** A sample with its time since the build was called (ms). */
type Timed = ProgressSample & { atMs: number };

interface RunResult {
  seconds: number;
  samples: Timed[];
  stageSeconds: [string, number][];
}

async function child(): Promise<void> {
  const [, , , blocksDir, outDir] = process.argv as string[];
  const samples: Timed[] = [];
  const t0 = performance.now();
  // Samples keep only what the report reads (a 50k build makes a few thousand).
  const progress = new Progress(null, { onSample: (s) => samples.push({ ...s, atMs: performance.now() - t0 }) });
  const source = await openBlocksDir(blocksDir!, net);
  const report = await buildSnapshot({ source, outDir: outDir!, progress });
  const seconds = (performance.now() - t0) / 1000;
  await source.close();
  const res: RunResult = { seconds, samples, stageSeconds: report.stageSeconds };
  process.stdout.write(JSON.stringify(res));
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`;

/** The overall ETA the build showed last at or before `atMs` (undefined: none yet). */
function etaAt(samples: Timed[], atMs: number): number | undefined {
  let eta: number | undefined;
  for (const s of samples) {
    if (s.atMs > atMs) break;
    eta = s.overall?.etaSeconds;
  }
  return eta;
}

/**
 * Each stage's start-up (to its first unit of work) and time per unit after it, relative to the
 * scan's time per byte over its latter half: what STAGE_WEIGHTS holds as `fixed` and `perUnit`.
 */
function weights(r: RunResult): void {
  const fit = (stage: string, seconds: number) => {
    const mine = r.samples.filter((s) => s.stage === stage);
    const begin = mine[0]?.atMs ?? 0;
    const first = mine.find((s) => s.done > 0);
    const last = mine.filter((s) => s.total > 0).at(-1);
    if (!first || !last) return { startup: seconds, perUnit: 0, units: 0, unit: '' };
    const startup = (first.atMs - begin) / 1000;
    return { startup, perUnit: (seconds - startup) / Math.max(1, last.total - first.done), units: last.total, unit: last.unit };
  };
  // The scan's time per byte over the latter half of its time (past its warm-up), as the build measures it.
  const scanSamples = r.samples.filter((s) => s.stage === 'scan' && s.done > 0);
  const [first, last] = [scanSamples[0], scanSamples.at(-1)];
  if (!first || !last || last.unit !== 'bytes') return;
  const mid = scanSamples.findLast((s) => s.atMs <= (first.atMs + last.atMs) / 2) ?? first;
  const scan = { perUnit: (last.atMs - mid.atMs) / 1000 / (last.done - mid.done) };
  const eq = (s: number) => (s / scan.perUnit / 1000).toFixed(0);
  console.log(`  (scan: ${(scan.perUnit * 1e9).toFixed(0)} ns/byte over its latter half; in scan-byte equivalents, k = 1000)`);
  for (const [stage, seconds] of r.stageSeconds) {
    const f = fit(stage, seconds);
    const per = f.unit ? `, then ${(f.perUnit / scan.perUnit).toFixed(2)} per ${f.unit.replace(/s$/, '')} (${f.units} ${f.unit})` : '';
    console.log(`  ${stage.padEnd(15)} ${seconds.toFixed(2).padStart(7)} s: start-up ${f.startup.toFixed(2)} s = ${eq(f.startup)}k${per}`);
  }
}

function trace(r: RunResult): void {
  const marks = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9].map((f) => {
    const at = f * r.seconds * 1000;
    const s = r.samples.filter((x) => x.atMs <= at).at(-1);
    const eta = etaAt(r.samples, at);
    return `${f * 100}%: ${s?.stage ?? '-'} ${Math.round((s?.overall?.fraction ?? 0) * 100)}% ETA ${eta === undefined ? '-' : `${eta.toFixed(0)}s`} (left ${(r.seconds * (1 - f)).toFixed(0)}s)`;
  });
  console.log(`  ${marks.join('\n  ')}`);
  // Each stage's work done against its time: a straight line is what a rate assumes.
  let start = 0;
  for (const [stage, seconds] of r.stageSeconds) {
    const mine = r.samples.filter((s) => s.stage === stage);
    start = mine[0]?.atMs ?? start;
    if (seconds < 1 || !mine.some((s) => s.total > 0)) continue;
    const done = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9].map((f) => {
      const at = mine.filter((s) => s.atMs - start <= f * seconds * 1000).at(-1);
      return at && at.total ? `${Math.round((at.done / at.total) * 100)}%` : '-';
    });
    console.log(`  ${stage}: work done at 10%…90% of its time: ${done.join(' ')}`);
  }
}

async function main(): Promise<void> {
  const txCount = arg('tx', 50_000);
  const runs = arg('runs', 3);
  const dirArg = process.argv.indexOf('--dir');
  const root = mkdtempSync(join(dirArg === -1 ? tmpdir() : process.argv[dirArg + 1]!, 'snapshot-bench-progress-'));
  try {
    const blocksDir = join(root, 'blocks');
    writeBenchChain(blocksDir, { txCount, txPerBlock: 1000, profile: profileArg() });
    const errors: number[][] = POINTS.map(() => []);
    const firstEta: number[] = [];
    for (let run = 1; run <= runs; run++) {
      const out = join(root, `out${run}`);
      settle();
      const r = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', HERE, 'child', blocksDir, out], { encoding: 'utf8', maxBuffer: 1 << 28 })) as RunResult;
      rmSync(out, { recursive: true, force: true });
      rmSync(`${out}.state`, { recursive: true, force: true });
      const shown = r.samples.find((s) => s.overall?.etaSeconds !== undefined);
      if (shown) firstEta.push(shown.atMs / 1000 / r.seconds);
      const cols = POINTS.map((p, i) => {
        const eta = etaAt(r.samples, p * r.seconds * 1000);
        const left = (1 - p) * r.seconds;
        if (eta === undefined) return `${p * 100}%: no ETA`;
        errors[i]!.push(eta / left - 1);
        return `${p * 100}%: ETA ${eta.toFixed(1)} s, left ${left.toFixed(1)} s (${pct(eta / left - 1)})`;
      });
      console.log(`run ${run}: build ${r.seconds.toFixed(1)} s, overall ETA first shown at ${shown ? `${(shown.atMs / 1000).toFixed(1)} s` : 'never'}; ${cols.join('; ')}`);
      console.log(`  stages: ${r.stageSeconds.map(([s, t]) => `${s} ${t.toFixed(1)}s`).join(', ')}`);
      if (process.argv.includes('--weights')) weights(r);
      if (process.argv.includes('--trace')) trace(r);
    }
    console.log(`\noverall ETA error (ETA shown / time really left − 1) over ${runs} runs of ${txCount} txs, min / median / max:`);
    POINTS.forEach((p, i) => {
      const e = errors[i]!;
      console.log(`  at ${`${p * 100}%`.padStart(3)} of the build: ${e.length ? `${pct(Math.min(...e))} / ${pct(median(e))} / ${pct(Math.max(...e))}` : 'no ETA shown'}${e.length < runs ? ` (${runs - e.length} runs without an ETA)` : ''}`);
    });
    if (firstEta.length) console.log(`  first shown at ${firstEta.map((f) => `${(f * 100).toFixed(0)}%`).join(', ')} of the build (target: within ±25% from 25% on)`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'child') await child();
else await main();
