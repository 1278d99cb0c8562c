/**
 * The Cloudflare Pages advanced-mode worker's code, shipped as plain ES modules with the router
 * (see ship.ts): runs the shared router and reads files through the `ASSETS` binding.
 * Dependency-free: only relative imports and web-standard Request/Response/URL.
 */
import type { SiteInfo } from '../contract/layout.js';
import { edgeHandler } from './edge.js';

/** The part of the Pages environment the worker uses. */
export interface AssetsEnv {
  ASSETS: { fetch(request: Request): Promise<Response> };
}

/** Pages serves "x.html" at "x" and "d/index.html" at "d/" (it redirects the other spelling). */
export function assetUrl(file: string, base: string): URL {
  let p = '/' + file;
  if (p.endsWith('/index.html')) p = p.slice(0, -10);
  else if (p.endsWith('.html')) p = p.slice(0, -5);
  return new URL(p, base);
}

/** The worker's default export (module syntax). */
export function cloudflareWorker(info: SiteInfo): { fetch(request: Request, env: AssetsEnv): Promise<Response> } {
  let handle: ((request: Request) => Promise<Response>) | undefined;
  return {
    fetch(request, env) {
      handle ??= edgeHandler(info, (file, req) => {
        const headers: Record<string, string> = {};
        const inm = req.headers.get('if-none-match');
        if (inm) headers['if-none-match'] = inm;
        return env.ASSETS.fetch(new Request(assetUrl(file, req.url), { headers, redirect: 'manual' }));
      });
      return handle(request);
    },
  };
}
