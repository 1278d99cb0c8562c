// npm run bench:incremental [-- --tx 200000 --percent 1 --dir /dev/shm --profile real|bench]
// Builds a builder-made Namecoin regtest chain (blocks dir; real-world profile unless
// --profile bench: see bench/chain.ts and the README) up to (100 − p)% of
// its blocks, then extends it to the tip: time and files written by the
// incremental run compared with a full build at the tip.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSnapshot, type BuildReport } from '../src/site/build.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { net, numberArg as arg, profileArg, writeBenchChain } from './chain.js';

async function timed(blocksDir: string, outDir: string, height: number): Promise<[BuildReport, number]> {
  const source = await openBlocksDir(blocksDir, net);
  const t0 = performance.now();
  const r = await buildSnapshot({ source, outDir, height });
  const secs = (performance.now() - t0) / 1000;
  await source.close();
  return [r, secs];
}

const txCount = arg('tx', 200_000);
const percent = arg('percent', 1);
const dirArg = process.argv.indexOf('--dir');
const root = mkdtempSync(join(dirArg === -1 ? tmpdir() : process.argv[dirArg + 1]!, 'snapshot-bench-inc-'));
try {
  const blocksDir = join(root, 'blocks');
  writeBenchChain(blocksDir, { txCount, txPerBlock: 200, profile: profileArg() });
  const tip = (await (await openBlocksDir(blocksDir, net)).tip()).height;
  const start = Math.floor(tip * (1 - percent / 100));
  const [base, baseSecs] = await timed(blocksDir, join(root, 'inc'), start);
  const [inc, incSecs] = await timed(blocksDir, join(root, 'inc'), tip);
  const [full, fullSecs] = await timed(blocksDir, join(root, 'full'), tip);
  const line = (label: string, r: BuildReport, s: number) =>
    `${label.padEnd(26)} ${s.toFixed(1).padStart(7)} s  ${r.mode.padEnd(11)} written ${String(r.written).padStart(8)}  unchanged ${String(r.unchanged).padStart(8)}  deleted ${r.deleted}  (files ${r.files}, names ${r.names})`;
  console.log(`chain: ${tip + 1} blocks, ${full.txs} txs; extending ${start} → ${tip} (${tip - start} blocks, ${percent}%; ${full.txs - base.txs} txs, ${(((full.txs - base.txs) / full.txs) * 100).toFixed(1)}% of the txs)`);
  console.log(line(`full build at ${start}`, base, baseSecs));
  console.log(line(`incremental ${start}→${tip}`, inc, incSecs));
  console.log(line(`full build at ${tip}`, full, fullSecs));
  console.log(`incremental / full: time ${(incSecs / fullSecs).toFixed(3)}, files written ${(inc.written / full.written).toFixed(3)}`);
  console.log(`stages of the incremental run: ${inc.stageSeconds.map(([s, t]) => `${s} ${t.toFixed(2)}s`).join(', ')}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
