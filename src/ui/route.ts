/**
 * Hash routes of the browsing UI and the search's guess by shape (no DOM).
 *
 * Routes: #/ (overview), #/block/<hash>, #/tx/<txid>, #/address/<addr>, #/name/<percent-encoded
 * name bytes>, #/names[/<filter>] (the names index), #/search/<text>.
 */
import { encodeNamePath } from '../contract/name-path.js';
import { NAMES_PATH, STATS_PATH, UI_SITE_PATH, addressPath, baseNamePath, blockHeightPath, blockPath, txPath, type BinExt } from '../contract/paths.js';
import { isUtf8, latin1Bytes, pctDecodeBytes, pctEncodeBytes, utf8Bytes } from './text.js';

export type Route =
  | { kind: 'home' }
  | { kind: 'tx' | 'block'; id: string }
  | { kind: 'address'; id: string }
  | { kind: 'name'; bytes: Uint8Array }
  | { kind: 'names'; filter: string }
  | { kind: 'search'; text: string }
  | { kind: 'bad'; text: string };

const HASH = /^[0-9a-fA-F]{64}$/;

function dec(x: string): string {
  try {
    return decodeURIComponent(x);
  } catch {
    return x;
  }
}

export function parseRoute(hash: string): Route {
  const s = hash.replace(/^#\/?/, '');
  const slash = s.indexOf('/');
  const kind = slash < 0 ? s : s.slice(0, slash);
  const arg = slash < 0 ? '' : s.slice(slash + 1);
  switch (kind) {
    case 'tx':
    case 'block':
      return HASH.test(arg) ? { kind, id: arg.toLowerCase() } : { kind: 'bad', text: s };
    case 'address':
      return arg ? { kind: 'address', id: dec(arg) } : { kind: 'bad', text: s };
    case 'name':
      return { kind: 'name', bytes: pctDecodeBytes(arg) };
    case 'names':
      return { kind: 'names', filter: dec(arg) };
    case 'search':
      return { kind: 'search', text: dec(arg) };
    case '':
      return { kind: 'home' };
    default:
      return { kind: 'bad', text: s };
  }
}

export const href = {
  home: (): string => '#/',
  tx: (id: string): string => `#/tx/${id}`,
  block: (hash: string): string => `#/block/${hash}`,
  address: (a: string): string => `#/address/${encodeURIComponent(a)}`,
  name: (bytes: Uint8Array): string => `#/name/${pctEncodeBytes(bytes)}`,
  names: (filter = ''): string => `#/names${filter ? '/' + encodeURIComponent(filter) : ''}`,
  search: (text: string): string => `#/search/${encodeURIComponent(text)}`,
};

// ---------------------------------------------------------------------------------------------
// The JSON API (relative URLs: the UI sits at the site root)

/** The query the name page reads: the whole history with block hashes and heights. */
export const HISTORY_QUERY = 'history&with_block&with_height';

export const api = {
  stats: (): string => STATS_PATH,
  names: (): string => NAMES_PATH,
  site: (): string => UI_SITE_PATH,
  tx: (id: string, ext: BinExt = 'json'): string => txPath(id, ext),
  block: (id: string, ext: BinExt = 'json'): string => blockPath(id, ext),
  /** The main-chain block at a height: `{height, hash}`. */
  blockHeight: (height: number): string => blockHeightPath(height),
  address: (a: string): string => addressPath(encodeURIComponent(a)),
  /** The canonical file path (works on every host, plain static ones included). */
  name: (bytes: Uint8Array, query?: string): string => `${baseNamePath(encodeNamePath(bytes))}${query ? '?' + query : ''}`,
};

// ---------------------------------------------------------------------------------------------
// Search: what a text may be, in the order to try

export type SearchStep =
  | { try: 'tx' | 'block'; id: string }
  | { try: 'height'; height: number }
  | { try: 'address'; address: string }
  | { try: 'name'; bytes: Uint8Array };

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{25,36}$/;
const BECH32 = /^[a-z]{1,20}1[02-9ac-hj-np-z]{6,90}$/i;

/**
 * The lookups a search text stands for, most likely first: 64 hex digits → tx then block
 * (block first when it looks mined: 8 leading zeros); a height up to the tip; an address; and
 * always a name (its UTF-8 bytes, then its Latin-1 bytes when those are not UTF-8: names that
 * are not UTF-8 are shown as Latin-1).
 */
export function searchPlan(text: string, tipHeight: number | null): SearchStep[] {
  const steps: SearchStep[] = [];
  if (HASH.test(text)) {
    const id = text.toLowerCase();
    const order = /^00000000/.test(id) ? (['block', 'tx'] as const) : (['tx', 'block'] as const);
    for (const k of order) steps.push({ try: k, id });
    return steps;
  }
  if (/^\d{1,10}$/.test(text) && tipHeight !== null) {
    const want = Number(text);
    if (want <= tipHeight) steps.push({ try: 'height', height: want });
  }
  if (BASE58.test(text) || BECH32.test(text)) steps.push({ try: 'address', address: text });
  steps.push({ try: 'name', bytes: utf8Bytes(text) });
  const l1 = latin1Bytes(text);
  if (l1 && !isUtf8(l1)) steps.push({ try: 'name', bytes: l1 });
  return steps;
}
