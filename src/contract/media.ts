/** Media types and cache policies of the published files: the router's, and any copy's (an object store's). */
export const CONTENT_TYPES = {
  json: 'application/json; charset=utf-8',
  bin: 'application/octet-stream',
  hex: 'text/plain; charset=utf-8',
  html: 'text/html; charset=utf-8',
} as const;

/** Content-addressed raw bytes never change. */
export const CACHE_LONG = 'public, max-age=31536000, immutable';
/** Everything that may change with the next block (JSON documents, stats, names, errors). */
export const CACHE_SHORT = 'public, max-age=60';

/** Headers every response carries. */
export const COMMON_HEADERS: Readonly<Record<string, string>> = { 'Access-Control-Allow-Origin': '*' };

const STATIC_TYPES: Readonly<Record<string, string>> = {
  html: CONTENT_TYPES.html,
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  json: CONTENT_TYPES.json,
  txt: 'text/plain; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  ico: 'image/x-icon',
  webmanifest: 'application/manifest+json',
  woff2: 'font/woff2',
  map: CONTENT_TYPES.json,
};

/** The media type of a static file by its extension (an unknown one, `constructor` included, is bytes). */
export function staticType(ext: string): string {
  return Object.hasOwn(STATIC_TYPES, ext) ? STATIC_TYPES[ext]! : CONTENT_TYPES.bin;
}

/**
 * The Content-Type and Cache-Control of a tree file by its path, as the router (router.ts) sends it
 * (what copies of the tree to an object store carry): long only for raw tx and block bytes.
 */
export function fileHeaders(path: string): { contentType: string; cacheControl: string } {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  const ext = dot > slash + 1 ? path.slice(dot + 1) : '';
  const top = path.slice(0, path.indexOf('/') + 1);
  const raw = (top === 'tx/' || top === 'block/') && (ext === 'bin' || ext === 'hex');
  const contentType = ext === 'hex' ? CONTENT_TYPES.hex : staticType(ext);
  return { contentType, cacheControl: raw ? CACHE_LONG : CACHE_SHORT };
}
