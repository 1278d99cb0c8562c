import { scriptAddress } from '../chain/address.js';
import type { Block } from '../chain/block.js';
import { branchFromLevels, txMerkleLevels } from '../chain/merkle.js';
import { nameOutputs } from '../chain/names.js';
import type { Network } from '../chain/networks.js';
import { classifyScript, redeemScriptType } from '../chain/script.js';
import { isCoinbase, isCoinbaseInput, type TxIn } from '../chain/tx.js';
import { addrOutKey, addrOutValue, heightValue, nameOpKey, nameOpValue, outputKey, spenderValue, txLocationValue, u32le, type HeightRecord } from './rows.js';
import { emptyDelta, type Counters } from './stats.js';
import { heightRecordAt, type Store } from './store.js';

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
  /** Addresses paid by this block and, with a resolver, those whose outputs it spends. */
  addresses: Set<string>;
  /** Names operated on (bytes as latin1). */
  names: Set<string>;
  /** A coinbase txid seen before (BIP30), when applying. */
  duplicate: string | undefined;
  delta: Counters;
}

/** One main-chain block to apply: the parsed block, its height and its record without the figures. */
export interface BlockToApply {
  block: Block;
  height: number;
  record: Omit<HeightRecord, 'delta'>;
}

const bump = (rec: Record<string, number>, key: string, by = 1) => {
  rec[key] = (rec[key] ?? 0) + by;
};

const newEffects = (): BlockEffects => ({ spentTxs: [], addresses: new Set(), names: new Set(), duplicate: undefined, delta: emptyDelta() });

/** The spent key of the output an input spends (its position, found through txloc) and whether that output is P2SH. */
function spentOutput(store: Store, input: TxIn): { key: Buffer; p2sh: boolean } | undefined {
  const v = store.txloc.get(input.prevHash);
  if (!v) return undefined;
  const loc = txLocationValue.decode(v);
  return { key: outputKey.encode({ height: loc.height, txIndex: loc.index, vout: input.prevIndex }), p2sh: loc.p2sh.includes(input.prevIndex) };
}

/** Outputs paid per address, changed in memory and written once per address at the end of a batch. */
function writeAddressCounts(store: Store, counts: Map<string, number>): void {
  for (const [address, by] of counts) {
    if (by === 0) continue;
    const stored = store.addrCount.get(address);
    const count = (stored ? u32le.decode(stored) : 0) + by;
    if (count > 0) void store.addrCount.put(address, u32le.encode(count));
    else void store.addrCount.remove(address);
  }
}

function applyOne(store: Store, net: Network, namecoin: boolean, { block, height, record }: BlockToApply, counts: Map<string, number>, resolve?: PrevoutResolver): BlockEffects {
  const fx = newEffects();
  const d = fx.delta;
  d.size = block.raw.length;
  const cb = block.txs[0];
  if (cb && isCoinbase(cb)) {
    if (store.coinbases.get(cb.hash) !== undefined) fx.duplicate = cb.txid;
    else void store.coinbases.put(cb.hash, u32le.encode(height));
  }
  // One merkle tree per block, for the branches of all its name operations: the one validation built.
  let levels: ReturnType<typeof txMerkleLevels> | null = null;
  for (let ti = 0; ti < block.txs.length; ti++) {
    const tx = block.txs[ti]!;
    d.txs++;
    d.txins += tx.inputs.length;
    d.txouts += tx.outputs.length;
    for (let vin = 0; vin < tx.inputs.length; vin++) {
      const input = tx.inputs[vin]!;
      if (isCoinbaseInput(input)) continue;
      const spent = spentOutput(store, input);
      if (spent) {
        void store.spent.put(spent.key, spenderValue.encode({ txHash: tx.hash, vin }));
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
      const address = scriptAddress(out.script, net);
      if (address !== undefined) {
        void store.addrOuts.put(addrOutKey.encode({ address, height, txIndex: ti, vout }), addrOutValue.encode({ value: out.value, txHash: tx.hash }));
        counts.set(address, (counts.get(address) ?? 0) + 1);
        fx.addresses.add(address);
      }
    }
    void store.txloc.put(tx.hash, txLocationValue.encode({ height, index: ti, offset: tx.raw.byteOffset - block.raw.byteOffset, length: tx.raw.length, p2sh }));
    if (namecoin) {
      for (const { vout, op } of nameOutputs(tx)) {
        d.nameOps++;
        if (op.op === 'name_new' || !op.name || !op.value) continue;
        fx.names.add(Buffer.from(op.name).toString('latin1'));
        if (levels === null) levels = txMerkleLevels(block.txs);
        void store.names.put(
          nameOpKey.encode({ name: Buffer.from(op.name), height, txIndex: ti, vout }),
          nameOpValue.encode({
            op: op.op,
            txHash: tx.hash,
            address: scriptAddress(op.addressScript, net) ?? null,
            value: Buffer.from(op.value),
            branch: levels ? branchFromLevels(levels, ti) : null,
          }),
        );
      }
    }
  }
  void store.heights.put(height, heightValue.encode({ ...record, delta: d }));
  return fx;
}

/**
 * Records main-chain blocks in the index, in one LMDB transaction: spends (keyed by the
 * position of the spent output), tx locations (with their P2SH outputs), address outputs,
 * name operations (with their merkle branch), each block's height record with the figures it
 * adds. Address counts are written once per address for the whole batch.
 */
export function applyBlocks(store: Store, net: Network, namecoin: boolean, blocks: readonly BlockToApply[], resolve?: PrevoutResolver): BlockEffects[] {
  const effects: BlockEffects[] = [];
  store.root.transactionSync(() => {
    const counts = new Map<string, number>();
    for (const b of blocks) effects.push(applyOne(store, net, namecoin, b, counts, resolve));
    writeAddressCounts(store, counts);
  });
  return effects;
}

/** Removes one block (the current tip) from the index: the exact inverse of applyBlocks. */
export function undoBlock(store: Store, net: Network, namecoin: boolean, block: Block, height: number, resolve?: PrevoutResolver): BlockEffects {
  const fx = newEffects();
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
          void store.names.remove(nameOpKey.encode({ name: Buffer.from(op.name), height, txIndex: ti, vout }));
        }
      }
      for (let vout = tx.outputs.length - 1; vout >= 0; vout--) {
        const address = scriptAddress(tx.outputs[vout]!.script, net);
        if (address === undefined) continue;
        void store.addrOuts.remove(addrOutKey.encode({ address, height, txIndex: ti, vout }));
        counts.set(address, (counts.get(address) ?? 0) - 1);
        fx.addresses.add(address);
      }
      for (let vin = tx.inputs.length - 1; vin >= 0; vin--) {
        const input = tx.inputs[vin]!;
        if (isCoinbaseInput(input)) continue;
        const spent = spentOutput(store, input);
        const spender = spent && store.spent.get(spent.key);
        if (spender && spenderValue.decode(spender).txHash.equals(tx.hash)) void store.spent.remove(spent.key);
        if (resolve) {
          const prev = resolve(input.prevHash);
          if (prev) {
            fx.spentTxs.push([prev.height, prev.index]);
            for (const a of prev.addresses) fx.addresses.add(a);
          }
        }
      }
      const loc = store.txloc.get(tx.hash);
      if (loc && txLocationValue.decode(loc).height === height) void store.txloc.remove(tx.hash);
    }
    writeAddressCounts(store, counts);
    const cb = block.txs[0];
    const seen = cb && store.coinbases.get(cb.hash);
    if (seen && u32le.decode(seen) === height) void store.coinbases.remove(cb.hash);
    void store.heights.remove(height);
  });
  return fx;
}
