/**
 * The whole build's share done and ETA, from the stages' units of work weighed by what a unit
 * costs. Every stage costs `fixed + perUnit × units` in scan-byte equivalents (the time the scan
 * takes for one byte of block data); this machine's seconds per equivalent come from the stages
 * already done. The units of a stage not begun yet are estimated from the index's running
 * totals (txs, outputs, name operations) extrapolated to the end of the scan; once a stage
 * begins, the total it reports replaces the estimate.
 */

/** The index's running totals (the meta row's `totals`: they grow as the scan applies blocks). */
export interface BuildCounts {
  txs: number;
  txouts: number;
  nameOps: number;
  /** Bytes of block data. */
  size: number;
}

/** What a stage costs, in scan-byte equivalents: once (start-up, a fixed set of files) and per unit of its work. */
export interface StageWeight {
  fixed: number;
  perUnit: number;
  /** Its units from the build's (extrapolated) totals, before it begins. */
  estimate?: (c: BuildCounts) => number;
}

/**
 * The weights, measured on the real-world profile (`npm run bench:progress -- --weights`, 20k
 * txs, the median of 3 runs on an idle 2-core machine): a stage's start-up (to its first unit
 * of work) and its time per unit after it, divided by the scan's time per byte over the latter
 * half of the scan (past its warm-up). Ratios rather than times: they carry over to other
 * machines as far as the stages use the cores alike (on a loaded machine the render threads'
 * stages weigh up to 1.5× more), and the stages done correct the rest (the machine factor is
 * what they took).
 */
export const STAGE_WEIGHTS: Readonly<Record<string, StageWeight>> = {
  // Undoing a block (not measured: assumed to cost what scanning a mid-sized block does).
  rollback: { fixed: 0, perUnit: 50_000 },
  scan: { fixed: 80_000, perUnit: 1 },
  // Full builds: the index flushed; incremental ones: the spare release prepared.
  staging: { fixed: 10_000, perUnit: 0 },
  // The render threads start (the first task is answered late), then a tx's documents and its block's share.
  'txs and blocks': { fixed: 2_800_000, perUnit: 500, estimate: (c) => c.txs },
  // An address output: its line in its address document (the tx texts are read back).
  addresses: { fixed: 570_000, perUnit: 350, estimate: (c) => c.txouts },
  // A listed name operation: its share of its name's 64 documents (name_new is counted but not listed).
  names: { fixed: 0, perUnit: 4_000, estimate: (c) => 0.6 * c.nameOps },
  // The UI bundle, host and contract files, and the writers' last manifest rows written out.
  'site files': { fixed: 1_400_000, perUnit: 0 },
  // Incremental builds (not measured: a hard link per stale file).
  links: { fixed: 10_000, perUnit: 5 },
  // A manifest line; files: a tx's json/bin/hex, an address document per ~0.6 outputs, 64 per name (~0.6 per operation).
  manifest: { fixed: 270_000, perUnit: 3, estimate: (c) => 3 * c.txs + 0.6 * c.txouts + 40 * c.nameOps },
  // --format pack (not measured: each file read back, hashed and compressed, about three manifest lines' worth).
  pack: { fixed: 270_000, perUnit: 10, estimate: (c) => 3 * c.txs + 0.6 * c.txouts + 40 * c.nameOps },
};

/**
 * Totals per byte of block data on the real-world profile, for the estimates while the scan's
 * first batch of blocks is not yet in the index's totals.
 */
export const PER_BYTE: BuildCounts = { txs: 1 / 460, txouts: 1 / 170, nameOps: 1 / 12_000, size: 1 };

const UNKNOWN: StageWeight = { fixed: 0, perUnit: 0 };

interface StageRun {
  name: string;
  weight: StageWeight;
  startMs: number;
  endMs?: number;
  done: number;
  total?: number;
  unit?: string;
}

export interface Overall {
  /** Share of the build's estimated work done, 0…1 (undefined before the scan's size is known). */
  fraction: number | undefined;
  /** Seconds left (undefined before the scan has a trusted rate). */
  etaSeconds: number | undefined;
}

const sub = (a: BuildCounts, b: BuildCounts): BuildCounts => ({ txs: a.txs - b.txs, txouts: a.txouts - b.txouts, nameOps: a.nameOps - b.nameOps, size: a.size - b.size });

export class BuildEta {
  private readonly runs: StageRun[] = [];
  /** The totals when the scan began: this build's work is what the scan adds. */
  private base: BuildCounts | undefined;
  private scanRate: number | undefined;

  constructor(
    private readonly plan: readonly string[],
    private readonly counts: () => BuildCounts,
    private readonly weights: Readonly<Record<string, StageWeight>> = STAGE_WEIGHTS,
  ) {}

  private get current(): StageRun | undefined {
    const r = this.runs.at(-1);
    return r && r.endMs === undefined ? r : undefined;
  }

  begin(stage: string, now: number): void {
    this.end(now);
    if (stage === 'scan') this.base = { ...this.counts() };
    this.runs.push({ name: stage, weight: this.weights[stage] ?? UNKNOWN, startMs: now, done: 0 });
  }

  end(now: number): void {
    const r = this.current;
    if (r) r.endMs = now;
  }

