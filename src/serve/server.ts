/**
 * `snapshot serve`: node:http + the shared router + an in-memory cache of small files; other
 * files are streamed from disk.
 *
 * - The router maps the raw request target to a canonical file path (or an error document), so
 *   neither the cache nor the disk path ever sees a client-controlled path.
 * - Files up to 64 KiB (nearly every tx, block, address and name document) are answered from
 *   {@link FileCache} with pre-built header lists; see file-cache.ts for the bounds and how a
 *   rebuild of the tree is detected (identity of the root and `_manifest.json`, re-checked at
 *   most once a second; `_site.json` is re-read then too, unless the site info was passed in).
 * - Larger files and files the cache cannot read are opened per request (a stat of the open file,
 *   no start-up index of the whole tree, which does not scale to millions of files) and streamed.
 * - Neither reads through a symlink below the tree's root (see TreeRoot in file-cache.ts): such a
 *   file gets the route's JSON 404. The root itself may be a symlink (`out` -> its release).
 * Both paths send the same status line, headers and bytes: weak ETags `W/"<size>-<mtime ms>"`
 * (304 on an equal If-None-Match), Last-Modified, and Range/If-Range as range.ts decides
 * (GET only; one range → 206, several → the whole file, none satisfiable → JSON 416); text
 * documents encoded with brotli or gzip for clients that accept them (compress.ts).
 * Every error answer, including those to requests Node's parser rejects, is a JSON document.
 */
import { constants, readFileSync } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { finished, pipeline, type Duplex } from 'node:stream';
import { errorBody, SITE_INFO_PATH, type SiteInfo } from '../contract/layout.js';
import { ABSENT_CODES, FileCache, TreeRoot, TreeWatch, type CacheEntry, type CacheOptions } from './file-cache.js';
import { PackFiles, packSiteInfo } from './pack-files.js';
import { decideRange, ifRangeAllows, type RangeDecision } from './range.js';
import { EncodedBodies, pickEncoding, sendEncodedBody, streamEncoded, varyFor } from './compress.js';
import {
  BAD_REQUEST,
  COMMON_HEADERS,
  CONTENT_TYPES,
  METHOD_NOT_ALLOWED,
  makeRouterSite,
  routeRequest,
  type ErrorResponse,
  type FileResponse,
  type RouterSite,
} from '../contract/router.js';

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
  /** In-memory cache of small files (default on, 64 KiB files, 64 MiB total); false = every file from disk. */
  cache?: CacheOptions | false;
  /** Where errors of the listening socket itself (e.g. EMFILE on accept) are reported; default console.error. */
  log?: (msg: string) => void;
}

export interface RunningServer {
  url: string;
  server: http.Server;
  /** Stops accepting, lets in-flight responses finish (force-closes after `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

const COMMON_LIST: readonly string[] = Object.entries(COMMON_HEADERS).flat();

/** An error that depends on this request's headers, not on its URL: never stored by caches. */
function requestError(status: number, message: string): ErrorResponse {
  return { type: 'error', status, contentType: CONTENT_TYPES.json, cacheControl: 'no-store', body: errorBody(message) };
}

function errorHeaders(e: ErrorResponse, length: number): (string | number)[] {
  return [...COMMON_LIST, 'Content-Type', e.contentType, 'Cache-Control', e.cacheControl, 'Content-Length', length, ...(e.status === 405 ? ['Allow', 'GET, HEAD'] : [])];
}

function sendError(res: http.ServerResponse, e: ErrorResponse, head: boolean, extra: (string | number)[] = []): void {
  if (res.headersSent || res.destroyed) return;
  const body = Buffer.from(e.body, 'utf8');
  res.writeHead(e.status, [...errorHeaders(e, body.length), ...extra]);
  res.end(head ? undefined : body);
}

/** The same error document written as a whole HTTP/1.1 message on a socket Node's parser has let go of. */
function sendRawError(socket: Duplex, e: ErrorResponse): void {
  const body = Buffer.from(e.body, 'utf8');
  const h = errorHeaders(e, body.length);
  let text = `HTTP/1.1 ${e.status} ${http.STATUS_CODES[e.status] ?? ''}\r\n`;
  for (let i = 0; i < h.length; i += 2) text += `${h[i]}: ${h[i + 1]}\r\n`;
  socket.end(Buffer.concat([Buffer.from(`${text}Connection: close\r\n\r\n`, 'latin1'), body]));
  // A client that never closes its side does not hold the socket for long.
  setTimeout(() => socket.destroy(), 10_000).unref();
}

const INTERNAL_ERROR: ErrorResponse = { type: 'error', status: 500, contentType: 'application/json; charset=utf-8', cacheControl: 'no-store', body: '{"error":"Internal error."}' };
const HEADERS_TOO_LARGE = requestError(431, 'Request header fields too large.');
const REQUEST_TIMEOUT = requestError(408, 'Request timeout.');

function fail(res: http.ServerResponse, head: boolean): void {
  if (!res.headersSent) sendError(res, INTERNAL_ERROR, head);
  else res.destroy();
}

/** RFC 9112 §3.2: an HTTP/1.1 request carries exactly one Host header. */
function hostError(req: http.IncomingMessage): ErrorResponse | undefined {
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor < 1) return undefined;
  let n = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.length === 4 && req.rawHeaders[i]!.toLowerCase() === 'host') n++;
  if (n === 1) return undefined;
  return requestError(400, n === 0 ? 'HTTP/1.1 request without a Host header.' : `HTTP/1.1 request with ${n} Host headers.`);
}

