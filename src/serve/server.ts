/**
 * `snapshot serve`: node:http + the shared router + an in-memory cache of small files, with
 * sirv for everything else.
 *
 * - The router maps the raw request target to a canonical file path (or an error document), so
 *   neither the cache nor sirv ever sees a client-controlled path.
 * - Files up to 64 KiB (nearly every tx, block, address and name document) are answered from
 *   {@link FileCache} with pre-built header lists; see file-cache.ts for the bounds and how a
 *   rebuild of the tree is detected (identity of the root and `_manifest.json`, re-checked at
 *   most once a second; `_site.json` is re-read then too, unless the site info was passed in).
 * - Larger files, Range requests and files the cache cannot read go to sirv in dev mode (a stat
 *   per request, no start-up index of the whole tree, which does not scale to millions of files)
 *   with `extensions: []` and weak ETags (304 on If-None-Match).
 * - Neither reads through a symlink below the tree's root (see TreeRoot in file-cache.ts): such a
 *   file gets the route's JSON 404. The root itself may be a symlink (`out` -> its release).
 * Both paths send the same bytes: the cache reproduces sirv's header order, ETag
 * (`W/"<size>-<mtime ms>"`), Last-Modified and 304s (the conformance and serve tests compare).
 */
import { constants, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import sirv from 'sirv';
import { SITE_INFO_PATH, type SiteInfo } from '../contract/layout.js';
import { FileCache, TreeRoot, TreeWatch, type CacheEntry, type CacheOptions } from './file-cache.js';
import { COMMON_HEADERS, makeRouterSite, routeRequest, type ErrorResponse, type FileResponse, type RouterSite } from '../contract/router.js';

export type { CacheOptions } from './file-cache.js';

export interface ServeOptions {
  /** Snapshot tree (default `out`). */
  dir?: string;
  /** Port (default 8080; 0 = any free port). */
  port?: number;
  /** Interface (default 127.0.0.1). */
  host?: string;
  /** Site info; read from `<dir>/_site.json` (and re-read after a rebuild) when absent. */
  info?: SiteInfo;
  /** In-memory cache of small files (default on, 64 KiB files, 64 MiB total); false = sirv only. */
  cache?: CacheOptions | false;
}

export interface RunningServer {
  url: string;
  server: http.Server;
  /** Stops accepting, lets in-flight responses finish (force-closes after `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

const COMMON_LIST: readonly string[] = Object.entries(COMMON_HEADERS).flat();

function sendError(res: http.ServerResponse, e: ErrorResponse, head: boolean): void {
  const body = Buffer.from(e.body, 'utf8');
  res.writeHead(e.status, {
    ...COMMON_HEADERS,
    'Content-Type': e.contentType,
    'Cache-Control': e.cacheControl,
    'Content-Length': body.length,
    ...(e.status === 405 ? { Allow: 'GET, HEAD' } : {}),
  });
  res.end(head ? undefined : body);
}

const INTERNAL_ERROR: ErrorResponse = { type: 'error', status: 500, contentType: 'application/json; charset=utf-8', cacheControl: 'no-store', body: '{"error":"Internal error."}' };

function fail(res: http.ServerResponse, head: boolean): void {
  if (!res.headersSent) sendError(res, INTERNAL_ERROR, head);
  else res.destroy();
}

export function readSiteInfo(dir: string): SiteInfo {
  return JSON.parse(readFileSync(join(dir, SITE_INFO_PATH), 'utf8')) as SiteInfo;
}

export interface HandlerOptions {
  cache?: CacheOptions | false;
  /** Re-read `_site.json` when the tree is rebuilt (default true). */
  reloadSiteInfo?: boolean;
}

/** The request handler on its own (for embedding in another server). */
export function createHandler(dir: string, site: RouterSite, opts: HandlerOptions = {}): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const root = resolve(dir);
  const assets = sirv(root, { dev: true, etag: true, extensions: [], dotfiles: false });
  const cache = opts.cache === false ? undefined : new FileCache(root, opts.cache);
  const tree = cache?.tree ?? new TreeRoot(root);
  const watch = new TreeWatch(root, (opts.cache || undefined)?.revalidateMs ?? 1000, async () => {
    cache?.clear();
    if (opts.reloadSiteInfo === false) return;
    try {
      site = makeRouterSite(JSON.parse(await readFile(join(root, SITE_INFO_PATH), 'utf8')) as SiteInfo);
    } catch {
      // Mid-swap or broken: keep the previous site info; the next check tries again.
    }
  });
  void watch.check();

  /** Through sirv (or, for a capped address document, read whole and sent with its status); never through a symlink. */
  const viaDisk = (req: http.IncomingMessage, res: http.ServerResponse, r: FileResponse, head: boolean): void => {
    tree.resolve(r.file).then(
      (abs) => (abs === undefined ? sendError(res, r.missing, head) : viaDiskAt(req, res, r, head, abs)),
      () => fail(res, head),
    );
  };

  const viaDiskAt = (req: http.IncomingMessage, res: http.ServerResponse, r: FileResponse, head: boolean, abs: string): void => {
    if (r.status !== 200) {
      readFile(abs, { flag: constants.O_RDONLY | constants.O_NOFOLLOW }).then(
        (body) => {
          res.writeHead(r.status, { ...COMMON_HEADERS, 'Content-Type': r.contentType, 'Cache-Control': r.cacheControl, 'Content-Length': body.length });
          res.end(head ? undefined : body);
        },
        () => sendError(res, r.missing, head),
      );
      return;
    }
    for (const [k, v] of Object.entries(COMMON_HEADERS)) res.setHeader(k, v);
    res.setHeader('Content-Type', r.contentType);
    res.setHeader('Cache-Control', r.cacheControl);
    req.url = '/' + r.file;
    assets(req, res, () => {
      res.removeHeader('Content-Type');
      res.removeHeader('Cache-Control');
      sendError(res, r.missing, head);
    });
  };

  /** From the cache: the same status line, headers (in sirv's order) and body as via sirv. */
  const sendEntry = (req: http.IncomingMessage, res: http.ServerResponse, r: FileResponse, e: CacheEntry, head: boolean): void => {
    if (e.kind === 'absent') return sendError(res, r.missing, head);
    if (e.kind === 'large') return viaDisk(req, res, r, head);
    if (r.status !== 200) {
      res.writeHead(r.status, [...COMMON_LIST, 'Content-Type', r.contentType, 'Cache-Control', r.cacheControl, 'Content-Length', e.body.length]);
      res.end(head ? undefined : e.body);
      return;
    }
    if (req.headers['if-none-match'] === e.etag) {
      res.writeHead(304, [...COMMON_LIST, 'Content-Type', r.contentType, 'Cache-Control', r.cacheControl]);
      res.end();
      return;
    }
    let h = e.headers;
    if (h === undefined || h.contentType !== r.contentType || h.cacheControl !== r.cacheControl) {
      const list = [...COMMON_LIST, 'Content-Type', r.contentType, 'Cache-Control', r.cacheControl, 'Content-Length', e.body.length, 'Last-Modified', e.lastModified, 'ETag', e.etag];
      h = e.headers = { contentType: r.contentType, cacheControl: r.cacheControl, list };
    }
    res.writeHead(200, h.list);
    res.end(head ? undefined : e.body);
  };

  const handle = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const head = req.method === 'HEAD';
    try {
      const r = routeRequest(req.method ?? 'GET', req.url ?? '', site);
      if (r.type === 'error') return sendError(res, r, head);
      if (cache === undefined || req.headers.range !== undefined) return viaDisk(req, res, r, head);
      const e = cache.get(r.file);
      if (e !== undefined) return sendEntry(req, res, r, e, head);
      cache
        .load(r.file)
        .then(
          (entry) => sendEntry(req, res, r, entry, head),
          () => viaDisk(req, res, r, head),
        )
        .catch(() => fail(res, head));
    } catch {
      fail(res, head);
    }
  };

  return (req, res) => {
    // Once per interval the tree's identity is re-checked; requests arriving then wait for it.
    if (watch.due(performance.now())) {
      watch.check().then(
        () => handle(req, res),
        () => handle(req, res),
      );
      return;
    }
    handle(req, res);
  };
}

