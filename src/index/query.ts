import { parseBlock, type Block } from '../chain/block.js';
import { toDisplayHex } from '../chain/hash.js';
import { blockSubsidy, type Network } from '../chain/networks.js';
import { parseTx, type Tx } from '../chain/tx.js';
import type { BlocksSpill } from './blocks-spill.js';
import {
  addressRange,
  addrOutKey,
  addrOutValue,
  nameOpKey,
  nameOpValue,
  offChainValue,
  outputKey,
  outputRange,
  spenderValue,
  txLocationValue,
  type ChainPosition,
  type TxLocation,
} from './rows.js';
import { emptyCounters, type ChainCounters, type Counters } from './stats.js';
import { heightRecordAt, type HeightRecord, type OffChainRecord, type Store } from './store.js';

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

const spender = (v: Buffer): Spender => {
  const s = spenderValue.decode(v);
  return { hash: toDisplayHex(s.txHash), n: s.vin };
};

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
    return heightRecordAt(this.store, height);
  }

  hashAt(height: number): string | undefined {
    return this.heightRecord(height)?.hash;
  }

  blockAt(height: number): IndexedBlock {
    const rec = this.heightRecord(height);
    if (!rec) throw new Error(`index: no block at height ${height}`);
    return { block: parseBlock(this.spill.read(rec), { auxpow: this.net.auxpow }), hash: rec.hash, height, time: rec.time };
  }

  /**
   * Spenders of the outputs of every tx of the main-chain block at `height`, by tx index and
   * output index: one sequential range of the spent table.
   */
  spendersInBlock(height: number, txs: readonly Tx[]): (Spender | undefined)[][] {
    const res = txs.map((tx) => new Array<Spender | undefined>(tx.outputs.length));
    for (const { key, value } of this.store.spent.getRange(outputRange(height))) {
      const p = outputKey.decode(key);
      const row = res[p.txIndex];
      if (row && p.vout < row.length) row[p.vout] = spender(value);
    }
    // A coinbase whose txid a later coinbase repeated (BIP30): its spends are recorded at the later one.
    const cb = txs[0];
    const loc = cb && this.txLocation(cb.hash);
    if (loc && loc.height !== height) res[0] = this.spendersAt(loc, cb.outputs.length);
    return res;
  }

  /** Spenders of a main-chain transaction's outputs, by output index (none for a tx outside the main chain). */
  spendersOf(txHash: Buffer, outputs: number): (Spender | undefined)[] {
    const loc = this.txLocation(txHash);
    return loc ? this.spendersAt(loc, outputs) : new Array<Spender | undefined>(outputs);
  }

  private spendersAt(loc: TxLocation, outputs: number): (Spender | undefined)[] {
    const res = new Array<Spender | undefined>(outputs);
    for (const { key, value } of this.store.spent.getRange(outputRange(loc.height, loc.index))) {
      const vout = outputKey.decode(key).vout;
      if (vout < outputs) res[vout] = spender(value);
    }
    return res;
  }

  /** The spender of output `vout` of the tx `txHash` at chain position `p` (`next_in`). */
  private spenderAt(txHash: Buffer, p: ChainPosition): Spender | undefined {
    if (p.txIndex === 0) {
      const loc = this.txLocation(txHash); // a coinbase repeated later (BIP30): see spendersInBlock
      if (loc && loc.height !== p.height) p = { height: loc.height, txIndex: loc.index, vout: p.vout };
    }
    const v = this.store.spent.get(outputKey.encode(p));
    return v ? spender(v) : undefined;
  }

  txLocation(txHash: Buffer): TxLocation | undefined {
    const loc = this.store.txloc.get(txHash);
    return loc ? txLocationValue.decode(loc) : undefined;
  }

  /** A main-chain transaction's bytes (from the block spill) and its location. */
  findTx(txHash: Buffer): { loc: TxLocation; tx: Tx; block: HeightRecord } | undefined {
    const loc = this.txLocation(txHash);
    if (!loc) return undefined;
    const block = this.heightRecord(loc.height);
    if (!block) return undefined;
    return { loc, tx: parseTx(this.txBytes(block, loc), txHash), block };
  }

  private txBytes(block: HeightRecord, loc: TxLocation): Buffer {
    return this.spill.read({ offset: block.offset + loc.offset, length: loc.length });
  }

  /** Outputs paid to `address`, in chain order. */
  *addressOutputs(address: string): Generator<AddressOutput> {
    for (const { key, value } of this.store.addrOuts.getRange(addressRange(address))) {
      const { height, txIndex, vout } = addrOutKey.decode(key);
      const row = addrOutValue.decode(value);
      yield { height, txIndex, vout, txid: toDisplayHex(row.txHash), value: row.value, spender: this.spenderAt(row.txHash, { height, txIndex, vout }) };
    }
  }

  /** How many outputs pay `address` (0: none). */
  addressOutputCount(address: string): number {
    return this.store.addrOuts.getKeysCount(addressRange(address));
  }

  /** Every address paid by the chain, sorted, with how many outputs pay it: one pass over `addrOuts`' keys. */
  *addressesWithOutputs(): Generator<[address: string, outputs: number]> {
    let address: string | undefined;
    let prefix: Buffer | undefined;
    let outputs = 0;
    for (const key of this.store.addrOuts.getKeys() as Iterable<Buffer>) {
      // The key is address ‖ 0x00 ‖ position: same address while the prefix (with its 0x00) matches.
      if (prefix && key.length > prefix.length && key.compare(prefix, 0, prefix.length, 0, prefix.length) === 0) {
        outputs++;
        continue;
      }
      if (address !== undefined) yield [address, outputs];
      const end = key.indexOf(0);
      address = key.toString('latin1', 0, end);
      prefix = Buffer.from(key.subarray(0, end + 1));
      outputs = 1;
    }
    if (address !== undefined) yield [address, outputs];
  }

  addressOutputsTotal(): number {
    return this.store.addrOuts.getCount();
  }

  nameOpCount(): number {
    return this.store.names.getCount();
  }

  /**
   * Every name operation sorted by name, then chain position. `rawtx` is read from the block
   * spill, `mrkl_branch` comes with the row (computed once per block when it was indexed).
   */
  *nameOps(): Generator<NameOp> {
    for (const { key, value } of this.store.names.getRange()) {
      const k = nameOpKey.decode(key);
      const row = nameOpValue.decode(value);
      // Copied before any other read: LMDB may reuse the buffers of a range.
      const op = {
        name: Buffer.from(k.name),
        value: Buffer.from(row.value),
        txid: toDisplayHex(row.txHash),
        address: row.address,
        mrklBranch: row.branch ? row.branch.map(toDisplayHex) : [null],
      };
      const txHash = Buffer.from(row.txHash);
      const block = this.heightRecord(k.height);
      const loc = this.txLocation(txHash);
      if (!block || !loc) throw new Error(`index: name operation in tx ${op.txid} at height ${k.height} has no indexed block or tx`);
      yield { ...op, height: k.height, block: block.hash, txIndex: k.txIndex, rawtx: this.txBytes(block, loc).toString('hex') };
    }
  }

  /** Side and orphan blocks, by hash. */
  *offChainBlocks(): Generator<{ hash: string; rec: OffChainRecord }> {
    for (const { key, value } of this.store.offchain.getRange()) yield { hash: key, rec: offChainValue.decode(Buffer.from(value)) };
  }

  /** stats.json's figures at `height` from the running totals. */
  chainCounters(height: number, totals: Counters, side: number, orphan: number, namecoin: boolean): ChainCounters {
    const c = emptyCounters(namecoin);
    const tip = this.heightRecord(height)!;
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
