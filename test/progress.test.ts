// Build progress: work units per stage, an overall stage counter, no rate before a stage has run a
// while, never done > total; the names and manifest stages report too.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseBlock } from '../src/chain/block.js';
import { demoChain } from '../src/builder/demo.js';
import { buildSnapshot } from '../src/site/build.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { BuildEta, PER_BYTE, type BuildCounts, type StageWeight } from '../src/runtime/build-eta.js';
import { formatOverall, formatProgress, MIN_RATE_MS, Progress, type ProgressSample } from '../src/runtime/progress.js';
import { demoSource } from '../src/source/demo.js';
import { nodeArgs, REPO } from './support/helpers.js';

const root = mkdtempSync(join(tmpdir(), 'snapshot-progress-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A non-TTY Progress that prints every update into `lines`, on a clock advancing `stepMs` per reading. */
function capture(stepMs: number, samples?: ProgressSample[]): { progress: Progress; lines: string[] } {
  const lines: string[] = [];
  let t = 0;
  const out = { write: (s: string) => (lines.push(...s.split('\n').filter(Boolean)), true) } as unknown as NodeJS.WritableStream;
  const progress = new Progress(out, { tty: false, intervalMs: 0, now: () => (t += stepMs), onSample: samples ? (s) => samples.push(s) : undefined });
  return { progress, lines };
}

/** `done/total` pairs in a progress line (with byte units, in the printed unit). */
const pair = (line: string): [number, number] | undefined => {
  const m = /: ([\d,.]+)( [KMGT]?B)?\/([\d,.]+)( [KMGT]?B)?/.exec(line);
  const scale = (u: string | undefined) => 1000 ** Math.max(0, ['B', 'KB', 'MB', 'GB', 'TB'].indexOf((u ?? ' B').trim()));
  return m ? [Number(m[1]!.replace(/,/g, '')) * scale(m[2]), Number(m[3]!.replace(/,/g, '')) * scale(m[4])] : undefined;
};

/** A build's line without the whole build's share and ETA it leads with. */
const stagePart = (line: string): string => line.replace(/^build \d+%(, ETA \S+)? \| /, '');

describe('progress lines', () => {
  it('the rate (and, outside a build, the stage ETA) only when the rate is trusted', () => {
    expect(formatProgress(5, 10, 'txs')).toBe('5/10 txs (50%)');
    expect(formatProgress(5, 10, 'txs', 1)).toBe('5/10 txs (50%), 1 txs/s, ETA 5s');
    expect(formatProgress(5, 10, 'txs', 1, false)).toBe('5/10 txs (50%), 1 txs/s');
    expect(formatProgress(1_500_000, 6_000_000, 'bytes', 500_000)).toBe('1.5 MB/6.0 MB (25%), 500.0 KB/s, ETA 9s');
    expect(formatProgress(10, 40_000, 'files', 5)).toBe('10/40,000 files (0%), 5 files/s, ETA 2h13m');
    expect(formatOverall({ fraction: 0.456, etaSeconds: 70 }, false)).toBe('build 45%, ETA 1m10s');
    expect(formatOverall({ fraction: 0.5, etaSeconds: undefined }, true)).toBe('[##########..........]  50%');
  });

  it('never prints done above total', () => {
    expect(formatProgress(1960, 1959, 'files', 100)).toBe('1,959/1,959 files (100%)');
    const { progress, lines } = capture(1);
    progress.begin('manifest');
    progress.update(1960, 1959, 'files');
    expect(lines).toEqual(['manifest', 'manifest: 1,959/1,959 files (100%)']);
  });

  it('no rate or ETA before the stage has run MIN_RATE_MS since its first unit of work, however late that came', () => {
    const lines: string[] = [];
    let t = 0;
    const out = { write: (s: string) => (lines.push(s), true) } as unknown as NodeJS.WritableStream;
    const p = new Progress(out, { tty: false, intervalMs: 0, now: () => t });
    p.begin('txs and blocks');
    t += 30_000; // a long start-up: the first unit of work comes late (the mean rate would say hours)
    p.update(1, 100, 'txs');
    t += MIN_RATE_MS - 1;
    p.update(2, 100, 'txs');
    expect(lines.join('')).not.toMatch(/\/s|ETA/);
    t += 1;
    p.update(3, 100, 'txs'); // 2 txs in 2 s since the first: 1 txs/s
    expect(lines.at(-1)).toBe('txs and blocks: 3/100 txs (3%), 1 txs/s, ETA 1m37s\n');
  });

  it('a line when every stage begins, then at most one per interval off a TTY, and the last one', () => {
    const lines: string[] = [];
    let t = 0;
    const out = { write: (s: string) => (lines.push(s), true) } as unknown as NodeJS.WritableStream;
    const p = new Progress(out, { tty: false, now: () => t });
    p.stages(['scan', 'staging', 'addresses', 'manifest']);
    p.begin('staging'); // no units: its line is the one it begins with
    t += 1000;
    p.begin('addresses');
    for (let i = 1; i <= 100; i++) {
      t += 200; // 20 s in all: the line it begins with, one per 5 s, and the last
      p.update(i, 100, 'outputs');
    }
    p.end();
    expect(lines).toEqual([
      '[2/4] staging\n',
      '[3/4] addresses\n',
      '[3/4] addresses: 25/100 outputs (25%), 5 outputs/s, ETA 15s\n',
      '[3/4] addresses: 50/100 outputs (50%), 5 outputs/s, ETA 10s\n',
      '[3/4] addresses: 75/100 outputs (75%), 5 outputs/s, ETA 5s\n',
      '[3/4] addresses: 100/100 outputs (100%)\n',
    ]);
    expect(p.stageTimes).toEqual([
      ['staging', 1],
      ['addresses', 20],
    ]);
  });
});

describe('the whole build: share done and ETA from the weights', () => {
  // Scan: 1 per byte; render: 10 per tx (estimated from the totals' txs); manifest: 100 once.
  const weights: Record<string, StageWeight> = {
    scan: { fixed: 0, perUnit: 1 },
    render: { fixed: 0, perUnit: 10, estimate: (c) => c.txs },
    manifest: { fixed: 100, perUnit: 0 },
  };

  it('follows the scan, then corrects the machine factor with the stages done', () => {
    const counts: BuildCounts = { txs: 0, txouts: 0, nameOps: 0, size: 0 };
    const eta = new BuildEta(['scan', 'render', 'manifest'], () => counts, weights);
    const at = (now: number, rate?: number) => eta.overall(now * 1000, rate, MIN_RATE_MS);
    eta.begin('scan', 0);
    // 1,000 bytes at 100 bytes/s, a tx per 10 bytes: the index's totals follow.
    const scanTo = (bytes: number, rate?: number) => {
      Object.assign(counts, { size: bytes, txs: bytes / 10 });
      eta.update(bytes, 1000, 'bytes', rate);
    };
    scanTo(100);
    // All: 1,000 (scan) + 10 × 100 txs (render, extrapolated) + 100 (manifest) = 2,100.
    expect(at(1)).toEqual({ fraction: 100 / 2100, etaSeconds: undefined }); // no trusted rate yet
    scanTo(500, 100);
    // Left: 500 bytes at 100/s, then 1,100 at the scan's 0.01 s per byte.
    expect(at(5)).toEqual({ fraction: 500 / 2100, etaSeconds: 5 + 11 });
    scanTo(1000, 100);
    eta.begin('render', 10_000);
    // The scan took 10 s for 1,000: 0.01 s each; render 1,000 and manifest 100 left.
    expect(at(10)).toEqual({ fraction: 1000 / 2100, etaSeconds: 11 });
    eta.update(20, 100, 'txs', 5); // render runs at half the weights' speed: 5 txs/s
    // The factor of all done so far: (10 + 4 s) / (1,000 + 200). Render, 20% done: 80 txs at 5/s
    // weighed 0.2², 10 × 80 at the factor for the rest; the manifest at the factor.
    const o = at(14, 5);
    const factor = 14 / 1200;
    expect(o.fraction).toBeCloseTo(1200 / 2100, 9);
    expect(o.etaSeconds).toBeCloseTo(0.04 * (80 / 5) + 0.96 * (10 * 80 * factor) + 100 * factor, 9);
    eta.update(100, 100, 'txs', 5);
    eta.begin('manifest', 26_000);
    // Before the manifest's first unit: its fixed part (not done yet) at the factor of what took 26 s for 2,000.
    expect(at(26).etaSeconds).toBeCloseTo((100 * 26) / 2000, 9);
    expect(at(26).fraction).toBeCloseTo(2000 / 2100, 9);
    eta.end(27_000);
    expect(at(27).fraction).toBe(1);
  });

  it('the scan counts at its last trusted rate, not its mean: its warm-up is no part of what the weights compare to', () => {
    const counts: BuildCounts = { txs: 0, txouts: 0, nameOps: 0, size: 0 };
    const eta = new BuildEta(['scan', 'render', 'manifest'], () => counts, weights);
    eta.begin('scan', 0);
    Object.assign(counts, { size: 1000, txs: 100 });
    eta.update(1000, 1000, 'bytes', 200); // 10 s for 1,000 bytes, but 200 bytes/s at the end
    eta.begin('render', 10_000);
    expect(eta.overall(10_000, undefined, MIN_RATE_MS).etaSeconds).toBeCloseTo((10 * 100 + 100) / 200, 9);
  });

  it('estimates from the scan\'s share of bytes while the totals lag (or are not in yet)', () => {
    const counts: BuildCounts = { txs: 0, txouts: 0, nameOps: 0, size: 0 };
    const eta = new BuildEta(['scan', 'render'], () => counts, weights);
    eta.begin('scan', 0);
    eta.update(300, 1000, 'bytes', undefined);
    // No block in the totals yet: the real-world profile's txs per byte.
    const early = eta.overall(1000, undefined, MIN_RATE_MS).fraction!;
    expect(early).toBeCloseTo(300 / (1000 + 10 * (1000 * PER_BYTE.txs)), 9);
    Object.assign(counts, { size: 200, txs: 40 }); // the totals hold 200 of the 300 bytes: 40 txs there
    expect(eta.overall(1000, undefined, MIN_RATE_MS).fraction).toBeCloseTo(300 / (1000 + 10 * 200), 9);
  });
});

describe('Progress of a build', () => {
  it('lines lead with the build\'s share and ETA: from the scan\'s trusted rate on, on every stage\'s first line; the share never goes back', () => {
    const lines: string[] = [];
    let t = 0;
    const out = { write: (s: string) => (lines.push(...s.split('\n').filter(Boolean)), true) } as unknown as NodeJS.WritableStream;
    const p = new Progress(out, { tty: false, intervalMs: 0, now: () => t });
    const counts: BuildCounts = { txs: 0, txouts: 0, nameOps: 0, size: 0 };
    p.stages(['scan', 'staging', 'txs and blocks', 'manifest'], () => counts);
    p.begin('scan');
    expect(lines.at(-1)).toBe('build 0% | [1/4] scan');
    for (let i = 1; i <= 10; i++) {
      t += 500;
      // Denser blocks later: the estimate of the txs to render grows as the scan goes.
      Object.assign(counts, { size: i * 100_000, txs: i * i * 100 });
      p.update(i * 100_000, 1_000_000, 'bytes');
      if (t - 500 < MIN_RATE_MS) expect(lines.at(-1)).not.toMatch(/ETA/); // the first unit of work came at 500 ms
      else expect(lines.at(-1)).toMatch(/^build \d+%, ETA \d+s \| \[1\/4\] scan: /);
    }
    p.begin('staging');
    expect(lines.at(-1)).toMatch(/^build \d+%, ETA \d+s \| \[2\/4\] staging$/);
    t += 100;
    p.begin('txs and blocks');
    expect(lines.at(-1)).toMatch(/^build \d+%, ETA \d+s \| \[3\/4\] txs and blocks$/);
    const shares = lines.map((l) => Number(/^build (\d+)%/.exec(l)![1]));
    expect(shares).toEqual([...shares].sort((a, b) => a - b));
    expect(new Set(shares).size).toBeGreaterThan(3);
  });
});

describe('a build reports every stage by work', () => {
  it('demo chain: scan in bytes of block data, txs, outputs, name ops, files; [k/n] counter; no rate in a tiny build', async () => {
    const samples: ProgressSample[] = [];
    const { progress, lines } = capture(1, samples); // 1 ms per clock reading: far below MIN_RATE_MS
    const out = join(root, 'demo');
    const r = await buildSnapshot({ source: demoSource(), outDir: out, progress });
    const chain = demoChain();
    const last = (stage: string) => samples.filter((s) => s.stage === stage).at(-1)!;

    const scan = last('scan');
    expect(scan.unit).toBe('bytes');
    expect([scan.done, scan.total]).toEqual(Array(2).fill(chain.main.reduce((n, b) => n + b.raw.length, 0)));
    const txs = last('txs and blocks');
    expect([txs.unit, txs.done, txs.total]).toEqual(['txs', r.txs, r.txs]);
    const txsInChain = chain.main.reduce((n, b) => n + parseBlock(b.raw, { auxpow: true }).txs.length, 0);
    expect(r.txs).toBe(txsInChain);
    expect(last('addresses').unit).toBe('outputs');
    expect(last('addresses').done).toBe(last('addresses').total);
    const names = last('names');
    expect(names.unit).toBe('name ops');
    expect(names.done).toBe(names.total);
    expect(names.total).toBeGreaterThan(0);
    const manifest = last('manifest');
    const listed = readFileSync(join(out, MANIFEST_PATH), 'utf8').trim().split('\n').length;
    expect([manifest.unit, manifest.done, manifest.total]).toEqual(['files', listed, listed]);

    const plan = ['scan', 'staging', 'txs and blocks', 'addresses', 'names', 'site files', 'manifest'];
    const stageLines = lines.map(stagePart);
    plan.forEach((stage, k) => expect(stageLines, stage).toContain(`[${k + 1}/7] ${stage}`));
    for (const stage of ['scan', 'txs and blocks', 'addresses', 'names', 'manifest']) {
      expect(stageLines.some((l) => l.startsWith(`[${plan.indexOf(stage) + 1}/7] ${stage}: `)), stage).toBe(true);
    }
    for (const l of lines) {
      expect(l).toMatch(/^build \d+% \| /);
      expect(l).not.toMatch(/\/s|ETA/);
      const p = pair(l);
      if (p) expect(p[0], l).toBeLessThanOrEqual(p[1]);
    }
    expect(samples.every((s) => s.done <= s.total)).toBe(true);
    expect(r.stageSeconds.map(([s]) => s)).toEqual(plan);
  });

  it('a re-run with a rollback counts 9 stages, rollback first, the spare\'s links before the manifest', async () => {
    const { progress, lines } = capture(1);
    const out = join(root, 'demo');
    const tip = demoChain().main.length - 1;
    const r = await buildSnapshot({ source: demoSource(), outDir: out, height: tip - 2, progress });
    expect(r.rolledBackTo).toBe(tip - 2);
    const stageLines = lines.map(stagePart);
    expect(stageLines.some((l) => l.startsWith('[1/9] rollback: '))).toBe(true);
    expect(stageLines.some((l) => l.startsWith('[8/9] links: '))).toBe(true);
    expect(stageLines.some((l) => l.startsWith('[9/9] manifest: '))).toBe(true);
    expect(r.stageSeconds.map(([s]) => s)).toEqual(['rollback', 'scan', 'staging', 'txs and blocks', 'addresses', 'names', 'site files', 'links', 'manifest']);
  });
});

describe('snapshot build off a TTY', () => {
  const cli = (...args: string[]): Promise<{ code: number | null; stderr: string }> =>
    new Promise((ok) => {
      const child = execFile(process.execPath, [...nodeArgs('src/cli.ts'), ...args], { cwd: REPO, encoding: 'utf8' }, (_e, _out, stderr) => ok({ code: child.exitCode, stderr }));
    });

  /** The stages its `[k/n] stage` lines name, by k (every k of the one n), and the build's share each line leads with. */
  function stagesShown(stderr: string): { plan: string[]; shares: number[]; last: string } {
    const lines = stderr.split('\n').filter((l) => /\[\d+\/\d+\] /.test(l));
    const plan: string[] = [];
    const ns = new Set<number>();
    for (const l of lines) {
      const [, k, n, stage] = /^\[(\d+)\/(\d+)\] ([a-z ]+?)(:|$)/.exec(stagePart(l))!;
      ns.add(Number(n));
      plan[Number(k) - 1] ??= stage!;
    }
    expect([...ns]).toEqual([plan.length]);
    const shares = lines.map((l) => {
      const m = /^build (\d+)%(, ETA \S+)? \| /.exec(l);
      expect(m, l).not.toBeNull();
      return Number(m![1]);
    });
    return { plan: [...plan], shares, last: lines.at(-1)! };
  }

  it('prints a line for every stage of its plan, each with the build\'s share, which never goes back (full, then a rollback)', async () => {
    const out = join(root, 'cli');
    const full = await cli('build', '--out', out);
    expect(full.code, full.stderr).toBe(0);
    const a = stagesShown(full.stderr);
    expect(a.plan).toEqual(['scan', 'staging', 'txs and blocks', 'addresses', 'names', 'site files', 'manifest']);
    expect(a.shares).toEqual([...a.shares].sort((x, y) => x - y));
    expect(a.last).toMatch(/^build 100%(, ETA 0s)? \| \[7\/7\] manifest: /);

    const again = await cli('build', '--out', out, '--height', String(demoChain().main.length - 3));
    expect(again.code, again.stderr).toBe(0);
    const b = stagesShown(again.stderr);
    expect(b.plan).toEqual(['rollback', 'scan', 'staging', 'txs and blocks', 'addresses', 'names', 'site files', 'links', 'manifest']);
    expect(b.shares).toEqual([...b.shares].sort((x, y) => x - y));
    expect(b.last).toMatch(/^build 100%(, ETA 0s)? \| \[9\/9\] manifest: /);
  });
});
