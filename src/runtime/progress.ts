/**
 * Progress of a long build: a live line on a TTY, a plain line every few seconds otherwise; every
 * stage prints a line when it begins.
 *
 * Stages count their work in units proportional to their time (bytes of block data for the
 * scan, transactions for rendering, address outputs, name operations, files for the manifest).
 * A stage's rate is the one over the latter half of the time since its first unit of work was
 * done (start-up costs and warm-up fade out), and is shown only once that time is MIN_RATE_MS:
 * early rates are noise. A build's lines lead with the whole build's share done and ETA
 * (build-eta.ts: the stages' units weighed by what a unit costs); other runs (verify) show the
 * stage's own ETA. `npm run bench:progress` measures the build's ETA.
 */
import { BuildEta, type BuildCounts, type Overall } from './build-eta.js';

export const MIN_RATE_MS = 2000;

/** What a stage has done at one update (every update and every stage's start, before throttling: benchmarks record it). */
export interface ProgressSample {
  stage: string;
  done: number;
  total: number;
  unit: string;
  elapsedMs: number;
  /** Seconds left in the stage at its trusted rate; undefined before there is one. */
  etaSeconds: number | undefined;
  /** The whole build's share done and ETA (builds only: see {@link Progress.stages}). */
  overall?: Overall;
}

export interface ProgressOptions {
  /** Live line (TTY) or one line every `intervalMs` (default: the stream's isTTY). */
  tty?: boolean;
  /** Non-TTY: at most one line per interval (default 5000 ms; TTY: 200 ms). */
  intervalMs?: number;
  /** Clock (tests). */
  now?: () => number;
  /** Called on every update (benchmarks). */
  onSample?: (s: ProgressSample) => void;
}

const BYTE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

