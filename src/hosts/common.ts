/** Pieces shared by the generated host files. */
import { CACHE_LONG, CACHE_SHORT } from '../contract/router.js';
import { ADDRESS_DIR, BLOCK_DIR, BLOCK_HEIGHT_DIR, ERRORS_DIR, NAMES_PATH, NAME_DIR, STATS_PATH, TX_DIR, VARIANT_DIR, type SiteInfo } from '../contract/layout.js';

/** The shipped router modules below `dir` (e.g. `_worker.js/lib`), plus the baked-in site info. */
export function libFiles(dir: string, modules: Map<string, string>, info: SiteInfo): Map<string, string> {
  const files = new Map<string, string>();
  for (const [rel, code] of modules) files.set(`${dir}/${rel}`, code);
  files.set(`${dir}/site-info.js`, `export const SITE_INFO = ${JSON.stringify(info)};\n`);
  return files;
}

/**
 * `_headers` (same syntax on Netlify and Cloudflare Pages) for files served without the edge
 * code. Patterns do not overlap for the same header: Cloudflare joins duplicate values.
 */
export function headersFile(): string {
  const rules: [string, string][] = [];
  for (const kind of [TX_DIR, BLOCK_DIR]) {
    rules.push([`/${kind}/*.json`, CACHE_SHORT], [`/${kind}/*.bin`, CACHE_LONG], [`/${kind}/*.hex`, CACHE_LONG]);
  }
  rules.push([`/${BLOCK_HEIGHT_DIR}/*`, CACHE_SHORT], [`/${ADDRESS_DIR}/*`, CACHE_SHORT], [`/${NAME_DIR}/*`, CACHE_SHORT], [`/${VARIANT_DIR}/*`, CACHE_SHORT], [`/${STATS_PATH}`, CACHE_SHORT], [`/${NAMES_PATH}`, CACHE_SHORT], [`/${ERRORS_DIR}/*`, CACHE_SHORT],
    ['/openapi.json', CACHE_SHORT], ['/schemas/*', CACHE_SHORT]);
  let s = '/*\n  Access-Control-Allow-Origin: *\n';
  for (const [p, cc] of rules) s += `${p}\n  Cache-Control: ${cc}\n`;
  return s;
}
