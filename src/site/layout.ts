/**
 * The physical layout of a snapshot tree: where every resource lives below the output dir.
 * This is the contract between the build (which writes the files), the router (which maps URLs
 * to them) and the generated host configs. Dependency-free (only a relative import of the
 * pure-JS sha256) so the router can ship it unchanged to edge runtimes.
 *
 * Layout (static-hosting.md §10.2, flat profile):
 *   stats.json, tx/<txid>.json|.bin|.hex, block/<hash>.json|.bin|.hex, address/<a>.json,
 *   name/<enc>.json (base document), v/<key>/name/<enc>.json (the other 63 query variants),
 *   errors/{tx,block,address,name,default}.json, 404.html, _site.json, _manifest.json.
 */
import { sha256, toHex } from '../serve/sha256.js';

// ---------------------------------------------------------------------------------------------
// Name → path encoding (static-hosting.md §8.4)

/** Longest segment (before `.json`) and whole path (before `.json`) the plain encoding may produce. */
const MAX_SEGMENT = 250 - '.json'.length;
const MAX_PATH = 900 - '.json'.length;
const HEX_UPPER = '0123456789ABCDEF';

function isCopied(b: number): boolean {
  return (
    (b >= 0x30 && b <= 0x39) || // 0-9
    (b >= 0x41 && b <= 0x5a) || // A-Z
    (b >= 0x61 && b <= 0x7a) || // a-z
    b === 0x5f || // _
    b === 0x2d // -
  );
}

function escapeByte(b: number): string {
  return '~' + HEX_UPPER[b >> 4]! + HEX_UPPER[b & 15]!;
}

/**
 * Canonical path (without `.json`) of a name below `name/`: `[A-Za-z0-9._~-]` and `/` only, no
 * empty or dot-leading segments, no non-final `*.json` segment, injective. Long names use
 * `~x/<sha256[0:2]>/<sha256 hex>`.
 */
export function encodeNamePath(name: Uint8Array): string {
  if (name.length === 0) return '~';
  const segments: string[] = [];
  let seg = '';
  for (let i = 0; i < name.length; i++) {
    const b = name[i]!;
    if (b === 0x2f) {
      // '/' separates only after a non-empty segment and when it is not the last byte.
      if (seg !== '' && i !== name.length - 1) {
        segments.push(seg);
        seg = '';
      } else {
        seg += '~2F';
      }
    } else if (isCopied(b)) {
      seg += String.fromCharCode(b);
    } else if (b === 0x2e) {
      seg += seg === '' ? '~2E' : '.';
    } else {
      seg += escapeByte(b);
    }
  }
  segments.push(seg);
  for (let i = 0; i < segments.length - 1; i++) {
    const s = segments[i]!;
    if (s.endsWith('.json')) segments[i] = s.slice(0, -5) + '~2Ejson';
  }
  const p = segments.join('/');
  if (p.length > MAX_PATH || segments.some((s) => s.length > MAX_SEGMENT)) {
    const h = toHex(sha256(name));
    return `~x/${h.slice(0, 2)}/${h}`;
  }
  return p;
}

const HASH_FORM = /^~x\/([0-9a-f]{2})\/([0-9a-f]{64})$/;

function hexVal(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1; // lowercase hex is not canonical
}

/**
 * Decodes a plain canonical-charset path back to name bytes (no canonicity check; the
 * `~x/...` hash form is not reversible → undefined). Dependency-free (no Buffer).
 */
export function decodeNamePathBytes(p: string): Uint8Array | undefined {
  if (p === '~') return new Uint8Array(0);
  if (p === '' || HASH_FORM.test(p)) return undefined;
  const out = new Uint8Array(p.length);
  let n = 0;
  for (let i = 0; i < p.length; i++) {
    const c = p.charCodeAt(i);
    if (c === 0x7e) {
      if (i + 2 >= p.length) return undefined;
      const hi = hexVal(p.charCodeAt(i + 1));
      const lo = hexVal(p.charCodeAt(i + 2));
      if (hi < 0 || lo < 0) return undefined;
      out[n++] = (hi << 4) | lo;
      i += 2;
    } else if (c === 0x2f || c === 0x2e || isCopied(c)) {
      out[n++] = c;
    } else {
      return undefined;
    }
  }
  return out.subarray(0, n);
}

/** Name bytes of a canonical path (see {@link isCanonicalNamePath}), as a Buffer; else undefined. */
export function decodeNamePath(p: string): Buffer | undefined {
  const bytes = decodeNamePathBytes(p);
  if (bytes === undefined || encodeNamePath(bytes) !== p) return undefined;
  return Buffer.from(bytes);
}

/**
 * True if `p` is exactly what {@link encodeNamePath} produces for some name: a decodable path
 * that re-encodes to itself, or the `~x/<h[0:2]>/<h>` long-name form.
 */
export function isCanonicalNamePath(p: string): boolean {
  const m = HASH_FORM.exec(p);
  if (m) return m[2]!.startsWith(m[1]!);
  const bytes = decodeNamePathBytes(p);
  return bytes !== undefined && encodeNamePath(bytes) === p;
}