function formatBytes(n: number): string {
  let i = 0;
  while (n >= 1000 && i < BYTE_UNITS.length - 1) {
    n /= 1000;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${BYTE_UNITS[i]}`;
}

function formatSeconds(s: number): string {
  s = Math.round(s);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

/**
 * `done/total unit` (bytes in B/KB/MB…), the percentage, and the rate (units per second, when
 * trusted) with the stage's ETA unless `eta` is false.
 */
export function formatProgress(done: number, total: number, unit: string, rate?: number, eta = true): string {
  total = Math.max(total, 0);
  done = Math.min(Math.max(done, 0), total);
  const bytes = unit === 'bytes';
  const fmt = (n: number) => (bytes ? formatBytes(n) : n.toLocaleString('en-US'));
  const pct = total > 0 ? ` (${Math.floor((done / total) * 100)}%)` : '';
  let line = `${bytes ? `${fmt(done)}/${fmt(total)}` : `${fmt(done)}/${fmt(total)} ${unit}`}${pct}`;
  if (rate && done < total) {
    line += `, ${bytes ? `${formatBytes(rate)}/s` : `${fmt(Math.round(rate))} ${unit}/s`}`;
    if (eta) line += `, ETA ${formatSeconds((total - done) / rate)}`;
  }
  return line;
}

const BAR = 20;

/** The whole build: `build 45%, ETA 1m10s`; on a TTY a bar in place of the word. */
export function formatOverall({ fraction, etaSeconds }: Overall, tty: boolean): string {
  const f = Math.min(Math.max(fraction ?? 0, 0), 1);
  const pct = `${Math.floor(f * 100)}%`;
  const head = tty ? `[${'#'.repeat(Math.floor(f * BAR)).padEnd(BAR, '.')}] ${pct.padStart(4)}` : `build ${pct}`;
  return etaSeconds === undefined ? head : `${head}, ETA ${formatSeconds(etaSeconds)}`;
}

export class Progress {
  private stage = '';
  private started = 0;
  private lastPrint = 0;
  private plan: readonly string[] = [];
  /** (time, done) of the current stage's updates since its first unit of work, thinned to stay small. */
  private history: [number, number][] = [];
  private eta: BuildEta | undefined;
  /** The build's share done as last shown: it never goes back when an estimate grows. */
  private shownFraction = 0;
  private readonly tty: boolean;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly opts: ProgressOptions;
  readonly stageTimes: [string, number][] = [];

  /** `out` null: silent (stage times are still kept). */
  constructor(
    private readonly out: NodeJS.WritableStream | null = process.stderr,
    opts: ProgressOptions | boolean = {},
  ) {
    if (typeof opts === 'boolean') opts = { tty: opts };
    this.opts = opts;
    this.tty = opts.tty ?? Boolean((out as NodeJS.WriteStream | null)?.isTTY);
    this.intervalMs = opts.intervalMs ?? (this.tty ? 200 : 5000);
    this.now = opts.now ?? Date.now;
  }

  /**
   * The stages this run will go through, in order: lines then say `[k/n] stage`. With `counts`
   * (a build: the index's running totals), lines lead with the whole build's share done and ETA.
   */
  stages(names: readonly string[], counts?: () => BuildCounts): void {
    this.plan = names;
    this.eta = counts && new BuildEta(names, counts);
    this.shownFraction = 0;
  }

  private label(): string {
    const k = this.plan.indexOf(this.stage);
    return k === -1 ? this.stage : `[${k + 1}/${this.plan.length}] ${this.stage}`;
  }

  begin(stage: string): void {
    this.end();
    this.stage = stage;
    this.started = this.now();
    this.history = [];
    this.eta?.begin(stage, this.started);
    const overall = this.overall(this.started, undefined);
    this.opts.onSample?.({ stage, done: 0, total: 0, unit: '', elapsedMs: 0, etaSeconds: undefined, overall });
    this.print(this.started, this.label(), overall);
  }

  end(): void {
    if (!this.stage) return;
    const now = this.now();
    this.stageTimes.push([this.stage, (now - this.started) / 1000]);
    this.eta?.end(now);
    if (this.tty) this.out?.write('\n');
    this.stage = '';
  }

  /** A one-off line (e.g. why a build is full, an RPC retry). */
  note(line: string): void {
    if (this.tty) this.out?.write(`\r\x1b[K${line}\n`);
    else this.out?.write(line + '\n');
  }

  /**
   * Units per second over the latter half of the time since the stage's first unit of work (at
   * least MIN_RATE_MS); undefined until that time is MIN_RATE_MS (or when nothing was done in it).
   */
  private rate(now: number, done: number): number | undefined {
    if (done <= 0) return undefined;
    const h = this.history;
    if (h.length === 0 || now - h[h.length - 1]![0] >= 50) h.push([now, done]);
    if (h.length > 256) this.history = h.filter((_, i) => i % 2 === 0 || i === h.length - 1);
    const first = this.history[0]!;
    if (now - first[0] < MIN_RATE_MS) return undefined;
    const from = this.history.findLast(([t]) => t <= Math.min(first[0] + (now - first[0]) / 2, now - MIN_RATE_MS)) ?? first;
    return done > from[1] ? (done - from[1]) / ((now - from[0]) / 1000) : undefined;
  }

  private overall(now: number, rate: number | undefined): Overall | undefined {
    if (!this.eta) return undefined;
    const o = this.eta.overall(now, rate, MIN_RATE_MS);
    this.shownFraction = Math.max(this.shownFraction, o.fraction ?? 0);
    return { fraction: this.shownFraction, etaSeconds: o.etaSeconds };
  }

  private print(now: number, stagePart: string, overall: Overall | undefined): void {
    if (!this.out) return;
    this.lastPrint = now;
    const line = overall ? `${formatOverall(overall, this.tty)} | ${stagePart}` : stagePart;
    if (this.tty) this.out.write(`\r\x1b[K${line}`);
    else this.out.write(line + '\n');
  }

  /** `done` of `total` units of the current stage's work. */
  update(done: number, total: number, unit: string): void {
    const now = this.now();
    done = Math.min(done, total);
    const rate = this.rate(now, done);
    this.eta?.update(done, total, unit, rate);
    const overall = this.overall(now, rate);
    const etaSeconds = rate ? (total - done) / rate : undefined;
    this.opts.onSample?.({ stage: this.stage, done, total, unit, elapsedMs: now - this.started, etaSeconds, overall });
    // One line per interval after the stage's first, and the last one.
    if (now - this.lastPrint < this.intervalMs && done < total) return;
    this.print(now, `${this.label()}: ${formatProgress(done, total, unit, rate, !this.eta)}`, overall);
  }
}
