import { decodeAddress } from '../chain/address.js';
import { fromDisplayHex } from '../chain/hash.js';
import type { ChainIndex } from '../index/query.js';
import { addressCompactParts, renderAddress, type CompactAddress, type EntryRun, type TxSplice, type UnspentSplice } from '../render/address.js';
import type { JsonValue } from '../render/json.js';
import { parsePreviousAddressDocument, type EntryRange, type PreviousAddressDocument } from './address-previous.js';
import type { TxTexts } from './tx-text-cache.js';

/** Counts of an incremental build's address documents made from their previous version. */
export interface AddressReuseCounts {
  /** Documents assembled from their previous version's bytes and this run's changed txs. */
  spliced: number;
  /** Of those, the ones whose previous version was cut by the txids it holds (address-previous.ts). */
  located: number;
  /** Documents whose previous version was there but not usable (assembled whole instead). */
  fallbacks: number;
  /** Tx entries copied from previous documents, and taken from this run's tx texts. */
  reusedTxs: number;
  renderedTxs: number;
}

export const noReuse = (): AddressReuseCounts => ({ spliced: 0, located: 0, fallbacks: 0, reusedTxs: 0, renderedTxs: 0 });

/**
 * What an incremental build knows to reuse the previous version of a compact document: its
 * bytes (undefined: there was none) and which txs' /tx documents change in this run.
 */
export interface AddressReuse {
  previous: Buffer | undefined;
  /** Does the /tx document of `txid`, at this chain position, change in this run? */
  changed(height: number, txIndex: number, txid: string): boolean;
  /** Is `height` a block this run adds (its txs are in no previous document)? */
  added(height: number): boolean;
  counts: AddressReuseCounts;
}

/**
 * A tx of the document, in first-seen order: whether its /tx document changes in this run, and
 * whether its block is one this run adds (undefined: not known, its location was not found).
 */
type DocTx = { changed: boolean; added?: boolean };

/**
 * One address document, assembled from the index's outputs of the address and the rendered
 * /tx documents. Compact documents splice the tx bytes and each unspent output's fields as
 * they are (no parse, no objects per tx); pretty ones re-lay them out through renderAddress.
 * With `reuse` (an incremental build, compact), the entries of txs whose /tx document did not
 * change are copied from the previous document (see spliceFromPrevious). The document comes as a
 * sequence of byte parts, produced as they are written (see addressCompactParts).
 */
export function addressDocument(index: ChainIndex, texts: TxTexts, address: string, pretty: boolean, reuse?: AddressReuse): Iterable<Uint8Array> {
  const decoded = decodeAddress(address, index.net);
  if (!decoded) throw new Error(`internal: output address ${address} does not decode on ${index.net.name}`);
  // The document's transactions: the address's outputs' txs and their spenders, first seen first.
  const docTxs = new Map<string, DocTx>();
  const receivers = new Set<string>();
  const spenders = new Set<string>();
  let coinIn = 0n;
  let coinOut = 0n;
  const unspentOuts: { txid: string; vout: number }[] = [];
  const at = (height: number, txIndex: number, txid: string): DocTx => (reuse ? { changed: reuse.changed(height, txIndex, txid), added: reuse.added(height) } : { changed: true });
  for (const out of index.addressOutputs(address)) {
    receivers.add(out.txid);
    if (!docTxs.has(out.txid)) docTxs.set(out.txid, at(out.height, out.txIndex, out.txid));
    coinIn += out.value;
    if (out.spender) {
      coinOut += out.value;
      const s = out.spender.hash;
      spenders.add(s);
      if (!docTxs.has(s)) {
        const loc = reuse ? index.txLocation(fromDisplayHex(s)) : undefined;
        docTxs.set(s, loc ? at(loc.height, loc.index, s) : { changed: true });
      }
    } else unspentOuts.push({ txid: out.txid, vout: out.vout });
  }
  const summary = { address, hash160: decoded.hash160, txInCount: receivers.size, txOutCount: spenders.size, coinIn, coinOut };

  if (reuse && !pretty && reuse.previous) {
    // The txs of the previous version: all but those of the blocks this run adds (when each is
    // located). It holds others after a reorg (the stale branch's): then it is scanned whole.
    let old: string[] | undefined = [];
    for (const [txid, { added }] of docTxs) {
      if (added === undefined) {
        old = undefined;
        break;
      }
      if (!added) old.push(txid);
    }
    const located = old && parsePreviousAddressDocument(reuse.previous, address, old);
    const previous = located || parsePreviousAddressDocument(reuse.previous, address);
    const parts = previous && spliceFromPrevious(previous, docTxs, unspentOuts, texts, summary, reuse.counts);
    if (parts) {
      if (located) reuse.counts.located++;
      return parts;
    }
    reuse.counts.fallbacks++;
  }

  if (reuse) reuse.counts.renderedTxs += docTxs.size;
  if (pretty) {
    const docTexts = new Map(Array.from(docTxs.keys(), (txid) => [txid, texts.get(txid).toString('utf8')]));
    const unspent: JsonValue[] = unspentOuts.map(({ txid, vout }) => {
      const o = (JSON.parse(docTexts.get(txid)!) as { out: Record<string, JsonValue>[] }).out[vout]!;
      return { tx: { hash: txid, n: vout }, ...o };
    });
    return [Buffer.from(renderAddress({ ...summary, unspent, transactions: docTexts }, true), 'utf8')];
  }
  // Each tx text is taken when its part is written: memory holds a few parts, not the document.
  const text = (txid: string) => () => texts.get(txid);
  return addressCompactParts({
    ...summary,
    unspent: unspentOuts.map(({ txid, vout }) => ({ txid, vout, text: text(txid) })),
    transactions: Array.from(docTxs.keys(), (txid) => ({ txid, text: text(txid) })),
  });
}