// ---------------------------------------------------------------------------------------------
// Name query variants (static-hosting.md §10.2)

/** The `with_*` flags, in variant-key order. */
export const WITH_FLAGS = ['block', 'height', 'mrkl_branch', 'rawtx', 'tx_idx'] as const;
export type WithFlag = (typeof WITH_FLAGS)[number];

export interface NameVariant {
  history: boolean;
  with: ReadonlySet<WithFlag>;
}

/** Tokens joined with '-' in the order history, block, height, mrkl_branch, rawtx, tx_idx; '' = base. */
export function variantKey(v: NameVariant): string {
  const parts: string[] = [];
  if (v.history) parts.push('history');
  for (const f of WITH_FLAGS) if (v.with.has(f)) parts.push(f);
  return parts.join('-');
}

/** All 64 variants, base first; order: history off/on × the 32 flag subsets in bit order. */
export const ALL_NAME_VARIANTS: NameVariant[] = (() => {
  const out: NameVariant[] = [];
  for (const history of [false, true]) {
    for (let mask = 0; mask < 32; mask++) {
      out.push({ history, with: new Set(WITH_FLAGS.filter((_, i) => mask & (1 << i))) });
    }
  }
  return out;
})();

const VARIANT_BY_KEY = new Map(ALL_NAME_VARIANTS.map((v) => [variantKey(v), v]));

/** The variant for a key (as produced by {@link variantKey}), or undefined. */
export function variantFromKey(key: string): NameVariant | undefined {
  return VARIANT_BY_KEY.get(key);
}

function safeDecode(s: string): string {
  if (s.indexOf('%') === -1) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The variant a query string selects (leading '?' optional). Presence flags: `history`,
 * `with_block|height|mrkl_branch|rawtx|tx_idx`, `with_all` = all five; any value or none, any
 * order; keys are percent-decoded; unknown keys (incl. `raw`) are ignored.
 */
export function variantFromQuery(query: string): NameVariant {
  let v = QUERY_MEMO.get(query);
  if (v === undefined) {
    v = parseVariantQuery(query);
    // Bounded: real clients use a handful of spellings; junk queries just reset the memo.
    if (QUERY_MEMO.size >= 512) QUERY_MEMO.clear();
    QUERY_MEMO.set(query, v);
  }
  return v;
}

const QUERY_MEMO = new Map<string, NameVariant>();

function parseVariantQuery(query: string): NameVariant {
  let history = false;
  const flags = new Set<WithFlag>();
  const q = query.startsWith('?') ? query.slice(1) : query;
  if (q !== '') {
    for (const part of q.split('&')) {
      const eq = part.indexOf('=');
      const key = safeDecode(eq === -1 ? part : part.slice(0, eq));
      if (key === 'history') history = true;
      else if (key === 'with_all') for (const f of WITH_FLAGS) flags.add(f);
      else if (key.startsWith('with_') && (WITH_FLAGS as readonly string[]).includes(key.slice(5))) flags.add(key.slice(5) as WithFlag);
    }
  }
  // Return the shared instance so callers can compare by identity if they like.
  return VARIANT_BY_KEY.get(variantKey({ history, with: flags }))!;
}

// ---------------------------------------------------------------------------------------------
// Paths (relative to the output dir, '/'-separated)

export type BinExt = 'json' | 'bin' | 'hex';
export type ErrorKind = 'tx' | 'block' | 'address' | 'name' | 'default';

export const STATS_PATH = 'stats.json';
export const SITE_INFO_PATH = '_site.json';
export const MANIFEST_PATH = '_manifest.json';
export const NOT_FOUND_HTML_PATH = '404.html';
export const ERROR_KINDS: readonly ErrorKind[] = ['tx', 'block', 'address', 'name', 'default'];

/** Generic per-kind messages for hosts without a router (errors/<kind>.json). */
export const GENERIC_ERROR_MESSAGES: Readonly<Record<ErrorKind, string>> = {
  tx: 'Tx not found.',
  block: 'Block not found.',
  address: 'Address not found.',
  name: 'Name not found.',
  default: 'Not found.',
};

export function txPath(txid: string, ext: BinExt): string {
  return `tx/${txid}.${ext}`;
}

export function blockPath(hash: string, ext: BinExt): string {
  return `block/${hash}.${ext}`;
}

export function addressPath(addr: string): string {
  return `address/${addr}.json`;
}

/** File of a name variant from an already encoded name path. */
export function namePathEncoded(enc: string, v: NameVariant): string {
  const key = variantKey(v);
  return key === '' ? `name/${enc}.json` : `v/${key}/name/${enc}.json`;
}

export function namePath(name: Uint8Array, v: NameVariant): string {
  return namePathEncoded(encodeNamePath(name), v);
}

export function errorDocPath(kind: ErrorKind): string {
  return `errors/${kind}.json`;
}

/** Compact JSON error document: `{"error":"<message>"}`. */
export function errorBody(message: string): string {
  return JSON.stringify({ error: message });
}

/** `_site.json`: what routers need to know about the tree. */
export interface SiteInfo {
  network: string;
  height: number;
  tip: string;
  cappedAddresses: string[];
}
