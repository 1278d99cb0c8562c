import { toJson, type JsonValue, RawJson } from './json.js';

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
  const transactions: Record<string, JsonValue> = {};
  for (const [txid, text] of s.transactions) transactions[txid] = new RawJson(text);
  return toJson(
    {
      address: s.address,
      hash160: s.hash160,
      tx_in_sz: s.txInCount,
      tx_out_sz: s.txOutCount,
      coin_in: s.coinIn,
      coin_out: s.coinOut,
      balance: s.coinIn - s.coinOut,
      unspent: s.unspent,
      tx_sz: s.transactions.size,
      transactions,
    },
    pretty,
  );
}

/** An unspent output spliced from its compact /tx document (`ranges`: outElementRanges of it). */
export interface UnspentSplice {
  txid: string;
  vout: number;
  text: Uint8Array;
  ranges: readonly number[];
}

/** A tx of the document: its /tx document text. */
export interface TxSplice {
  txid: string;
  text: Uint8Array;
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

/**
 * renderAddress in compact form, the same bytes, assembled from already-rendered bytes: the
 * /tx documents, and each unspent entry `{"tx":{"hash","n"}, ...the output's fields}` with the
 * fields as they are in its /tx document, or runs of entries of the previous document: the
 * document as a list of byte parts, written with gathered writes (the tx bytes are never copied).
 */
export function renderAddressCompact(
  s: Omit<AddressSummary, 'unspent' | 'transactions'> & { unspent: readonly (UnspentSplice | EntryRun)[]; transactions: readonly (TxSplice | EntryRun)[] },
): Uint8Array[] {
  const parts: (string | Uint8Array)[] = [
    `{"address":${JSON.stringify(s.address)},"hash160":${JSON.stringify(s.hash160)},"tx_in_sz":${s.txInCount},"tx_out_sz":${s.txOutCount},` +
      `"coin_in":${s.coinIn},"coin_out":${s.coinOut},"balance":${s.coinIn - s.coinOut},"unspent":[`,
  ];
  s.unspent.forEach((u, i) => {
    if (isRun(u)) return void parts.push(...(i ? [',', u.raw] : [u.raw]));
    const { txid, vout, text, ranges } = u;
    const start = ranges[2 * vout];
    const end = ranges[2 * vout + 1];
    if (start === undefined || end === undefined) throw new Error(`internal: tx ${txid} has no output ${vout}`);
    const fields = text.subarray(start + 1, end - 1);
    parts.push(`${i ? ',' : ''}{"tx":{"hash":${JSON.stringify(txid)},"n":${vout}}${fields.length ? ',' : ''}`, fields, '}');
  });
  let txSz = 0;
  for (const t of s.transactions) txSz += isRun(t) ? t.count : 1;
  parts.push(`],"tx_sz":${txSz},"transactions":{`);
  s.transactions.forEach((t, i) => {
    if (isRun(t)) parts.push(...(i ? [',', t.raw] : [t.raw]));
    else parts.push(`${i ? ',' : ''}${JSON.stringify(t.txid)}:`, t.text);
  });
  parts.push('}}');
  return parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p));
}

/** The original's answer for an address with more relevant outputs than the cap. */
export function renderAddressCapped(outputs: number, pretty = false): string {
  return toJson({ error: `Too many outputs for this address (${outputs})` }, pretty);
}
