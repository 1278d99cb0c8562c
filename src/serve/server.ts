/**
 * `snapshot serve`: node:http + the shared router + sirv for sending files.
 *
 * sirv runs in dev mode (a stat per request, no start-up index of the whole tree, which does
 * not scale to millions of files) with `extensions: []` and weak ETags (304 on If-None-Match).
 * The router has already mapped the request to a canonical file path, so sirv never sees a
 * client-controlled path.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import sirv from 'sirv';
import { SITE_INFO_PATH, type SiteInfo } from '../site/layout.js';
import { COMMON_HEADERS, makeRouterSite, routeRequest, type ErrorResponse, type RouterSite } from './router.js';

export interface ServeOptions {
  /** Snapshot tree (default `out`). */
  dir?: string;
  /** Port (default 8080; 0 = any free port). */
  port?: number;
  /** Interface (default 127.0.0.1). */
  host?: string;
  /** Site info; read from `<dir>/_site.json` when absent. */
  info?: SiteInfo;
}

export interface RunningServer {
  url: string;
  server: http.Server;
  /** Stops accepting, lets in-flight responses finish (force-closes after `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

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

export function readSiteInfo(dir: string): SiteInfo {
  return JSON.parse(readFileSync(join(dir, SITE_INFO_PATH), 'utf8')) as SiteInfo;
}

/** The request handler on its own (for embedding in another server). */
export function createHandler(dir: string, site: RouterSite): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const root = resolve(dir);
  const assets = sirv(root, { dev: true, etag: true, extensions: [], dotfiles: false });
  return (req, res) => {
    const head = req.method === 'HEAD';
    try {
      const r = routeRequest(req.method ?? 'GET', req.url ?? '', site);
      if (r.type === 'error') return sendError(res, r, head);
      if (r.status !== 200) {
        // Capped address documents: the file's body with its own status (small, read whole).
        readFile(join(root, r.file)).then(
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
    } catch {
      if (!res.headersSent) sendError(res, { type: 'error', status: 500, contentType: 'application/json; charset=utf-8', cacheControl: 'no-store', body: '{"error":"Internal error."}' }, head);
      else res.destroy();
    }
  };
}

export async function startServer(opts: ServeOptions = {}): Promise<RunningServer> {
  const dir = resolve(opts.dir ?? 'out');
  const site = makeRouterSite(opts.info ?? readSiteInfo(dir));
  const server = http.createServer({ keepAlive: true }, createHandler(dir, site));
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
      running.close().then(ok);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  process.off('uncaughtException', guard);
}
