import { scriptAddress } from '../chain/address.js';
import type { Block } from '../chain/block.js';
import { branchFromLevels, txMerkleLevels } from '../chain/merkle.js';
import { nameOutputs } from '../chain/name-script.js';
import { isNamecoin, type Network } from '../chain/networks.js';
import { classifyScript, redeemScriptType } from '../chain/script.js';
import { isCoinbase, isCoinbaseInput, type TxIn } from '../chain/tx.js';
import { addressRange, addrOutKey, addrOutValue, heightValue, nameOpKey, nameOpValue, outputKey, spenderValue, txLocationValue, u32le, type HeightRecord } from './rows.js';
import { emptyDelta, type Counters } from './stats.js';
import { directRows, RowBatch, type RowSink } from './row-batch.js';
import { heightRecordAt, type Store } from './store.js';
import type { IndexWriteThread } from './commit-thread.js';

/**
 * For the transaction an input spends from: its height, and every address
 * whose document embeds that transaction (those its outputs pay and those its
 * inputs spend from). Only incremental builds need it.
 */
export type PrevoutResolver = (prevHash: Buffer) => { height: number; index: number; addresses: Iterable<string> } | undefined;

/** What applying or undoing one block touched, for deciding which documents change. */
export interface BlockEffects {
  /** Transactions (height, index in block) whose outputs this block spends: their next_in changes. */
  spentTxs: [number, number][];
  /** Addresses paid by this block and, with a resolver, those whose outputs it spends (none listed by a full build's scan, which renders every document). */
  addresses: Set<string>;
  /** Names operated on (bytes as latin1). */
  names: Set<string>;
  /** A coinbase txid seen before (BIP30), when applying. */
  duplicate: string | undefined;
  delta: Counters;
  /**
   * Addresses paid for the first time (applying, +) or whose last output was undone (−); 0 in a
   * full build's scan: its address stage counts them in its pass over every address
   * (`ChainIndex.addressesWithOutputs`, `meta.addresses` set by the build).
   */
  addressesChange: number;
}

/** One main-chain block to apply: the parsed block, its height and its record without the figures. */
export interface BlockToApply {
  block: Block;
  height: number;
  record: Omit<HeightRecord, 'delta'>;
  /** The address each output pays (null: none), every output in order, when a scan thread found them; else found here. */
  addresses?: readonly (string | null)[] | undefined;
}

const bump = (rec: Record<string, number>, key: string, by = 1) => {
  rec[key] = (rec[key] ?? 0) + by;
};

const newEffects = (): BlockEffects => ({ spentTxs: [], addresses: new Set(), names: new Set(), duplicate: undefined, delta: emptyDelta(), addressesChange: 0 });

/** The spent key of the output an input spends (its position, from its txloc row) and whether that output is P2SH. */
function spentOutput(loc: Buffer | undefined, input: TxIn): { key: Buffer; p2sh: boolean } | undefined {
  if (!loc) return undefined;
  const l = txLocationValue.decode(loc);
  return { key: outputKey.encode({ height: l.height, txIndex: l.index, vout: input.prevIndex }), p2sh: l.p2sh.includes(input.prevIndex) };
}

/**
 * The rows a batch wrote that the scan reads back (txloc, coinbases), while they are
 * not committed yet: the write thread commits a batch while this one applies the next.
 */
interface PendingBatch {
  txloc: Map<string, Buffer>;
  coinbases: Set<string>;
  /** Resolves once the write thread committed its rows (rejects with LMDB's error). */
  committed: Promise<void>;
}

/**
 * How many addresses a block made used (+: paid for the first time) or unused (−: its last
 * output undone). `counts` holds how many outputs each address gained (or lost) in the block,
 * whose rows are already in this transaction: an address that gained `by` outputs is new when it
 * now has exactly `by`, one that lost outputs is gone when it has none. Counts at most `by` + 1
 * rows per address, so a hub address costs no more than any other.
 */
function addressesChange(store: Store, counts: ReadonlyMap<string, number>): number {
  let change = 0;
  for (const [address, by] of counts) {
    if (by === 0) continue;
    const now = store.addrOuts.getKeysCount({ ...addressRange(address), limit: Math.max(by, 0) + 1 });
    if (by > 0 && now === by) change++;
    else if (by < 0 && now === 0) change--;
  }
  return change;
}

/**
 * Records batches of main-chain blocks in the index: spends (keyed by the position of the spent
 * output), tx locations (with their P2SH outputs), address outputs, name operations (with their
 * merkle branch), each block's height record with the figures it adds (and, applied in
 * place, how many addresses it made used: `addressesChange`). Without a write thread: one LMDB transaction per batch on this thread,
 * which reads its own writes (what an incremental build's prevout resolver needs). With one
 * (a full build): each batch's rows go to that thread (commit-thread.ts), which runs the B-tree
 * inserts and the commit on the other core while this thread parses and applies the next batch;
 * the rows the scan reads back come from the pending batches first.
 */
