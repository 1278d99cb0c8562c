// npm run bench:incremental [-- --tx 200000 --percent 1 --runs 3 --dir /dev/shm --profile real|bench --format pack [--series K]]
// Builds a builder-made Namecoin regtest chain (blocks dir; real-world profile unless
// --profile bench: see bench/chain.ts and docs/benchmarks.md) up to (100 − p)% of
// its blocks (a full build one block below, then one incremental block: the steady state of a
// scheduled job, with a spare release), then extends it to the tip: time and files written by
// the incremental run compared with a full build at the tip, `--runs` times (min/median/max).
// Also measures what any tool that publishes whole files must do for that extension: the
// files whose bytes changed (from the manifests before and after), written again by the plain
// writer (bench/plain.ts). That time over the full build's is the floor of incremental / full
// for documents written whole, whatever the implementation. Then the no-op re-run: the same
// height built again with nothing new (nothing written): its wall and CPU time, the part spent
// before the first stage (opening the source and the index) and in the stages. With --format
// pack, the same with `build --format pack` (the incremental run appends a generation to the
// pack): the plain-writer floor is left out, the bytes the incremental run added to the pack
// directory are printed instead. With --format pack --series K, a scheduled job's life instead:
// a pack built at tip − K, then K runs adding one block each: for each run whether it appended
// or wrote the pack whole (REPACK_GROWTH), its time, the bytes it wrote, the size and number of
// the pack's parts; then a pack built fresh at the tip for comparison.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { Progress } from '../src/runtime/progress.js';
import { buildSnapshot, type SiteBuildReport as BuildReport } from '../src/site/build.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { net, numberArg as arg, profileArg, writeBenchChain } from './chain.js';
import { manifestLines, plainWrite, settle } from './plain.js';

/** Silent progress that keeps when its first stage began (what came before is opening the index). */
class FirstStage extends Progress {
  first: number | undefined;
  constructor() {
    super(null);
  }
  override begin(stage: string): void {
    this.first ??= performance.now();
    super.begin(stage);
  }
}

interface Timing {
  /** Wall seconds; user+system CPU seconds of this process (all threads); seconds before the first stage. */
  secs: number;
  cpu: number;
  beforeStages: number;
}

async function timed(blocksDir: string, outDir: string, height: number): Promise<[BuildReport, number, Timing]> {
  const source = await openBlocksDir(blocksDir, net);
  settle();
  const progress = new FirstStage();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await buildSnapshot({ source, outDir, height, progress, format });
  const t1 = performance.now();
  const c = process.cpuUsage(c0);
  const secs = (t1 - t0) / 1000;
  await source.close();
  return [r, secs, { secs, cpu: (c.user + c.system) / 1e6, beforeStages: ((progress.first ?? t1) - t0) / 1000 }];
}

function spread(xs: number[], digits: number): string {
  const s = [...xs].sort((a, b) => a - b);
  const med = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return `${s[0]!.toFixed(digits)} / ${med.toFixed(digits)} / ${s[s.length - 1]!.toFixed(digits)}`;
}

/** --series K: K one-block runs on a pack built at tip − K (see the head of this file). */
async function series(blocksDir: string, tip: number, k: number): Promise<void> {
  const out = join(root, 'series');
  const [first, firstSecs, t0] = await timed(blocksDir, out, tip - k);
  console.log(`pack built at ${tip - k}: ${firstSecs.toFixed(1)} s (CPU ${t0.cpu.toFixed(1)} s), parts ${(first.pack!.partBytes / 1e6).toFixed(1)} MB`);
  const appends: number[] = [];
  const wholes: number[] = [];
  let maxParts = first.pack!.partBytes;
  let written = 0;
  for (let h = tip - k + 1; h <= tip; h++) {
    const [r, secs, t] = await timed(blocksDir, out, h);
    const p = r.pack!;
    (p.whole ? wholes : appends).push(secs);
    maxParts = Math.max(maxParts, p.partBytes);
    written += p.bytesWritten;
    const files = readdirSync(out).filter((f) => /\.(?:part|idx)$/.test(f)).length;
    const pack = r.stageSeconds.find(([st]) => st === 'pack')?.[1] ?? 0;
    console.log(`height ${h}: ${p.whole ? 'written whole' : 'appended    '} ${secs.toFixed(1).padStart(6)} s (CPU ${t.cpu.toFixed(1)} s, pack stage ${pack.toFixed(1)} s), wrote ${(p.bytesWritten / 1e6).toFixed(1).padStart(6)} MB, parts ${(p.partBytes / 1e6).toFixed(1).padStart(7)} MB, ${files} part and index files in --out`);
  }
  const [fresh, freshSecs] = await timed(blocksDir, join(root, 'fresh'), tip);
  const all = [...appends, ...wholes];
  console.log(
    `series of ${k} one-block runs: ${appends.length} appended (${appends.length ? spread(appends, 1) : '-'} s), ${wholes.length} written whole (${wholes.length ? spread(wholes, 1) : '-'} s); ` +
      `mean ${(all.reduce((a, b) => a + b, 0) / all.length).toFixed(1)} s a block against a fresh pack build at ${tip} of ${freshSecs.toFixed(1)} s; ` +
      `${(written / k / 1e6).toFixed(1)} MB written a block; parts at most ${(maxParts / 1e6).toFixed(1)} MB, ${(maxParts / fresh.pack!.partBytes).toFixed(2)}× the fresh pack's ${(fresh.pack!.partBytes / 1e6).toFixed(1)} MB`,
  );
}

