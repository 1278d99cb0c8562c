/** Pieces shared by the generated host files. */
import { CACHE_LONG, CACHE_SHORT } from '../../serve/router.js';
import type { SiteInfo } from '../layout.js';

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
  for (const kind of ['tx', 'block']) {
    rules.push([`/${kind}/*.json`, CACHE_SHORT], [`/${kind}/*.bin`, CACHE_LONG], [`/${kind}/*.hex`, CACHE_LONG]);
  }
  rules.push(['/address/*', CACHE_SHORT], ['/name/*', CACHE_SHORT], ['/v/*', CACHE_SHORT], ['/stats.json', CACHE_SHORT], ['/names.json', CACHE_SHORT], ['/errors/*', CACHE_SHORT],
    ['/openapi.json', CACHE_SHORT], ['/schemas/*', CACHE_SHORT]);
  let s = '/*\n  Access-Control-Allow-Origin: *\n';
  for (const [p, cc] of rules) s += `${p}\n  Cache-Control: ${cc}\n`;
  return s;
}