export function readSiteInfo(dir: string): SiteInfo {
  return JSON.parse(readFileSync(join(dir, SITE_INFO_PATH), 'utf8')) as SiteInfo;
}

export interface HandlerOptions {
  cache?: CacheOptions | false;
  /** Re-read `_site.json` when the tree is rebuilt (default true). */
  reloadSiteInfo?: boolean;
}

/** What a 200 file's conditional and range headers are evaluated against. */
interface FileMeta {
  size: number;
  etag: string;
  lastModified: string;
  mtimeMs: number;
  extra?: (string | number)[];
}

const WHOLE: RangeDecision = { kind: 'whole' };

/** Range (with If-Range) for a GET of a 200 file; the whole file otherwise. */
function rangeOf(req: http.IncomingMessage, m: FileMeta): RangeDecision {
  const range = req.headers.range;
  if (range === undefined || req.method !== 'GET') return WHOLE;
  const ifRange = req.headers['if-range'];
  if (!ifRangeAllows(Array.isArray(ifRange) ? ifRange.join(', ') : ifRange, m.etag, m.lastModified, m.mtimeMs, Date.now())) return WHOLE;
  return decideRange(range, m.size);
}

function fileHeaders(r: FileResponse, m: FileMeta, length: number): (string | number)[] {
  return [...COMMON_LIST, 'Content-Type', r.contentType, 'Cache-Control', r.cacheControl, 'Content-Length', length, 'Last-Modified', m.lastModified, 'ETag', m.etag, ...(m.extra ?? varyFor(r.contentType, m.size))];
}

/**
 * Answers 304, 416 or the headers of a 206 for a 200 file; returns the byte range to send after
 * the headers it wrote, undefined when the answer is complete (or when the whole file is to be
 * sent with the caller's 200 headers: `whole` true).
 */
function conditional(req: http.IncomingMessage, res: http.ServerResponse, r: FileResponse, m: FileMeta): { whole: boolean; start: number; end: number } | undefined {
  if (req.headers['if-none-match'] === m.etag) {
    res.writeHead(304, [...COMMON_LIST, 'Content-Type', r.contentType, 'Cache-Control', r.cacheControl, ...(m.extra ? (m.extra.includes('Vary') ? ['Vary', 'Accept-Encoding'] : []) : varyFor(r.contentType, m.size))]);
    res.end();
    return undefined;
  }
  const d = rangeOf(req, m);
  if (d.kind === 'whole') return { whole: true, start: 0, end: m.size - 1 };
  if (d.kind === 'unsatisfiable') {
    const msg = `Range ${JSON.stringify(req.headers.range)} is not satisfiable: the file is ${m.size} bytes.`;
    sendError(res, requestError(416, msg), false, ['Content-Range', `bytes */${m.size}`]);
    return undefined;
  }
  res.writeHead(206, [...fileHeaders(r, m, d.end - d.start + 1), 'Content-Range', `bytes ${d.start}-${d.end}/${m.size}`, 'Accept-Ranges', 'bytes']);
  return { whole: false, start: d.start, end: d.end };
}

