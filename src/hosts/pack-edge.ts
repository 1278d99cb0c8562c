/**
 * Fetch-API handler answering every request through the shared router from a pack
 * (docs/pack-format.md) read by range: the edge counterpart of `edge.ts` for hosts that store a
 * pack instead of a tree (a Cloudflare Worker over R2, a Netlify Edge Function over HTTP Range).
 * Shipped as plain ES modules (see ship.ts): only relative imports and web-standard APIs.
 *
 * Kept per isolate: the open pack (root and recent directory slots) and the site info read from
 * the pack's own `_site.json`; `pack.json` is read again at most every `recheckSeconds`, and a new
 * index (a new generation) is opened when it names one. Whole answers are kept in the Web Cache
 * API (when the runtime has one) under the index name, the file and the encoding: content-named
 * indexes never change, so an entry is never stale.
 */
import { CACHE_LONG, COMMON_HEADERS, CONTENT_TYPES, makeRouterSite, routeRequest, type RouterSite } from '../contract/router.js';
import { SITE_INFO_PATH, type SiteInfo } from '../contract/layout.js';
import { Encoding, Kind, type PackRecord } from '../contract/pack-format.js';
import { acceptsGzip, answerBytes } from '../contract/pack-answer.js';
import { PackCore, readPointer, readRoot, type CoreOptions } from '../contract/pack-reader.js';
import type { RangeSource } from '../contract/pack-source.js';
import { errorResp, targetOf } from './edge.js';

/** The part of the Web Cache API the handler uses (Cloudflare's `caches`, Netlify's, Deno's). */
export interface AnswerCache {
  match(key: string): Promise<Response | undefined>;
  put(key: string, response: Response): Promise<void>;
}

export interface PackEdgeOptions extends CoreOptions {
  /** Seconds between reads of `pack.json` looking for a new index (default 60, the API's short cache). */
  recheckSeconds?: number;
  /** Where whole answers are kept (default: `caches.open('chain-snapshot-pack')` when the runtime has it). */
  cache?: () => Promise<AnswerCache | undefined>;
  /** Milliseconds clock (tests). */
  now?: () => number;
}

/** Per-request platform hooks: `waitUntil` lets a cache write finish after the answer is sent. */
export interface RequestHooks {
  waitUntil?(p: Promise<unknown>): void;
}

interface Opened {
  core: PackCore;
  site: RouterSite;
  checkedAt: number;
}

// The encoding and negotiation of a cached answer travel in headers of our own: a cache that saw
// Content-Encoding or Vary might decode the bytes or match on the lookup's (absent) headers.
const KEPT_ENCODING = 'x-snapshot-encoding';
const KEPT_VARY = 'x-snapshot-vary';

/** The error a front end gives when the pack itself cannot be read (the details go to the log). */
function unavailable(status: 500 | 503, head: boolean): Response {
  const body = JSON.stringify({ error: status === 503 ? 'Snapshot unavailable.' : 'Internal error.' });
  return new Response(head ? null : body, { status, headers: { ...COMMON_HEADERS, 'Content-Type': CONTENT_TYPES.json, 'Cache-Control': 'no-store' } });
}

/** A strong ETag per stored representation: parts are named by content and never rewritten. */
function etagOf(core: PackCore, rec: PackRecord, gzip: boolean): string {
  const part = core.parts[rec.part]?.name.slice(0, 16) ?? String(rec.part);
  return `"${part}-${rec.offset.toString(16)}-${rec.stored.toString(16)}-${rec.crc.toString(16)}${gzip ? '-gz' : ''}"`;
}

async function defaultCache(): Promise<AnswerCache | undefined> {
  const storage = (globalThis as { caches?: { open(name: string): Promise<AnswerCache> } }).caches;
  return storage ? storage.open('chain-snapshot-pack') : undefined;
}

