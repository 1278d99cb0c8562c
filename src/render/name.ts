import { nameBytesToText } from '../chain/name-script.js';
import type { NameDoc, NameRecordDoc } from '../contract/documents.js';
import { toPlainJson } from './json.js';

/** One name operation (firstupdate or update) with everything any variant can show. */
export interface NameRecord {
  name: string;
  value: string;
  txid: string;
  address: string | null;
  expiresIn: number;
  block: string;
  height: number;
  txIndex: number;
  rawtx: string;
  mrklBranch: readonly (string | null)[];
}

export type WithFlag = 'block' | 'height' | 'mrkl_branch' | 'rawtx' | 'tx_idx';

export interface NameQuery {
  history: boolean;
  with: ReadonlySet<WithFlag>;
}

/** Name#as_json order: name, value, txid, address, expires_in[, block, height, tx_idx, rawtx, mrkl_branch]. */
function recordObject(r: NameRecord, w: ReadonlySet<WithFlag>): NameRecordDoc {
  const o: NameRecordDoc = {
    name: r.name,
    value: r.value,
    txid: r.txid,
    address: r.address,
    expires_in: r.expiresIn,
  };
  if (w.has('block')) o.block = r.block;
  if (w.has('height')) o.height = r.height;
  if (w.has('tx_idx')) o.tx_idx = r.txIndex;
  if (w.has('rawtx')) o.rawtx = r.rawtx;
  if (w.has('mrkl_branch')) o.mrkl_branch = r.mrklBranch;
  return o;
}

/**
 * `/name/<name>.json[?history][&with_*]`: the current (last) record, or with
 * `history` every record oldest first; the with_ flags apply to each item.
 */
export function renderName(history: readonly NameRecord[], q: NameQuery, pretty = false): string {
  if (history.length === 0) throw new Error('a name document needs at least one record');
  const doc: NameDoc = q.history ? history.map((r) => recordObject(r, q.with)) : recordObject(history[history.length - 1]!, q.with);
  return toPlainJson(doc, pretty);
}

/** Name and value bytes as text: UTF-8 when valid (a leading BOM kept), else Latin-1. */
export const decodeNameBytes = nameBytesToText;
