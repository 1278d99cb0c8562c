/**
 * Progress of a long build: a live line on a TTY, a plain line every few seconds otherwise.
 *
 * Stages count their work in units proportional to their time (bytes of block data for the
 * scan, transactions for rendering, address outputs, name operations, files for the manifest),
 * so the ETA holds when blocks grow. The rate is the one over the latter half of the stage so far
 * (start-up costs and warm-up fade out). No rate or ETA is shown before a stage has run
 * MIN_RATE_MS: early rates of tiny stages are noise. `npm run bench:progress` measures the ETA.
 */
export const MIN_RATE_MS = 2000;

/** What a stage has done at one update (every update, before throttling: benchmarks record it). */
export interface ProgressSample {
  stage: string;
  done: number;
  total: number;
  unit: string;
  elapsedMs: number;
  /** Seconds left at the mean rate so far; undefined before any work is done. */
  etaSeconds: number | undefined;
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
 * `done/total unit` (bytes in B/KB/MB…), the percentage, and the rate and ETA when known
 * (`rate` in units per second; default: the mean rate since the stage began).
 */
export function formatProgress(done: number, total: number, unit: string, elapsedMs: number, rate?: number): string {
  total = Math.max(total, 0);
  done = Math.min(Math.max(done, 0), total);
  const bytes = unit === 'bytes';
  const fmt = (n: number) => (bytes ? formatBytes(n) : n.toLocaleString('en-US'));
  const pct = total > 0 ? ` (${Math.floor((done / total) * 100)}%)` : '';
  let line = `${bytes ? `${fmt(done)}/${fmt(total)}` : `${fmt(done)}/${fmt(total)} ${unit}`}${pct}`;
  if (elapsedMs >= MIN_RATE_MS && done > 0 && done < total) {
    rate ??= done / (elapsedMs / 1000);
    line += `, ${bytes ? `${formatBytes(rate)}/s` : `${fmt(Math.round(rate))} ${unit}/s`}, ETA ${formatSeconds((total - done) / rate)}`;
  }
  return line;
}

export class Progress {
  private stage = '';
  private started = 0;
  private lastPrint = 0;
  private plan: readonly string[] = [];
  /** (time, done) of the current stage's updates, thinned to stay small. */
  private history: [number, number][] = [];
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

  /** The stages this run will go through, in order: lines then say `[k/n] stage`. */
  stages(names: readonly string[]): void {
    this.plan = names;
  }

  private label(): string {
    const k = this.plan.indexOf(this.stage);
    return k === -1 ? this.stage : `[${k + 1}/${this.plan.length}] ${this.stage}`;
  }

  begin(stage: string): void {
    this.end();
    this.stage = stage;
    this.started = this.now();
    this.lastPrint = -Infinity;
    this.history = [[this.started, 0]];
  }

  end(): void {
    if (!this.stage) return;
    this.stageTimes.push([this.stage, (this.now() - this.started) / 1000]);
    if (this.tty && this.lastPrint !== -Infinity) this.out?.write('\n');
    this.stage = '';
  }

  /** A one-off line (e.g. why a build is full, an RPC retry). */
  note(line: string): void {
    if (this.tty) this.out?.write(`\r\x1b[K${line}\n`);
    else this.out?.write(line + '\n');
  }

  /** Units per second over the latter half of the stage so far (undefined before any progress). */
  private rate(now: number, done: number): number | undefined {
    const h = this.history;
    const last = h[h.length - 1]!;
    if (now - last[0] >= 50) {
      h.push([now, done]);
      if (h.length > 256) this.history = h.filter((_, i) => i % 2 === 0 || i === h.length - 1);
    }
    const from = this.history.find(([t]) => t >= this.started + (now - this.started) / 2) ?? last;
    if (now > from[0] && done > from[1]) return (done - from[1]) / ((now - from[0]) / 1000);
    return done > 0 && now > this.started ? done / ((now - this.started) / 1000) : undefined;
  }

  /** `done` of `total` units of the current stage's work. */
  update(done: number, total: number, unit: string): void {
    const now = this.now();
    const elapsedMs = now - this.started;
    done = Math.min(done, total);
    const rate = this.rate(now, done);
    this.opts.onSample?.({ stage: this.stage, done, total, unit, elapsedMs, etaSeconds: rate ? (total - done) / rate : undefined });
    if (!this.out) return;
    // The first update, then one per interval, and the last one.
    if (now - this.lastPrint < this.intervalMs && done < total) return;
    this.lastPrint = now;
    const line = `${this.label()}: ${formatProgress(done, total, unit, elapsedMs, rate)}`;
    if (this.tty) this.out.write(`\r\x1b[K${line}`);
    else this.out.write(line + '\n');
  }
}
