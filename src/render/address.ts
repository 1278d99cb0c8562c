import type { AddressCappedDoc, AddressDoc, UnspentOutputDoc } from '../contract/documents.js';
import { toJson, type JsonValue, RawJson } from './json.js';
import { outElementRanges } from './tx.js';

export interface AddressSummary {
  address: string;
  hash160: string;
  /** Distinct transactions paying to the address. */
  txInCount: number;
  /** Distinct transactions spending from it. */
  txOutCount: number;
  coinIn: bigint;
  coinOut: bigint;
  /** `{"tx":{"hash","n"}, ...the output's fields}`, chain order. */
  unspent: readonly JsonValue[];
  /** txid → the /tx document text, in first-encounter order. */
  transactions: ReadonlyMap<string, string>;
}

/**
 * `/address/<a>.json`: address, hash160, tx_in_sz, tx_out_sz, coin_in,
 * coin_out, balance, unspent, tx_sz, transactions.
 */
export function renderAddress(s: AddressSummary, pretty = false): string {
  const transactions: Record<string, RawJson> = {};
  for (const [txid, text] of s.transactions) transactions[txid] = new RawJson(text);
  const doc: AddressDoc<RawJson> = {
    address: s.address,
    hash160: s.hash160,
    tx_in_sz: s.txInCount,
    tx_out_sz: s.txOutCount,
    coin_in: s.coinIn,
    coin_out: s.coinOut,
    balance: s.coinIn - s.coinOut,
    // The caller cut them from the tx documents' outputs (see AddressSummary.unspent).
    unspent: s.unspent as UnspentOutputDoc[],
    tx_sz: s.transactions.size,
    transactions,
  };
  return toJson(doc, pretty);
}

/**
 * A /tx document's bytes, or a function that gives them when its part of the document is
 * produced (addressCompactParts): a large document then never holds all its txs' texts at once.
 */
export type TxText = Uint8Array | (() => Uint8Array);

const textOf = (t: TxText): Uint8Array => (typeof t === 'function' ? t() : t);

/** An unspent output spliced from its compact /tx document (`ranges`: outElementRanges of it, found when absent). */
export interface UnspentSplice {
  txid: string;
  vout: number;
  text: TxText;
  ranges?: readonly number[];
}

/** A tx of the document: its /tx document text. */
export interface TxSplice {
  txid: string;
  text: TxText;
}

/**
 * `count` whole entries of an array or object (unspent elements, `"<txid>":{...}` members of
 * transactions) copied as they are, with the commas between them, from a previous version of
 * the same document (an incremental build, see pipeline/address-previous.ts).
 */
export interface EntryRun {
  raw: Uint8Array;
  count: number;
}

const isRun = (e: object): e is EntryRun => 'raw' in e;

/** The compact document's parts: the document, or the entries it copies, as they are. */
export interface CompactAddress extends Omit<AddressSummary, 'unspent' | 'transactions'> {
  unspent: readonly (UnspentSplice | EntryRun)[];
  transactions: readonly (TxSplice | EntryRun)[];
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');

/**
 * renderAddress in compact form (an AddressDoc, keys in its order), the same bytes, assembled from already-rendered bytes: the
 * /tx documents, and each unspent entry `{"tx":{"hash","n"}, ...the output's fields}` with the
 * fields as they are in its /tx document, or runs of entries of the previous document. The
 * document comes part by part, in order, each tx text taken only when its part is due (the tx
 * bytes are never copied): the writer hashes and writes a few parts at a time, so a document of
 * any size needs memory for only those few.
 */
export function* addressCompactParts(s: CompactAddress): Generator<Uint8Array> {
  yield utf8(
    `{"address":${JSON.stringify(s.address)},"hash160":${JSON.stringify(s.hash160)},"tx_in_sz":${s.txInCount},"tx_out_sz":${s.txOutCount},` +
      `"coin_in":${s.coinIn},"coin_out":${s.coinOut},"balance":${s.coinIn - s.coinOut},"unspent":[`,
  );
  const comma = utf8(',');
  const ranges = new Map<string, readonly number[]>();
  for (const [i, u] of s.unspent.entries()) {
    if (isRun(u)) {
      if (i) yield comma;
      yield u.raw;
      continue;
    }
    const { txid, vout } = u;
    const text = textOf(u.text);
    let r = u.ranges ?? ranges.get(txid);
    if (!r) ranges.set(txid, (r = outElementRanges(text)));
    const start = r[2 * vout];
    const end = r[2 * vout + 1];
    if (start === undefined || end === undefined) throw new Error(`internal: tx ${txid} has no output ${vout}`);
    const fields = text.subarray(start + 1, end - 1);
    yield utf8(`${i ? ',' : ''}{"tx":{"hash":${JSON.stringify(txid)},"n":${vout}}${fields.length ? ',' : ''}`);
    yield fields;
    yield utf8('}');
  }
  let txSz = 0;
  for (const t of s.transactions) txSz += isRun(t) ? t.count : 1;
  yield utf8(`],"tx_sz":${txSz},"transactions":{`);
  for (const [i, t] of s.transactions.entries()) {
    if (isRun(t)) {
      if (i) yield comma;
      yield t.raw;
      continue;
    }
    yield utf8(`${i ? ',' : ''}${JSON.stringify(t.txid)}:`);
    yield textOf(t.text);
  }
  yield utf8('}}');
}

/** The original's answer for an address with more relevant outputs than the cap. */
export function renderAddressCapped(outputs: number, pretty = false): string {
  const doc: AddressCappedDoc = { error: `Too many outputs for this address (${outputs})` };
  return toJson(doc, pretty);
}
