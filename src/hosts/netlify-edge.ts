/**
 * The Netlify Edge Function's code, shipped as plain ES modules with the router (see ship.ts):
 * runs the shared router on every path and fetches the mapped static file with a marked
 * same-site sub-request, which the function lets through to Netlify's static serving.
 * Dependency-free: only relative imports and web-standard Request/Response/fetch.
 */
import type { SiteInfo } from '../contract/layout.js';
import { edgeHandler } from './edge.js';

/** Header marking the function's own sub-requests for static files. */
export const INTERNAL_HEADER = 'x-snapshot-internal';

/** The edge function: `undefined` lets Netlify serve the request itself (our sub-requests). */
export function netlifyFunction(info: SiteInfo): (request: Request) => Promise<Response | undefined> {
  const handle = edgeHandler(info, (file, request) => {
    const headers: Record<string, string> = { [INTERNAL_HEADER]: '1' };
    const inm = request.headers.get('if-none-match');
    if (inm) headers['if-none-match'] = inm;
    return fetch(new URL('/' + file, request.url), { headers });
  });
  return async (request) => {
    if (request.headers.get(INTERNAL_HEADER)) return undefined; // our own sub-request: serve the static file
    return handle(request);
  };
}
