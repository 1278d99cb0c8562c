import { arrayElementRanges } from './json-scan.js';
import { formatValue } from '../chain/amount.js';
import { scriptAddress } from '../chain/address.js';
import type { Network } from '../chain/networks.js';
import { scriptToAsm } from '../chain/script.js';
import { isCoinbaseInput, normalizedId, type Tx } from '../chain/tx.js';
import { toDisplayHex } from '../chain/hash.js';
import type { AuxCoinbaseTxDoc, BlockTxDoc, TxDoc, TxIn, TxOut } from '../contract/documents.js';
import { toPlainJson } from './json.js';

import type { Spender } from '../index/query.js';

export type { Spender };

/** Where a transaction sits in the main chain (the /tx document's last three fields). */
export interface TxPlacement {
  block: string;
  height: number;
  /** Block header time, Unix seconds. */
  time: number;
}

export interface TxRenderOptions {
  /** Add `nid`, output `address` and `next_in` (everything but the AuxPoW parent coinbase). */
  extras: boolean;
}

/** Tx `time`: "YYYY-MM-DD HH:MM:SS" in UTC. */
export function formatTxTime(unix: number): string {
  return new Date(unix * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

/**
 * The original's Tx#to_hash key order: hash, ver, vin_sz, vout_sz, lock_time,
 * size, in, out, nid[, block, blocknumber, time].
 */
export function txObject(tx: Tx, net: Network, spenders: readonly (Spender | undefined)[], placement: TxPlacement, opts?: { extras: true }): TxDoc;
export function txObject(tx: Tx, net: Network, spenders: readonly (Spender | undefined)[], placement: undefined, opts?: { extras: true }): BlockTxDoc;
export function txObject(tx: Tx, net: Network, spenders: readonly (Spender | undefined)[], placement: undefined, opts: { extras: false }): AuxCoinbaseTxDoc;
export function txObject(tx: Tx, net: Network, spenders: readonly (Spender | undefined)[], placement: undefined, opts: TxRenderOptions): BlockTxDoc | AuxCoinbaseTxDoc;
export function txObject(
  tx: Tx,
  net: Network,
  spenders: readonly (Spender | undefined)[],
  placement: TxPlacement | undefined,
  opts: TxRenderOptions = { extras: true },
): TxDoc | BlockTxDoc | AuxCoinbaseTxDoc {
  const inputs = tx.inputs.map((input) => {
    const prevOut = { hash: toDisplayHex(input.prevHash), n: input.prevIndex };
    const o: TxIn = isCoinbaseInput(input)
      ? { prev_out: prevOut, coinbase: input.script.toString('hex') }
      : { prev_out: prevOut, scriptSig: scriptToAsm(input.script) };
    if (input.witness) o.witness = input.witness.map((w) => w.toString('hex'));
    if (input.sequence !== 0xffffffff) o.sequence = input.sequence;
    return o;
  });
  const outputs = tx.outputs.map((out, i) => {
    const o: TxOut = { value: formatValue(out.value), scriptPubKey: scriptToAsm(out.script) };
    if (opts.extras) {
      const address = scriptAddress(out.script, net);
      if (address !== undefined) o.address = address;
      const spender = spenders[i];
      if (spender) o.next_in = { hash: spender.hash, n: spender.n };
    }
    return o;
  });
  // The optional fields are added in the document's key order; the overloads say which are set.
  const obj: AuxCoinbaseTxDoc & Partial<TxDoc> = {
    hash: tx.txid,
    ver: tx.version,
    vin_sz: tx.inputs.length,
    vout_sz: tx.outputs.length,
    lock_time: tx.lockTime,
    size: tx.raw.length,
    in: inputs,
    out: outputs,
  };
  if (opts.extras) obj.nid = normalizedId(tx);
  if (placement) {
    obj.block = placement.block;
    obj.blocknumber = placement.height;
    obj.time = formatTxTime(placement.time);
  }
  return obj;
}

/** `/tx/<txid>.json` */
export function renderTx(
  tx: Tx,
  net: Network,
  spenders: readonly (Spender | undefined)[],
  placement: TxPlacement,
  pretty = false,
): string {
  return toPlainJson(txObject(tx, net, spenders, placement), pretty);
}

const OUT_KEY = Buffer.from('"out":[');

/**
 * Where each element of the `out` array sits in a compact /tx document's bytes: [start, end)
 * offsets, one pair per output, so that an address document can splice an output's fields
 * without parsing the document. Scans the array's strings and brackets (the key `"out":[`
 * occurs once in a compact tx document: no other object of it has an `out` key, and a string
 * cannot hold an unescaped quote).
 */
export function outElementRanges(text: Uint8Array): number[] {
  const b = Buffer.from(text.buffer, text.byteOffset, text.byteLength);
  const open = b.indexOf(OUT_KEY);
  if (open < 0) throw new Error('internal: tx document without an "out" array');
  const ranges = arrayElementRanges(b, open + OUT_KEY.length);
  if (!ranges) throw new Error('internal: tx document ends inside its "out" array');
  return ranges;
}
