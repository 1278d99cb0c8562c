import { scriptAddress } from '../chain/address.js';
import type { Block } from '../chain/block.js';
import { merkleBranch } from '../chain/merkle.js';
import { nameOutputs } from '../chain/names.js';
import type { Network } from '../chain/networks.js';
import { classifyScript, redeemScriptType } from '../chain/script.js';
import { isCoinbase, isCoinbaseInput } from '../chain/tx.js';
import {
  addrOutKey,
  nameKey,
  outpointKey,
  type CounterDelta,
  type HeightRecord,
  type Store,
} from './store.js';

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
  delta: CounterDelta;
}

function emptyDelta(): CounterDelta {
  return { txs: 0, txins: 0, txouts: 0, size: 0, nameOps: 0, scriptTypes: {}, p2shTypes: {} };
}

const bump = (rec: Record<string, number>, key: string, by = 1) => {
  rec[key] = (rec[key] ?? 0) + by;
};

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32LE(n);
  return b;
}

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
  let branchHashes: Buffer[] | undefined;
  store.root.transactionSync(() => {
    d.size = block.raw.length;
    const cb = block.txs[0];
    if (cb && isCoinbase(cb)) {
      if (store.coinbases.get(cb.hash) !== undefined) fx.duplicate = cb.txid;
      else store.coinbases.put(cb.hash, u32(height));
    }
    for (let ti = 0; ti < block.txs.length; ti++) {
      const tx = block.txs[ti]!;
      d.txs++;
      d.txins += tx.inputs.length;
      d.txouts += tx.outputs.length;
      const loc = Buffer.allocUnsafe(16);
      loc.writeUInt32LE(height, 0);
      loc.writeUInt32LE(ti, 4);
      loc.writeUInt32LE(tx.raw.byteOffset - block.raw.byteOffset, 8);
      loc.writeUInt32LE(tx.raw.length, 12);
      for (let vin = 0; vin < tx.inputs.length; vin++) {
        const input = tx.inputs[vin]!;
        if (isCoinbaseInput(input)) continue;
        const key = outpointKey(input.prevHash, input.prevIndex);
        const spender = Buffer.allocUnsafe(36);
        tx.hash.copy(spender, 0);
        spender.writeUInt32LE(vin, 32);
        store.spent.put(key, spender);
        if (store.p2sh.get(key) !== undefined) bump(d.p2shTypes, redeemScriptType(input.script, namecoin) ?? 'unknown');
        if (resolve) {
          const prev = resolve(input.prevHash);
          if (prev) {
            fx.spentTxs.push([prev.height, prev.index]);
            for (const a of prev.addresses) fx.addresses.add(a);
          }
        }
      }
      store.txloc.put(tx.hash, loc);
      for (let vout = 0; vout < tx.outputs.length; vout++) {
        const out = tx.outputs[vout]!;
        const type = classifyScript(out.script, namecoin);
        bump(d.scriptTypes, type);
        if (type === 'script_hash') store.p2sh.put(outpointKey(tx.hash, vout), Buffer.alloc(0));
        const address = scriptAddress(out.script, net);
        if (address !== undefined) {
          const v = Buffer.allocUnsafe(40);
          v.writeBigUInt64LE(out.value, 0);
          tx.hash.copy(v, 8);
          store.addrOuts.put(addrOutKey(address, height, ti, vout), v);
          const count = store.addrCount.get(address);
          store.addrCount.put(address, u32((count ? count.readUInt32LE(0) : 0) + 1));
          fx.addresses.add(address);
        }
      }
      if (namecoin) {
        for (const { vout, op } of nameOutputs(tx)) {
          d.nameOps++;
          if (op.op === 'name_new' || !op.name || !op.value) continue;
          branchHashes ??= block.txs.map((t) => t.hash);
          fx.names.add(Buffer.from(op.name).toString('latin1'));
          store.names.put(nameKey(op.name, height, ti, vout), {
            op: op.op,
            name: Buffer.from(op.name),
            value: Buffer.from(op.value),
            txid: tx.txid,
            vout,
            address: scriptAddress(op.addressScript, net) ?? null,
            height,
            block: block.header.id,
            txIndex: ti,
            rawtx: tx.raw.toString('hex'),
            mrklBranch: merkleBranch(branchHashes, ti),
          });
        }
      }
    }
    store.heights.put(height, { ...record, delta: d });
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
          store.names.remove(nameKey(op.name, height, ti, vout));
        }
      }
      for (let vout = tx.outputs.length - 1; vout >= 0; vout--) {
        const out = tx.outputs[vout]!;
        store.p2sh.remove(outpointKey(tx.hash, vout));
        const address = scriptAddress(out.script, net);
        if (address === undefined) continue;
        store.addrOuts.remove(addrOutKey(address, height, ti, vout));
        const count = (store.addrCount.get(address)?.readUInt32LE(0) ?? 1) - 1;
        if (count > 0) store.addrCount.put(address, u32(count));
        else store.addrCount.remove(address);
        fx.addresses.add(address);
      }
      for (let vin = tx.inputs.length - 1; vin >= 0; vin--) {
        const input = tx.inputs[vin]!;
        if (isCoinbaseInput(input)) continue;
        const key = outpointKey(input.prevHash, input.prevIndex);
        const spender = store.spent.get(key);
        if (spender && spender.subarray(0, 32).equals(tx.hash)) store.spent.remove(key);
        if (resolve) {
          const prev = resolve(input.prevHash);
          if (prev) {
            fx.spentTxs.push([prev.height, prev.index]);
            for (const a of prev.addresses) fx.addresses.add(a);
          }
        }
      }
      const loc = store.txloc.get(tx.hash);
      if (loc && loc.readUInt32LE(0) === height) store.txloc.remove(tx.hash);
    }
    const cb = block.txs[0];
    const seen = cb && store.coinbases.get(cb.hash);
    if (seen && seen.readUInt32LE(0) === height) store.coinbases.remove(cb!.hash);
    store.heights.remove(height);
  });
  return fx;
}
