/**
 * The one router shared by every front end (node server, Netlify Edge Function, Cloudflare
 * worker; nginx forwards what it cannot answer statically to the node server). Pure and
 * dependency-free: raw request target (path + query, exactly as on the request line) and site
 * info in, a file to send or an error document out. Never touches the file system, so a hostile
 * path can at worst name a file that does not exist: every file path it returns is built from
 * the canonical charset `[A-Za-z0-9._~-]` and `/`, with no dot-leading segments.
 */
import { nameBytesToText } from '../chain/name-text.js';
import { NETWORKS, type NetworkName } from '../chain/networks.js';
import { canonicalAddress, type AddressParams } from './address.js';
import {
  addressPath,
  blockHeightPath,
  blockPath,
  encodeNamePath,
  decodeNamePathBytes,
  errorBody,
  isCanonicalNamePath,
  namePathEncoded,
  parseHeight,
  txPath,
  variantFromQuery,
  STATS_PATH,
  type BinExt,
  type SiteInfo,
} from './layout.js';
import { CACHE_LONG, CACHE_SHORT, CONTENT_TYPES, staticType } from './media.js';

export { CACHE_LONG, CACHE_SHORT, COMMON_HEADERS, CONTENT_TYPES, fileHeaders, staticType } from './media.js';


export interface ErrorResponse {
  type: 'error';
  status: number;
  contentType: string;
  cacheControl: string;
  /** Compact JSON `{"error":"..."}`. */
  body: string;
}

export interface FileResponse {
  type: 'file';
  /** Relative to the tree root, '/'-separated, canonical charset only. */
  file: string;
  /** Status to answer with when the file exists (500 for a capped address document). */
  status: number;
  contentType: string;
  cacheControl: string;
  /** What to answer when the file does not exist. */
  missing: ErrorResponse;
}

export type RouteResult = FileResponse | ErrorResponse;

/** What the router needs to know about a tree (derived once from `_site.json`). */
export interface RouterSite {
  info: SiteInfo;
  names: boolean;
  address: AddressParams;
  capped: ReadonlySet<string>;
  /** Bounded memo of address → canonical form ('' = invalid): base58/bech32 checks cost µs. */
  addressMemo: Map<string, string>;
}

export function makeRouterSite(info: SiteInfo): RouterSite {
  const net = NETWORKS[info.network as NetworkName];
  if (!net) throw new Error(`Unknown network "${info.network}" in site info`);
  return {
    info,
    names: net.nameExpirationDepth !== undefined,
    address: { pubKeyHash: net.pubKeyHash, scriptHash: net.scriptHash, bech32: net.bech32 },
    capped: new Set(info.cappedAddresses ?? []),
    addressMemo: new Map(),
  };
}

export function errorResponse(status: number, message: string): ErrorResponse {
  return { type: 'error', status, contentType: CONTENT_TYPES.json, cacheControl: CACHE_SHORT, body: errorBody(message) };
}

export const BAD_REQUEST = errorResponse(400, 'Bad request.');
export const NOT_FOUND = errorResponse(404, 'Not found.');
export const URI_TOO_LONG = errorResponse(414, 'URI too long.');
export const METHOD_NOT_ALLOWED = errorResponse(405, 'Method not allowed.');

/**
 * A file response. `missing` may be given as a thunk: the error document (a JSON.stringify of
 * the requested id) is then only built when a front end asks for it, i.e. when the file is absent.
 */
class FileRoute implements FileResponse {
  readonly type = 'file' as const;
  private doc: ErrorResponse | (() => ErrorResponse);
  constructor(
    readonly file: string,
    readonly contentType: string,
    readonly cacheControl: string,
    missing: ErrorResponse | (() => ErrorResponse),
    readonly status: number,
  ) {
    this.doc = missing;
  }
  get missing(): ErrorResponse {
    if (typeof this.doc === 'function') this.doc = this.doc();
    return this.doc;
  }
}

