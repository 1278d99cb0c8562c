import { scriptAddress } from '../chain/address.js';
import { parseBlock, type Block } from '../chain/block.js';
import { toDisplayHex } from '../chain/hash.js';
import { TwoGenerationCache } from '../chain/two-gen-cache.js';
import { isCoinbaseInput, type Tx } from '../chain/tx.js';
import { blockWork } from '../chain/work.js';
import type { ValidatedSource } from '../source/block-validation.js';
import { BlockApplier, undoBlock, type BlockEffects, type BlockToApply, type PrevoutResolver } from './indexer.js';
import type { ChainIndex } from './query.js';
import { forgetUndone, saveMeta, saveUndone, type IndexMeta } from './state.js';
import { offChainValue } from './rows.js';
import { addDelta } from './stats.js';
import { IndexWriteThread } from './commit-thread.js';

/**
 * Bytes of blocks applied in one LMDB transaction during the scan: small blocks share a commit
 * (and the pages they all touch are copied once); a larger batch holds more parsed blocks alive
 * (more GC) and makes the LMDB file grow by the pages one transaction dirties.
 */
const BATCH_BYTES = 1 << 20;

/** Documents that change in this run (incremental builds only; a full build renders everything). */
export interface Changes {
  /** The height of the snapshot this build follows (the published one). */
  fromHeight: number;
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

/** What the sync reports progress to. */
export interface SyncProgress {
  begin(stage: string): void;
  update(done: number, total: number, unit: string): void;
}

export interface SyncResult {
  /** The snapshot height (below the one asked for when skipInvalid stopped the chain). */
  height: number;
  side: number;
  orphan: number;
  /** undefined for a full build. */
  changes: Changes | undefined;
}

/** Finds an earlier transaction through the index: its bytes sit in the block spill. */
function prevoutResolver(index: ChainIndex): PrevoutResolver {
  const related = new TwoGenerationCache<string, { height: number; index: number; addresses: string[] }>(1 << 15);
  const outputAddresses = (tx: Tx) => tx.outputs.map((o) => scriptAddress(o.script, index.net)).filter((a): a is string => a !== undefined);
  return (prevHash) => {
    const key = prevHash.toString('hex');
    const hit = related.get(key);
    if (hit) return hit;
    const found = index.findTx(prevHash);
    if (!found) return undefined;
    const addresses = new Set(outputAddresses(found.tx));
    for (const input of found.tx.inputs) {
      if (isCoinbaseInput(input)) continue;
      const out = index.findTx(input.prevHash)?.tx.outputs[input.prevIndex];
      const a = out && scriptAddress(out.script, index.net);
      if (a !== undefined) addresses.add(a);
    }
    const res = { height: found.loc.height, index: found.loc.index, addresses: [...addresses] };
    related.set(key, res);
    return res;
  };
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
 * Undoes the index's tip block together with the meta row, in one transaction. A block of the
 * published snapshot is recorded as undone in it too: a build killed after this brings the index
 * back to the published snapshot by applying it again (restorePublished).
 */
function undoTip(index: ChainIndex, meta: IndexMeta, resolve: PrevoutResolver | undefined): { block: Block; hash: string; fx: BlockEffects } {
  const { store, net } = index;
  const h = meta.tip;
  const rec = index.heightRecord(h);
  if (!rec) throw new Error(`index: no block at height ${h}`);
  const { block, hash } = index.blockAt(h);
  const p = meta.published;
  const undone = p !== null && h <= p.height && (meta.undone.length === 0 || h < meta.undone[0]!.height) ? { height: h, hash, offset: rec.offset, length: rec.length, time: rec.time, work: rec.work } : undefined;
  const fx = store.root.transactionSync(() => {
    const fx = undoBlock(store, net, block, h, resolve);
    addDelta(meta.totals, fx.delta, -1);
    meta.addresses += fx.addressesChange;
    meta.duplicates = meta.duplicates.filter((d) => d.height !== h);
    meta.tip = h - 1;
    if (undone) saveUndone(store, undone);
    saveMeta(store, meta);
    return fx;
  });
  if (undone) meta.undone.unshift(undone);
  return { block, hash, fx };
}

/** Adds applied blocks' figures to the meta row (meta.tip follows). */
function addApplied(meta: IndexMeta, blocks: readonly BlockToApply[], effects: readonly BlockEffects[]): void {
  blocks.forEach(({ height }, i) => {
    const fx = effects[i]!;
    addDelta(meta.totals, fx.delta, 1);
    meta.addresses += fx.addressesChange;
    if (fx.duplicate) meta.duplicates.push({ txid: fx.duplicate, height });
    meta.tip = height;
  });
}

/**
 * Brings the index back to the snapshot it was published with, after a build that was killed
 * once it had changed the index: the blocks above the published chain's part it kept are undone,
 * then the published blocks it undid are applied again from the spill (their bytes stay there),
 * each step in one transaction with the meta row. Throws when the index cannot get there (the
 * spill or a row does not hold what the meta says): a damaged index. Returns the blocks undone
 * and applied again.
 */
export function restorePublished(index: ChainIndex, meta: IndexMeta): { undone: number; applied: number } {
  const p = meta.published;
  if (!p) throw new Error('the index was never published');
  const { store, net } = index;
  const keep = meta.undone.length > 0 ? meta.undone[0]!.height - 1 : p.height;
  const last = meta.undone.at(-1);
  if (last && (last.height !== p.height || meta.undone.some((u, i) => u.height !== keep + 1 + i))) {
    throw new Error(`its undone blocks (heights ${meta.undone.map((u) => u.height).join(', ')}) do not reach the published tip ${p.height}`);
  }
  let undone = 0;
  while (meta.tip > keep) {
    undoTip(index, meta, undefined);
    undone++;
  }
  if (meta.tip !== keep) throw new Error(`its tip ${meta.tip} is below height ${keep}, where the published chain's undone blocks start`);
  const applier = new BlockApplier(store, net);
  let applied = 0;
  while (meta.undone.length > 0) {
    const u = meta.undone[0]!;
    const block = parseBlock(index.spill.read(u), { auxpow: net.auxpow });
    if (block.header.id !== u.hash) throw new Error(`the block spill at offset ${u.offset} holds block ${block.header.id}, not ${u.hash} (height ${u.height})`);
    const { height, ...record } = u;
    const blocks = [{ block, height, record }];
    store.root.transactionSync(() => {
      addApplied(meta, blocks, applier.apply(blocks));
      forgetUndone(store, height);
      saveMeta(store, meta);
    });
    meta.undone.shift();
    applied++;
  }
  if (meta.tip !== p.height || index.hashAt(p.height) !== p.hash) {
    throw new Error(`it holds block ${index.hashAt(p.height) ?? 'none'} at height ${p.height}, not the published snapshot's tip ${p.hash}`);
  }
  return { undone, applied };
}

/** The highest height (≤ `height`) where the index and the source agree; -1: none. */
export async function findFork(source: ValidatedSource, index: ChainIndex, meta: IndexMeta, height: number): Promise<number> {
  let fork = Math.min(meta.tip, height);
  while (fork >= 0 && index.hashAt(fork) !== (await source.hashAt(fork))) fork--;
  return fork;
}

/** What syncIndex brings where. */
export interface SyncRequest {
  source: ValidatedSource;
  /** The index (its network with it) and its meta row, which follows every commit. */
  index: ChainIndex;
  meta: IndexMeta;
  /** The highest height where the index and the source agree (findFork); -1: none. */
  fork: number;
  /** The snapshot height asked for. */
  height: number;
  /** A full build: the index starts empty, no changes are collected. */
  full: boolean;
  progress: SyncProgress;
  /** Sees each main-chain block applied, in order. */
  onBlock?: (block: Block, hash: string) => void | Promise<void>;
}

/**
 * Brings the index to the source's chain at `height`: undoes the blocks above `fork`, applies
 * the source's blocks above it, records the off-chain blocks. `meta` (tip, totals, duplicates)
 * follows, committed with each undo and, applied in place (incremental), with each batch. With
 * `full` false, also collects which documents change.
 */
export async function syncIndex(req: SyncRequest): Promise<SyncResult> {
  const { source, index, meta, fork, full, progress } = req;
  let { height } = req;
  const { store, net } = index;
  const changes: Changes | undefined = full
    ? undefined
    : { fromHeight: meta.tip, heights: new Set(), touched: new Map(), removedTxs: new Set(), removedBlocks: new Set(), appliedBlocks: new Set(), addresses: new Set(), names: new Set() };
  const resolve = full ? undefined : prevoutResolver(index);

  if (fork < meta.tip) progress.begin('rollback');
  const top = meta.tip;
  while (meta.tip > fork) {
    const h = meta.tip;
    const { block, hash, fx } = undoTip(index, meta, resolve);
    recordEffects(changes, fx);
    changes?.removedBlocks.add(hash);
    for (const tx of block.txs) changes?.removedTxs.add(tx.txid);
    progress.update(top - h + 1, top - fork, 'blocks');
  }

  // A full build hands each batch's rows to the index write thread (the other core) and goes on
  // with the next batch while it commits; an incremental one applies in place, because its
  // prevout resolver reads the txs of the batch back through the index.
  const writer = full ? IndexWriteThread.start(store.dir) : undefined;
  try {
    await scanMainChain({ ...req, changes, resolve, applier: new BlockApplier(store, net, writer) });
  } finally {
    await writer?.close();
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
    store.offchain.putSync(ob.hash, offChainValue.encode({ kind: ob.kind, height: ob.height ?? null, raw: ob.raw }));
    if (ob.kind === 'side') side++;
    else orphan++;
  }
  if (changes) for (const h of changes.heights) changes.touched.delete(h); // rendered whole
  return { height, side, orphan, changes };
}

/** A sync's scan: the request, with what the sync collects changes into and applies through. */
interface ScanContext extends SyncRequest {
  changes: Changes | undefined;
  resolve: PrevoutResolver | undefined;
  applier: BlockApplier;
}

/** Applies the source's main-chain blocks above `fork` up to `height` in batches (meta.tip follows). */
async function scanMainChain({ source, index, meta, fork, height, full, progress, onBlock, changes, resolve, applier }: ScanContext): Promise<void> {
  // Applied in place (incremental), the meta row is committed with each batch's rows.
  const persist = !full;
  progress.begin('scan');
  // Progress in bytes (or txs) rather than blocks: blocks grow along the chain.
  const scanWork = (await source.scanWork?.(height, fork + 1)) ?? { unit: 'blocks', total: height - fork };
  let scanned = 0;
  let work = fork >= 0 ? BigInt(index.heightRecord(fork)!.work) : 0n;
  let prevHash = fork >= 0 ? index.hashAt(fork) : undefined;
  // Blocks are applied in batches, one LMDB transaction each: fewer commits, and the pages a
  // batch touches more than once are written once (see BATCH_BYTES).
  let batch: BlockToApply[] = [];
  let batchBytes = 0;
  const { spill } = index;
  const applyBatch = async () => {
    // Applied in place (incremental), the meta row is committed with the batch's rows: a kill leaves a consistent index.
    const effects = persist
      ? index.store.root.transactionSync(() => {
          const effects = applier.apply(batch, resolve);
          addApplied(meta, batch, effects);
          saveMeta(index.store, meta);
          return effects;
        })
      : applier.apply(batch, resolve);
    if (!persist) addApplied(meta, batch, effects);
    batch.forEach(({ height, record }, i) => {
      recordEffects(changes, effects[i]!);
      changes?.heights.add(height);
      changes?.appliedBlocks.add(record.hash);
    });
    batch = [];
    batchBytes = 0;
    await applier.settle(1); // the batch before this one is committed: its rows are read from the index again
  };
  let expect = fork + 1;
  for await (const sb of source.mainChain(height, fork + 1)) {
    if (sb.height !== expect) throw new Error(`${source.description} delivered height ${sb.height}, expected ${expect}`);
    const block: Block = sb.block!; // parsed and validated by the wrapper
    if (prevHash !== undefined && toDisplayHex(block.header.prevHash) !== prevHash) {
      throw new Error(`block ${sb.hash} at height ${sb.height} does not build on ${prevHash}: the chain changed during the build; run again`);
    }
    applier.check();
    await onBlock?.(block, sb.hash);
    const at = spill.append(sb.raw);
    work += blockWork(block.header.bits);
    batch.push({ block, height: sb.height, record: { hash: sb.hash, ...at, time: block.header.time, work: work.toString() }, addresses: sb.addresses });
    batchBytes += sb.raw.length;
    if (batchBytes >= BATCH_BYTES) await applyBatch();
    expect++;
    prevHash = sb.hash;
    scanned += scanWork.unit === 'bytes' ? sb.raw.length : scanWork.unit === 'txs' ? block.txs.length : 1;
    progress.update(scanned, scanWork.total, scanWork.unit);
  }
  if (batch.length > 0) await applyBatch();
  await applier.settle(); // every row committed: what follows reads the index
}

/** The snapshot height asked for (`asked`, else the source's tip) and the one to build, checked against the source. */
export async function snapshotHeight(source: ValidatedSource, asked: number | undefined): Promise<{ requested: number; height: number }> {
  const tip = await source.tip();
  const requested = asked ?? tip.height;
  if (!Number.isInteger(requested) || requested < 0) throw new Error(`--height ${requested} is not a valid height`);
  if (requested <= tip.height) return { requested, height: requested };
  if (source.skipped.length > 0) return { requested, height: tip.height }; // skipInvalid: the source left invalid blocks out below the height asked for
  await source.hashAt(requested); // the source's own error says why (missing files, blocks that do not connect)
  throw new Error(`--height ${requested} is above the tip of ${source.description} (height ${tip.height})`);
}