/** A request handler, and what closes the files it holds open (once its server has stopped). */
export type Handler = ((req: http.IncomingMessage, res: http.ServerResponse) => void) & { close(): Promise<void> };

/** The request handler on its own (for embedding in another server). */
export function createHandler(dir: string, site: RouterSite, opts: HandlerOptions = {}): Handler {
  const root = resolve(dir);
  // A pack directory answers from its pack (pack-files.ts); a tree from its files.
  const pack = PackFiles.isPack(root) ? new PackFiles(root) : undefined;
  const cache = opts.cache === false || pack ? undefined : new FileCache(root, opts.cache);
  const tree = cache?.tree ?? new TreeRoot(root);
  const encoded = new EncodedBodies();
  const watch = new TreeWatch(root, (opts.cache || undefined)?.revalidateMs ?? 1000, async () => {
    cache?.clear();
    await pack?.reload().catch(() => undefined); // mid-build: the next check tries again
    if (opts.reloadSiteInfo === false) return;
    try {
      site = makeRouterSite(pack ? await pack.siteInfo() : (JSON.parse(await readFile(join(root, SITE_INFO_PATH), 'utf8')) as SiteInfo));
    } catch {
      // Mid-swap or broken: keep the previous site info; the next check tries again.
    }
  });
  void watch.check();

  /** Opened and streamed (a capped address document read whole and sent with its status); never through a symlink. */
  const fromDisk = async (req: http.IncomingMessage, res: http.ServerResponse, r: FileResponse, head: boolean): Promise<void> => {
    const abs = await tree.resolve(r.file);
    if (abs === undefined) return sendError(res, r.missing, head);
    let fh: FileHandle;
    try {
      fh = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (e) {
      if (ABSENT_CODES.has((e as NodeJS.ErrnoException).code ?? '')) return sendError(res, r.missing, head);
      throw e;
    }
    let streaming = false;
    try {
      const st = await fh.stat();
      if (!st.isFile()) return sendError(res, r.missing, head);
      if (res.destroyed) return;
      if (r.status !== 200) {
        const body = await fh.readFile();
        if (res.destroyed) return;
        res.writeHead(r.status, [...COMMON_LIST, 'Content-Type', r.contentType, 'Cache-Control', r.cacheControl, 'Content-Length', body.length]);
        res.end(head ? undefined : body);
        return;
      }
      const m: FileMeta = { size: st.size, etag: `W/"${st.size}-${st.mtime.getTime()}"`, lastModified: st.mtime.toUTCString(), mtimeMs: st.mtime.getTime() };
      const enc = pickEncoding(req, r.contentType, m.size);
      if (enc) return void (streaming = streamEncoded(req, res, r, m, fh, enc, head));
      const send = conditional(req, res, r, m);
      if (send === undefined) return;
      if (send.whole) res.writeHead(200, fileHeaders(r, m, m.size));
      if (head || send.end < send.start) {
        res.end();
        return;
      }
      streaming = true;
      // pipeline closes the file (autoClose) and destroys both streams on any error: a client gone
      // mid-file or a read error ends this response only.
      pipeline(fh.createReadStream({ start: send.start, end: send.end }), res, () => undefined);
    } finally {
      if (!streaming) await fh.close().catch(() => undefined);
    }
  };

  const viaDisk = (req: http.IncomingMessage, res: http.ServerResponse, r: FileResponse, head: boolean): void => {
    fromDisk(req, res, r, head).catch(() => fail(res, head));
  };

  /** From the cache: the same status line, headers and body as from disk. */
  const sendEntry = (req: http.IncomingMessage, res: http.ServerResponse, r: FileResponse, e: CacheEntry, head: boolean): void => {
    if (e.kind === 'absent') return sendError(res, r.missing, head);
    if (e.kind === 'large') return viaDisk(req, res, r, head);
    if (res.destroyed) return;
    if (r.status !== 200) {
      res.writeHead(r.status, [...COMMON_LIST, 'Content-Type', r.contentType, 'Cache-Control', r.cacheControl, 'Content-Length', e.body.length, ...(e.extra ?? [])]);
      res.end(head ? undefined : e.body);
      return;
    }
    // A pack's entry carries its own encoding (extra headers); a tree's file is encoded here.
    const enc = e.extra ? undefined : pickEncoding(req, r.contentType, e.body.length);
    if (enc) return sendEncodedBody(req, res, r, e, e.body, enc, encoded, head);
    if (req.headers['if-none-match'] === e.etag || (req.headers.range !== undefined && !head)) {
      const send = conditional(req, res, r, { size: e.body.length, etag: e.etag, lastModified: e.lastModified, mtimeMs: e.mtimeMs, extra: e.extra });
      if (send === undefined) return;
      if (!send.whole) {
        res.end(e.body.subarray(send.start, send.end + 1));
        return;
      }
    }
    let h = e.headers;
    if (h === undefined || h.contentType !== r.contentType || h.cacheControl !== r.cacheControl) {
      const list = [...COMMON_LIST, 'Content-Type', r.contentType, 'Cache-Control', r.cacheControl, 'Content-Length', e.body.length, 'Last-Modified', e.lastModified, 'ETag', e.etag, ...(e.extra ?? varyFor(r.contentType, e.body.length))];
      h = e.headers = { contentType: r.contentType, cacheControl: r.cacheControl, list };
    }
    res.writeHead(200, h.list);
    res.end(head ? undefined : e.body);
  };

  const handle = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const head = req.method === 'HEAD';
    try {
      const bad = hostError(req);
      if (bad !== undefined) return sendError(res, bad, head);
      const r = routeRequest(req.method ?? 'GET', req.url ?? '', site);
      if (r.type === 'error') return sendError(res, r, head);
      if (pack) return void pack.load(r.file, req.headers['accept-encoding']).then((e) => sendEntry(req, res, r, e, head), () => fail(res, head));
      if (cache === undefined) return viaDisk(req, res, r, head);
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

  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
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
  return Object.assign(handler, { close: async () => pack?.close() });
}

export async function startServer(opts: ServeOptions = {}): Promise<RunningServer> {
  const dir = resolve(opts.dir ?? 'out');
  const site = makeRouterSite(opts.info ?? (PackFiles.isPack(dir) ? await packSiteInfo(dir) : readSiteInfo(dir)));
  // The Host rule is checked by the handler, to answer it with a JSON document.
  const handler = createHandler(dir, site, { cache: opts.cache, reloadSiteInfo: opts.info === undefined });
  const server = http.createServer({ keepAlive: true, requireHostHeader: false }, handler);
  // A client that half-closes after sending its request(s) still gets the answers (Node would
  // otherwise abort them and end the socket at once); the socket ends after the last answer.
  (server as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => {
    sendError(res, requestError(417, `Expect ${JSON.stringify(req.headers.expect)} is not supported (only 100-continue).`), req.method === 'HEAD');
  });
  // Node hands CONNECT requests over with the raw socket (no listener: it destroys it unanswered).
  server.on('connect', (_req: http.IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    sendRawError(socket, METHOD_NOT_ALLOWED);
  });
  server.on('clientError', (err: NodeJS.ErrnoException & { reason?: unknown }, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const e =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? HEADERS_TOO_LARGE
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? REQUEST_TIMEOUT
          : typeof err.reason === 'string'
            ? requestError(400, `Bad request: ${err.reason}.`)
            : BAD_REQUEST;
    // An answer still being written on this connection (to an earlier pipelined request) goes first.
    const inflight = (socket as Duplex & { _httpMessage?: http.ServerResponse | null })._httpMessage;
    if (inflight && !inflight.writableFinished) {
      finished(inflight, () => (socket.writable ? sendRawError(socket, e) : socket.destroy()));
      return;
    }
    sendRawError(socket, e);
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port ?? 8080, host, () => {
      server.off('error', fail);
      ok();
    });
  });
  const log = opts.log ?? console.error;
  server.on('error', (err) => log(`snapshot serve: ${err.message}`));
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
          void handler.close().finally(ok);
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}

/** Runs the server until SIGINT/SIGTERM, then shuts down gracefully. */
export async function serveUntilSignal(opts: ServeOptions = {}, log: (msg: string) => void = console.error): Promise<void> {
  const running = await startServer({ log, ...opts });
  log(`Serving ${resolve(opts.dir ?? 'out')} on ${running.url}/`);
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
}