const format = process.argv.includes('--format') && process.argv[process.argv.indexOf('--format') + 1] === 'pack' ? 'pack' : 'tree';
const txCount = arg('tx', 200_000);
const percent = arg('percent', 1);
const runs = arg('runs', 3);
const dirArg = process.argv.indexOf('--dir');
const root = mkdtempSync(join(dirArg === -1 ? tmpdir() : process.argv[dirArg + 1]!, 'snapshot-bench-inc-'));
try {
  const blocksDir = join(root, 'blocks');
  writeBenchChain(blocksDir, { txCount, txPerBlock: 200, profile: profileArg() });
  const tip = (await (await openBlocksDir(blocksDir, net)).tip()).height;
  const start = Math.floor(tip * (1 - percent / 100));
  const seriesOf = arg('series', 0);
  if (seriesOf > 0) {
    if (format !== 'pack') throw new Error('--series needs --format pack');
    await series(blocksDir, tip, seriesOf);
  }
  const line = (label: string, r: BuildReport, s: number) =>
    `${label.padEnd(26)} ${s.toFixed(1).padStart(7)} s  ${r.mode.padEnd(11)} written ${String(r.written).padStart(8)}  unchanged ${String(r.unchanged).padStart(8)}  deleted ${r.deleted}  (files ${r.files}, names ${r.names})`;
  const incs: number[] = [];
  const fulls: number[] = [];
  const ratios: number[] = [];
  const floors: number[] = [];
  const noop: Timing[] = [];
  for (let i = 0; i < (seriesOf > 0 ? 0 : runs); i++) {
    for (const d of ['inc', 'full']) for (const p of ['', '.releases', '.state']) rmSync(join(root, d + p), { recursive: true, force: true });
    // Steady state, as a scheduled job sees it: a full build, then one incremental run (the
    // first after a full build links the whole tree into staging once; it leaves the spare
    // release every later run stages into at O(change)), then the measured extension.
    const [first, firstSecs] = await timed(blocksDir, join(root, 'inc'), start - 1);
    const [base, baseSecs] = await timed(blocksDir, join(root, 'inc'), start);
    if (format === 'pack') {
      const [inc, incSecs] = await timed(blocksDir, join(root, 'inc'), tip);
      const [full, fullSecs] = await timed(blocksDir, join(root, 'full'), tip);
      if (i === 0) console.log(`chain: ${tip + 1} blocks, ${full.txs} txs; extending ${start} → ${tip} (${tip - start} blocks, ${percent}%; ${full.txs - base.txs} txs), --format pack`);
      console.log(`run ${i + 1}/${runs}`);
      console.log(line(`full build at ${start - 1}`, first, firstSecs));
      console.log(line(`incremental ${start - 1}→${start} (warm-up)`, base, baseSecs));
      console.log(line(`incremental ${start}→${tip}`, inc, incSecs));
      console.log(line(`full build at ${tip}`, full, fullSecs));
      console.log(
        `incremental / full: time ${(incSecs / fullSecs).toFixed(3)}; pack: the incremental run wrote ${(inc.pack!.bytesWritten / 1e6).toFixed(1)} MB ` +
          `(${inc.pack!.reused} entries kept, ${inc.pack!.carried} unread), a full pack ${(full.pack!.bytesWritten / 1e6).toFixed(1)} MB`,
      );
      console.log(`stages of the incremental run: ${inc.stageSeconds.map(([s, t]) => `${s} ${t.toFixed(2)}s`).join(', ')}`);
      incs.push(incSecs);
      fulls.push(fullSecs);
      ratios.push(incSecs / fullSecs);
      continue;
    }
    const before = new Set(manifestLines(join(root, 'inc', MANIFEST_PATH)));
    const [inc, incSecs] = await timed(blocksDir, join(root, 'inc'), tip);
    const after = manifestLines(join(root, 'inc', MANIFEST_PATH));
    const changed = after.filter((l) => !before.has(l)).map((l) => l.split(' '));
    before.clear();
    const changedBytes = changed.reduce((n, [, size]) => n + Number(size), 0);
    const treeBytes = after.reduce((n, l) => n + Number(l.split(' ')[1]), 0);
    settle();
    const plain = plainWrite(join(root, 'inc'), changed.map(([, , path]) => path!), join(root, 'plain'));
    rmSync(join(root, 'plain'), { recursive: true, force: true });
    const [full, fullSecs] = await timed(blocksDir, join(root, 'full'), tip);
    if (i === 0) console.log(`chain: ${tip + 1} blocks, ${full.txs} txs; extending ${start} → ${tip} (${tip - start} blocks, ${percent}%; ${full.txs - base.txs} txs, ${(((full.txs - base.txs) / full.txs) * 100).toFixed(1)}% of the txs)`);
    console.log(`run ${i + 1}/${runs}`);
    console.log(line(`full build at ${start - 1}`, first, firstSecs));
    console.log(line(`incremental ${start - 1}→${start} (warm-up)`, base, baseSecs));
    console.log(line(`incremental ${start}→${tip}`, inc, incSecs));
    console.log(line(`full build at ${tip}`, full, fullSecs));
    console.log(`incremental / full: time ${(incSecs / fullSecs).toFixed(3)}, files written ${(inc.written / full.written).toFixed(3)}`);
    console.log(
      `changed files: ${changed.length} (${(changedBytes / 1e6).toFixed(0)} MB, ${((changedBytes / treeBytes) * 100).toFixed(1)}% of the tree's bytes); ` +
        `the plain writer writes them in ${plain.seconds.toFixed(1)} s: incremental / that ${(incSecs / plain.seconds).toFixed(2)}, that / full build ${(plain.seconds / fullSecs).toFixed(3)} (the floor for whole documents)`,
    );
    floors.push(plain.seconds / fullSecs);
    console.log(`stages of the incremental run: ${inc.stageSeconds.map(([s, t]) => `${s} ${t.toFixed(2)}s`).join(', ')}`);
    // The no-op re-run: the same height again, nothing new.
    const [again, , t] = await timed(blocksDir, join(root, 'inc'), tip);
    if (again.upToDate !== true || again.written !== 0) throw new Error(`no-op re-run at ${tip}: upToDate ${again.upToDate}, ${again.written} files written`);
    console.log(`no-op re-run at ${tip}: ${t.secs.toFixed(2)} s (CPU ${t.cpu.toFixed(2)} s), upToDate, 0 written; before the first stage (opening the source and the index) ${t.beforeStages.toFixed(2)} s; stages: ${again.stageSeconds.map(([s, x]) => `${s} ${x.toFixed(2)}s`).join(', ') || 'none'}; beyond opening the index ${(t.secs - t.beforeStages).toFixed(2)} s (target < 1 s)`);
    noop.push(t);
    incs.push(incSecs);
    fulls.push(fullSecs);
    ratios.push(incSecs / fullSecs);
  }
  if (seriesOf > 0) {
    // Printed by series().
  } else if (format === 'pack') {
    console.log(`--format pack, min / median / max of ${runs} runs: incremental ${spread(incs, 1)} s, full ${spread(fulls, 1)} s, incremental / full ${spread(ratios, 3)} (target ≤ 0.05)`);
  } else {
    const beyond = noop.map((t) => t.secs - t.beforeStages);
    console.log(`no-op re-run, min / median / max of ${runs}: wall ${spread(noop.map((t) => t.secs), 2)} s, CPU ${spread(noop.map((t) => t.cpu), 2)} s, opening the index ${spread(noop.map((t) => t.beforeStages), 2)} s, beyond it ${spread(beyond, 2)} s (target < 1 s: ${Math.max(...beyond) < 1 ? 'met' : 'NOT MET'})`);
    console.log(`min / median / max of ${runs} runs: incremental ${spread(incs, 1)} s, full ${spread(fulls, 1)} s, incremental / full ${spread(ratios, 3)}, plain writer of the changed files / full ${spread(floors, 3)}`);
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
