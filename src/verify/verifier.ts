/** The verifier's state and problem reporting; the checks live in one file per kind. */
import { join } from 'node:path';
import { type Network } from '../chain/networks.js';
import { TwoGenerationCache } from '../chain/two-gen-cache.js';
import { txPath } from '../contract/layout.js';
import { OTHER_PROBLEM, SYMLINK_PROBLEM, lstatOrUndefined, readRegular } from './files.js';
import { HEX64, arr, isObj, outpoint } from './values.js';

export interface VerifyProblem {
  /** Path below the snapshot dir ('/'-separated) the problem is about. */
  file: string;
  message: string;
}

export interface VerifyOptions {
  /** Keep up to 100000 problems in the report instead of 1000 (all are counted either way). */
  verbose?: boolean;
  /** Explicit cap on the problems kept in the report. */
  maxProblems?: number;
  /** Called now and then: the phase, items done and the expected total. */
  onProgress?: (stage: string, done: number, total: number) => void;
}

export interface VerifyReport {
  ok: boolean;
  dir: string;
  network?: string;
  height?: number;
  tip?: string;
  counts: {
    /** Lines of the manifest. */
    manifestEntries: number;
    /** Files found in the tree (without `_manifest.json`). */
    filesOnDisk: number;
    /** Bytes of the files checked against the manifest. */
    bytes: number;
    jsonFiles: number;
    mainBlocks: number;
    offChainBlocks: number;
    txs: number;
    addresses: number;
    cappedAddresses: number;
    names: number;
    /** next_in / prev_out pairs checked (each direction counts once). */
    links: number;
  };
  /** Total number of problems found (the list may be shorter, see {@link VerifyOptions.maxProblems}). */
  problemCount: number;
  problems: VerifyProblem[];
  seconds: number;
}

/**
 * Block hashes of the main chain, 32 bytes each by height, with a sorted index for lookups.
 * Filled from the tip down; `lowest` is the lowest height the walk reached.
 */
export class MainChain {
  readonly hashes: Buffer;
  lowest: number;
  private order = new Uint32Array(0);

  constructor(readonly height: number) {
    this.hashes = Buffer.alloc(32 * (height + 1));
    this.lowest = height + 1;
  }

  set(h: number, hex: string): void {
    this.hashes.write(hex, 32 * h, 'hex');
    this.lowest = Math.min(this.lowest, h);
  }

  get complete(): boolean {
    return this.lowest === 0;
  }

  /** Builds the lookup index once the walk is over. */
  seal(): void {
    const n = this.height + 1 - this.lowest;
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = this.lowest + i;
    const hs = this.hashes;
    order.sort((a, b) => hs.compare(hs, 32 * b, 32 * b + 32, 32 * a, 32 * a + 32));
    this.order = order;
  }

  hashAt(h: number): string | undefined {
    if (h < this.lowest || h > this.height) return undefined;
    return this.hashes.toString('hex', 32 * h, 32 * h + 32);
  }

  heightOf(hex: string): number | undefined {
    if (!HEX64.test(hex)) return undefined;
    const key = Buffer.from(hex, 'hex');
    let lo = 0;
    let hi = this.order.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const h = this.order[mid]!;
      const c = key.compare(this.hashes, 32 * h, 32 * h + 32);
      if (c === 0) return h;
      if (c < 0) hi = mid - 1;
      else lo = mid + 1;
    }
    return undefined;
  }
}

/** What the link and address checks need of a /tx document. */
export interface TxLinks {
  /** Each input's prev_out as "hash:n" ('' when malformed). */
  ins: string[];
  /** Each output's address, value and next_in ("hash:n", or undefined). */
  outs: { address: unknown; value: unknown; next: string | undefined }[];
}

export function pointText(v: unknown): string | undefined {
  const p = outpoint(v);
  return p ? `${p.hash}:${p.n}` : v === undefined ? undefined : '';
}

export function txLinks(doc: unknown): TxLinks {
  if (!isObj(doc)) return { ins: [], outs: [] };
  return {
    ins: arr(doc.in).map((i) => (isObj(i) ? (pointText(i.prev_out) ?? '') : '')),
    outs: arr(doc.out).map((o) => (isObj(o) ? { address: o.address, value: o.value, next: pointText(o.next_in) } : { address: undefined, value: undefined, next: '' })),
  };
}

/** {@link TxLinks} of /tx documents by txid, least recently used evicted; `null` = no such file. */
export class TxCache {
  /** Between `limit` / 2 and `limit` documents. */
  private readonly map: TwoGenerationCache<string, TxLinks | null>;

  constructor(
    private readonly load: (txid: string) => TxLinks | null,
    limit = 50_000,
  ) {
    this.map = new TwoGenerationCache(Math.max(1, Math.floor(limit / 2)));
  }

  get(txid: string): TxLinks | null {
    const hit = this.map.get(txid);
    if (hit !== undefined) return hit;
    const doc = this.load(txid);
    this.map.set(txid, doc);
    return doc;
  }
}

