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

/**
 * The unspent entry of output `vout` in compact form, spliced from its compact /tx document
 * (`ranges`: outElementRanges of it): `{"tx":{"hash","n"}, ...the output's fields}`.
 */
export function unspentEntry(txid: string, vout: number, txText: string, ranges: readonly number[]): string {
  const start = ranges[2 * vout];
  const end = ranges[2 * vout + 1];
  if (start === undefined || end === undefined) throw new Error(`internal: tx ${txid} has no output ${vout}`);
  const fields = txText.slice(start + 1, end - 1);
  return `{"tx":{"hash":${JSON.stringify(txid)},"n":${vout}}${fields ? ',' : ''}${fields}}`;
}

/**
 * renderAddress in compact form, the same bytes, assembled from already-rendered parts: the
 * unspent entries (unspentEntry) and the /tx documents are spliced in as they are.
 */
export function renderAddressCompact(s: Omit<AddressSummary, 'unspent'> & { unspent: readonly string[] }): string {
  let txs = '';
  for (const [txid, text] of s.transactions) txs += `${txs ? ',' : ''}${JSON.stringify(txid)}:${text}`;
  return (
    `{"address":${JSON.stringify(s.address)},"hash160":${JSON.stringify(s.hash160)},"tx_in_sz":${s.txInCount},"tx_out_sz":${s.txOutCount},` +
    `"coin_in":${s.coinIn},"coin_out":${s.coinOut},"balance":${s.coinIn - s.coinOut},"unspent":[${s.unspent.join(',')}],` +
    `"tx_sz":${s.transactions.size},"transactions":{${txs}}}`
  );
}

/** The original's answer for an address with more relevant outputs than the cap. */
export function renderAddressCapped(outputs: number, pretty = false): string {
  return toJson({ error: `Too many outputs for this address (${outputs})` }, pretty);
}
