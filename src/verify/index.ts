/**
 * `snapshot verify`: checks a built tree against its manifest and for internal consistency.
 *
 * Memory stays bounded by the chain's block count, not by its files or transactions: the
 * manifest is streamed, every file is checked on its own and the documents a check needs
 * (spenders, spent outputs, an address's transactions) are read on demand through a small
 * cache. The main chain (walked from the tip over `prev_block`) is held as 32 bytes per block.
 *
 * Phases:
 *  1. `_site.json`, `stats.json`, and the main chain from the tip down to genesis
 *     (`prev_block` back, `next_block` forward, the count equals the height + 1).
 *  2. The manifest, line by line: size and sha256 of the file, JSON parses, and the checks of
 *     its kind (tx, block, address, name variants, error documents).
 *  3. The tree: no file that the manifest does not list (except `_manifest.json`).
 *  4. Totals: every tx document belongs to a main-chain block, stats and `_site.json` counts.
 */
import { createHash } from 'node:crypto';
import { createReadStream, opendirSync, readFileSync, statSync, type Dir } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { formatValue } from '../chain/amount.js';
import { parseBlock, type Block } from '../chain/block.js';
import { toDisplayHex } from '../chain/hash.js';
import { getNetwork, type Network } from '../chain/networks.js';
import { parseTx } from '../chain/tx.js';
import { validateBlock } from '../chain/validate.js';
import {
  ALL_NAME_VARIANTS,
  ERROR_KINDS,
  MANIFEST_PATH,
  SITE_INFO_PATH,
  STATS_PATH,
  addressPath,
  blockPath,
  isCanonicalNamePath,
  namePathEncoded,
  txPath,
  variantFromKey,
  variantKey,
} from '../contract/layout.js';

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

// ---------------------------------------------------------------------------------------------
// Small helpers

type Obj = Record<string, unknown>;
const HEX64 = /^[0-9a-f]{64}$/;
const ZERO_HASH = '0'.repeat(64);
const COINBASE_N = 0xffffffff;
const CAPPED = /^Too many outputs for this address \((\d+)\)$/;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function isErrno(e: unknown, code: string): boolean {
  return typeof e === 'object' && e !== null && (e as NodeJS.ErrnoException).code === code;
}

/** "50.00000000" → 5000000000n; undefined when malformed. */
function parseValue(v: unknown): bigint | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^(-?)(\d+)\.(\d{8})$/.exec(v);
  if (!m) return undefined;
  const abs = BigInt(m[2]!) * 100_000_000n + BigInt(m[3]!);
  return m[1] ? -abs : abs;
}

/** An integer field exactly: from the parsed number when safe, else from the document's text. */
function exactInt(parsed: unknown, text: string, key: string): bigint | undefined {
  if (typeof parsed !== 'number' || !Number.isInteger(parsed)) return undefined;
  if (Number.isSafeInteger(parsed)) return BigInt(parsed);
  const m = new RegExp(`"${key}"\\s*:\\s*(-?\\d+)`).exec(text);
  return m ? BigInt(m[1]!) : undefined;
}