export async function startServer(opts: ServeOptions = {}): Promise<RunningServer> {
  const dir = resolve(opts.dir ?? 'out');
  const site = makeRouterSite(opts.info ?? readSiteInfo(dir));
  const server = http.createServer({ keepAlive: true }, createHandler(dir, site, { cache: opts.cache, reloadSiteInfo: opts.info === undefined }));
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 24\r\nConnection: close\r\n\r\n{"error":"Bad request."}');
    else socket.destroy();
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port ?? 8080, host, () => {
      server.off('error', fail);
      ok();
    });
  });
  const addr = server.address() as AddressInfo;
  const url = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    server,
    close(graceMs = 5000) {
      closing ??= new Promise<void>((ok) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          ok();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}

/**
 * Runs the server until SIGINT/SIGTERM, then shuts down gracefully. A file that vanishes
 * between sirv's stat and its read (a rebuild in place) would otherwise crash the process:
 * such errors are logged and the server keeps running.
 */
export async function serveUntilSignal(opts: ServeOptions = {}, log: (msg: string) => void = console.error): Promise<void> {
  const running = await startServer(opts);
  log(`Serving ${resolve(opts.dir ?? 'out')} on ${running.url}/`);
  const guard = (err: NodeJS.ErrnoException) => {
    if (err && (err.code === 'ENOENT' || err.code === 'EISDIR' || err.code === 'EACCES')) log(`warning: ${err.message}`);
    else throw err;
  };
  process.on('uncaughtException', guard);
  await new Promise<void>((ok) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      log('Shutting down');
      running.close().then(ok, (err: unknown) => {
        log(`error while closing: ${err instanceof Error ? err.message : String(err)}`);
        ok();
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  process.off('uncaughtException', guard);
}
