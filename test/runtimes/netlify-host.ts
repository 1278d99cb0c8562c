/**
 * A Deno program (run by `deno run`, not by Node): hosts a built tree's Netlify Edge Function the
 * way Netlify's edge does, so the conformance suite can run the generated glue in Deno, the
 * runtime Netlify Edge Functions run in.
 *
 *   deno run --allow-read=<tree>,… --allow-net=127.0.0.1 test/runtimes/netlify-host.ts <tree>[::<functions dir>]...
 *
 * Each tree is a site of its own on a port of its own (its own module instance of the function).
 * Prints `{"ports":[N,…]}` (in the order of the trees) on stdout once every site listens. What it
 * emulates of the platform:
 * - each function of the edge functions directory (every `.js` file directly in it; default
 *   `<tree>/_netlify/edge-functions`, else the one given after `::`, as a netlify.toml's
 *   `edge_functions` names it) runs for every request whose path matches its `config.path` (a
 *   URLPattern pathname, as on Netlify), with `(request, context)`, the first matching one in
 *   file name order (the generated glue has one);
 * - its return value: a Response is sent; `undefined` continues to the origin (the static file);
 *   a URL rewrites to that same-site path; `context.next()` fetches the origin response;
 * - a `fetch` the function makes to its own site is a real HTTP request to this server, so it
 *   passes through the function again, as it does on Netlify;
 * - `Netlify.env.get(name)` reads the process environment (what `--allow-env` allows);
 * - the origin serves the published files by decoded path (`/` and `…/` → `index.html`), with a
 *   content hash ETag (304 on If-None-Match), and the top-level `404.html` with status 404 for
 *   a missing file.
 * Typed without Deno's type definitions (the repository is type-checked by tsc with Node types):
 * the few Deno APIs used are declared below.
 */

interface DenoApi {
  args: string[];
  env: { get(name: string): string | undefined };
  readFile(path: string): Promise<Uint8Array>;
  realPath(path: string): Promise<string>;
  readDir(path: string): AsyncIterable<{ name: string; isFile: boolean }>;
  serve(
    options: { port: number; hostname: string; onListen: (addr: { port: number }) => void },
    handler: (request: Request) => Promise<Response>,
  ): { finished: Promise<void> };
}

interface NetlifyContext {
  next(request?: Request): Promise<Response>;
  site: { url: string };
}

type EdgeFunction = (request: Request, context: NetlifyContext) => Promise<Response | URL | undefined> | Response | URL | undefined;

interface EdgeModule {
  default: EdgeFunction;
  config?: { path?: string | string[]; excludedPath?: string | string[] };
}

/** WHATWG URLPattern (global in Deno; not in Node 20's types). */
interface UrlPatternClass {
  new (init: { pathname: string }): { test(url: string): boolean };
}

const { Deno, URLPattern } = globalThis as unknown as { Deno: DenoApi; URLPattern: UrlPatternClass };
const FUNCTIONS_DIR = '_netlify/edge-functions';

const TYPES: Record<string, string> = {
  json: 'application/json',
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  hex: 'text/plain',
  bin: 'application/octet-stream',
};

function asList(x: string | string[] | undefined): string[] {
  return x === undefined ? [] : Array.isArray(x) ? x : [x];
}

async function etagOf(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-1', bytes));
  return '"' + [...digest].map((b) => b.toString(16).padStart(2, '0')).join('') + '"';
}

/** The origin: published files of `root` (a real path, ending in '/'). */
async function origin(root: string, request: Request): Promise<Response> {
  const url = new URL(request.url);
  let rel: string;
  try {
    rel = decodeURIComponent(url.pathname).slice(1);
  } catch {
    return new Response('Bad request', { status: 400 });
  }
  if (rel === '' || rel.endsWith('/')) rel += 'index.html';
  let bytes: Uint8Array | undefined;
  if (!rel.includes('\0')) {
    try {
      const abs = await Deno.realPath(root + rel);
      if (abs.startsWith(root)) bytes = await Deno.readFile(abs);
    } catch {
      bytes = undefined;
    }
  }
  if (bytes === undefined) {
    return new Response(await Deno.readFile(root + '404.html'), { status: 404, headers: { 'Content-Type': TYPES.html! } });
  }
  const etag = await etagOf(bytes);
  const headers = { ETag: etag, 'Content-Type': TYPES[rel.slice(rel.lastIndexOf('.') + 1)] ?? 'application/octet-stream' };
  if (request.headers.get('if-none-match') === etag) return new Response(null, { status: 304, headers });
  return new Response(request.method === 'HEAD' ? null : bytes, { status: 200, headers });
}

/** The edge functions of a directory, in file name order, each with its path matcher. */
async function loadFunctions(dir: string): Promise<{ mod: EdgeModule; matches: (url: string) => boolean }[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) if (e.isFile && e.name.endsWith('.js')) names.push(e.name);
  if (names.length === 0) throw new Error(`no edge function (.js) in ${dir}`);
  return Promise.all(
    names.sort().map(async (name) => {
      const mod = (await import(new URL(name, 'file://' + dir + '/').href)) as EdgeModule;
      const paths = asList(mod.config?.path).map((p) => new URLPattern({ pathname: p }));
      const excluded = asList(mod.config?.excludedPath).map((p) => new URLPattern({ pathname: p }));
      return { mod, matches: (url: string) => paths.some((p) => p.test(url)) && !excluded.some((p) => p.test(url)) };
    }),
  );
}

/** Serves one tree (`<tree>[::<functions dir>]`) on a port of its own; resolves with the port once listening. */
async function serveTree(arg: string): Promise<{ port: number; finished: Promise<void> }> {
  const [dir, fnDir] = arg.split('::') as [string, string | undefined];
  const root = (await Deno.realPath(dir)) + '/';
  const functions = await loadFunctions(fnDir !== undefined ? await Deno.realPath(fnDir) : root + FUNCTIONS_DIR);

  let listening!: (port: number) => void;
  const port = new Promise<number>((ok) => (listening = ok));
  const server = Deno.serve({ port: 0, hostname: '127.0.0.1', onListen: (addr) => listening(addr.port) }, async (request) => {
    const fn = functions.find((f) => f.matches(request.url));
    if (!fn) return origin(root, request);
    const context: NetlifyContext = { next: (req) => origin(root, req ?? request), site: { url: new URL(request.url).origin } };
    const result = await fn.mod.default(request, context);
    if (result instanceof Response) return result;
    if (result instanceof URL) return origin(root, new Request(result, request));
    return context.next();
  });
  return { port: await port, finished: server.finished };
}

/** Netlify's global: `Netlify.env.get` reads the variables the host may read (--allow-env). */
function netlifyGlobal(): { env: { get(name: string): string | undefined } } {
  return {
    env: {
      get: (name) => {
        try {
          return Deno.env.get(name);
        } catch {
          return undefined; // not allowed: unset, as on a site without the variable
        }
      },
    },
  };
}

async function main(): Promise<void> {
  if (Deno.args.length === 0) throw new Error('usage: netlify-host.ts <tree>[::<functions dir>]...');
  (globalThis as { Netlify?: unknown }).Netlify = netlifyGlobal();
  const servers = await Promise.all(Deno.args.map(serveTree));
  console.log(JSON.stringify({ ports: servers.map((s) => s.port) }));
  await Promise.all(servers.map((s) => s.finished));
}

await main();