function outpoint(v: unknown): { hash: string; n: number } | undefined {
  if (!isObj(v) || typeof v.hash !== 'string' || typeof v.n !== 'number') return undefined;
  return { hash: v.hash, n: v.n };
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** `a` equals the JSON document `text` (which may be indented). */
function sameAsText(a: unknown, text: string): boolean {
  try {
    return same(a, JSON.parse(text));
  } catch {
    return false;
  }
}

/** A manifest path that stays inside the tree and names a file the way the build writes them. */
function safePath(p: string): boolean {
  if (p === '' || p.startsWith('/') || p.includes('\\') || p.includes('\0')) return false;
  return p.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/**
 * Block hashes of the main chain, 32 bytes each by height, with a sorted index for lookups.
 * Filled from the tip down; `lowest` is the lowest height the walk reached.
 */
class MainChain {
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
interface TxLinks {
  /** Each input's prev_out as "hash:n" ('' when malformed). */
  ins: string[];
  /** Each output's address, value and next_in ("hash:n", or undefined). */
  outs: { address: unknown; value: unknown; next: string | undefined }[];
}

function pointText(v: unknown): string | undefined {
  const p = outpoint(v);
  return p ? `${p.hash}:${p.n}` : v === undefined ? undefined : '';
}

function txLinks(doc: unknown): TxLinks {
  if (!isObj(doc)) return { ins: [], outs: [] };
  return {
    ins: arr(doc.in).map((i) => (isObj(i) ? (pointText(i.prev_out) ?? '') : '')),
    outs: arr(doc.out).map((o) => (isObj(o) ? { address: o.address, value: o.value, next: pointText(o.next_in) } : { address: undefined, value: undefined, next: '' })),
  };
}

/** {@link TxLinks} of /tx documents by txid, least recently used evicted; `null` = no such file. */
class TxCache {
  private readonly map = new Map<string, TxLinks | null>();

  constructor(
    private readonly load: (txid: string) => TxLinks | null,
    private readonly limit = 50_000,
  ) {}

  get(txid: string): TxLinks | null {
    const hit = this.map.get(txid);
    if (hit !== undefined) {
      this.map.delete(txid);
      this.map.set(txid, hit);
      return hit;
    }
    const doc = this.load(txid);
    this.map.set(txid, doc);
    if (this.map.size > this.limit) this.map.delete(this.map.keys().next().value!);
    return doc;
  }
}

// ---------------------------------------------------------------------------------------------

class Verifier {
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

  /** File bytes, or undefined (after reporting `missing` when given) when the file is absent. */
  readBytes(rel: string, missing?: string): Buffer | undefined {
    try {
      return readFileSync(this.abs(rel));
    } catch (e) {
      if (missing !== undefined) this.missingProblem(rel, isErrno(e, 'ENOENT') ? missing : `cannot be read (${(e as Error).message})`);
      return undefined;
    }
  }

  /** Reports a missing or unreadable file once, however many checks need it. */
  missingProblem(rel: string, message: string): void {
    if (this.missing.has(rel)) return;
    if (this.missing.size < this.maxProblems) this.missing.add(rel);
    this.problem(rel, message);
  }

  exists(rel: string): boolean {
    try {
      return statSync(this.abs(rel)).isFile();
    } catch {
      return false;
    }
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
    try {
      return readFileSync(this.abs(txPath(txid, 'json')), 'utf8');
    } catch {
      return null;
    }
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

  // -------------------------------------------------------------------------------------------
  // Phase 1: site info, stats, main chain

  siteAndChain(): void {
    const site = this.readJson(SITE_INFO_PATH, 'is missing');
    if (site) {
      const s = site.doc;
      if (!isObj(s) || typeof s.network !== 'string' || !Number.isSafeInteger(s.height) || (s.height as number) < 0 || typeof s.tip !== 'string' || !Array.isArray(s.cappedAddresses)) {
        this.problem(SITE_INFO_PATH, 'is not {network, height, tip, cappedAddresses}');
      } else {
        try {
          this.net = getNetwork(s.network);
        } catch {
          this.problem(SITE_INFO_PATH, `names an unknown network ${JSON.stringify(s.network)}`);
        }
        this.site = { network: s.network, height: s.height as number, tip: s.tip, capped: new Set(s.cappedAddresses.map(String)) };
      }
    }
    const stats = this.readJson(STATS_PATH, 'is missing');
    if (this.site && this.site.height > 100_000_000) {
      this.problem(SITE_INFO_PATH, `height ${this.site.height} is not plausible`);
      return;
    }
    if (this.site) this.walkMainChain();
    if (stats && this.site) {
      const blocks = isObj(stats.doc) ? stats.doc.blocks : undefined;
      const main = isObj(blocks) ? blocks.main : undefined;
      if (main !== this.site.height + 1) this.problem(STATS_PATH, `blocks.main is ${String(main)}, but _site.json height ${this.site.height} means ${this.site.height + 1}`);
      const txs = isObj(stats.doc) ? stats.doc.txs : undefined;
      if (this.chain?.complete && txs !== this.mainTxs) this.problem(STATS_PATH, `txs is ${String(txs)}, but the main-chain blocks hold ${this.mainTxs}`);
    }
  }

  /** From the tip over prev_block to genesis; checks next_block of every main-chain block on the way. */
  private walkMainChain(): void {
    const { height, tip } = this.site!;
    const chain = new MainChain(height);
    this.chain = chain;
    let hash = tip;
    for (let h = height; h >= 0; h--) {
      const rel = blockPath(hash, 'json');
      if (!HEX64.test(hash)) {
        this.problem(h === height ? SITE_INFO_PATH : blockPath(chain.hashAt(h + 1)!, 'json'), `main chain at height ${h}: ${JSON.stringify(hash)} is not a block hash`);
        break;
      }
      const got = this.readJson(rel, `is missing: the main chain walked from the tip over prev_block breaks at height ${h}`);
      if (!got) break;
      const doc = got.doc;
      if (!isObj(doc)) {
        this.problem(rel, 'is not a JSON object');
        break;
      }
      chain.set(h, hash);
      if (doc.hash !== hash) this.problem(rel, `hash field is ${String(doc.hash)}`);
      const next = h === height ? undefined : chain.hashAt(h + 1);
      if (doc.next_block !== next) {
        this.problem(rel, next === undefined ? `is the tip (height ${h}) but has next_block ${String(doc.next_block)}` : `main-chain block at height ${h}: next_block is ${String(doc.next_block)}, expected ${next}`);
      }
      if (typeof doc.n_tx === 'number') this.mainTxs += doc.n_tx;
      this.counts.mainBlocks++;
      const prev = doc.prev_block;
      if (h === 0) {
        if (prev !== ZERO_HASH) this.problem(rel, `is at height 0 of the main chain walked from the tip but has prev_block ${String(prev)} (chain longer than _site.json height ${height}?)`);
      } else if (prev === ZERO_HASH) {
        this.problem(rel, `is the genesis block (no prev_block) but the walk from the tip puts it at height ${h}, not 0`);
        break;
      } else if (typeof prev !== 'string') {
        this.problem(rel, 'has no prev_block');
        break;
      } else {
        hash = prev;
      }
      if ((height - h) % 1000 === 0) this.onProgress?.('chain', height - h + 1, height + 1);
    }
    chain.seal();
    this.onProgress?.('chain', height + 1 - chain.lowest, height + 1);
  }

  // -------------------------------------------------------------------------------------------
  // Phase 2: the manifest

  async manifest(): Promise<{ canonical: boolean }> {
    const total = await countLines(this.abs(MANIFEST_PATH));
    if (total === undefined) {
      this.problem(MANIFEST_PATH, 'is missing');
      return { canonical: false };
    }
    let sorted = true;
    let prevPath = '';
    let lineNo = 0;
    const lines = createInterface({ input: createReadStream(this.abs(MANIFEST_PATH)), crlfDelay: Infinity });
    for await (const line of lines) {
      lineNo++;
      if (lineNo % 500 === 0) this.onProgress?.('files', lineNo, total);
      if (line === '') continue;
      this.counts.manifestEntries++;
      const m = /^([0-9a-f]{64}) (\d+) (.+)$/.exec(line);
      if (!m) {
        this.problem(MANIFEST_PATH, `line ${lineNo} is not "<sha256> <size> <path>": ${JSON.stringify(line.slice(0, 200))}`);
        sorted = false;
        continue;
      }
      const [, sha, sizeText, rel] = m as unknown as [string, string, string, string];
      // Unsorted (the writer sorts by path), the stray-file check takes the slow path, which also
      // names duplicates.
      if (rel <= prevPath) sorted = false;
      prevPath = rel;
      if (rel === MANIFEST_PATH) {
        this.problem(MANIFEST_PATH, 'lists itself');
        continue;
      }
      if (!safePath(rel)) {
        this.problem(MANIFEST_PATH, `line ${lineNo} names an unsafe path ${JSON.stringify(rel)}`);
        continue;
      }
      this.checkFile(rel, sha, Number(sizeText));
    }
    this.onProgress?.('files', lineNo, total);
    return { canonical: sorted };
  }

  private checkFile(rel: string, sha: string, size: number): void {
    const buf = this.readBytes(rel, 'is listed in the manifest but missing');
    if (!buf) return;
    this.presentEntries++;
    this.counts.bytes += buf.length;
    if (buf.length !== size) this.problem(rel, `size ${buf.length} differs from the manifest (${size})`);
    else if (createHash('sha256').update(buf).digest('hex') !== sha) this.problem(rel, 'sha256 differs from the manifest');
    if (!rel.endsWith('.json')) {
      this.checkSibling(rel);
      return;
    }
    this.counts.jsonFiles++;
    const text = buf.toString('utf8');
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (e) {
      this.problem(rel, `is not valid JSON (${(e as Error).message})`);
      return;
    }
    const [top, rest] = splitFirst(rel);
    if (top === 'tx') this.checkTx(rel, rest.slice(0, -5), doc);
    else if (top === 'block') this.checkBlock(rel, rest.slice(0, -5), doc);
    else if (top === 'address') this.checkAddress(rel, rest.slice(0, -5), doc, text);
    else if (top === 'name') this.checkName(rel, rest.slice(0, -5));
    else if (top === 'v') this.checkNameVariant(rel, rest);
    else if (top === 'errors') {
      if (!isObj(doc) || typeof doc.error !== 'string') this.problem(rel, 'is not {"error": "<message>"}');
    }
  }

  /** tx/<id>.bin|.hex and block/<h>.bin|.hex come with their .json. */
  private checkSibling(rel: string): void {
    const m = /^(tx|block)\/([^/]+)\.(bin|hex)$/.exec(rel);
    if (m && !this.exists(`${m[1]}/${m[2]}.json`)) this.problem(rel, `has no ${m[1]}/${m[2]}.json beside it`);
  }

  // -------------------------------------------------------------------------------------------
  // tx/<txid>.json

  private checkTx(rel: string, txid: string, doc: unknown): void {
    this.counts.txs++;
    if (!HEX64.test(txid)) {
      this.problem(rel, 'is not named by a lowercase txid');
      return;
    }
    if (!isObj(doc)) {
      this.problem(rel, 'is not a JSON object');
      return;
    }
    if (doc.hash !== txid) this.problem(rel, `hash field is ${String(doc.hash)}`);
    const bin = this.readBytes(txPath(txid, 'bin'), 'is missing (its .json exists)');
    const hex = this.readBytes(txPath(txid, 'hex'), 'is missing (its .json exists)');
    if (bin) {
      if (hex && hex.toString('latin1') !== bin.toString('hex')) this.problem(txPath(txid, 'hex'), 'is not the hex of the .bin');
      let tx;
      try {
        tx = parseTx(bin);
      } catch (e) {
        this.problem(txPath(txid, 'bin'), `is not a transaction (${(e as Error).message})`);
      }
      if (tx) {
        if (tx.txid !== txid) this.problem(txPath(txid, 'bin'), `hashes to ${tx.txid}, not to its name`);
        if (doc.size !== bin.length) this.problem(rel, `size is ${String(doc.size)}, the .bin has ${bin.length} bytes`);
        if (doc.vin_sz !== tx.inputs.length || doc.vout_sz !== tx.outputs.length) this.problem(rel, `vin_sz/vout_sz ${String(doc.vin_sz)}/${String(doc.vout_sz)} differ from the .bin (${tx.inputs.length}/${tx.outputs.length})`);
        const ins = arr(doc.in);
        tx.inputs.forEach((input, i) => {
          const po = outpoint(isObj(ins[i]) ? ins[i].prev_out : undefined);
          if (!po || po.hash !== toDisplayHex(input.prevHash) || po.n !== input.prevIndex) this.problem(rel, `in[${i}].prev_out differs from the .bin (${toDisplayHex(input.prevHash)}:${input.prevIndex})`);
        });
        const outs = arr(doc.out);
        tx.outputs.forEach((out, j) => {
          const o = outs[j];
          if (!isObj(o) || o.value !== formatValue(out.value)) this.problem(rel, `out[${j}].value differs from the .bin (${formatValue(out.value)})`);
        });
      }
    }
    // Placement: the block it names is on the main chain at the height it names.
    if (this.chain) {
      const h = typeof doc.block === 'string' ? this.chain.heightOf(doc.block) : undefined;
      if (h === undefined) {
        if (this.chain.complete) this.problem(rel, `block ${String(doc.block)} is not a main-chain block`);
      } else if (doc.blocknumber !== h) {
        this.problem(rel, `blocknumber is ${String(doc.blocknumber)}, but block ${String(doc.block)} is at height ${h}`);
      } else {
        this.placedTxs++;
      }
    }
    this.checkTxLinks(rel, txid, doc);
  }

  /** next_in → the spender's input points back; every input → the spent output's next_in points here. */
  private checkTxLinks(rel: string, txid: string, doc: Obj): void {
    arr(doc.out).forEach((o, j) => {
      if (!isObj(o) || o.next_in === undefined) return;
      this.counts.links++;
      const ni = outpoint(o.next_in);
      if (!ni || !HEX64.test(ni.hash)) {
        this.problem(rel, `out[${j}].next_in is not {hash, n}: ${JSON.stringify(o.next_in)}`);
        return;
      }
      const spender = this.txCache.get(ni.hash);
      if (spender === null) {
        this.problem(rel, `out[${j}].next_in points to tx ${ni.hash}, which has no /tx document`);
        return;
      }
      const back = spender.ins[ni.n];
      if (back === undefined) {
        this.problem(rel, `out[${j}].next_in points to ${ni.hash} in[${ni.n}], which does not exist`);
        return;
      }
      if (back !== `${txid}:${j}`) {
        this.problem(rel, `out[${j}].next_in points to ${ni.hash} in[${ni.n}], whose prev_out is ${back || 'malformed'}, not back here`);
      }
    });
    arr(doc.in).forEach((input, i) => {
      if (!isObj(input)) return;
      const po = outpoint(input.prev_out);
      if (!po) {
        this.problem(rel, `in[${i}] has no prev_out {hash, n}`);
        return;
      }
      if (po.hash === ZERO_HASH && po.n === COINBASE_N) return;
      if (!HEX64.test(po.hash)) {
        this.problem(rel, `in[${i}].prev_out.hash ${JSON.stringify(po.hash)} is not a txid`);
        return;
      }
      const prev = this.txCache.get(po.hash);
      if (prev === null) return; // spends a tx outside the snapshot's /tx documents
      this.counts.links++;
      const out = prev.outs[po.n];
      if (!out) {
        this.problem(rel, `in[${i}].prev_out ${po.hash}:${po.n} names an output that tx/${po.hash}.json does not have`);
        return;
      }
      if (out.next !== `${txid}:${i}`) {
        this.problem(rel, `in[${i}] spends ${po.hash}:${po.n}, but that output's next_in is ${out.next === undefined ? 'absent' : out.next || 'malformed'}, not this input`);
      }
    });
  }

  // -------------------------------------------------------------------------------------------
  // block/<hash>.json

  private checkBlock(rel: string, hash: string, doc: unknown): void {
    if (!HEX64.test(hash)) {
      this.problem(rel, 'is not named by a lowercase block hash');
      return;
    }
    if (!isObj(doc)) {
      this.problem(rel, 'is not a JSON object');
      return;
    }
    const height = this.chain?.heightOf(hash);
    if (height === undefined) {
      this.counts.offChainBlocks++;
      if (doc.next_block !== undefined && this.chain?.complete) this.problem(rel, `is not on the main chain but has next_block ${String(doc.next_block)}`);
    }
    // (main-chain blocks: hash, next_block and prev_block were checked by the walk)
    const binRel = blockPath(hash, 'bin');
    const bin = this.readBytes(binRel, 'is missing (its .json exists)');
    const hex = this.readBytes(blockPath(hash, 'hex'), 'is missing (its .json exists)');
    if (!bin) return;
    if (hex && hex.toString('latin1') !== bin.toString('hex')) this.problem(blockPath(hash, 'hex'), 'is not the hex of the .bin');
    if (!this.net) return;
    let block: Block;
    try {
      block = parseBlock(bin, { auxpow: this.net.auxpow });
    } catch (e) {
      this.problem(binRel, `is not a block (${(e as Error).message})`);
      return;
    }
    if (block.header.id !== hash) this.problem(binRel, `hashes to ${block.header.id}, not to its name`);
    // The chain rules from the block's own bytes: PoW (AuxPoW) from the header, the merkle root from the txids, the witness commitment.
    const invalid = validateBlock(block, this.net, height);
    if (invalid) this.problem(binRel, `is an invalid block: ${invalid.kind}: ${invalid.detail}`);
    if (height === undefined && doc.hash !== hash) this.problem(rel, `hash field is ${String(doc.hash)}`);
    if (doc.prev_block !== toDisplayHex(block.header.prevHash)) this.problem(rel, `prev_block ${String(doc.prev_block)} differs from the .bin header`);
    if (doc.n_tx !== block.txs.length) this.problem(rel, `n_tx is ${String(doc.n_tx)}, the .bin holds ${block.txs.length} transactions`);
    const docTxs = arr(doc.tx);
    block.txs.forEach((tx, i) => {
      const d = docTxs[i];
      if (!isObj(d) || d.hash !== tx.txid) this.problem(rel, `tx[${i}] is not ${tx.txid}`);
    });
    if (height !== undefined) this.checkMainBlockTxs(rel, hash, height, block, docTxs);
  }

  /** Every tx of a main-chain block has its three /tx files, the same bytes, and the same document. */
  private checkMainBlockTxs(rel: string, hash: string, height: number, block: Block, docTxs: unknown[]): void {
    block.txs.forEach((tx, i) => {
      const t = tx.txid;
      const bin = this.readBytes(txPath(t, 'bin'), `is missing: tx ${i} of main-chain block ${hash}`);
      if (bin && !bin.equals(tx.raw)) this.problem(txPath(t, 'bin'), `differs from tx ${i} of block ${hash}`);
      if (!this.exists(txPath(t, 'hex'))) this.missingProblem(txPath(t, 'hex'), `is missing: tx ${i} of main-chain block ${hash}`);
      const text = this.txText(t);
      if (text === null) {
        this.missingProblem(txPath(t, 'json'), `is missing: tx ${i} of main-chain block ${hash}`);
        return;
      }
      let txDoc: Obj;
      try {
        const d: unknown = JSON.parse(text);
        if (!isObj(d)) return;
        txDoc = d;
      } catch {
        return; // reported where the file itself is checked
      }
      if (txDoc.block === hash && txDoc.blocknumber === height) {
        this.ownedTxs++;
        const { block: _b, blocknumber: _n, time: _t, ...inBlock } = txDoc;
        if (isObj(docTxs[i]) && !same(docTxs[i], inBlock)) this.problem(rel, `tx[${i}] differs from tx/${t}.json (stale next_in?)`);
      } else {
        // A duplicate txid (BIP30) is served as its later occurrence.
        const later = typeof txDoc.block === 'string' ? this.chain!.heightOf(txDoc.block) : undefined;
        if (later === undefined || later <= height) this.problem(txPath(t, 'json'), `names block ${String(txDoc.block)} at ${String(txDoc.blocknumber)}, but it is tx ${i} of main-chain block ${hash} at height ${height}`);
      }
    });
  }

  // -------------------------------------------------------------------------------------------
  // address/<a>.json

  private checkAddress(rel: string, address: string, doc: unknown, text: string): void {
    this.counts.addresses++;
    if (!isObj(doc)) {
      this.problem(rel, 'is not a JSON object');
      return;
    }
    if (typeof doc.error === 'string') {
      this.counts.cappedAddresses++;
      this.cappedSeen.add(address);
      if (!CAPPED.test(doc.error)) this.problem(rel, `is an error document other than "Too many outputs": ${doc.error}`);
      else if (this.site && !this.site.capped.has(address)) this.problem(rel, 'is capped but not listed in _site.json cappedAddresses');
      return;
    }
    if (doc.address !== address) this.problem(rel, `address field is ${String(doc.address)}`);
    const coinIn = exactInt(doc.coin_in, text, 'coin_in');
    const coinOut = exactInt(doc.coin_out, text, 'coin_out');
    const balance = exactInt(doc.balance, text, 'balance');
    if (coinIn === undefined || coinOut === undefined || balance === undefined) {
      this.problem(rel, 'coin_in, coin_out or balance is not an integer');
      return;
    }
    if (coinIn - coinOut !== balance) this.problem(rel, `coin_in − coin_out = ${coinIn - coinOut}, but balance is ${balance}`);

    // Unspent entries: each is an output of its /tx document, paying here, unspent.
    let unspentSum = 0n;
    const unspent = arr(doc.unspent);
    unspent.forEach((u, k) => {
      const op = isObj(u) ? outpoint(u.tx) : undefined;
      const value = isObj(u) ? parseValue(u.value) : undefined;
      if (!op || value === undefined || !HEX64.test(op.hash)) {
        this.problem(rel, `unspent[${k}] is not {tx: {hash, n}, value, ...}`);
        return;
      }
      unspentSum += value;
      const tx = this.txCache.get(op.hash);
      const out = tx ? tx.outs[op.n] : undefined;
      if (!out) this.problem(rel, `unspent[${k}] ${op.hash}:${op.n} is not an output of a /tx document`);
      else if (out.address !== address) this.problem(rel, `unspent[${k}] ${op.hash}:${op.n} pays ${String(out.address)}, not this address`);
      else if (out.next !== undefined) this.problem(rel, `unspent[${k}] ${op.hash}:${op.n} is spent (next_in ${out.next})`);
      else if (out.value !== (u as Obj).value) this.problem(rel, `unspent[${k}] ${op.hash}:${op.n} has value ${String((u as Obj).value)}, the tx says ${String(out.value)}`);
    });
    if (unspentSum !== balance) this.problem(rel, `unspent outputs sum to ${unspentSum}, but balance is ${balance}`);

    // Transactions: embedded docs equal the /tx files, and the totals follow from them.
    const txs = isObj(doc.transactions) ? doc.transactions : {};
    const ids = Object.keys(txs);
    if (doc.tx_sz !== ids.length) this.problem(rel, `tx_sz is ${String(doc.tx_sz)}, transactions has ${ids.length}`);
    let sumIn = 0n;
    let sumOut = 0n;
    let unspentCount = 0;
    let receivers = 0;
    const spenders = new Set<string>();
    for (const id of ids) {
      const embedded = txs[id];
      const file = HEX64.test(id) ? this.txText(id) : null;
      if (file === null) this.problem(rel, `transactions has ${id}, which has no /tx document`);
      else if (file !== JSON.stringify(embedded) && !sameAsText(embedded, file)) this.problem(rel, `transactions[${id}] differs from tx/${id}.json`);
      if (!isObj(embedded)) continue;
      let pays = false;
      arr(embedded.out).forEach((o) => {
        if (!isObj(o) || o.address !== address) return;
        pays = true;
        const v = parseValue(o.value) ?? 0n;
        sumIn += v;
        const ni = outpoint(o.next_in);
        if (ni) {
          sumOut += v;
          spenders.add(ni.hash);
        } else {
          unspentCount++;
        }
      });
      if (pays) receivers++;
    }
    for (const s of spenders) if (!Object.hasOwn(txs, s)) this.problem(rel, `transactions lacks ${s}, which spends from this address`);
    if (sumIn !== coinIn) this.problem(rel, `coin_in is ${coinIn}, its transactions pay ${sumIn} to it`);
    if (sumOut !== coinOut) this.problem(rel, `coin_out is ${coinOut}, its spent outputs hold ${sumOut}`);
    if (unspentCount !== unspent.length) this.problem(rel, `unspent lists ${unspent.length} outputs, its transactions leave ${unspentCount} unspent`);
    if (doc.tx_in_sz !== receivers) this.problem(rel, `tx_in_sz is ${String(doc.tx_in_sz)}, ${receivers} transactions pay to it`);
    if (doc.tx_out_sz !== spenders.size) this.problem(rel, `tx_out_sz is ${String(doc.tx_out_sz)}, ${spenders.size} transactions spend from it`);
  }

  // -------------------------------------------------------------------------------------------
  // name/<enc>.json and v/<key>/name/<enc>.json

  private checkName(rel: string, enc: string): void {
    this.counts.names++;
    if (!isCanonicalNamePath(enc)) this.problem(rel, 'is not a canonical name path');
    for (const v of ALL_NAME_VARIANTS) {
      const p = namePathEncoded(enc, v);
      if (p !== rel && !this.exists(p)) this.missingProblem(p, `is missing (variant of ${rel})`);
    }
  }

  private checkNameVariant(rel: string, rest: string): void {
    const m = /^([^/]+)\/name\/(.+)\.json$/.exec(rest);
    const v = m ? variantFromKey(m[1]!) : undefined;
    if (!m || !v || variantKey(v) === '') {
      this.problem(rel, 'is not v/<variant>/name/<name>.json');
      return;
    }
    if (!this.exists(`name/${m[2]}.json`)) this.problem(rel, `has no base document name/${m[2]}.json`);
  }

  // -------------------------------------------------------------------------------------------
  // Phase 3: the tree

  async tree(canonical: boolean): Promise<void> {
    // Fast path: the manifest's paths are distinct (canonical order is strictly increasing) and
    // all exist, so the tree holds no stray file iff it holds exactly as many files.
    const total = this.presentEntries;
    let files = 0;
    walk(this.dir, '', (rel) => {
      if (rel === MANIFEST_PATH) return;
      files++;
      if (files % 5000 === 0) this.onProgress?.('tree', files, total);
    });
    this.counts.filesOnDisk = files;
    this.onProgress?.('tree', files, total);
    if (canonical && files === this.presentEntries) return;
    // Slow path (only for a broken tree or manifest): hold the listed paths.
    const listed = new Set<string>();
    const lines = createInterface({ input: createReadStream(this.abs(MANIFEST_PATH)), crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        const m = /^[0-9a-f]{64} \d+ (.+)$/.exec(line);
        if (!m) continue;
        if (listed.has(m[1]!)) this.problem(m[1]!, 'is listed twice in the manifest');
        listed.add(m[1]!);
      }
    } catch {
      // no manifest: every file is stray
    }
    walk(this.dir, '', (rel) => {
      if (rel !== MANIFEST_PATH && !listed.has(rel)) this.problem(rel, 'is not listed in the manifest');
    });
  }

  // -------------------------------------------------------------------------------------------
  // Phase 4: totals

  totals(): void {
    if (!this.site || !this.chain?.complete) return;
    if (this.ownedTxs !== this.counts.txs) {
      this.problem('tx/', `${this.counts.txs} tx documents, but main-chain blocks place ${this.ownedTxs} of them (${this.counts.txs - this.placedTxs} name no main-chain block)`);
    }
    for (const a of this.site.capped) {
      if (!this.cappedSeen.has(a)) this.problem(SITE_INFO_PATH, `cappedAddresses lists ${a}, whose ${addressPath(a)} is not a capped document`);
    }
    const stats = this.readJson(STATS_PATH, 'is missing');
    if (stats && isObj(stats.doc)) {
      const s = stats.doc;
      if (s.addrs !== this.counts.addresses) this.problem(STATS_PATH, `addrs is ${String(s.addrs)}, the tree has ${this.counts.addresses} address documents`);
      const blocks = isObj(s.blocks) ? s.blocks : {};
      const off = (typeof blocks.side === 'number' ? blocks.side : 0) + (typeof blocks.orphan === 'number' ? blocks.orphan : 0);
      if (off !== this.counts.offChainBlocks) this.problem(STATS_PATH, `blocks.side + blocks.orphan is ${off}, the tree has ${this.counts.offChainBlocks} off-chain block documents`);
    }
    for (const kind of ERROR_KINDS) {
      if (!this.exists(`errors/${kind}.json`)) this.missingProblem(`errors/${kind}.json`, 'is missing');
    }
  }
}

function splitFirst(rel: string): [string, string] {
  const i = rel.indexOf('/');
  return i === -1 ? [rel, ''] : [rel.slice(0, i), rel.slice(i + 1)];
}

async function countLines(path: string): Promise<number | undefined> {
  try {
    let n = 0;
    for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n++;
    }
    return n;
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return undefined;
    throw e;
  }
}

/** Every non-directory entry below `root`, as a '/'-separated relative path; directories are streamed, not listed whole. */
function walk(root: string, rel: string, visit: (rel: string) => void): void {
  let dir: Dir;
  try {
    dir = opendirSync(rel === '' ? root : join(root, rel), { bufferSize: 256 });
  } catch {
    return;
  }
  try {
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(root, child, visit);
      else visit(child);
    }
  } finally {
    dir.closeSync();
  }
}

/** Checks a snapshot tree; never throws for problems in the tree (only for an unusable `dir`). */
export async function verifySnapshot(dir: string, opts: VerifyOptions = {}): Promise<VerifyReport> {
  const started = Date.now();
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`${dir} is not a directory`);
  const v = new Verifier(dir, opts.maxProblems ?? (opts.verbose ? 100_000 : 1000), opts.onProgress);
  v.siteAndChain();
  const { canonical } = await v.manifest();
  await v.tree(canonical);
  v.totals();
  return {
    ok: v.problemCount === 0,
    dir,
    network: v.site?.network,
    height: v.site?.height,
    tip: v.site?.tip,
    counts: v.counts,
    problemCount: v.problemCount,
    problems: v.problems,
    seconds: (Date.now() - started) / 1000,
  };
}

/** The CLI's output: one summary line, then (verbose) the counts and every kept problem. */
export function formatVerifyReport(r: VerifyReport, verbose = false): string {
  const c = r.counts;
  const what = `${c.manifestEntries} files, ${c.mainBlocks} main + ${c.offChainBlocks} off-chain blocks, ${c.txs} txs, ${c.addresses} addresses, ${c.names} names`;
  const net = r.network !== undefined ? ` (${r.network} height ${r.height})` : '';
  const first = r.problems[0];
  const lines = [
    r.ok
      ? `verify ${r.dir}${net}: OK: ${what} in ${r.seconds.toFixed(2)}s`
      : `verify ${r.dir}${net}: FAILED: ${r.problemCount} problem${r.problemCount === 1 ? '' : 's'}${first ? ` (first: ${first.file}: ${first.message})` : ''}`,
  ];
  if (verbose) {
    lines.push(`  checked ${what}, ${c.bytes} bytes, ${c.jsonFiles} JSON, ${c.links} links, ${c.cappedAddresses} capped addresses; ${c.filesOnDisk} files on disk; ${r.seconds.toFixed(2)}s`);
    for (const p of r.problems) lines.push(`  ${p.file}: ${p.message}`);
    if (r.problems.length < r.problemCount) lines.push(`  ... and ${r.problemCount - r.problems.length} more`);
  }
  return lines.join('\n') + '\n';
}