export class BlockApplier {
  private readonly pending: PendingBatch[] = [];
  readonly namecoin: boolean;

  constructor(
    private readonly store: Store,
    readonly net: Network,
    private readonly writer?: IndexWriteThread,
  ) {
    this.namecoin = isNamecoin(net);
  }

  /** Applies one batch; with a write thread, call `settle` between batches. */
  apply(blocks: readonly BlockToApply[], resolve?: PrevoutResolver): BlockEffects[] {
    if (!this.writer) return this.store.root.transactionSync(() => this.applyRows(blocks, directRows(this.store), undefined, resolve));
    const rows = new RowBatch();
    const batch: PendingBatch = { txloc: new Map(), coinbases: new Set(), committed: Promise.resolve() };
    this.pending.push(batch);
    const effects = this.applyRows(blocks, rows, batch, resolve);
    batch.committed = this.writer.write(rows);
    return effects;
  }

  /**
   * Throws the write thread's failure, if a batch failed: the scan stops there rather than at
   * the next `settle`, so a full disk is reported where it happened (the index), not by
   * whatever fills it next.
   */
  check(): void {
    this.writer?.check();
  }

  /** Waits until at most `max` batches are uncommitted (0: all committed and visible to reads). */
  async settle(max = 0): Promise<void> {
    let shifted = false;
    while (this.pending.length > max) {
      await this.pending[0]!.committed; // a failed commit throws LMDB's error
      this.pending.shift();
      shifted = true;
    }
    // This thread's read transaction may predate that commit (lmdb-js renews it once per event turn).
    if (shifted) this.store.root.resetReadTxn();
  }

  private applyRows(blocks: readonly BlockToApply[], rows: RowSink, batch: PendingBatch | undefined, resolve?: PrevoutResolver): BlockEffects[] {
    // In place, each block's new addresses are counted from the rows it just wrote; a full build
    // (rows on the write thread, not readable yet) counts them in its address stage's pass.
    return blocks.map((b) => {
      const counts = batch ? undefined : new Map<string, number>();
      const fx = applyOne({ applier: this, rows, batch, resolve, counts }, b);
      if (counts) fx.addressesChange = addressesChange(this.store, counts);
      return fx;
    });
  }

  /** The txloc row of `hash`: from the pending batches (newest first), else the index. */
  txloc(hash: Buffer): Buffer | undefined {
    if (this.pending.length > 0) {
      const key = hash.toString('latin1');
      for (let i = this.pending.length - 1; i >= 0; i--) {
        const v = this.pending[i]!.txloc.get(key);
        if (v) return v;
      }
    }
    return this.store.txloc.get(hash);
  }

  coinbaseSeen(hash: Buffer): boolean {
    if (this.pending.some((p) => p.coinbases.has(hash.toString('latin1')))) return true;
    return this.store.coinbases.get(hash) !== undefined;
  }

}

/** Where applyOne writes a block's rows and what it reads back through. */
interface ApplyContext {
  /** Its network (and whether names are indexed) and the rows of pending batches. */
  applier: BlockApplier;
  rows: RowSink;
  /** The pending batch the rows join (rows on the write thread), else undefined (applied in place). */
  batch: PendingBatch | undefined;
  resolve: PrevoutResolver | undefined;
  /** Applied in place: outputs gained per address in this block (for addressesChange). */
  counts: Map<string, number> | undefined;
}

