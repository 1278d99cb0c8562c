/**
 * The physical layout of a snapshot tree: where every resource lives below the output dir.
 * This is the contract between the build (which writes the files), the router (which maps URLs
 * to them) and the generated host configs. Dependency-free (only relative imports of pure
 * modules) so the router can ship it unchanged to edge runtimes.
 *
 * Layout (docs/operations.md, "Output tree"):
 *   stats.json, tx/<txid>.json|.bin|.hex, block/<hash>.json|.bin|.hex, block-height/<h>.json, address/<a>.json,
 *   name/<enc>.json (base document), v/<key>/name/<enc>.json (the other 63 query variants),
 *   errors/{tx,block,address,name,default}.json, 404.html, _site.json, _manifest.json.
 */
import { HASH_FORM, decodeNamePathBytes, encodeNamePath } from './name-path.js';
import { VARIANT_DIR, baseNamePath } from './paths.js';

// ---------------------------------------------------------------------------------------------
// Name → path encoding (docs/api.md, "Sending a name"): the pure part lives in name-path.ts, which the
// browsing UI bundles too.

export { HASH_FORM, decodeNamePathBytes, encodeNamePath } from './name-path.js';

/** Name bytes of a canonical path (see {@link isCanonicalNamePath}); else undefined. No Buffer: the UI and edge runtimes bundle this module. */
export function decodeNamePath(p: string): Uint8Array | undefined {
  const bytes = decodeNamePathBytes(p);
  if (bytes === undefined || encodeNamePath(bytes) !== p) return undefined;
  return bytes;
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
// Name query variants (docs/api.md, "Name")

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

export {
  ADDRESS_DIR,
  BAD_REQUEST_PATH,
  BLOCK_DIR,
  BLOCK_HEIGHT_DIR,
  ERRORS_DIR,
  ERROR_KINDS,
  GENERIC_ERROR_MESSAGES,
  MANIFEST_PATH,
  NAMES_PATH,
  NAME_DIR,
  NOT_FOUND_HTML_PATH,
  SITE_INFO_PATH,
  STATS_PATH,
  TX_DIR,
  UI_FILES,
  UI_SITE_PATH,
  VARIANT_DIR,
  URI_TOO_LONG_PATH,
  addressPath,
  baseNamePath,
  blockHeightPath,
  blockPath,
  errorBody,
  errorDocPath,
  isTxRawPath,
  parseHeight,
  txPath,
  type BinExt,
  type ErrorKind,
} from './paths.js';

/** File of a name variant from an already encoded name path. */
export function namePathEncoded(enc: string, v: NameVariant): string {
  const key = variantKey(v);
  return key === '' ? baseNamePath(enc) : `${VARIANT_DIR}/${key}/${baseNamePath(enc)}`;
}

export function namePath(name: Uint8Array, v: NameVariant): string {
  return namePathEncoded(encodeNamePath(name), v);
}

/** `_site.json`: what routers need to know about the tree. */
export interface SiteInfo {
  network: string;
  height: number;
  tip: string;
  cappedAddresses: string[];
}