/**
 * The compact document from its previous version: each tx entry and unspent entry whose tx did
 * not change is that entry's bytes in `previous` (consecutive ones as one run, commas included);
 * the changed txs come from this run's texts. Undefined when an unchanged tx or unspent output is
 * not in the previous document (it is not the version this run follows from): the caller then
 * assembles the document whole.
 */
function spliceFromPrevious(
  previous: PreviousAddressDocument,
  docTxs: ReadonlyMap<string, DocTx>,
  unspentOuts: readonly { txid: string; vout: number }[],
  texts: TxTexts,
  summary: Omit<CompactAddress, 'unspent' | 'transactions'>,
  counts: AddressReuseCounts,
): Iterable<Uint8Array> | undefined {
  const { bytes } = previous;
  /** Appends the entry at `range` to `list`, extending the last run when it directly follows it. */
  const copy = <T extends object>(list: (T | EntryRun & { end: number; start: number })[], range: EntryRange) => {
    const last = list[list.length - 1];
    if (last && 'raw' in last && last.end + 1 === range[0] && bytes[last.end] === 0x2c) {
      last.end = range[1];
      last.raw = bytes.subarray(last.start, last.end);
      last.count++;
    } else list.push({ raw: bytes.subarray(range[0], range[1]), count: 1, start: range[0], end: range[1] });
  };
  const txs: (TxSplice | (EntryRun & { start: number; end: number }))[] = [];
  const fresh = new Map<string, Buffer>();
  let reused = 0;
  for (const [txid, { changed }] of docTxs) {
    if (changed) {
      const text = texts.get(txid);
      fresh.set(txid, text);
      txs.push({ txid, text });
      continue;
    }
    const range = previous.txs.get(txid);
    if (!range) return undefined;
    copy(txs, range);
    reused++;
  }
  const unspent: (UnspentSplice | (EntryRun & { start: number; end: number }))[] = [];
  for (const { txid, vout } of unspentOuts) {
    const text = fresh.get(txid);
    if (text) {
      unspent.push({ txid, vout, text });
      continue;
    }
    const range = previous.unspent.get(`${txid}:${vout}`);
    if (!range) return undefined;
    copy(unspent, range);
  }
  counts.spliced++;
  counts.reusedTxs += reused;
  counts.renderedTxs += fresh.size;
  return addressCompactParts({ ...summary, unspent, transactions: txs });
}

/** The txs whose /tx documents an incremental run changes, as sent to the render threads (Changes.heights, Changes.touched). */
export interface ChangedTxs {
  heights: number[];
  touched: [number, number[]][];
  /** Txids that occur more than once in the chain (their documents are always assembled from texts). */
  duplicates: string[];
}

/** ChangedTxs as AddressReuse's questions. */
export function changedPredicates(c: ChangedTxs): Pick<AddressReuse, 'changed' | 'added'> {
  const heights = new Set(c.heights);
  const touched = new Map(c.touched.map(([h, txs]) => [h, new Set(txs)]));
  const duplicates = new Set(c.duplicates);
  return {
    changed: (height, txIndex, txid) => heights.has(height) || touched.get(height)?.has(txIndex) === true || duplicates.has(txid),
    added: (height) => heights.has(height),
  };
}