function file(path: string, contentType: string, cacheControl: string, missing: ErrorResponse | (() => ErrorResponse), status = 200): FileResponse {
  return new FileRoute(path, contentType, cacheControl, missing, status);
}

// ---------------------------------------------------------------------------------------------
// Percent-decoding of the raw target

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/** Percent-decodes to bytes; undefined on a malformed escape. `s` is printable ASCII. */
function percentDecode(s: string): Uint8Array | undefined {
  const out = new Uint8Array(s.length);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      const hi = i + 2 < s.length ? hexDigit(s.charCodeAt(i + 1)) : -1;
      const lo = hi >= 0 ? hexDigit(s.charCodeAt(i + 2)) : -1;
      if (lo < 0) return undefined;
      out[n++] = (hi << 4) | lo;
      i += 2;
    } else {
      out[n++] = c;
    }
  }
  return out.subarray(0, n);
}

/** Bytes as text: UTF-8 (a leading BOM kept), or Latin-1 when not valid UTF-8 (as name values are rendered). */
function bytesToText(b: Uint8Array): string {
  return nameBytesToText(b).text;
}

function decodeText(s: string): string {
  if (s.indexOf('%') === -1) return s;
  return bytesToText(percentDecode(s)!);
}

// ---------------------------------------------------------------------------------------------
// Routes

/** Longest request target answered (names are ≤ 255 bytes, ≤ 765 characters percent-encoded). */
export const MAX_TARGET = 4096;
const HASH = /^[0-9a-fA-F]{64}$/;
const STATIC_SEGMENT = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$/;
/** First path segments that belong to the API or the tree's internals, never served as-is. */
const RESERVED_TOP = new Set(['tx', 'block', 'block-height', 'address', 'name', 'v', 'errors', '404.html', 'stats.json', 'nginx.conf', 'netlify.toml']);



function idDoc(kind: 'tx' | 'block', rest: string): RouteResult {
  const text = decodeText(rest);
  const dot = text.lastIndexOf('.');
  if (dot <= 0 || text.indexOf('/') !== -1) return NOT_FOUND;
  const id = text.slice(0, dot);
  const ext = text.slice(dot + 1);
  if (ext !== 'json' && ext !== 'bin' && ext !== 'hex') return NOT_FOUND;
  const missing = () => errorResponse(404, `${kind === 'tx' ? 'Tx' : 'Block'} ${id} not found.`);
  if (!HASH.test(id)) return missing();
  const hash = id.toLowerCase();
  const path = kind === 'tx' ? txPath(hash, ext as BinExt) : blockPath(hash, ext as BinExt);
  return file(path, CONTENT_TYPES[ext as BinExt], ext === 'json' ? CACHE_SHORT : CACHE_LONG, missing);
}

/** `/block-height/<h>.json`: only the canonical decimal spelling is a height (one file per height). */
function heightDoc(rest: string): RouteResult {
  const text = decodeText(rest);
  if (!text.endsWith('.json') || text.indexOf('/') !== -1) return NOT_FOUND;
  const spelled = text.slice(0, -5);
  if (spelled === '') return NOT_FOUND;
  const height = parseHeight(spelled);
  if (height === undefined) return errorResponse(404, `Block height ${spelled} is invalid.`);
  return file(blockHeightPath(height), CONTENT_TYPES.json, CACHE_SHORT, () => errorResponse(404, `Block at height ${height} not found.`));
}

const ADDRESS_MEMO_SIZE = 4096;

function addressDoc(rest: string, site: RouterSite): RouteResult {
  const text = decodeText(rest);
  if (!text.endsWith('.json') || text.indexOf('/') !== -1) return NOT_FOUND;
  const addr = text.slice(0, -5);
  if (addr === '') return NOT_FOUND;
  let canon = site.addressMemo.get(addr);
  if (canon === undefined) {
    canon = canonicalAddress(addr, site.address) ?? '';
    if (site.addressMemo.size >= ADDRESS_MEMO_SIZE) site.addressMemo.clear();
    site.addressMemo.set(addr, canon);
  }
  if (canon === '') return errorResponse(404, `Address ${addr} is invalid.`);
  const missing = () => errorResponse(404, `Address ${addr} not found.`);
  return file(addressPath(canon), CONTENT_TYPES.json, CACHE_SHORT, missing, site.capped.has(canon) ? 500 : 200);
}

