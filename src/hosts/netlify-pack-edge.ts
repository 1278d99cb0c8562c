/**
 * A Netlify Edge Function answering the API from a pack read with HTTP Range (see pack-edge.ts).
 * The pack's base URL is the environment variable SNAPSHOT_PACK_URL, else the one written into
 * the generated function, else the site itself: the pack's files deployed next to the function,
 * fetched with a marked same-site sub-request that the function lets through to Netlify's static
 * serving. Shipped as plain ES modules (see ship.ts): only relative imports and web-standard APIs.
 */
import type { SiteInfo } from '../contract/layout.js';
import { HttpSource } from '../contract/pack-source.js';
import { INTERNAL_HEADER } from './netlify-edge.js';
import { packEdgeHandler, type PackEdgeOptions } from './pack-edge.js';

/** The environment variable naming the pack's base URL. */
export const PACK_URL_ENV = 'SNAPSHOT_PACK_URL';

interface NetlifyGlobal {
  env: { get(name: string): string | undefined };
}

/** Netlify's `context` argument, as far as the function uses it. */
interface EdgeContext {
  waitUntil?(p: Promise<unknown>): void;
}

function envUrl(): string | undefined {
  const netlify = (globalThis as { Netlify?: NetlifyGlobal }).Netlify;
  return netlify?.env.get(PACK_URL_ENV) || undefined;
}

export interface NetlifyPackConfig extends PackEdgeOptions {
  /** The pack's base URL when SNAPSHOT_PACK_URL is not set (absolute, or a path on the site). */
  packUrl?: string;
}

/** The edge function: `undefined` lets Netlify serve the request itself (our sub-requests). */
export function netlifyPackFunction(info: SiteInfo, config: NetlifyPackConfig = {}): (request: Request, context?: EdgeContext) => Promise<Response | undefined> {
  let site = '';
  const handle = packEdgeHandler(
    info,
    () => {
      const base = new URL(envUrl() ?? config.packUrl ?? '/', site);
      // Only requests to the site itself need the marker; another origin gets plain range requests.
      return new HttpSource(base, base.origin === new URL(site).origin ? { [INTERNAL_HEADER]: '1' } : {});
    },
    config,
  );
  return async (request, context) => {
    if (request.headers.get(INTERNAL_HEADER)) return undefined; // our own sub-request: serve the static file
    site ||= request.url;
    return handle(request, context?.waitUntil ? { waitUntil: (p) => context.waitUntil!(p) } : {});
  };
}
