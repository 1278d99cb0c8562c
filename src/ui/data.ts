/** The site's public JSON documents as the UI reads them: types, a small fetch cache, the site info. */
import { packBase, packFetcher, type PackResponse } from './pack.js';
import { api } from './route.js';

import type * as doc from '../contract/documents.js';

// The documents as JSON.parse returns them (contract/documents.ts, big integers as numbers).
export type TxIn = doc.Parsed<doc.TxIn>;
export type TxOut = doc.Parsed<doc.TxOut>;
/** A /tx document, or a tx embedded in a block document (no block, blocknumber, time). */
export type TxDoc = doc.Parsed<doc.BlockTxDoc> & Partial<doc.Parsed<doc.TxDoc>>;
export type BlockDoc = doc.Parsed<doc.BlockDoc>;
export type BlockHeightDoc = doc.BlockHeightDoc;
export type AddressDoc = doc.Parsed<doc.AddressDoc>;
/** One record of a name document. */
export type NameDoc = doc.Parsed<doc.NameRecordDoc>;
export type StatsDoc = doc.Parsed<doc.StatsDoc>;
/** A block that is not in the main chain (assets/site.json `offchain`). */
export type OffChainBlock = doc.OffChainBlockDoc;

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

/** A page marked as reading a pack (pack.ts) gets its documents from the pack, else by plain URL. */
const base = packBase();
/** The pack's fetcher when the page reads a pack. */
export const fromPack = base ? packFetcher(base) : undefined;
const load: (url: string) => Promise<PackResponse> =
  fromPack ??
  ((url) => fetch(url, { headers: { Accept: 'application/json' } }).then(async (r) => ({ status: r.status, text: await r.text() })));

export function getJson<T>(url: string): Promise<Fetched<T>> {
  const hit = cache.get(url);
  if (hit) return hit as Promise<Fetched<T>>;
  const p = load(url).then(({ status, text }) => {
    const ok = status >= 200 && status < 300;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    const err = body && !Array.isArray(body) && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string' ? (body as { error: string }).error : null;
    return { ok: ok && body !== null && err === null, status, body, text, error: err ?? (body === null ? `HTTP ${status}` : null) };
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
  const r = await getJson<Partial<doc.PublicSiteInfoDoc>>(api.site());
  const b = r.ok ? r.body : {};
  site = { network: b.network ?? '', height: b.height ?? null, tip: b.tip ?? null, offchain: b.offchain ?? [] };
  return site;
}
