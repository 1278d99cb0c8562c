/** Checks of `tx/<txid>.json` and its links (`prev_out` / `next_in`) against `.bin`/`.hex`. */
import { formatValue } from '../chain/amount.js';
import { toDisplayHex } from '../chain/hash.js';
import { scriptAddress } from '../chain/address.js';
import { scriptToAsm } from '../chain/script.js';
import { isCoinbaseInput, normalizedId, parseTx, type Tx } from '../chain/tx.js';
import { txPath } from '../contract/layout.js';
import { type Obj, HEX64, ZERO_HASH, COINBASE_N, isObj, arr, outpoint, same, shown } from './values.js';
import { type Verifier } from './verifier.js';

export function checkTx(ver: Verifier, rel: string, txid: string, doc: unknown): void {
  ver.counts.txs++;
  if (!HEX64.test(txid)) {
    ver.problem(rel, 'is not named by a lowercase txid');
    return;
  }
  if (!isObj(doc)) return; // shape problems are reported by the schema check (shape.ts)
  if (doc.hash !== txid) ver.problem(rel, `hash field is ${String(doc.hash)}`);
  const bin = ver.readBytes(txPath(txid, 'bin'), 'is missing (its .json exists)');
  const hex = ver.readBytes(txPath(txid, 'hex'), 'is missing (its .json exists)');
  if (bin) {
    if (hex && hex.toString('latin1') !== bin.toString('hex')) ver.problem(txPath(txid, 'hex'), 'is not the hex of the .bin');
    let tx;
    try {
      tx = parseTx(bin);
    } catch (e) {
      ver.problem(txPath(txid, 'bin'), `is not a transaction (${(e as Error).message})`);
    }
    if (tx) {
      if (tx.txid !== txid) ver.problem(txPath(txid, 'bin'), `hashes to ${tx.txid}, not to its name`);
      checkTxFields(ver, rel, '', doc, tx, true);
    }
  }
  // Placement: the block it names is on the main chain at the height it names.
  if (ver.chain) {
    const h = typeof doc.block === 'string' ? ver.chain.heightOf(doc.block) : undefined;
    if (h === undefined) {
      if (ver.chain.complete) ver.problem(rel, `block ${String(doc.block)} is not a main-chain block`);
    } else if (doc.blocknumber !== h) {
      ver.problem(rel, `blocknumber is ${String(doc.blocknumber)}, but block ${String(doc.block)} is at height ${h}`);
    } else {
      ver.placedTxs++;
    }
  }
  checkTxLinks(ver, rel, txid, doc);
}

/**
 * The fields of a tx object that the tx's bytes determine: the /tx document's, a block
 * document's `tx[i]` (`at` = 'tx[i].') and an AuxPoW parent coinbase (no `extras`: no nid,
 * address). Not `next_in` (the links) nor the placement fields.
 */
export function checkTxFields(ver: Verifier, rel: string, at: string, doc: Obj, tx: Tx, extras: boolean): void {
  const field = (name: string, got: unknown, want: unknown) => {
    if (got !== want) ver.problem(rel, `${at}${name} is ${shown(got)}, the .bin says ${shown(want)}`);
  };
  if (doc.size !== tx.raw.length) ver.problem(rel, `${at}size is ${String(doc.size)}, the .bin has ${tx.raw.length} bytes`);
  field('ver', doc.ver, tx.version);
  field('lock_time', doc.lock_time, tx.lockTime);
  if (doc.vin_sz !== tx.inputs.length || doc.vout_sz !== tx.outputs.length) ver.problem(rel, `${at}vin_sz/vout_sz ${String(doc.vin_sz)}/${String(doc.vout_sz)} differ from the .bin (${tx.inputs.length}/${tx.outputs.length})`);
  const ins = arr(doc.in);
  const outs = arr(doc.out);
  if (ins.length !== tx.inputs.length || outs.length !== tx.outputs.length) ver.problem(rel, `${at}in/out hold ${ins.length}/${outs.length} entries, the .bin ${tx.inputs.length}/${tx.outputs.length}`);
  tx.inputs.forEach((input, i) => {
    const d = isObj(ins[i]) ? ins[i] : {};
    const po = outpoint(d.prev_out);
    if (!po || po.hash !== toDisplayHex(input.prevHash) || po.n !== input.prevIndex) ver.problem(rel, `${at}in[${i}].prev_out differs from the .bin (${toDisplayHex(input.prevHash)}:${input.prevIndex})`);
    if (isCoinbaseInput(input)) {
      field(`in[${i}].coinbase`, d.coinbase, input.script.toString('hex'));
      field(`in[${i}].scriptSig`, d.scriptSig, undefined);
    } else {
      field(`in[${i}].scriptSig`, d.scriptSig, scriptToAsm(input.script));
      field(`in[${i}].coinbase`, d.coinbase, undefined);
    }
    field(`in[${i}].sequence`, d.sequence, input.sequence === 0xffffffff ? undefined : input.sequence);
    const w = input.witness?.map((x) => x.toString('hex'));
    if (!same(d.witness, w)) ver.problem(rel, `${at}in[${i}].witness differs from the .bin (${shown(w)})`);
  });
  tx.outputs.forEach((out, j) => {
    const o = isObj(outs[j]) ? outs[j] : {};
    if (o.value !== formatValue(out.value)) ver.problem(rel, `${at}out[${j}].value differs from the .bin (${formatValue(out.value)})`);
    field(`out[${j}].scriptPubKey`, o.scriptPubKey, scriptToAsm(out.script));
    if (extras && ver.net) field(`out[${j}].address`, o.address, scriptAddress(out.script, ver.net));
  });
  if (extras) field('nid', doc.nid, normalizedId(tx));
}

/** next_in → the spender's input points back; every input → the spent output's next_in points here. */
export function checkTxLinks(ver: Verifier, rel: string, txid: string, doc: Obj): void {
  arr(doc.out).forEach((o, j) => {
    if (!isObj(o) || o.next_in === undefined) return;
    ver.counts.links++;
    const ni = outpoint(o.next_in);
    if (!ni || !HEX64.test(ni.hash)) return; // a shape problem
    const spender = ver.txCache.get(ni.hash);
    if (spender === null) {
      ver.problem(rel, `out[${j}].next_in points to tx ${ni.hash}, which has no /tx document`);
      return;
    }
    const back = spender.ins[ni.n];
    if (back === undefined) {
      ver.problem(rel, `out[${j}].next_in points to ${ni.hash} in[${ni.n}], which does not exist`);
      return;
    }
    if (back !== `${txid}:${j}`) {
      ver.problem(rel, `out[${j}].next_in points to ${ni.hash} in[${ni.n}], whose prev_out is ${back || 'malformed'}, not back here`);
    }
  });
  arr(doc.in).forEach((input, i) => {
    if (!isObj(input)) return;
    const po = outpoint(input.prev_out);
    if (!po || !HEX64.test(po.hash)) return; // a shape problem
    if (po.hash === ZERO_HASH && po.n === COINBASE_N) return;
    const prev = ver.txCache.get(po.hash);
    if (prev === null) return; // spends a tx outside the snapshot's /tx documents
    ver.counts.links++;
    const out = prev.outs[po.n];
    if (!out) {
      ver.problem(rel, `in[${i}].prev_out ${po.hash}:${po.n} names an output that tx/${po.hash}.json does not have`);
      return;
    }
    if (out.next !== `${txid}:${i}`) {
      ver.problem(rel, `in[${i}] spends ${po.hash}:${po.n}, but that output's next_in is ${out.next === undefined ? 'absent' : out.next || 'malformed'}, not this input`);
    }
  });
}
