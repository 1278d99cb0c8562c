import { decodeAddress } from '../chain/address.js';
import type { ChainIndex } from '../index/query.js';
import { renderAddress, renderAddressCompact, type UnspentSplice } from '../render/address.js';
import type { JsonValue } from '../render/json.js';
import { outElementRanges } from '../render/tx.js';
import type { TxTexts } from './tx-texts.js';

/**
 * One address document, assembled from the index's outputs of the address and the rendered
 * /tx documents. Compact documents splice the tx bytes and each unspent output's fields as
 * they are (no parse, no objects per tx); pretty ones re-lay them out through renderAddress.
 * The document comes as a list of byte parts (see renderAddressCompact).
 */
export function addressDocument(index: ChainIndex, texts: TxTexts, address: string, pretty: boolean): Uint8Array[] {
  const decoded = decodeAddress(address, index.net);
  if (!decoded) throw new Error(`internal: output address ${address} does not decode on ${index.net.name}`);
  const docTexts = new Map<string, Buffer>();
  const txText = (txid: string) => {
    let t = docTexts.get(txid);
    if (t === undefined) docTexts.set(txid, (t = texts.get(txid)));
    return t;
  };
  const ranges = new Map<string, number[]>();
  const receivers = new Set<string>();
  const spenders = new Set<string>();
  let coinIn = 0n;
  let coinOut = 0n;
  const unspent: UnspentSplice[] = [];
  const unspentValues: JsonValue[] = [];
  for (const out of index.addressOutputs(address)) {
    const text = txText(out.txid);
    receivers.add(out.txid);
    coinIn += out.value;
    if (out.spender) {
      spenders.add(out.spender.hash);
      coinOut += out.value;
      txText(out.spender.hash);
    } else if (pretty) {
      const o = (JSON.parse(text.toString('utf8')) as { out: Record<string, JsonValue>[] }).out[out.vout]!;
      unspentValues.push({ tx: { hash: out.txid, n: out.vout }, ...o });
    } else {
      let r = ranges.get(out.txid);
      if (!r) ranges.set(out.txid, (r = outElementRanges(text)));
      unspent.push({ txid: out.txid, vout: out.vout, text, ranges: r });
    }
  }
  const summary = { address, hash160: decoded.hash160, txInCount: receivers.size, txOutCount: spenders.size, coinIn, coinOut };
  if (!pretty) return renderAddressCompact({ ...summary, unspent, transactions: docTexts });
  const transactions = new Map([...docTexts].map(([txid, text]) => [txid, text.toString('utf8')]));
  return [Buffer.from(renderAddress({ ...summary, unspent: unspentValues, transactions }, true), 'utf8')];
}