export class Verifier {
  readonly problems: VerifyProblem[] = [];
  problemCount = 0;
  readonly counts: VerifyReport['counts'] = {
    manifestEntries: 0,
    filesOnDisk: 0,
    bytes: 0,
    jsonFiles: 0,
    mainBlocks: 0,
    offChainBlocks: 0,
    txs: 0,
    addresses: 0,
    cappedAddresses: 0,
    names: 0,
    links: 0,
  };
  net: Network | undefined;
  site: { network: string; height: number; tip: string; capped: Set<string> } | undefined;
  chain: MainChain | undefined;
  /** Sum of n_tx over the main chain (from the walk). */
  mainTxs = 0;
  /** Tx documents whose block lists them (the owner occurrence). */
  ownedTxs = 0;
  /** Tx documents whose `block`/`blocknumber` name a main-chain block. */
  placedTxs = 0;
  /** Manifest entries whose file exists. */
  presentEntries = 0;
  /** Heights whose block-height document was seen (1), sized on the first one. */
  heightDocs: Uint8Array | undefined;
  /** Capped address files seen. */
  readonly cappedSeen = new Set<string>();
  readonly txCache: TxCache;

  constructor(
    readonly dir: string,
    readonly maxProblems: number,
    readonly onProgress: VerifyOptions['onProgress'],
  ) {
    this.txCache = new TxCache((txid) => this.loadTx(txid));
  }

  /** Files already reported missing (several checks look for the same file). */
  private readonly missing = new Set<string>();

  problem(file: string, message: string): void {
    this.problemCount++;
    if (this.problems.length < this.maxProblems) this.problems.push({ file, message });
  }

  abs(rel: string): string {
    return join(this.dir, rel);
  }

  /**
   * File bytes, or undefined when the file is absent (reported as `missing` when given) or is
   * not a regular file (always reported).
   */
  readBytes(rel: string, missing?: string): Buffer | undefined {
    const kept = this.recent.get(rel);
    if (kept) {
      this.recent.delete(rel);
      return kept;
    }
    const got = readRegular(this.abs(rel));
    if (Buffer.isBuffer(got)) return got;
    if (got === 'symlink') this.missingProblem(rel, SYMLINK_PROBLEM);
    else if (got === 'other') this.missingProblem(rel, OTHER_PROBLEM);
    else if (missing !== undefined) this.missingProblem(rel, got === 'missing' ? missing : `cannot be read (${got.message})`);
    return undefined;
  }

  /**
   * The .bin and .hex bytes just read by the manifest phase, kept for their .json's check, which
   * comes next in the manifest's path order; at most a few, so an unsorted manifest costs re-reads,
   * not memory.
   */
  private readonly recent = new Map<string, Buffer>();

  keep(rel: string, buf: Buffer): void {
    this.recent.set(rel, buf);
    if (this.recent.size > 4) this.recent.delete(this.recent.keys().next().value!);
  }

  /** Reports a missing or unreadable file once, however many checks need it. */
  missingProblem(rel: string, message: string): void {
    if (this.missing.has(rel)) return;
    if (this.missing.size < this.maxProblems) this.missing.add(rel);
    this.problem(rel, message);
  }

  /** A regular file is there; a symlink or other non-regular entry is reported and is not one. */
  exists(rel: string): boolean {
    const st = lstatOrUndefined(this.abs(rel));
    if (st === undefined || st.isFile()) return st !== undefined;
    if (st.isSymbolicLink()) this.missingProblem(rel, SYMLINK_PROBLEM);
    else if (!st.isDirectory()) this.missingProblem(rel, OTHER_PROBLEM);
    return false;
  }

  /** Parsed JSON, or undefined after reporting why not (missing / unreadable / not JSON). */
  readJson(rel: string, missing: string): { doc: unknown; text: string } | undefined {
    const buf = this.readBytes(rel, missing);
    if (!buf) return undefined;
    const text = buf.toString('utf8');
    try {
      return { doc: JSON.parse(text), text };
    } catch (e) {
      this.problem(rel, `is not valid JSON (${(e as Error).message})`);
      return undefined;
    }
  }

  /** A /tx document's text, or null when there is none. */
  txText(txid: string): string | null {
    return this.readBytes(txPath(txid, 'json'))?.toString('utf8') ?? null;
  }

  private loadTx(txid: string): TxLinks | null {
    const text = this.txText(txid);
    if (text === null) return null;
    try {
      return txLinks(JSON.parse(text));
    } catch {
      return txLinks(undefined); // reported where the file itself is checked
    }
  }
}

/** The summary line (OK with `what`, or the problem count and the first problem), then (verbose) `details` and every kept problem. */
export function reportLines(r: VerifyReport, what: string, verbose: boolean, details: string[] = []): string {
  const net = r.network !== undefined ? ` (${r.network} height ${r.height})` : '';
  const first = r.problems[0];
  const lines = [
    r.ok
      ? `verify ${r.dir}${net}: OK: ${what} in ${r.seconds.toFixed(2)}s`
      : `verify ${r.dir}${net}: FAILED: ${r.problemCount} problem${r.problemCount === 1 ? '' : 's'}${first ? ` (first: ${first.file}: ${first.message})` : ''}`,
  ];
  if (verbose) {
    lines.push(...details);
    for (const p of r.problems) lines.push(`  ${p.file}: ${p.message}`);
    if (r.problems.length < r.problemCount) lines.push(`  ... and ${r.problemCount - r.problems.length} more`);
  }
  return lines.join('\n') + '\n';
}
