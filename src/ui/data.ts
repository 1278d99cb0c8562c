/** The site's public JSON documents as the UI reads them: types, a small fetch cache, the site info. */
import { api } from './route.js';

export interface TxIn {
  prev_out: { hash: string; n: number };
  coinbase?: string;
  scriptSig?: string;
  witness?: string[];
  sequence?: number;
}
export interface TxOut {
  value: string;
  scriptPubKey: string;
  address?: string;
  next_in?: { hash: string; n: number };
}
export interface TxDoc {
  hash: string;
  ver: number;
  vin_sz: number;
  vout_sz: number;
  lock_time: number;
  size: number;
  in: TxIn[];
  out: TxOut[];
  nid?: string;
  block?: string;
  blocknumber?: number;
  time?: string;
}
export interface BlockDoc {
  hash: string;
  ver: number;
  prev_block: string;
  next_block?: string;
  mrkl_root: string;
  time: number;
  bits: number;
  nonce: number;
  n_tx: number;
  size: number;
  tx: TxDoc[];
  aux_pow?: { parent_block?: { hash: string } };
}
export interface AddressDoc {
  address: string;
  hash160: string;
  tx_in_sz: number;
  tx_out_sz: number;
  tx_sz: number;
  coin_in: number;
  coin_out: number;
  balance: number;
  unspent: (TxOut & { tx: { hash: string; n: number } })[];
  transactions: Record<string, TxDoc>;
}
export interface NameDoc {
  name: string;
  value: string;
  txid: string;
  address: string | null;
  expires_in: number;
  block?: string;
  height?: number;
}
export interface StatsDoc {
  time: string | number;
  blocks: { main: number; side: number; orphan: number; size: number };
  txs: number;
  txins: number;
  txouts: number;
  addrs: number;
  coins: number;
  names?: number;
  work: number;
  script_types: Record<string, number>;
  p2sh_types: Record<string, number>;
}

/** A block that is not in the main chain (assets/site.json `offchain`). */
export interface OffChainBlock {
  hash: string;
  kind: 'side' | 'orphan';
  height: number | null;
}

/** assets/site.json: network, snapshot height and tip, the side and orphan blocks. */
export interface Site {
  network: string;
  height: number | null;
  tip: string | null;
  offchain: OffChainBlock[];
}

export interface Fetched<T> {
  ok: boolean;
  status: number;
  body: T;
  /** The raw text (for exact big integers, e.g. `work`). */
  text: string;
  /** The document's `error`, or "HTTP <status>" when the body is not JSON. */
  error: string | null;
}

const cache = new Map<string, Promise<Fetched<unknown>>>();

export function getJson<T>(url: string): Promise<Fetched<T>> {
  const hit = cache.get(url);
  if (hit) return hit as Promise<Fetched<T>>;
  const p = fetch(url, { headers: { Accept: 'application/json' } }).then(async (r) => {
    const text = await r.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    const err = body && !Array.isArray(body) && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string' ? (body as { error: string }).error : null;
    return { ok: r.ok && body !== null && err === null, status: r.status, body, text, error: err ?? (body === null ? `HTTP ${r.status}` : null) };
  });
  if (cache.size > 300) cache.delete(cache.keys().next().value!);
  cache.set(url, p);
  p.catch(() => cache.delete(url));
  return p as Promise<Fetched<T>>;
}

let site: Site | undefined;

/** The site info, read once. */
export async function loadSite(): Promise<Site> {
  if (site) return site;
  const r = await getJson<Partial<Site>>(api.site());
  const b = r.ok ? r.body : {};
  site = { network: b.network ?? '', height: b.height ?? null, tip: b.tip ?? null, offchain: b.offchain ?? [] };
  return site;
}
