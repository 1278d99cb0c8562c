import { scriptAddress } from '../chain/address.js';
import type { Block } from '../chain/block.js';
import { nameOutputs } from '../chain/names.js';
import type { Network } from '../chain/networks.js';
import { classifyScript, redeemScriptType } from '../chain/script.js';
import { isCoinbase, isCoinbaseInput } from '../chain/tx.js';
import { addrOutKey, addrOutValue, nameOpKey, nameOpValue, outPointKey, spenderValue, txLocationValue, u32le, empty } from './rows.js';
import { emptyDelta, type Counters } from './stats.js';
import type { HeightRecord, Store } from './store.js';

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

const bump = (rec: Record<string, number>, key: string, by = 1) => {
  rec[key] = (rec[key] ?? 0) + by;
};

/**
 * Records one main-chain block in the index (one LMDB transaction): spends,
 * P2SH outputs, tx locations, address outputs, name operations, its height
 * record with the figures it adds.
 */
export function applyBlock(
  store: Store,
  net: Network,
  namecoin: boolean,
  block: Block,
  record: Omit<HeightRecord, 'delta'>,
  height: number,
  resolve?: PrevoutResolver,
): BlockEffects {
  const fx: BlockEffects = { spentTxs: [], addresses: new Set(), names: new Set(), duplicate: undefined, delta: emptyDelta() };
  const d = fx.delta;
  store.root.transactionSync(() => {
    d.size = block.raw.length;
    const cb = block.txs[0];
    if (cb && isCoinbase(cb)) {
      if (store.coinbases.get(cb.hash) !== undefined) fx.duplicate = cb.txid;
      else void store.coinbases.put(cb.hash, u32le.encode(height));
    }
    for (let ti = 0; ti < block.txs.length; ti++) {
      const tx = block.txs[ti]!;
      d.txs++;
      d.txins += tx.inputs.length;
      d.txouts += tx.outputs.length;
      const loc = txLocationValue.encode({ height, index: ti, offset: tx.raw.byteOffset - block.raw.byteOffset, length: tx.raw.length });
      for (let vin = 0; vin < tx.inputs.length; vin++) {
        const input = tx.inputs[vin]!;
        if (isCoinbaseInput(input)) continue;
        const key = outPointKey.encode({ txHash: input.prevHash, vout: input.prevIndex });
        void store.spent.put(key, spenderValue.encode({ txHash: tx.hash, vin }));
        if (store.p2sh.get(key) !== undefined) bump(d.p2shTypes, redeemScriptType(input.script, namecoin) ?? 'unknown');
        if (resolve) {
          const prev = resolve(input.prevHash);
          if (prev) {
            fx.spentTxs.push([prev.height, prev.index]);
            for (const a of prev.addresses) fx.addresses.add(a);
          }
        }
      }
      void store.txloc.put(tx.hash, loc);
      for (let vout = 0; vout < tx.outputs.length; vout++) {
        const out = tx.outputs[vout]!;
        const type = classifyScript(out.script, namecoin);
        bump(d.scriptTypes, type);
        if (type === 'script_hash') void store.p2sh.put(outPointKey.encode({ txHash: tx.hash, vout }), empty.encode(true));
        const address = scriptAddress(out.script, net);
        if (address !== undefined) {
          void store.addrOuts.put(addrOutKey.encode({ address, height, txIndex: ti, vout }), addrOutValue.encode({ value: out.value, txHash: tx.hash }));
          const count = store.addrCount.get(address);
          void store.addrCount.put(address, u32le.encode((count ? u32le.decode(count) : 0) + 1));
          fx.addresses.add(address);
        }
      }
      if (namecoin) {
        for (const { vout, op } of nameOutputs(tx)) {
          d.nameOps++;
          if (op.op === 'name_new' || !op.name || !op.value) continue;
          fx.names.add(Buffer.from(op.name).toString('latin1'));
          void store.names.put(
            nameOpKey.encode({ name: Buffer.from(op.name), height, txIndex: ti, vout }),
            nameOpValue.encode({ op: op.op, txHash: tx.hash, address: scriptAddress(op.addressScript, net) ?? null, value: Buffer.from(op.value) }),
          );
        }
      }
    }
    void store.heights.put(height, { ...record, delta: d });
  });
  return fx;
}

/** Removes one block (the current tip) from the index: the exact inverse of applyBlock. */
export function undoBlock(store: Store, net: Network, namecoin: boolean, block: Block, height: number, resolve?: PrevoutResolver): BlockEffects {
  const fx: BlockEffects = { spentTxs: [], addresses: new Set(), names: new Set(), duplicate: undefined, delta: emptyDelta() };
  store.root.transactionSync(() => {
    const rec = store.heights.get(height);
    if (!rec || rec.hash !== block.header.id) throw new Error(`index: height ${height} is not block ${block.header.id}`);
    fx.delta = rec.delta;
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
        const out = tx.outputs[vout]!;
        void store.p2sh.remove(outPointKey.encode({ txHash: tx.hash, vout }));
        const address = scriptAddress(out.script, net);
        if (address === undefined) continue;
        void store.addrOuts.remove(addrOutKey.encode({ address, height, txIndex: ti, vout }));
        const stored = store.addrCount.get(address);
        const count = (stored ? u32le.decode(stored) : 1) - 1;
        if (count > 0) void store.addrCount.put(address, u32le.encode(count));
        else void store.addrCount.remove(address);
        fx.addresses.add(address);
      }
      for (let vin = tx.inputs.length - 1; vin >= 0; vin--) {
        const input = tx.inputs[vin]!;
        if (isCoinbaseInput(input)) continue;
        const key = outPointKey.encode({ txHash: input.prevHash, vout: input.prevIndex });
        const spender = store.spent.get(key);
        if (spender && spenderValue.decode(spender).txHash.equals(tx.hash)) void store.spent.remove(key);
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
    const cb = block.txs[0];
    const seen = cb && store.coinbases.get(cb.hash);
    if (seen && u32le.decode(seen) === height) void store.coinbases.remove(cb!.hash);
    void store.heights.remove(height);
  });
  return fx;
}
