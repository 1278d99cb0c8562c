/**
 * Where every document lives below the output dir, '/'-separated and relative: the one place
 * that spells a file path or URL of the tree (layout.ts re-exports all of it). Pure, no
 * imports and no Node types, so the browsing UI bundles it as it is.
 */

export type BinExt = 'json' | 'bin' | 'hex';
export type ErrorKind = 'tx' | 'block' | 'address' | 'name' | 'default';

/** Top directories of the per-resource documents (host rules match on them). */
export const TX_DIR = 'tx';
export const BLOCK_DIR = 'block';
/** `block-height/<height>.json`: the main-chain block at a height (`{height, hash}`). */
export const BLOCK_HEIGHT_DIR = 'block-height';
export const ADDRESS_DIR = 'address';
export const NAME_DIR = 'name';
/** `v/<variant key>/name/…`: the name query variants other than the base document. */
export const VARIANT_DIR = 'v';
export const ERRORS_DIR = 'errors';

export const STATS_PATH = 'stats.json';
/** Every name of a Namecoin snapshot: `{height, count, names: [{name, path, height, expires_in}]}`. */
export const NAMES_PATH = 'names.json';
export const SITE_INFO_PATH = '_site.json';
export const MANIFEST_PATH = '_manifest.json';
export const NOT_FOUND_HTML_PATH = '404.html';
/** The public copy of the site info the browsing UI reads (network, height, tip, off-chain blocks). */
export const UI_SITE_PATH = 'assets/site.json';
/** The browsing UI's static files, at the top of a tree and beside a pack's `pack.json`. */
export const UI_INDEX = 'index.html';
export const UI_JS = 'assets/app.js';
export const UI_CSS = 'assets/app.css';
export const UI_FILES: readonly string[] = [UI_INDEX, UI_JS, UI_CSS];
/**
 * The meta element of the UI's index.html that names a pack to read the documents from (its
 * content: the pack's base URL, relative to the page); a pack build writes it (docs/deploy.md).
 */
export const UI_PACK_META = 'chain-snapshot-pack';
/** Body of nginx's own 400s (request lines it refuses to parse). */
export const BAD_REQUEST_PATH = `${ERRORS_DIR}/bad-request.json`;
/** Body of nginx's own 414s. */
export const URI_TOO_LONG_PATH = `${ERRORS_DIR}/uri-too-long.json`;
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
  return `${TX_DIR}/${txid}.${ext}`;
}

/** Whether `rel` is a tx's `.bin` or `.hex` file (txPath): raw bytes that lie in its block's `.bin`. */
export function isTxRawPath(rel: string): boolean {
  return rel.length === TX_DIR.length + 69 && rel.startsWith(`${TX_DIR}/`) && (rel.endsWith('.bin') || rel.endsWith('.hex'));
}

export function blockPath(hash: string, ext: BinExt): string {
  return `${BLOCK_DIR}/${hash}.${ext}`;
}

/** The main-chain block at `height` (canonical decimal, see {@link parseHeight}). */
export function blockHeightPath(height: number): string {
  return `${BLOCK_HEIGHT_DIR}/${height}.json`;
}

/** Longest height spelling answered (10 digits: every 32-bit height). */
const HEIGHT_TEXT = /^(0|[1-9][0-9]{0,9})$/;

/** A height from its canonical decimal spelling (no sign, no leading zero); else undefined. */
export function parseHeight(text: string): number | undefined {
  return HEIGHT_TEXT.test(text) ? Number(text) : undefined;
}

export function addressPath(addr: string): string {
  return `${ADDRESS_DIR}/${addr}.json`;
}

/** The base document of a name from its encoded path (name-path.ts encodeNamePath). */
export function baseNamePath(enc: string): string {
  return `${NAME_DIR}/${enc}.json`;
}

export function errorDocPath(kind: ErrorKind): string {
  return `${ERRORS_DIR}/${kind}.json`;
}

/** Compact JSON error document: `{"error":"<message>"}`. */
export function errorBody(message: string): string {
  return JSON.stringify({ error: message });
}