function nameDoc(rest: string, query: string): RouteResult {
  let enc: string;
  let label: () => string;
  const rawName = rest.endsWith('.json') ? rest.slice(0, -5) : undefined;
  if (rawName !== undefined && isCanonicalNamePath(rawName)) {
    enc = rawName;
    label = () => {
      const bytes = decodeNamePathBytes(rawName);
      return bytes ? bytesToText(bytes) : rawName;
    };
  } else {
    const bytes = percentDecode(rest)!;
    const n = bytes.length;
    // ".json" after decoding (the format is the last extension, as in Rails).
    if (n < 5 || bytes[n - 5] !== 0x2e || bytes[n - 4] !== 0x6a || bytes[n - 3] !== 0x73 || bytes[n - 2] !== 0x6f || bytes[n - 1] !== 0x6e) {
      return NOT_FOUND;
    }
    const name = bytes.subarray(0, n - 5);
    enc = encodeNamePath(name);
    label = () => bytesToText(name);
  }
  const missing = () => errorResponse(404, `Name ${label()} not found.`);
  return file(namePathEncoded(enc, variantFromQuery(query)), CONTENT_TYPES.json, CACHE_SHORT, missing);
}

function staticDoc(path: string): RouteResult {
  const segs = path.split('/');
  const first = segs[0]!;
  if (first.startsWith('_') || RESERVED_TOP.has(first)) return NOT_FOUND;
  for (const s of segs) if (!STATIC_SEGMENT.test(s)) return NOT_FOUND;
  const last = segs[segs.length - 1]!;
  const dot = last.lastIndexOf('.');
  const ext = dot > 0 ? last.slice(dot + 1) : '';
  const type = staticType(ext);
  return file(path, type, CACHE_SHORT, NOT_FOUND);
}

/** Path bytes that need no decoding or normalization: `[A-Za-z0-9._~/-]`. */
const PLAIN = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~/-') PLAIN[c.charCodeAt(0)] = 1;

const STATS_FILE = file(STATS_PATH, CONTENT_TYPES.json, CACHE_SHORT, NOT_FOUND);

/**
 * The common forms (`/tx/…`, `/block/…`, `/block-height/…`, `/address/…`, `/name/…`, `/stats.json` with a path of
 * plain characters, no '%', no dot-leading segment, no '//') skip the decoding and
 * normalization checks of {@link route}, which could not change them: same answers, fewer
 * allocations. Anything else → undefined (take the general path).
 */
function fastRoute(target: string, site: RouterSite): RouteResult | undefined {
  const len = target.length;
  if (len > MAX_TARGET) return undefined;
  let q = len;
  for (let i = 1; i < len; i++) {
    const c = target.charCodeAt(i);
    if (c === 0x3f) {
      q = i;
      break;
    }
    if (c >= 128 || PLAIN[c] === 0) return undefined;
  }
  for (let i = q + 1; i < len; i++) {
    const c = target.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f || c === 0x5c) return undefined;
  }
  const path = q === len ? target : target.slice(0, q);
  if (path.indexOf('/.') !== -1 || path.indexOf('//') !== -1) return undefined;
  if (path.startsWith('/tx/')) return idDoc('tx', path.slice(4));
  if (path.startsWith('/block/')) return idDoc('block', path.slice(7));
  if (path.startsWith('/block-height/')) return heightDoc(path.slice(14));
  if (path.startsWith('/name/')) return site.names ? nameDoc(path.slice(6), q === len ? '' : target.slice(q + 1)) : NOT_FOUND;
  if (path.startsWith('/address/')) return addressDoc(path.slice(9), site);
  if (path === '/stats.json') return STATS_FILE;
  return undefined;
}

