import { parseBlock, type Block } from '../chain/block.js';
import { toDisplayHex } from '../chain/hash.js';
import { merkleBranch } from '../chain/merkle.js';
import { blockSubsidy, type Network } from '../chain/networks.js';
import { parseTx, type Tx } from '../chain/tx.js';
import type { BlocksSpill } from './blocks-spill.js';
import {
  addressPrefix,
  addrOutKey,
  addrOutValue,
  nameOpKey,
  nameOpValue,
  outPointKey,
  prefixEnd,
  spenderValue,
  txLocationValue,
  u32le,
  type ChainPosition,
  type TxLocation,
} from './rows.js';
import { emptyCounters, type ChainCounters, type Counters } from './stats.js';
import type { HeightRecord, OffChainRecord, Store } from './store.js';

/** The main-chain input that spends an output (`next_in`): txid in display hex. */
export interface Spender {
  hash: string;
  n: number;
}

/** A main-chain block read back from the spill, with its index record. */
export interface IndexedBlock {
  block: Block;
  hash: string;
  height: number;
  time: number;
}

/** An output paid to an address, in chain order, with its spender if any. */
export interface AddressOutput extends ChainPosition {
  txid: string;
  value: bigint;
  spender: Spender | undefined;
}

/** A name operation as the name documents show it; `rawtx`/`mrklBranch` computed from the block. */
export interface NameOp {
  name: Buffer;
  value: Buffer;
  txid: string;
  address: string | null;
  height: number;
  block: string;
  txIndex: number;
  rawtx: string;
  mrklBranch: (string | null)[];
}

/**
 * The queries renderers need, over the index and the block spill. Everything here answers in
 * typed objects; the row bytes stay in rows.ts.
 */
export class ChainIndex {
  constructor(
    readonly store: Store,
    readonly spill: BlocksSpill,
    readonly net: Network,
  ) {}

  heightRecord(height: number): HeightRecord | undefined {
    return this.store.heights.get(height);
  }

  hashAt(height: number): string | undefined {
    return this.store.heights.get(height)?.hash;
  }

  blockAt(height: number): IndexedBlock {
    const rec = this.store.heights.get(height);
    if (!rec) throw new Error(`index: no block at height ${height}`);
    return { block: parseBlock(this.spill.read(rec), { auxpow: this.net.auxpow }), hash: rec.hash, height, time: rec.time };
  }

  /** Spenders of a transaction's outputs, by output index. */
  spendersOf(txHash: Buffer, outputs: number): (Spender | undefined)[] {
    const res: (Spender | undefined)[] = new Array(outputs);
    for (let i = 0; i < outputs; i++) res[i] = this.spenderOf(txHash, i);
    return res;
  }

  spenderOf(txHash: Buffer, vout: number): Spender | undefined {
    const v = this.store.spent.get(outPointKey.encode({ txHash, vout }));
    if (!v) return undefined;
    const s = spenderValue.decode(v);
    return { hash: toDisplayHex(s.txHash), n: s.vin };
  }

  txLocation(txHash: Buffer): TxLocation | undefined {
    const loc = this.store.txloc.get(txHash);
    return loc ? txLocationValue.decode(loc) : undefined;
  }

  /** A main-chain transaction's bytes (from the block spill) and its location. */
  findTx(txHash: Buffer): { loc: TxLocation; tx: Tx; block: HeightRecord } | undefined {
    const loc = this.txLocation(txHash);
    if (!loc) return undefined;
    const block = this.store.heights.get(loc.height);
    if (!block) return undefined;
    return { loc, tx: parseTx(this.spill.read({ offset: block.offset + loc.offset, length: loc.length })), block };
  }

  /** Outputs paid to `address`, in chain order. */
  *addressOutputs(address: string): Generator<AddressOutput> {
    const prefix = addressPrefix(address);
    for (const { key, value } of this.store.addrOuts.getRange({ start: prefix, end: prefixEnd(prefix) })) {
      const { height, txIndex, vout } = addrOutKey.decode(key);
      const row = addrOutValue.decode(value);
      yield { height, txIndex, vout, txid: toDisplayHex(row.txHash), value: row.value, spender: this.spenderOf(row.txHash, vout) };
    }
  }

  /** How many outputs pay `address` (0: none). */
  addressOutputCount(address: string): number {
    const v = this.store.addrCount.get(address);
    return v ? u32le.decode(v) : 0;
  }

  /** Every address paid by the chain, sorted. */
  addresses(): Iterable<string> {
    return this.store.addrCount.getKeys() as Iterable<string>;
  }

  addressCount(): number {
    return this.store.addrCount.getCount();
  }

  addressOutputsTotal(): number {
    return this.store.addrOuts.getCount();
  }

  nameOpCount(): number {
    return this.store.names.getCount();
  }

  /**
   * Every name operation sorted by name, then chain position. `rawtx` and `mrkl_branch` are
   * computed from the block in the spill (the blocks of the last few heights are kept).
   */
  *nameOps(): Generator<NameOp> {
    const blocks = new Map<number, IndexedBlock & { hashes: Buffer[] }>();
    for (const { key, value } of this.store.names.getRange()) {
      const k = nameOpKey.decode(key);
      const row = nameOpValue.decode(value);
      // Copied before any other read: LMDB may reuse the buffers of a range.
      const op = { name: Buffer.from(k.name), value: Buffer.from(row.value), txid: toDisplayHex(row.txHash), address: row.address };
      let b = blocks.get(k.height);
      if (!b) {
        const ib = this.blockAt(k.height);
        b = { ...ib, hashes: ib.block.txs.map((t) => t.hash) };
        if (blocks.size >= 64) blocks.delete(blocks.keys().next().value!);
        blocks.set(k.height, b);
      }
      yield {
        ...op,
        height: k.height,
        block: b.hash,
        txIndex: k.txIndex,
        rawtx: b.block.txs[k.txIndex]!.raw.toString('hex'),
        mrklBranch: merkleBranch(b.hashes, k.txIndex),
      };
    }
  }

  /** Side and orphan blocks, by hash. */
  *offChainBlocks(): Generator<{ hash: string; rec: OffChainRecord }> {
    for (const { key, value } of this.store.offchain.getRange()) yield { hash: key, rec: value };
  }

  /** stats.json's figures at `height` from the running totals. */
  chainCounters(height: number, totals: Counters, side: number, orphan: number, namecoin: boolean): ChainCounters {
    const c = emptyCounters(namecoin);
    const tip = this.store.heights.get(height)!;
    let coins = 0n;
    for (let h = 0; h <= height; ) {
      // Subsidy is constant within a halving interval: add whole intervals at once.
      const end = Math.min(height, (Math.floor(h / this.net.halvingInterval) + 1) * this.net.halvingInterval - 1);
      coins += blockSubsidy(this.net, h) * BigInt(end - h + 1);
      h = end + 1;
    }
    Object.assign(c, { mainBlocks: height + 1, sideBlocks: side, orphanBlocks: orphan, size: totals.size, txs: totals.txs, txins: totals.txins, txouts: totals.txouts });
    Object.assign(c, { coins, work: BigInt(tip.work), nameOps: totals.nameOps, tipTime: tip.time });
    for (const k of Object.keys(c.scriptTypes)) c.scriptTypes[k] = totals.scriptTypes[k] ?? 0;
    for (const k of Object.keys(c.p2shTypes)) c.p2shTypes[k] = totals.p2shTypes[k] ?? 0;
    return c;
  }
}
