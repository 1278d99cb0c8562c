// npm run bench:progress [-- --tx 50000 --dir /dev/shm]
// How good is the build's ETA? Builds a builder-made Namecoin regtest chain whose blocks grow
// (from ~10 to ~1,000 txs: early blocks small, late ones large, as on a real chain) through the
// blocks-dir source, records every progress update, and for each stage compares the ETA it
// had at 10%, 25% and 50% of the stage's work with the time the stage really took from there.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBlocksDir } from '../src/builder/blkfiles.js';
import { generateChain } from '../src/builder/generate.js';
import { NETWORKS } from '../src/chain/networks.js';
import { buildSnapshot } from '../src/site/build.js';
import { MIN_RATE_MS, Progress, type ProgressSample } from '../src/runtime/progress.js';
import { openBlocksDir } from '../src/source/blkdir.js';

const net = NETWORKS['namecoin-regtest'];
const POINTS = [0.1, 0.25, 0.5];

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const txCount = arg('tx', 50_000);
  const dirArg = process.argv.indexOf('--dir');
  const root = mkdtempSync(join(dirArg === -1 ? tmpdir() : process.argv[dirArg + 1]!, 'snapshot-bench-progress-'));
  try {
    // Growing blocks: block k after maturity has ~10 + 2k txs (capped at 1,000).
    const blocksDir = join(root, 'blocks');
    const chain = generateChain({ network: net, seed: 'bench-progress', txCount, txPerBlock: (h) => Math.min(1000, 10 + 2 * Math.max(0, h - 100)) });
    const written = writeBlocksDir(chain, blocksDir, { network: net });
    console.log(`chain: ${txCount} txs in ${written.records.length} blocks (${blocksDir})`);

    const samples: ProgressSample[] = [];
    const progress = new Progress(null, { onSample: (s) => samples.push(s) });
    const source = await openBlocksDir(blocksDir, net);
    const t0 = performance.now();
    const report = await buildSnapshot({ source, outDir: join(root, 'out'), progress });
    await source.close();
    console.log(`build: ${((performance.now() - t0) / 1000).toFixed(1)} s, ${report.files} files; stages ${report.stageSeconds.map(([s, t]) => `${s} ${t.toFixed(1)}s`).join(', ')}`);

    const ratios: number[] = [];
    console.log('\nstage             unit        at   ETA said   really left   ratio');
    for (const [stage, seconds] of report.stageSeconds) {
      const mine = samples.filter((s) => s.stage === stage && s.total > 0);
      if (mine.length === 0 || seconds < 1) continue; // too short to matter (and to measure)
      if (!mine.some((s) => s.elapsedMs >= MIN_RATE_MS)) continue; // never showed an ETA
      for (const p of POINTS) {
        // the ETA as printed: lines show one once the stage has run MIN_RATE_MS
        const at = mine.find((s) => s.done >= p * s.total && s.etaSeconds !== undefined && s.elapsedMs >= MIN_RATE_MS);
        if (!at) continue;
        const left = seconds - at.elapsedMs / 1000;
        if (left <= 0.05) continue;
        const ratio = at.etaSeconds! / left;
        ratios.push(ratio);
        console.log(
          `${stage.padEnd(17)} ${at.unit.padEnd(10)} ${`${p * 100}%`.padStart(4)} ${at.etaSeconds!.toFixed(1).padStart(8)} s ${left.toFixed(1).padStart(10)} s ${ratio.toFixed(2).padStart(7)}`,
        );
      }
    }
    if (process.argv.includes('--profile')) {
      // work done against time, per stage: a straight line is what the ETA assumes
      for (const [stage, seconds] of report.stageSeconds) {
        const mine = samples.filter((s) => s.stage === stage && s.total > 0);
        if (mine.length === 0 || seconds < 1) continue;
        const marks = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9].map((f) => {
          const at = mine.find((s) => s.elapsedMs / 1000 >= f * seconds);
          return at ? `${Math.round((at.done / at.total) * 100)}%` : '-';
        });
        console.log(`${stage}: work done at 10%…90% of its time: ${marks.join(' ')}`);
      }
    }
    if (ratios.length) {
      const worst = Math.max(...ratios.map((r) => Math.max(r, 1 / r)));
      console.log(
        `\nETA / actual remaining over ${ratios.length} points: min ${Math.min(...ratios).toFixed(2)}, median ${median(ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)}; worst factor ${worst.toFixed(2)}× (target ≤ 2×)`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