/**
 * Whether a raw path (no query) must be refused: a malformed escape; a NUL byte once decoded;
 * a dot segment of the request path itself (a segment between literal '/' that decodes to '.'
 * or '..', e.g. `..`, `%2e%2E`, `.%2e`: browsers and hosts resolve those before we see them);
 * or a path that, decoded with '%2F' as '/', would climb above the root (nginx refuses those
 * while parsing the request line, so every front end does). '.' and '..' between encoded
 * slashes are data: `/name/a%2F..%2Fb.json` asks for the name `a/../b`.
 */
function hostilePath(rawPath: string): boolean {
  let depth = 0;
  let climbs = false;
  let segStart = 1;
  for (let i = 1; i <= rawPath.length; i++) {
    if (i < rawPath.length && rawPath.charCodeAt(i) !== 0x2f) continue;
    const seg = percentDecode(rawPath.slice(segStart, i));
    if (seg === undefined) return true;
    if (isDotSegment(seg, 0, seg.length)) return true;
    // The same segment decoded, '%2F' splitting it further, as nginx resolves it.
    let s = 0;
    for (let k = 0; k <= seg.length; k++) {
      const b = k < seg.length ? seg[k]! : 0x2f;
      if (b === 0) return true;
      if (b !== 0x2f) continue;
      const len = k - s;
      if (len === 2 && isDotSegment(seg, s, k)) {
        if (--depth < 0) climbs = true;
      } else if (len > 0 && !isDotSegment(seg, s, k)) depth++;
      s = k + 1;
    }
    segStart = i + 1;
  }
  return climbs;
}

/** bytes[from, to) is '.' or '..'. */
function isDotSegment(bytes: Uint8Array, from: number, to: number): boolean {
  const len = to - from;
  return (len === 1 || len === 2) && bytes[from] === 0x2e && bytes[to - 1] === 0x2e;
}

/**
 * Routes a raw request target (`req.url`: path and optional query, not normalized) for a GET
 * or HEAD request. Hostile targets (non-printable or non-ASCII bytes, backslashes, malformed
 * percent-escapes, NUL, dot segments of the request path in any spelling: see
 * {@link hostilePath}) → 400; unknown paths → 404 `Not found.`.
 */
export function route(target: string, site: RouterSite): RouteResult {
  if (target.length === 0 || target.charCodeAt(0) !== 0x2f) return BAD_REQUEST;
  const fast = fastRoute(target, site);
  if (fast !== undefined) return fast;
  if (target.length > MAX_TARGET) return URI_TOO_LONG;
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f || c === 0x5c) return BAD_REQUEST;
  }
  const q = target.indexOf('?');
  const rawPath = q === -1 ? target : target.slice(0, q);
  const query = q === -1 ? '' : target.slice(q + 1);
  if (hostilePath(rawPath)) return BAD_REQUEST;

  const slash = rawPath.indexOf('/', 1);
  const top = decodeText(slash === -1 ? rawPath.slice(1) : rawPath.slice(1, slash));
  const rest = slash === -1 ? undefined : rawPath.slice(slash + 1);
  if (rest === undefined) {
    if (top === 'stats.json') return STATS_FILE;
    if (top === '') return file('index.html', CONTENT_TYPES.html, CACHE_SHORT, NOT_FOUND);
  } else {
    switch (top) {
      case 'tx':
        return idDoc('tx', rest);
      case 'block':
        return idDoc('block', rest);
      case 'block-height':
        return heightDoc(rest);
      case 'address':
        return addressDoc(rest, site);
      case 'name':
        return site.names ? nameDoc(rest, query) : NOT_FOUND;
    }
  }
  if (rawPath.indexOf('%') !== -1) return NOT_FOUND;
  return staticDoc(rawPath.slice(1));
}

/** Route including the method check: only GET and HEAD are answered. */
export function routeRequest(method: string, target: string, site: RouterSite): RouteResult {
  if (method !== 'GET' && method !== 'HEAD') return METHOD_NOT_ALLOWED;
  return route(target, site);
}