  /** The current stage's work; `rate` its units per second once trusted (else undefined). */
  update(done: number, total: number, unit: string, rate: number | undefined): void {
    const r = this.current;
    if (!r) return;
    r.done = done;
    r.total = total;
    r.unit = unit;
    if (r.name === 'scan' && rate) this.scanRate = rate * this.bytesPerScanUnit(r);
  }

  /** Bytes of block data per unit the scan reports (1 for bytes; txs or blocks: the average so far). */
  private bytesPerScanUnit(scan: StageRun): number {
    if (scan.unit === 'bytes' || !this.base || scan.done <= 0) return 1;
    return Math.max(1, sub(this.counts(), this.base).size / scan.done);
  }

  /** The scan's run, its share done (by the index's lagging totals) and its total in bytes; undefined before its size is known. */
  private scan(): { run: StageRun; share: number; bytes: number } | undefined {
    const run = this.runs.find((r) => r.name === 'scan');
    if (!run || !this.base) return undefined;
    if (run.endMs !== undefined) return { run, share: 1, bytes: sub(this.counts(), this.base).size };
    if (!run.total) return undefined;
    const d = sub(this.counts(), this.base);
    const lagging = run.unit === 'bytes' ? d.size : run.unit === 'txs' ? d.txs : run.done;
    const share = Math.min(1, lagging / run.total);
    const bytes = run.unit === 'bytes' ? run.total : share > 0 ? d.size / share : run.unit === 'txs' ? run.total / PER_BYTE.txs : 0;
    return { run, share, bytes };
  }

  /** A stage's units: what it reported once begun, else the estimate from the extrapolated totals. */
  private units(name: string, run: StageRun | undefined, totals: BuildCounts): number {
    if (run?.total !== undefined) return name === 'scan' ? this.scan()!.bytes : run.total;
    if (run && run.endMs !== undefined) return 0; // ended without units: only its fixed cost
    return this.weights[name]?.estimate?.(totals) ?? 0;
  }

  /** Cost of a stage's work done (its fixed part, the start-up, once it has done a unit or ended). */
  private costDone(run: StageRun): number {
    const { fixed, perUnit } = run.weight;
    if (run.endMs !== undefined) return fixed + perUnit * (run.name === 'scan' ? this.scan()!.bytes : (run.total ?? 0));
    const done = run.name === 'scan' ? run.done * this.bytesPerScanUnit(run) : run.done;
    return done > 0 ? fixed + perUnit * done : 0;
  }

  /** The build's share done and the seconds left at `now`. */
  overall(now: number, currentRate: number | undefined, minRateMs: number): Overall {
    const scan = this.scan();
    if (!scan) return { fraction: undefined, etaSeconds: undefined };
    const d = scan.share > 0 ? sub(this.counts(), this.base!) : PER_BYTE;
    const scale = scan.share > 0 ? 1 / scan.share : scan.bytes;
    const totals: BuildCounts = { txs: d.txs * scale, txouts: d.txouts * scale, nameOps: d.nameOps * scale, size: scan.bytes };
    let costAll = 0;
    let costDone = 0;
    let costLeft = 0; // of the stages not begun
    for (const name of this.plan) {
      const run = this.runs.find((r) => r.name === name);
      const w = this.weights[name] ?? UNKNOWN;
      const cost = w.fixed + w.perUnit * this.units(name, run, totals);
      costAll += cost;
      if (run) costDone += Math.min(cost, this.costDone(run));
      else costLeft += cost;
    }
    const fraction = costAll > 0 ? Math.min(1, costDone / costAll) : 0;
    const cur = this.current;
    const since = scan.run.startMs;
    if (now - since < minRateMs || (scan.run.endMs === undefined && !this.scanRate)) return { fraction, etaSeconds: undefined };
    // Seconds per scan-byte equivalent: what the scan and the stages since took (the current one
    // once its rate is trusted). The scan counts at its last trusted rate: its warm-up (threads
    // starting, the JIT) is no part of what the weights compare to.
    const timed = this.runs.filter((r) => r !== scan.run && r.startMs >= since && (r.endMs !== undefined || (r === cur && currentRate)));
    const scanCost = this.costDone(scan.run);
    const scanSeconds = this.scanRate ? scanCost / this.scanRate : ((scan.run.endMs ?? now) - since) / 1000;
    const seconds = timed.reduce((s, r) => s + ((r.endMs ?? now) - r.startMs) / 1000, scanSeconds);
    const cost = timed.reduce((s, r) => s + this.costDone(r), scanCost);
    const factor = cost > 0 ? seconds / cost : 1 / this.scanRate!;
    let left = costLeft * factor;
    if (cur?.name === 'scan') left += (Math.max(0, (cur.total ?? 0) - cur.done) * this.bytesPerScanUnit(cur)) / this.scanRate!;
    else if (cur) {
      const units = this.units(cur.name, cur, totals);
      const elapsed = (now - cur.startMs) / 1000;
      // By the weights, the start-up (fixed part) eaten by the time already spent; once its own rate
      // is trusted, that rate more and more as the stage goes (the rates of bursty stages are noisy until late).
      const byWeights = Math.max(cur.weight.perUnit * Math.max(0, units - cur.done), cur.weight.fixed + cur.weight.perUnit * units - elapsed / factor) * factor;
      const share = units > 0 ? Math.min(1, cur.done / units) ** 2 : 0;
      left += currentRate ? share * (Math.max(0, units - cur.done) / currentRate) + (1 - share) * byWeights : byWeights;
    }
    return { fraction, etaSeconds: left };
  }
}
