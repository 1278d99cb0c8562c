// Build progress: work units per stage, an overall stage counter, no rate before a stage has run a
// while, never done > total; the names and manifest stages report too.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseBlock } from '../src/chain/block.js';
import { demoChain } from '../src/builder/demo.js';
import { buildSnapshot } from '../src/site/build.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { formatProgress, MIN_RATE_MS, Progress, type ProgressSample } from '../src/runtime/progress.js';
import { demoSource } from '../src/source/demo.js';

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

describe('progress lines', () => {
  it('no rate or ETA before the stage has run MIN_RATE_MS; then rate and ETA from the mean rate', () => {
    expect(formatProgress(5, 10, 'txs', MIN_RATE_MS - 1)).toBe('5/10 txs (50%)');
    expect(formatProgress(5, 10, 'txs', 5000)).toBe('5/10 txs (50%), 1 txs/s, ETA 5s');
    expect(formatProgress(1_500_000, 6_000_000, 'bytes', 3000)).toBe('1.5 MB/6.0 MB (25%), 500.0 KB/s, ETA 9s');
    expect(formatProgress(10, 40_000, 'files', 2000)).toBe('10/40,000 files (0%), 5 files/s, ETA 2h13m');
  });

  it('never prints done above total', () => {
    expect(formatProgress(1960, 1959, 'files', 10_000)).toBe('1,959/1,959 files (100%)');
    const { progress, lines } = capture(1);
    progress.begin('manifest');
    progress.update(1960, 1959, 'files');
    expect(lines).toEqual(['manifest: 1,959/1,959 files (100%)']);
  });

  it('an overall stage counter; a plain line at most every interval off a TTY, plus the last one', () => {
    const lines: string[] = [];
    let t = 0;
    const out = { write: (s: string) => (lines.push(s), true) } as unknown as NodeJS.WritableStream;
    const p = new Progress(out, { tty: false, now: () => t });
    p.stages(['scan', 'addresses', 'manifest']);
    p.begin('addresses');
    for (let i = 1; i <= 100; i++) {
      t += 200; // 20 s in all: the first update, one per 5 s, and the last
      p.update(i, 100, 'outputs');
    }
    p.end();
    expect(lines).toEqual([
      '[2/3] addresses: 1/100 outputs (1%)\n',
      '[2/3] addresses: 26/100 outputs (26%), 5 outputs/s, ETA 15s\n',
      '[2/3] addresses: 51/100 outputs (51%), 5 outputs/s, ETA 10s\n',
      '[2/3] addresses: 76/100 outputs (76%), 5 outputs/s, ETA 5s\n',
      '[2/3] addresses: 100/100 outputs (100%)\n',
    ]);
    expect(p.stageTimes).toEqual([['addresses', 20]]);
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
    for (const stage of ['scan', 'txs and blocks', 'addresses', 'names', 'manifest']) {
      expect(lines.some((l) => l.startsWith(`[${plan.indexOf(stage) + 1}/7] ${stage}: `)), stage).toBe(true);
    }
    for (const l of lines) {
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
    expect(lines.some((l) => l.startsWith('[1/9] rollback: '))).toBe(true);
    expect(lines.some((l) => l.startsWith('[8/9] links: '))).toBe(true);
    expect(lines.some((l) => l.startsWith('[9/9] manifest: '))).toBe(true);
    expect(r.stageSeconds.map(([s]) => s)).toEqual(['rollback', 'scan', 'staging', 'txs and blocks', 'addresses', 'names', 'site files', 'links', 'manifest']);
  });
});
