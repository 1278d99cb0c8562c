/**
 * Fetch-API adapter around the router for edge runtimes (Netlify Edge Functions, Cloudflare
 * Pages `_worker.js`). Dependency-free: only web-standard Request/Response/URL. The host-specific
 * part is `fetchFile`, which returns the stored file (or a non-2xx response when it is absent).
 */
import { COMMON_HEADERS, makeRouterSite, routeRequest, type ErrorResponse, type RouterSite } from '../contract/router.js';
import type { SiteInfo } from '../contract/layout.js';

export type FetchFile = (file: string, request: Request) => Promise<Response>;

/** An error document as a response (405 with its Allow header). */
export function errorResp(e: ErrorResponse, head: boolean): Response {
  const headers: Record<string, string> = { ...COMMON_HEADERS, 'Content-Type': e.contentType, 'Cache-Control': e.cacheControl };
  if (e.status === 405) headers['Allow'] = 'GET, HEAD';
  return new Response(head ? null : e.body, { status: e.status, headers });
}

/** Request target as the router wants it: path + query (the platform has already parsed the URL). */
export function targetOf(request: Request): string {
  const u = new URL(request.url);
  return u.pathname + u.search;
}

export function edgeHandler(info: SiteInfo, fetchFile: FetchFile): (request: Request) => Promise<Response> {
  const site: RouterSite = makeRouterSite(info);
  return async (request) => {
    const head = request.method === 'HEAD';
    const r = routeRequest(request.method, targetOf(request), site);
    if (r.type === 'error') return errorResp(r, head);
    let upstream: Response;
    try {
      upstream = await fetchFile(r.file, request);
    } catch {
      return errorResp(r.missing, head);
    }
    const headers: Record<string, string> = { ...COMMON_HEADERS, 'Content-Type': r.contentType, 'Cache-Control': r.cacheControl };
    const etag = upstream.headers.get('ETag');
    if (etag) headers['ETag'] = etag;
    if (upstream.status === 304) return new Response(null, { status: 304, headers });
    if (!upstream.ok) {
      await upstream.body?.cancel();
      return errorResp(r.missing, head);
    }
    if (head) {
      await upstream.body?.cancel();
      return new Response(null, { status: r.status, headers });
    }
    return new Response(upstream.body, { status: r.status, headers });
  };
}
