import { valueEnd } from '../render/json-scan.js';

/**
 * The previous version of a compact address document (the published release's file), cut into
 * its entries so that an incremental build can copy the bytes of the entries that did not
 * change (address-document.ts). The document is checked against the exact layout
 * addressCompactParts writes — its address, each unspent entry's `{"tx":{"hash","n"}` head, each
 * transaction's key and the `hash` its document starts with, `tx_sz`, nothing after the end —
 * with a scanner that knows JSON strings (a bracket or quote inside a string is skipped), or,
 * for the transactions when the caller knows which txs they are, by their heads (see
 * parsePreviousAddressDocument), so an entry's range is exactly that entry. Anything else (a
 * capped or pretty document, another address's, a damaged or cut file) gives `undefined`: the
 * caller assembles the document whole.
 */

/** [start, end) of one entry in the previous document's bytes. */
export type EntryRange = readonly [number, number];

export interface PreviousAddressDocument {
  bytes: Buffer;
  /** txid → its `"<txid>":{...}` member of `transactions`, in document order. */
  txs: Map<string, EntryRange>;
  /** `<txid>:<n>` → its `{"tx":{...},...}` element of `unspent`. */
  unspent: Map<string, EntryRange>;
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const TXID_LENGTH = 64;

const isHexLower = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66);

/** The 64 lowercase hex digits at `at`, or undefined. */
function txidAt(b: Buffer, at: number): string | undefined {
  if (at + TXID_LENGTH > b.length) return undefined;
  for (let i = at; i < at + TXID_LENGTH; i++) if (!isHexLower(b[i]!)) return undefined;
  return b.toString('latin1', at, at + TXID_LENGTH);
}

/** `text` at `at`? */
function has(b: Buffer, at: number, text: Buffer): boolean {
  return at + text.length <= b.length && b.compare(text, 0, text.length, at, at + text.length) === 0;
}

/** The decimal digits at `at`: [value, end], or undefined. */
function digitsAt(b: Buffer, at: number): [number, number] | undefined {
  let i = at;
  let v = 0;
  while (i < b.length && b[i]! >= 0x30 && b[i]! <= 0x39 && i - at < 15) v = v * 10 + (b[i++]! - 0x30);
  return i > at ? [v, i] : undefined;
}

const UNSPENT_HEAD = Buffer.from('{"tx":{"hash":"');
const N_KEY = Buffer.from('","n":');
const UNSPENT_KEY = Buffer.from(',"unspent":[');
const TX_SZ = Buffer.from('],"tx_sz":');
const TRANSACTIONS = Buffer.from(',"transactions":{');
const HASH_KEY = Buffer.from('":{"hash":"');
/** The longest the numbers between hash160 and unspent can be (4 numbers of ≤ 21 digits and their keys). */
const HEADER_SLACK = 200;

/**
 * Cuts `bytes` (the previous document of `address`) into its entries; undefined if it is not the
 * expected layout. With `expected` (the txids the previous version holds, in document order: an
 * incremental build knows them from the index), the transactions are not scanned byte by byte:
 * each entry is found by its head, `"<txid>":{"hash":"<txid>"`, searched natively from the end
 * of the one before (much faster than scanning on the hub documents). That head cannot occur anywhere else in a
 * compact document (inside a JSON string a quote is escaped, and no other object is keyed by a
 * txid), so an entry runs from its head to the comma before the next one; that no other entry
 * lies between two of them is checked by their number against `tx_sz`.
 */
export function parsePreviousAddressDocument(bytes: Buffer, address: string, expected?: readonly string[]): PreviousAddressDocument | undefined {
  const b = bytes;
  const head = Buffer.from(`{"address":${JSON.stringify(address)},"hash160":"`);
  if (!has(b, 0, head)) return undefined;
  let p = b.indexOf(UNSPENT_KEY, head.length);
  if (p < 0 || p > head.length + 40 + HEADER_SLACK) return undefined;
  p += UNSPENT_KEY.length;

  const unspent = new Map<string, EntryRange>();
  if (b[p] !== 0x5d) {
    for (;;) {
      if (!has(b, p, UNSPENT_HEAD)) return undefined;
      const txid = txidAt(b, p + UNSPENT_HEAD.length);
      const at = p + UNSPENT_HEAD.length + TXID_LENGTH;
      if (txid === undefined || !has(b, at, N_KEY)) return undefined;
      const n = digitsAt(b, at + N_KEY.length);
      if (!n || b[n[1]] !== 0x7d) return undefined;
      const end = valueEnd(b, p);
      if (end < 0) return undefined;
      unspent.set(`${txid}:${n[0]}`, [p, end]);
      p = end;
      if (b[p] !== COMMA) break;
      p++;
    }
  }
  if (!has(b, p, TX_SZ)) return undefined;
  const txSz = digitsAt(b, p + TX_SZ.length);
  if (!txSz || !has(b, txSz[1], TRANSACTIONS)) return undefined;
  p = txSz[1] + TRANSACTIONS.length;

  const txs = new Map<string, EntryRange>();
  if (expected) {
    if (expected.length !== txSz[0]) return undefined;
    const headOf = (txid: string) => `"${txid}":{"hash":"${txid}"`;
    let head = expected.length > 0 ? headOf(expected[0]!) : '';
    if (b.toString('latin1', p, p + head.length) !== head) return undefined;
    for (let i = 0; i < expected.length; i++) {
      // The entry ends at the comma before the next head (found there), the last one at the document's `}}`.
      const last = i + 1 === expected.length;
      const nextHead = last ? '' : headOf(expected[i + 1]!);
      const next = last ? b.length - 1 : b.indexOf(nextHead, p + head.length, 'latin1');
      if (next < 0 || b[next - 1] !== (last ? 0x7d : COMMA) || b[next - 2] !== 0x7d) return undefined;
      txs.set(expected[i]!, [p, next - 1]);
      p = last ? next - 1 : next;
      head = nextHead;
    }
  } else if (b[p] !== 0x7d) {
    for (;;) {
      // "<txid>":{"hash":"<txid>" …}
      const txid = b[p] === QUOTE ? txidAt(b, p + 1) : undefined;
      const open = p + 1 + TXID_LENGTH + 2;
      if (txid === undefined || !has(b, p + 1 + TXID_LENGTH, HASH_KEY) || txidAt(b, open + 9) !== txid || b[open + 9 + TXID_LENGTH] !== QUOTE) return undefined;
      const end = valueEnd(b, open);
      if (end < 0 || txs.has(txid)) return undefined;
      txs.set(txid, [p, end]);
      p = end;
      if (b[p] !== COMMA) break;
      p++;
    }
  }
  if (b[p] !== 0x7d || b[p + 1] !== 0x7d || p + 2 !== b.length || txs.size !== txSz[0]) return undefined;
  return { bytes, txs, unspent };
}
