import { existsSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { decodeAddress, scriptAddress } from '../chain/address.js';
import { parseBlock, type Block } from '../chain/block.js';
import { fromDisplayHex, toDisplayHex } from '../chain/hash.js';
import { blockSubsidy, isNamecoin, type Network } from '../chain/networks.js';
import { isCoinbaseInput, parseTx, type Tx } from '../chain/tx.js';
import { blockWork } from '../chain/work.js';
import { BlocksSpill } from '../index/blocks-spill.js';
import { applyBlock, undoBlock, type BlockEffects, type PrevoutResolver } from '../index/indexer.js';
import { addDelta, emptyMeta, readMeta, reuseProblem, saveMeta, type IndexMeta } from '../index/state.js';
import { emptyCounters, type ChainCounters } from '../index/stats.js';
import { ioError } from '../index/io-error.js';
import { addressPrefix, isStoreError, openStore, outpointKey, prefixEnd, type NameOpRecord, type Store } from '../index/store.js';
import { renderAddress, renderAddressCapped } from '../render/address.js';
import { renderBlock } from '../render/block.js';
import { toJson, type JsonValue } from '../render/json.js';
import { decodeNameBytes, renderName, type NameRecord } from '../render/name.js';
import { renderNameList, type NameListEntry } from '../render/name-list.js';
import { renderStats } from '../render/stats.js';
import { renderTx, type Spender } from '../render/tx.js';
import type { ChainSource } from '../source/types.js';
import { validatedSource, type InvalidBlock } from '../source/validated.js';
import { HOSTS, hostFiles, type HostName } from './hosts/index.js';
import { uiFiles } from './ui/index.js';
import { contractFiles } from './contract.js';
import {
  ALL_NAME_VARIANTS,
  MANIFEST_PATH,
  NAMES_PATH,
  SITE_INFO_PATH,
  STATS_PATH,
  addressPath,
  blockPath,
  encodeNamePath,
  namePathEncoded,
  txPath,
  type SiteInfo,
} from './layout.js';
import { Progress } from './progress.js';
import { acquireLock, checkTargets, clearStateDir, createStaging, currentRelease, prepareStateDir, publish, publishedDir, recoverInterrupted, type PublishStep, type Targets } from './publish.js';
import { linkTree } from './staging.js';
import { SiteWriter, writeManifest } from './writer.js';

export interface BuildOptions {
  source: ChainSource;
  /** Snapshot height; the source's tip when undefined. */
  height?: number;
  outDir: string;
  /** The persistent index (default `<out>.state` beside the output). */
  stateDir?: string;
  pretty?: boolean;
  /** Addresses with more relevant outputs get the original's error document (0 = no cap). */
  maxAddressTxouts?: number;
  /** Hosts whose glue files the build writes (default: all). */
  hosts?: readonly HostName[];
  /** Ignore the index and build everything. */
  full?: boolean;
  /**
   * Skip invalid blocks with a warning instead of failing: an invalid off-chain block is left
   * out; an invalid main-chain block ends the snapshot at the height below it.
   */
  skipInvalid?: boolean;
  progress?: Progress;
  /** Replace a foreign `--out` directory, use a foreign `--state` directory (see README "Safety rules"). */
  force?: boolean;
  /** Called after the tree is written and before it is published (tests use it to kill a build). */
  beforePublish?: () => void | Promise<void>;
  /** Called between the steps of the publish (tests pause and kill there). */
  onPublishStep?: (step: PublishStep) => void | Promise<void>;
}

export interface BuildReport {
  network: string;
  height: number;
  tip: string;
  /** 'incremental' when the previous snapshot was extended; otherwise why everything was built. */
  mode: 'full' | 'incremental';
  fullReason: string | undefined;
  /** Height the previous snapshot was rolled back to (a reorg), if any. */
  rolledBackTo: number | undefined;
  blocks: { main: number; side: number; orphan: number };
  txs: number;
  files: number;
  bytes: number;
  written: number;
  unchanged: number;
  deleted: number;
  names: number;
  addresses: number;
  cappedAddresses: number;
  nonUtf8Names: number;
  duplicateTxids: string[];
  /** Invalid blocks skipped (skipInvalid); each also has a warning. */
  skippedInvalid: InvalidBlock[];
  /** The height asked for when an invalid main-chain block made the snapshot stop below it. */
  requestedHeight: number | undefined;
  warnings: string[];
  stageSeconds: [string, number][];
}

/** Documents that change in this run (incremental builds only; a full build renders everything). */
interface Changes {
  /** Blocks whose every document is rendered again (new ones). */
  heights: Set<number>;
  /** Older blocks whose block document changes, with the txs in them whose documents change. */
  touched: Map<number, Set<number>>;
  removedTxs: Set<string>;
  removedBlocks: Set<string>;
  appliedBlocks: Set<string>;
  addresses: Set<string>;
  names: Set<string>;
}

interface Ctx {
  net: Network;
  namecoin: boolean;
  store: Store;
  spill: BlocksSpill;
  writer: SiteWriter;
  height: number;
  pretty: boolean;
  cap: number;
  progress: Progress;
  meta: IndexMeta;
}

function blockAt(store: Store, spill: BlocksSpill, net: Network, height: number): { block: Block; hash: string; time: number } {
  const rec = store.heights.get(height);
  if (!rec) throw new Error(`index: no block at height ${height}`);
  return { block: parseBlock(spill.read(rec), { auxpow: net.auxpow }), hash: rec.hash, time: rec.time };
}

/** Finds an earlier transaction through the index: its bytes sit in the block spill. */
function prevoutResolver(store: Store, spill: BlocksSpill, net: Network): PrevoutResolver {
  const related = new Map<string, { height: number; index: number; addresses: string[] }>();
  const findTx = (txHash: Buffer) => {
    const loc = store.txloc.get(txHash);
    if (!loc) return undefined;
    const height = loc.readUInt32LE(0);
    const rec = store.heights.get(height);
    if (!rec) return undefined;
    const tx = parseTx(spill.read({ offset: rec.offset + loc.readUInt32LE(8), length: loc.readUInt32LE(12) }));
    return { height, index: loc.readUInt32LE(4), tx };
  };
  const outputAddresses = (tx: Tx) => tx.outputs.map((o) => scriptAddress(o.script, net)).filter((a): a is string => a !== undefined);
  return (prevHash) => {
    const key = prevHash.toString('hex');
    const hit = related.get(key);
    if (hit) return hit;
    const found = findTx(prevHash);
    if (!found) return undefined;
    const addresses = new Set(outputAddresses(found.tx));
    for (const input of found.tx.inputs) {
      if (isCoinbaseInput(input)) continue;
      const out = findTx(input.prevHash)?.tx.outputs[input.prevIndex];
      const a = out && scriptAddress(out.script, net);
      if (a !== undefined) addresses.add(a);
    }
    const res = { height: found.height, index: found.index, addresses: [...addresses] };
    if (related.size >= 65536) related.delete(related.keys().next().value!);
    related.set(key, res);
    return res;
  };
}

function spendersOf(store: Store, txHash: Buffer, outputs: number): (Spender | undefined)[] {
  const res: (Spender | undefined)[] = new Array(outputs);
  for (let i = 0; i < outputs; i++) {
    const v = store.spent.get(outpointKey(txHash, i));
    res[i] = v ? { hash: toDisplayHex(v.subarray(0, 32)), n: v.readUInt32LE(32) } : undefined;
  }
  return res;
}

function deleteBlockFiles(writer: SiteWriter, hash: string): void {
  for (const ext of ['json', 'bin', 'hex'] as const) writer.delete(blockPath(hash, ext));
}

function writeBlockFiles(writer: SiteWriter, hash: string, json: string, raw: Buffer): void {
  writer.write(blockPath(hash, 'json'), json);
  writer.write(blockPath(hash, 'bin'), raw);
  writer.write(blockPath(hash, 'hex'), raw.toString('hex'));
}

/** A main-chain block and its transactions (only those in `onlyTxs` when given); returns the block's tx count. */
function writeHeight(ctx: Ctx, height: number, onlyTxs?: ReadonlySet<number>): number {
  const { net, store, writer, pretty } = ctx;
  const { block, hash, time } = blockAt(store, ctx.spill, net, height);
  const placement = { block: hash, height, time };
  const spenders = block.txs.map((tx) => spendersOf(store, tx.hash, tx.outputs.length));
  block.txs.forEach((tx, ti) => {
    if (onlyTxs && !onlyTxs.has(ti)) return;
    writer.write(txPath(tx.txid, 'json'), renderTx(tx, net, spenders[ti]!, placement, pretty));
    writer.write(txPath(tx.txid, 'bin'), tx.raw);
    writer.write(txPath(tx.txid, 'hex'), tx.raw.toString('hex'));
  });
  const next = height < ctx.height ? store.heights.get(height + 1)?.hash : undefined;
  writeBlockFiles(writer, hash, renderBlock(block, net, spenders, next, pretty), block.raw);
  return block.txs.length;
}

/**
 * Renders the blocks at `heights` (`txs`: their transactions in all, the progress total; a
 * block document embeds every tx of its block, so a touched block costs its whole tx count).
 */
async function writeTxsAndBlocks(ctx: Ctx, heights: Iterable<number>, txs: number, touched?: ReadonlyMap<number, ReadonlySet<number>>): Promise<void> {
  ctx.progress.begin('txs and blocks');
  let done = 0;
  for (const h of heights) {
    done += writeHeight(ctx, h, touched?.get(h));
    ctx.progress.update(done, txs, 'txs');
    await ctx.writer.backpressure();
  }
}

function* range(from: number, to: number): Generator<number> {
  for (let h = from; h <= to; h++) yield h;
}

/** Side and orphan blocks: rendered every run (there are few); the ones gone since last time are deleted. */
function writeOffChain(ctx: Ctx, previous: readonly string[], changes: Changes | undefined): string[] {
  const { net, store, writer, pretty } = ctx;
  const current: string[] = [];
  for (const { key: hash, value: rec } of store.offchain.getRange()) {
    const block = parseBlock(rec.raw, { auxpow: net.auxpow });
    const spenders = block.txs.map((tx) => spendersOf(store, tx.hash, tx.outputs.length));
    writeBlockFiles(writer, hash, renderBlock(block, net, spenders, undefined, pretty), block.raw);
    current.push(hash);
  }
  const now = new Set(current);
  const gone = new Set([...previous, ...(changes?.removedBlocks ?? [])]);
  for (const hash of gone) if (!now.has(hash) && !changes?.appliedBlocks.has(hash)) deleteBlockFiles(writer, hash);
  return current;
}

/**
 * The /tx documents read back for address documents: a transaction usually
 * appears in several (its payer's and its payees'), so keep the recent ones.
 */
class TxTextCache {
  private readonly texts = new Map<string, string>();
  private size = 0;

  constructor(
    private readonly writer: SiteWriter,
    private readonly maxChars = 32 << 20,
  ) {}

  get(txid: string): string {
    let t = this.texts.get(txid);
    if (t !== undefined) return t;
    t = this.writer.readText(txPath(txid, 'json'));
    this.texts.set(txid, t);
    this.size += t.length;
    while (this.size > this.maxChars) {
      const [oldest, text] = this.texts.entries().next().value!;
      this.texts.delete(oldest);
      this.size -= text.length;
    }
    return t;
  }
}

/** One address document, assembled from the /tx documents already in the tree. */
function addressDocument(ctx: Ctx, cache: TxTextCache, address: string): string {
  const decoded = decodeAddress(address, ctx.net);
  if (!decoded) throw new Error(`internal: output address ${address} does not decode on ${ctx.net.name}`);
  const texts = new Map<string, string>();
  const txText = (txid: string) => {
    let t = texts.get(txid);
    if (t === undefined) texts.set(txid, (t = cache.get(txid)));
    return t;
  };
  const receivers = new Set<string>();
  const spenders = new Set<string>();
  let coinIn = 0n;
  let coinOut = 0n;
  const unspent: JsonValue[] = [];
  const prefix = addressPrefix(address);
  for (const { key, value } of ctx.store.addrOuts.getRange({ start: prefix, end: prefixEnd(prefix) })) {
    const vout = key.readUInt32BE(key.length - 4);
    const amount = value.readBigUInt64LE(0);
    const txHash = value.subarray(8, 40);
    const txid = toDisplayHex(txHash);
    txText(txid);
    receivers.add(txid);
    coinIn += amount;
    const spent = ctx.store.spent.get(outpointKey(txHash, vout));
    if (spent) {
      const spender = toDisplayHex(spent.subarray(0, 32));
      spenders.add(spender);
      coinOut += amount;
      txText(spender);
    } else {
      const out = (JSON.parse(txText(txid)) as { out: Record<string, JsonValue>[] }).out[vout]!;
      unspent.push({ tx: { hash: txid, n: vout }, ...out });
    }
  }
  return renderAddress(
    { address, hash160: decoded.hash160, txInCount: receivers.size, txOutCount: spenders.size, coinIn, coinOut, unspent, transactions: texts },
    ctx.pretty,
  );
}

/** Writes (or deletes) address documents; keeps the sorted list of capped addresses. */
async function writeAddresses(ctx: Ctx, changes: Changes | undefined): Promise<string[]> {
  const { store, writer } = ctx;
  await writer.flush(); // address documents embed the /tx documents, read back from disk
  ctx.progress.begin('addresses');
  const capped = new Set(changes ? ctx.meta.capped : []);
  const addresses: Iterable<string> = changes ? [...changes.addresses].sort() : (store.addrCount.getKeys() as Iterable<string>);
  // Work: an address document costs about its outputs (+1 for the address itself).
  const outputsOf = (address: string) => store.addrCount.get(address)?.readUInt32LE(0) ?? 0;
  let total = 0;
  if (changes) for (const a of changes.addresses) total += outputsOf(a) + 1;
  else total = store.addrOuts.getCount() + store.addrCount.getCount();
  const cache = new TxTextCache(writer);
  let done = 0;
  let n = 0;
  for (const address of addresses) {
    const count = outputsOf(address);
    capped.delete(address);
    if (count === 0) writer.delete(addressPath(address));
    else if (ctx.cap > 0 && count > ctx.cap) {
      capped.add(address);
      writer.write(addressPath(address), renderAddressCapped(count, ctx.pretty));
    } else writer.write(addressPath(address), addressDocument(ctx, cache, address));
    done += count + 1;
    ctx.progress.update(done, total, 'outputs');
    if (++n % 64 === 0) await writer.backpressure();
  }
  return [...capped].sort();
}

/**
 * Every name with its 64 query variants (expires_in moves with every block), and names.json
 * listing them all; names left without operations are deleted.
 */
async function writeNames(ctx: Ctx, changes: Changes | undefined): Promise<[number, number]> {
  const depth = ctx.net.nameExpirationDepth!(ctx.height);
  let names = 0;
  let nonUtf8 = 0;
  let current: Buffer | undefined;
  let history: NameRecord[] = [];
  const seen = new Set<string>();
  const list: NameListEntry[] = [];
  const flush = () => {
    if (!current) return;
    names++;
    const last = history[history.length - 1]!;
    if (changes) seen.add(current.toString('latin1'));
    const enc = encodeNamePath(current);
    for (const v of ALL_NAME_VARIANTS) ctx.writer.write(namePathEncoded(enc, v), renderName(history, v, ctx.pretty));
    list.push({ name: last.name, path: enc, height: last.height, expiresIn: last.expiresIn });
  };
  ctx.progress.begin('names');
  const ops = ctx.store.names.getCount();
  let done = 0;
  for (const { value: rec } of ctx.store.names.getRange() as Iterable<{ value: NameOpRecord }>) {
    ctx.progress.update(done++, ops, 'name ops');
    const nameBytes = Buffer.from(rec.name);
    if (!current || !current.equals(nameBytes)) {
      flush();
      current = nameBytes;
      history = [];
      if (names % 64 === 0) await ctx.writer.backpressure();
    }
    const name = decodeNameBytes(nameBytes);
    const value = decodeNameBytes(rec.value);
    if (!name.utf8 || !value.utf8) nonUtf8++;
    history.push({
      name: name.text,
      value: value.text,
      txid: rec.txid,
      address: rec.address,
      expiresIn: rec.height + depth - ctx.height,
      block: rec.block,
      height: rec.height,
      txIndex: rec.txIndex,
      rawtx: rec.rawtx,
      mrklBranch: rec.mrklBranch,
    });
  }
  flush();
  ctx.progress.update(done, ops, 'name ops');
  ctx.writer.write(NAMES_PATH, renderNameList(ctx.height, list, ctx.pretty));
  for (const gone of changes?.names ?? []) {
    if (seen.has(gone)) continue;
    const enc = encodeNamePath(Buffer.from(gone, 'latin1'));
    for (const v of ALL_NAME_VARIANTS) ctx.writer.delete(namePathEncoded(enc, v));
  }
  return [names, nonUtf8];
}

function chainCounters(ctx: Ctx, side: number, orphan: number): ChainCounters {
  const c = emptyCounters(ctx.namecoin);
  const t = ctx.meta.totals;
  const tip = ctx.store.heights.get(ctx.height)!;
  let coins = 0n;
  for (let h = 0; h <= ctx.height; ) {
    // Subsidy is constant within a halving interval: add whole intervals at once.
    const end = Math.min(ctx.height, (Math.floor(h / ctx.net.halvingInterval) + 1) * ctx.net.halvingInterval - 1);
    coins += blockSubsidy(ctx.net, h) * BigInt(end - h + 1);
    h = end + 1;
  }
  Object.assign(c, { mainBlocks: ctx.height + 1, sideBlocks: side, orphanBlocks: orphan, mainSize: t.size, txs: t.txs, txins: t.txins, txouts: t.txouts });
  Object.assign(c, { coins, work: BigInt(tip.work), nameOps: t.nameOps, tipTime: tip.time });
  for (const k of Object.keys(c.scriptTypes)) c.scriptTypes[k] = t.scriptTypes[k] ?? 0;
  for (const k of Object.keys(c.p2shTypes)) c.p2shTypes[k] = t.p2shTypes[k] ?? 0;
  return c;
}

function recordEffects(changes: Changes | undefined, fx: BlockEffects): void {
  if (!changes) return;
  for (const [h, i] of fx.spentTxs) {
    let txs = changes.touched.get(h);
    if (!txs) changes.touched.set(h, (txs = new Set()));
    txs.add(i);
  }
  for (const a of fx.addresses) changes.addresses.add(a);
  for (const n of fx.names) changes.names.add(n);
}

/**
 * Builds the site for `source` at `height`. When `<out>` holds a snapshot that
 * the persistent index describes, only the difference is done (rolling back a
 * reorg first); otherwise everything is built. The tree is prepared beside
 * `outDir` (hard links to unchanged files) and swapped in at the end: a
 * failure or kill leaves `outDir` as it was, and the next run recovers.
 */
export async function buildSnapshot(opts: BuildOptions): Promise<BuildReport> {
  // Where the build may write is settled before any work (README "Safety rules").
  const targets = checkTargets(opts.outDir, opts.stateDir, opts.force);
  const lock = acquireLock(targets.outDir);
  try {
    recoverInterrupted(targets.outDir);
    prepareStateDir(targets.stateDir);
    return await buildLocked(opts, targets);
  } catch (e) {
    if (!isStoreError(e)) throw e;
    const err = ioError(e, join(targets.stateDir, 'lmdb'), 'index');
    err.nativeDiagnostic = true;
    throw err;
  } finally {
    lock.release();
  }
}

async function buildLocked(opts: BuildOptions, { outDir, stateDir }: Targets): Promise<BuildReport> {
  // Every block of every source is validated on its way in (src/source/validated.ts).
  const source = validatedSource(opts.source, { skipInvalid: opts.skipInvalid });
  const net = source.network;
  const namecoin = isNamecoin(net);
  const progress = opts.progress ?? new Progress(null);

  const tip = await source.tip();
  let height = opts.height ?? tip.height;
  const requested = height;
  if (!Number.isInteger(height) || height < 0) throw new Error(`--height ${height} is not a valid height`);
  if (height > tip.height) {
    if (source.skipped.length > 0) height = tip.height; // skipInvalid: the source left invalid blocks out below the height asked for
    else {
      await source.hashAt(height); // the source's own error says why (missing files, blocks that do not connect)
      throw new Error(`--height ${height} is above the tip of ${source.description} (height ${tip.height})`);
    }
  }
  const cap = opts.maxAddressTxouts ?? 10000;
  const hosts = opts.hosts ?? HOSTS;
  const options = JSON.stringify({ pretty: opts.pretty ?? false, cap, hosts: [...hosts].sort(), out: outDir });

  let store = openStore(stateDir);
  let meta = readMeta(store);
  let fullReason = opts.full ? 'asked for a full build' : reuseProblem(meta, join(outDir, MANIFEST_PATH), net, options);
  if (!fullReason && meta && meta.tip >= 0 && (await source.hashAt(0)) !== store.heights.get(0)?.hash) fullReason = 'the source is another chain';
  if (fullReason || !meta) {
    if (fullReason && existsSync(join(outDir, MANIFEST_PATH))) progress.note(`full build: ${fullReason}`);
    await store.close();
    clearStateDir(stateDir);
    store = openStore(stateDir);
    meta = emptyMeta(net, options);
  }
  const full = fullReason !== undefined;
  meta.generation = 'dirty';
  saveMeta(store, meta);

  const spill = new BlocksSpill(join(stateDir, 'blocks.spill'));
  let writer: SiteWriter | undefined;
  let staging: string | undefined;
  let failed = false;
  try {
    const changes: Changes | undefined = full
      ? undefined
      : { heights: new Set(), touched: new Map(), removedTxs: new Set(), removedBlocks: new Set(), appliedBlocks: new Set(), addresses: new Set(), names: new Set() };
    const resolve = full ? undefined : prevoutResolver(store, spill, net);

    // The highest height where the index and the source agree.
    let fork = Math.min(meta.tip, height);
    while (fork >= 0 && store.heights.get(fork)!.hash !== (await source.hashAt(fork))) fork--;
    const rolledBackTo = fork < meta.tip ? fork : undefined;
    const rollback = rolledBackTo !== undefined ? ['rollback'] : [];
    progress.stages([...rollback, 'scan', 'staging', 'txs and blocks', 'addresses', ...(namecoin ? ['names'] : []), 'site files', 'manifest']);

    if (rolledBackTo !== undefined) progress.begin('rollback');
    for (let h = meta.tip; h > fork; h--) {
      const { block, hash } = blockAt(store, spill, net, h);
      const fx = undoBlock(store, net, namecoin, block, h, resolve);
      addDelta(meta.totals, fx.delta, -1);
      recordEffects(changes, fx);
      changes?.removedBlocks.add(hash);
      for (const tx of block.txs) changes?.removedTxs.add(tx.txid);
      meta.duplicates = meta.duplicates.filter((d) => d.height !== h);
      progress.update(meta.tip - h + 1, meta.tip - fork, 'blocks');
    }
    meta.tip = fork;

    progress.begin('scan');
    // Progress in bytes (or txs) rather than blocks: blocks grow along the chain.
    const scanWork = (await source.scanWork?.(height, fork + 1)) ?? { unit: 'blocks', total: height - fork };
    let scanned = 0;
    let work = fork >= 0 ? BigInt(store.heights.get(fork)!.work) : 0n;
    let prevHash = fork >= 0 ? store.heights.get(fork)!.hash : undefined;
    for await (const sb of source.mainChain(height, fork + 1)) {
      if (sb.height !== meta.tip + 1) throw new Error(`${source.description} delivered height ${sb.height}, expected ${meta.tip + 1}`);
      const block: Block = sb.block!; // parsed and validated by the wrapper
      if (prevHash !== undefined && toDisplayHex(block.header.prevHash) !== prevHash) {
        throw new Error(`block ${sb.hash} at height ${sb.height} does not build on ${prevHash}: the chain changed during the build; run again`);
      }
      const at = spill.append(sb.raw);
      work += blockWork(block.header.bits);
      const fx = applyBlock(store, net, namecoin, block, { hash: sb.hash, ...at, time: block.header.time, work: work.toString() }, sb.height, resolve);
      addDelta(meta.totals, fx.delta, 1);
      recordEffects(changes, fx);
      changes?.heights.add(sb.height);
      changes?.appliedBlocks.add(sb.hash);
      if (fx.duplicate) meta.duplicates.push({ txid: fx.duplicate, height: sb.height });
      meta.tip = sb.height;
      prevHash = sb.hash;
      scanned += scanWork.unit === 'bytes' ? sb.raw.length : scanWork.unit === 'txs' ? block.txs.length : 1;
      progress.update(scanned, scanWork.total, scanWork.unit);
    }
    if (meta.tip !== height && source.stoppedAt) {
      if (meta.tip < 0) throw new Error(`${source.stoppedAt.message}; nothing is left to build`);
      height = meta.tip; // skipInvalid: the snapshot ends below the invalid block
    }
    if (meta.tip !== height) throw new Error(`${source.description} stopped at height ${meta.tip}, before ${height}`);
    if (changes && fork >= 0 && !changes.touched.has(fork)) changes.touched.set(fork, new Set()); // its next_block appears or changes

    let side = 0;
    let orphan = 0;
    store.offchain.clearSync();
    for await (const ob of source.offChain(height)) {
      await store.offchain.put(ob.hash, { kind: ob.kind, height: ob.height ?? null, raw: ob.raw });
      if (ob.kind === 'side') side++;
      else orphan++;
    }

    progress.begin('staging');
    staging = createStaging(outDir);
    if (full) store.files.clearSync();
    else linkTree(publishedDir(outDir)!, staging, new Set([MANIFEST_PATH]));
    writer = new SiteWriter(staging, store.files, full ? 'fresh' : 'update');
    const ctx: Ctx = { net, namecoin, store, spill, writer, height, pretty: opts.pretty ?? false, cap, progress, meta };

    if (changes) {
      for (const h of changes.heights) changes.touched.delete(h); // rendered whole
      const dirty = [...new Set([...changes.heights, ...changes.touched.keys()])].filter((h) => h <= height).sort((a, b) => a - b);
      const txs = dirty.reduce((n, h) => n + store.heights.get(h)!.delta.txs, 0);
      await writeTxsAndBlocks(ctx, dirty, txs, changes.touched);
      for (const txid of changes.removedTxs) {
        if (store.txloc.get(fromDisplayHex(txid))) continue;
        for (const ext of ['json', 'bin', 'hex'] as const) writer.delete(txPath(txid, ext));
      }
    } else await writeTxsAndBlocks(ctx, range(0, height), meta.totals.txs);
    meta.offchain = writeOffChain(ctx, meta.offchain, changes);
    meta.capped = await writeAddresses(ctx, changes);
    const [names, nonUtf8Names] = namecoin ? await writeNames(ctx, changes) : [0, 0];

    progress.begin('site files');
    const tipHash = store.heights.get(height)!.hash;
    writer.write(STATS_PATH, renderStats(chainCounters(ctx, side, orphan), store.addrCount.getCount(), namecoin, ctx.pretty));
    const info: SiteInfo = { network: net.name, height, tip: tipHash, cappedAddresses: meta.capped };
    writer.write(SITE_INFO_PATH, toJson(info as unknown as JsonValue));
    for (const [rel, content] of await hostFiles(outDir, info, { hosts })) writer.write(rel, content);
    const offchain = [...store.offchain.getRange()].map(({ key, value }) => ({ hash: key, kind: value.kind, height: value.height }));
    for (const [rel, content] of await uiFiles({ ...info, offchain })) writer.write(rel, content);
    for (const [rel, content] of contractFiles()) writer.write(rel, content);

    await writer.flush();
    await store.root.flushed;
    progress.begin('manifest');
    const listed = store.files.getCount();
    const manifest = writeManifest(store.files, join(staging, MANIFEST_PATH), (done) => progress.update(done, listed, 'files'));
    progress.end();

    await opts.beforePublish?.();
    checkTargets(opts.outDir, opts.stateDir, opts.force); // nothing foreign appeared meanwhile
    await publish(staging, outDir, opts.onPublishStep);
    meta.generation = manifest.sha256;
    saveMeta(store, meta);
    return {
      network: net.name,
      height,
      tip: tipHash,
      mode: full ? 'full' : 'incremental',
      fullReason,
      rolledBackTo,
      blocks: { main: height + 1, side, orphan },
      txs: meta.totals.txs,
      files: manifest.files,
      bytes: manifest.bytes,
      ...writer.counts,
      names,
      addresses: store.addrCount.getCount(),
      cappedAddresses: meta.capped.length,
      nonUtf8Names,
      duplicateTxids: meta.duplicates.map((d) => d.txid),
      skippedInvalid: [...source.skipped],
      requestedHeight: height !== requested ? requested : undefined,
      warnings: [...source.warnings],
      stageSeconds: progress.stageTimes,
    };
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    // After a failure, cleaning up must not hide it (a full disk can fail these too).
    const step = async (f: () => unknown) => {
      try {
        await f();
      } catch (e) {
        if (!failed) throw e;
      }
    };
    await step(() => writer?.close());
    await step(() => spill.close());
    await step(() => store.close());
    await step(() => staging !== undefined && currentRelease(outDir) !== basename(staging) && rmSync(staging, { recursive: true, force: true }));
  }
}