/** The handler; `source` is called once per opening of the pack. */
export function packEdgeHandler(info: SiteInfo, source: () => RangeSource, opts: PackEdgeOptions = {}): (request: Request, hooks?: RequestHooks) => Promise<Response> {
  const recheck = (opts.recheckSeconds ?? 60) * 1000;
  const now = opts.now ?? Date.now;
  const openCache = opts.cache ?? defaultCache;
  let current: Opened | undefined;
  let opening: Promise<Opened> | undefined;
  let cache: Promise<AnswerCache | undefined> | undefined;

  async function open(src: RangeSource, index: string): Promise<Opened> {
    const core = new PackCore(src, await readRoot(src, index), opts);
    // The pack's own site info belongs to its generation (tip, capped addresses).
    const own = await core.get(SITE_INFO_PATH);
    const siteInfo = own ? (JSON.parse(new TextDecoder().decode(await answerBytes(own))) as SiteInfo) : info;
    return { core, site: makeRouterSite(siteInfo), checkedAt: now() };
  }

  async function refresh(): Promise<Opened> {
    const src = current?.core.source ?? source();
    const index = await readPointer(src);
    if (current && current.core.index === index) {
      current.checkedAt = now();
      return current;
    }
    current = await open(src, index);
    return current;
  }

  function pack(): Promise<Opened> {
    if (current && now() - current.checkedAt < recheck) return Promise.resolve(current);
    opening ??= refresh().finally(() => (opening = undefined));
    // A failed re-check keeps answering from the pack already open.
    return current ? opening.catch(() => current!) : opening;
  }

  function answerCache(): Promise<AnswerCache | undefined> {
    cache ??= openCache().catch(() => undefined);
    return cache;
  }

  return async (request, hooks = {}) => {
    const head = request.method === 'HEAD';
    let p: Opened;
    try {
      p = await pack();
    } catch (e) {
      console.error(`chain snapshot: cannot open the pack: ${(e as Error).message}`);
      return unavailable(503, head);
    }
    const r = routeRequest(request.method, targetOf(request), p.site);
    if (r.type === 'error') return errorResp(r, head);
    const gzipOk = acceptsGzip(request.headers.get('accept-encoding') ?? undefined);
    const headers: Record<string, string> = { ...COMMON_HEADERS, 'Content-Type': r.contentType, 'Cache-Control': r.cacheControl };
    const inm = request.headers.get('if-none-match');
    const store = await answerCache();
    // The site's own origin: some caches (Cloudflare's) keep only keys of the zone.
    const key = `${new URL(request.url).origin}/.pack-cache/${p.core.index}/${r.file}${gzipOk ? '.gz' : ''}`;
    const send = (body: Uint8Array | ReadableStream | null, etag: string, encoding: string | null, varies: boolean): Response => {
      headers['ETag'] = etag;
      if (varies) headers['Vary'] = 'Accept-Encoding';
      if ((inm === etag || head) && body instanceof ReadableStream) void body.cancel(); // a cached body not sent
      if (inm === etag) return new Response(null, { status: 304, headers });
      if (encoding === 'gzip') headers['Content-Encoding'] = 'gzip';
      // encodeBody 'manual': workerd must send the gzip bytes as they are, not compress them again.
      return new Response(head ? null : body, { status: r.status, headers, encodeBody: 'manual' } as ResponseInit);
    };
    try {
      const hit = store && (await store.match(key).catch(() => undefined));
      if (hit) return send(hit.body, hit.headers.get('ETag')!, hit.headers.get(KEPT_ENCODING), hit.headers.has(KEPT_VARY));
      const rec = await p.core.lookup(r.file);
      if (!rec) return errorResp(r.missing, head);
      const stored = rec.kind === Kind.STORED && rec.encoding === Encoding.GZIP;
      const etag = etagOf(p.core, rec, stored && gzipOk);
      if (head || inm === etag) return send(null, etag, stored && gzipOk ? 'gzip' : null, stored);
      const answer = await p.core.answer(r.file, rec, { acceptEncoding: gzipOk ? 'gzip' : 'identity' });
      const bytes = await answerBytes(answer);
      if (store) {
        // The long cache is kept by caches that honour it (Netlify's): an answer of a generation never changes.
        const kept: Record<string, string> = { ETag: etag, 'Cache-Control': CACHE_LONG, 'Content-Type': r.contentType };
        if (answer.contentEncoding === 'gzip') kept[KEPT_ENCODING] = 'gzip';
        if (stored) kept[KEPT_VARY] = '1';
        const put = store.put(key, new Response(bytes, { status: 200, headers: kept })).catch(() => undefined);
        if (hooks.waitUntil) hooks.waitUntil(put);
        else await put;
      }
      return send(bytes, etag, answer.contentEncoding, stored);
    } catch (e) {
      console.error(`chain snapshot: ${r.file}: ${(e as Error).message}`);
      return unavailable(500, head);
    }
  };
}