function applyOne({ applier, rows, batch, resolve, counts }: ApplyContext, { block, height, record, addresses }: BlockToApply): BlockEffects {
  const { net, namecoin } = applier;
  const fx = newEffects();
  const d = fx.delta;
  d.size = block.raw.length;
  const cb = block.txs[0];
  if (cb && isCoinbase(cb)) {
    if (applier.coinbaseSeen(cb.hash)) fx.duplicate = cb.txid;
    else {
      rows.put('coinbases', cb.hash, u32le.encode(height));
      batch?.coinbases.add(cb.hash.toString('latin1'));
    }
  }
  // One merkle tree per block, for the branches of all its name operations: the one validation built.
  let levels: ReturnType<typeof txMerkleLevels> | null = null;
  let outputs = 0;
  for (let ti = 0; ti < block.txs.length; ti++) {
    const tx = block.txs[ti]!;
    d.txs++;
    d.txins += tx.inputs.length;
    d.txouts += tx.outputs.length;
    for (let vin = 0; vin < tx.inputs.length; vin++) {
      const input = tx.inputs[vin]!;
      if (isCoinbaseInput(input)) continue;
      const spent = spentOutput(applier.txloc(input.prevHash), input);
      if (spent) {
        rows.put('spent', spent.key, spenderValue.encode({ txHash: tx.hash, vin }));
        if (spent.p2sh) bump(d.p2shTypes, redeemScriptType(input.script, namecoin) ?? 'unknown');
      }
      if (resolve) {
        const prev = resolve(input.prevHash);
        if (prev) {
          fx.spentTxs.push([prev.height, prev.index]);
          for (const a of prev.addresses) fx.addresses.add(a);
        }
      }
    }
    const p2sh: number[] = [];
    for (let vout = 0; vout < tx.outputs.length; vout++) {
      const out = tx.outputs[vout]!;
      const type = classifyScript(out.script, namecoin);
      bump(d.scriptTypes, type);
      if (type === 'script_hash') p2sh.push(vout);
      const address = addresses ? (addresses[outputs++] ?? undefined) : scriptAddress(out.script, net);
      if (address !== undefined) {
        rows.put('addrOuts', addrOutKey.encode({ address, height, txIndex: ti, vout }), addrOutValue.encode({ value: out.value, txHash: tx.hash }));
        // Applied in place (an incremental build) only: a full build's scan renders every document and counts addresses later.
        if (counts) {
          counts.set(address, (counts.get(address) ?? 0) + 1);
          fx.addresses.add(address);
        }
      }
    }
    const loc = txLocationValue.encode({ height, index: ti, offset: tx.raw.byteOffset - block.raw.byteOffset, length: tx.raw.length, p2sh });
    rows.put('txloc', tx.hash, loc);
    batch?.txloc.set(tx.hash.toString('latin1'), loc);
    if (namecoin) {
      for (const { vout, op } of nameOutputs(tx)) {
        d.nameOps++;
        if (op.op === 'name_new' || !op.name || !op.value) continue;
        fx.names.add(Buffer.from(op.name).toString('latin1'));
        if (levels === null) levels = txMerkleLevels(block.txs);
        const value = nameOpValue.encode({
          op: op.op,
          txHash: tx.hash,
          address: scriptAddress(op.addressScript, net) ?? null,
          value: Buffer.from(op.value),
          branch: levels ? branchFromLevels(levels, ti) : null,
        });
        rows.put('names', nameOpKey.encode({ name: Buffer.from(op.name), height, txIndex: ti, vout }), value);
      }
    }
  }
  rows.put('heights', height, heightValue.encode({ ...record, delta: d }));
  return fx;
}

/** Removes one block (the current tip) from the index, in one transaction: the exact inverse of applying it. */
export function undoBlock(store: Store, net: Network, block: Block, height: number, resolve?: PrevoutResolver): BlockEffects {
  const namecoin = isNamecoin(net);
  const fx = newEffects();
  const rows = directRows(store);
  store.root.transactionSync(() => {
    const rec = heightRecordAt(store, height);
    if (!rec || rec.hash !== block.header.id) throw new Error(`index: height ${height} is not block ${block.header.id}`);
    fx.delta = rec.delta;
    const counts = new Map<string, number>();
    for (let ti = block.txs.length - 1; ti >= 0; ti--) {
      const tx = block.txs[ti]!;
      if (namecoin) {
        for (const { vout, op } of nameOutputs(tx)) {
          if (op.op === 'name_new' || !op.name || !op.value) continue;
          fx.names.add(Buffer.from(op.name).toString('latin1'));
          rows.remove('names', nameOpKey.encode({ name: Buffer.from(op.name), height, txIndex: ti, vout }));
        }
      }
      for (let vout = tx.outputs.length - 1; vout >= 0; vout--) {
        const address = scriptAddress(tx.outputs[vout]!.script, net);
        if (address === undefined) continue;
        rows.remove('addrOuts', addrOutKey.encode({ address, height, txIndex: ti, vout }));
        counts.set(address, (counts.get(address) ?? 0) - 1);
        fx.addresses.add(address);
      }
      for (let vin = tx.inputs.length - 1; vin >= 0; vin--) {
        const input = tx.inputs[vin]!;
        if (isCoinbaseInput(input)) continue;
        const spent = spentOutput(store.txloc.get(input.prevHash), input);
        const spender = spent && store.spent.get(spent.key);
        if (spender && spenderValue.decode(spender).txHash.equals(tx.hash)) rows.remove('spent', spent.key);
        if (resolve) {
          const prev = resolve(input.prevHash);
          if (prev) {
            fx.spentTxs.push([prev.height, prev.index]);
            for (const a of prev.addresses) fx.addresses.add(a);
          }
        }
      }
      const loc = store.txloc.get(tx.hash);
      if (loc && txLocationValue.decode(loc).height === height) rows.remove('txloc', tx.hash);
    }
    fx.addressesChange = addressesChange(store, counts);
    const cb = block.txs[0];
    const seen = cb && store.coinbases.get(cb.hash);
    if (seen && u32le.decode(seen) === height) rows.remove('coinbases', cb.hash);
    rows.remove('heights', height);
  });
  return fx;
}
