/**
 * Conformance: one table of requests derived from a built tree (every endpoint, all 64 name
 * query forms in several spellings, canonical and natural names, upper-case hashes, every error
 * case, hostile raw targets) with expected status, content type, cache policy and body, run
 * against
 *   (a) the node server (`snapshot serve`; also compared header for header with the server
 *       running without its file cache, i.e. every file read from disk),
 *   (b) real nginx with the generated config (proxying what it cannot answer to (a)),
 *   (c) the generated Netlify Edge Function and Cloudflare worker, in-process,
 *   (d) the same glue in the real runtimes: the Cloudflare worker in workerd with `env.ASSETS`
 *       served by wrangler's Pages asset server (what `wrangler pages dev` runs) and the Netlify
 *       function in Deno (test/runtimes/, test/fixtures/pages-host.ts), one process per runtime
 *       for the three trees, skipped with the reason when a binary cannot run here.
 * Every front end must return the same bytes. Edge runtimes only ever see URLs the platform has
 * already parsed (WHATWG: dot segments resolved, '\' → '/'), so for targets that parsing changes
 * they must match the node server's answer for the parsed target.
 *
 * Trees: the demo chain built once with `buildSnapshot` (its names with '/', '..', '%', '?',
 * spaces, '~' and non-UTF-8 bytes), a second build with a small address cap (capped address
 * documents → 500), and a small synthetic tree for what the demo lacks (NUL bytes in names,
 * 255-byte names stored under their hash, static files). nginx runs are skipped when nginx is
 * not installed (.ci/run installs it).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as bitcoin from 'bitcoinjs-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_NAME_VARIANTS,
  SITE_INFO_PATH,
  WITH_FLAGS,
  decodeNamePathBytes,
  encodeNamePath,
  isCanonicalNamePath,
  namePath,
  variantFromQuery,
  variantKey,
  type NameVariant,
  type SiteInfo,
} from '../src/contract/layout.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { Progress } from '../src/runtime/progress.js';
import { nginxConfig } from '../src/hosts/nginx.js';
import { CLOUDFLARE_WORKER } from '../src/hosts/cloudflare.js';
import { NETLIFY_FUNCTION, INTERNAL_HEADER } from '../src/hosts/netlify.js';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { writeTestTree } from './support/site-tree.js';
import { keepAliveRequest, rawRequest, type RawResponse } from './support/http-raw.js';
import { denoBinary, freePort, startDenoNetlify, startPagesHost, workerdBinary, type Binary, type RuntimeProcess } from './runtimes/launch.js';

const JSON_T = 'application/json; charset=utf-8';
const BIN_T = 'application/octet-stream';
const HEX_T = 'text/plain; charset=utf-8';
const SHORT = 'public, max-age=60';
const LONG = 'public, max-age=31536000, immutable';

interface Row {
  target: string;
  status: number;
  type: string;
  cache: string;
  body: Buffer;
}

interface Got {
  status: number;
  type: string;
  cache: string;
  cors: string;
  body: Buffer;
}

function errRow(target: string, status: number, message: string): Row {
  return { target, status, type: JSON_T, cache: SHORT, body: Buffer.from(JSON.stringify({ error: message })) };
}

/** Percent-encodes name bytes the way a client would (unreserved and '/' kept). */
function natural(name: Buffer, keepSlash = true): string {
  // A '.'/'..' segment of the request path is a dot segment in any spelling (400): a name holding
  // one is asked with the '/' around it escaped, where it is data.
  if (keepSlash && name.toString('latin1').split('/').some((s) => s === '.' || s === '..')) keepSlash = false;
  let s = '';
  for (const b of name) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9._~-]/.test(c) || (keepSlash && c === '/')) s += c;
    else s += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return s;
}

/** Query spellings of a variant: bare flags, `=value` in reverse order with noise, with_all. */
function spellings(v: NameVariant, i: number): string[] {
  const flags = WITH_FLAGS.filter((f) => v.with.has(f)).map((f) => `with_${f}`);
  const keys = v.history ? ['history', ...flags] : flags;
  const out = [keys.length ? '?' + keys.join('&') : ''];
  out.push('?' + [...keys].reverse().map((k, j) => `${k}=${j % 2 ? '0' : ''}`).concat(['raw', `_=${i}`]).join('&'));
  if (v.with.size === 5) out.push(`?with_tx_idx&with_all${v.history ? '&history=1' : ''}&raw`);
  if (keys.length) out.push('?' + keys.map((k) => k.replace('_', '%5F').replace('h', '%68')).join('&'));
  return out;
}

/** A tree under test and what the table derives from it. */
interface Tree {
  label: string;
  dir: string;
  info: SiteInfo;
  /** Names with files (bytes); derived from the name/ paths for built trees. */
  names: Buffer[];
  /** Name spelled in every query form and spelling (all 64 × several). */
  richName?: Buffer;
  /** Only the address rows (a second build of the same chain with a small cap). */
  addressesOnly?: boolean;
}

/** Relative paths of every file below `dir`. */
function listFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...listFiles(dir, p));
    else out.push(p);
  }
  return out;
}

/** Names of a built tree, from its `name/<enc>.json` files. */
function namesOf(files: string[]): Buffer[] {
  const out: Buffer[] = [];
  for (const f of files) {
    const m = /^name\/(.+)\.json$/.exec(f);
    const bytes = m ? decodeNamePathBytes(m[1]!) : undefined;
    if (bytes) out.push(Buffer.from(bytes));
  }
  return out;
}

/** Name bytes as the router's error text renders them (UTF-8, else Latin-1). */
function nameLabel(name: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(name);
  } catch {
    return name.toString('latin1');
  }
}

function buildTable(t: Tree): Row[] {
  const rows: Row[] = [];
  const seen = new Set<string>();
  const push = (r: Row) => {
    if (!seen.has(r.target)) rows.push(r);
    seen.add(r.target);
  };
  const ok = (target: string, file: string, type: string, cache: string, status = 200) =>
    push({ target, status, type, cache, body: readFileSync(join(t.dir, file)) });
  const err = (target: string, status: number, message: string) => push(errRow(target, status, message));
  const files = listFiles(t.dir);
  const ids = (kind: string) => files.map((f) => new RegExp(`^${kind}/([0-9a-f]{64})\\.json$`).exec(f)?.[1]).filter((x): x is string => x !== undefined);
  const addresses = files.map((f) => /^address\/(\w+)\.json$/.exec(f)?.[1]).filter((x): x is string => x !== undefined);
  const capped = new Set(t.info.cappedAddresses);

  // Addresses: every one (capped ones answer their document with 500), bech32 in upper case.
  for (const a of addresses) {
    const status = capped.has(a) ? 500 : 200;
    ok(`/address/${a}.json`, `address/${a}.json`, JSON_T, SHORT, status);
    if (a.startsWith('ncrt1')) ok(`/address/${a.toUpperCase()}.json`, `address/${a}.json`, JSON_T, SHORT, status);
  }
  const unknown = bitcoin.address.toBase58Check(Buffer.alloc(20, 7), 0x6f);
  err(`/address/${unknown}.json`, 404, `Address ${unknown} not found.`);
  const unknownBech = bitcoin.address.toBech32(Buffer.alloc(20, 7), 0, 'ncrt');
  err(`/address/${unknownBech}.json`, 404, `Address ${unknownBech} not found.`);
  const mainnet = bitcoin.address.toBase58Check(Buffer.alloc(20, 7), 0x00);
  err(`/address/${mainnet}.json`, 404, `Address ${mainnet} is invalid.`);
  err(`/address/${addresses[0]!.slice(0, -1)}x.json`, 404, `Address ${addresses[0]!.slice(0, -1)}x is invalid.`);
  err('/address/foo.json', 404, 'Address foo is invalid.');
  err(`/address/${addresses[0]}.bin`, 404, 'Not found.');
  err(`/address/${addresses[0]}`, 404, 'Not found.');
  if (t.addressesOnly) return rows;

  ok('/stats.json', 'stats.json', JSON_T, SHORT);
  ok('/stats.json?x=1', 'stats.json', JSON_T, SHORT);
  if (files.includes('names.json')) ok('/names.json', 'names.json', JSON_T, SHORT);
  else err('/names.json', 404, 'Not found.');
  for (const [kind, label] of [['tx', 'Tx'], ['block', 'Block']] as const) {
    ids(kind).forEach((id, i) => {
      for (const [ext, type, cache] of [['json', JSON_T, SHORT], ['bin', BIN_T, LONG], ['hex', HEX_T, LONG]] as const) {
        ok(`/${kind}/${id}.${ext}`, `${kind}/${id}.${ext}`, type, cache);
        if (i % 4 === 0) ok(`/${kind}/${id.toUpperCase()}.${ext}`, `${kind}/${id}.${ext}`, type, cache);
        if (i % 4 === 1) ok(`/${kind}/${id.slice(0, 32).toUpperCase()}${id.slice(32)}.${ext}?foo`, `${kind}/${id}.${ext}`, type, cache);
      }
      if (i % 16 === 0) {
        err(`/${kind}/${id}.xml`, 404, 'Not found.');
        err(`/${kind}/${id}`, 404, 'Not found.');
        err(`/${kind}/${id}.json/x`, 404, 'Not found.');
        err(`/${kind}/${id.slice(1)}.json`, 404, `${label} ${id.slice(1)} not found.`);
      }
    });
    const missing = 'AB'.repeat(32);
    for (const ext of ['json', 'bin', 'hex']) err(`/${kind}/${missing}.${ext}`, 404, `${label} ${missing} not found.`);
    err(`/${kind}/${'ab'.repeat(32)}.json`, 404, `${label} ${'ab'.repeat(32)} not found.`);
    err(`/${kind}/xyz.json`, 404, `${label} xyz not found.`);
    err(`/${kind}/%41b.json`, 404, `${label} Ab not found.`);
    err(`/${kind}/%22%5C.hex`, 404, `${label} "\\ not found.`);
    err(`/${kind}/%22%5C%00.hex`, 400, 'Bad request.');
    err(`/${kind}/.json`, 404, 'Not found.');
    err(`/${kind}/`, 404, 'Not found.');
  }

  // Heights: every block-height document, and the misses (above the tip, not canonical decimal, no format).
  const heights = files.map((f) => /^block-height\/(0|[1-9]\d*)\.json$/.exec(f)?.[1]).filter((x): x is string => x !== undefined);
  for (const h of heights) ok(`/block-height/${h}.json`, `block-height/${h}.json`, JSON_T, SHORT);
  if (heights.length > 0) {
    ok('/block-height/1.json?x', 'block-height/1.json', JSON_T, SHORT);
    ok('/block-height/%31.json', 'block-height/1.json', JSON_T, SHORT);
    err(`/block-height/${heights.length}.json`, 404, `Block at height ${heights.length} not found.`);
    err('/block-height/01.json', 404, 'Block height 01 is invalid.');
    err('/block-height/-1.json', 404, 'Block height -1 is invalid.');
    err('/block-height/x%20y.json', 404, 'Block height x y is invalid.');
    err('/block-height/1', 404, 'Not found.');
    err('/block-height/1.hex', 404, 'Not found.');
    err('/block-height/', 404, 'Not found.');
  }

  t.names.forEach((name, ni) => {
    const enc = encodeNamePath(name);
    const rich = t.richName?.equals(name) ?? false;
    ALL_NAME_VARIANTS.forEach((v, vi) => {
      const file = namePath(name, v);
      const sp = spellings(v, vi);
      for (const q of rich ? sp : [sp[0]!, ...(vi % 8 === ni % 8 ? sp.slice(1) : [])]) ok(`/name/${enc}.json${q}`, file, JSON_T, SHORT);
      if ((rich || (vi + ni) % 4 === 0) && !name.includes(0)) {
        ok(`/name/${natural(name)}.json${sp[0]}`, file, JSON_T, SHORT);
        ok(`/name/${natural(name, false)}.json${sp[1]}`, file, JSON_T, SHORT);
      }
    });
    if (!name.includes(0)) {
      // Every byte escaped, lower-case hex.
      ok(`/name/${[...name].map((b) => '%' + b.toString(16).padStart(2, '0')).join('')}.json?with_rawtx`, namePath(name, variantFromQuery('with_rawtx')), JSON_T, SHORT);
    }
  });
  err('/name/d/nope.json', 404, 'Name d/nope not found.');
  err('/name/d/nope.json?history&with_all', 404, 'Name d/nope not found.');
  err('/name/%64/nope.json', 404, 'Name d/nope not found.');
  err('/name/x~41.json', 404, 'Name x~41 not found.');
  err('/name/x~7E41.json', 404, 'Name x~41 not found.');
  err('/name/caf%C3%A9-nope.json', 404, 'Name caf\u00e9-nope not found.');
  err('/name/%FF%01.json', 404, 'Name \u00ff\u0001 not found.');
  err('/name/%EF%BB%BFnope.json', 404, 'Name \ufeffnope not found.');
  err('/name/d/%FF%FE%FD.json', 404, 'Name d/\u00ff\u00fe\u00fd not found.');
  err('/name/%FF%00.json', 400, 'Bad request.');
  err('/name/a%2F..%2Fb.json', 404, 'Name a/../b not found.');
  err('/name/d/x%2F.%2F..%2Fy.json', 404, 'Name d/x/./../y not found.');
  err('/name/a/../b.json', 400, 'Bad request.');
  err('/name/a/%2e%2E/b.json', 400, 'Bad request.');
  err('/name/a/.%2e/b.json', 400, 'Bad request.');
  err('/name/a/%2E/b.json', 400, 'Bad request.');
  err('/name/..%2F..%2Fetc%2Fpasswd.json', 400, 'Bad request.');
  err('/name/~2E~2E.json', 404, 'Name ~2E~2E not found.');
  err('/name/a//b.json', 404, 'Name a//b not found.');
  err('/name/d/nope', 404, 'Not found.');
  err('/name/d/nope.xml', 404, 'Not found.');
  err('/name/.json', 404, 'Name  not found.');

  if (files.includes('index.html')) {
    ok('/', 'index.html', 'text/html; charset=utf-8', SHORT);
    ok('/index.html', 'index.html', 'text/html; charset=utf-8', SHORT);
  } else {
    err('/', 404, 'Not found.');
    err('/index.html', 404, 'Not found.');
  }
  if (files.includes('assets/app.js')) ok('/assets/app.js', 'assets/app.js', 'text/javascript; charset=utf-8', SHORT);
  if (files.includes('openapi.json')) {
    ok('/openapi.json', 'openapi.json', JSON_T, SHORT);
    for (const f of files.filter((p) => p.startsWith('schemas/'))) ok(`/${f}`, f, JSON_T, SHORT);
    err('/schemas/nope.schema.json', 404, 'Not found.');
    err('/schemas/', 404, 'Not found.');
  }
  const firstName = t.names[0] ? encodeNamePath(t.names[0]) : 'd/x';
  for (const p of ['/_site.json', '/_manifest.json', '/404.html', '/errors/tx.json', '/errors/bad-request.json', `/v/history/name/${firstName}.json`, `/${NETLIFY_FUNCTION}`,
    `/${CLOUDFLARE_WORKER}`, '/_worker.js/lib/contract/router.js', '/_netlify/lib/site-info.js', '/nginx.conf', '/_headers', '/nope', '/assets/nope.js', '/assets/', '/.hidden',
    '/stats.json/x', '/%73tats.json2', '/tx', '/name', '/address', '/block/']) {
    err(p, 404, 'Not found.');
  }
  // Hostile raw targets.
  for (const p of ['/tx/../stats.json', '/name/../_site.json', '/%2e%2e/_site.json', '/tx/%2E%2E/%2e%2e/etc/passwd', '/./stats.json', `/name/${firstName.replace('/', '/./')}.json`,
    '/tx\\..\\stats.json', '/a%zz', '/..%2f..%2fetc%2fpasswd', '/%2e%2e%2f_site.json', '/%00', '/tx/%C0%AE%C0%AE%2f%00.json', '/a%', '/a%4', `/name/%GG.json`, '/name/d/%E0%A4%A.json',
    '/name/..', '/name/%2e.json/..']) {
    err(p, 400, 'Bad request.');
  }
  err(`/tx/${'a'.repeat(9000)}.json`, 414, 'URI too long.');
  err(`/name/${'a'.repeat(5000)}.json`, 414, 'URI too long.');
  for (const p of ['//etc/passwd', '/%C0%AE%C0%AE/_site.json', '/errors%2ftx.json', '/_site%2Ejson', '/v%2Fhistory/name/d/bitcoin.json', '/%5Fsite.json']) {
    err(p, 404, 'Not found.');
  }
  err('/address/..%5C..%5C_site.json', 404, 'Address ..\\..\\_site is invalid.');
  err('/tx/%C0%AE%C0%AE%2f%01.json', 404, 'Not found.');
  err('/tx/%C0%AE%C0%AE.json', 404, 'Tx \u00c0\u00ae\u00c0\u00ae not found.');
  return rows;
}

/** Targets a host without a router serves: lower-case hashes, canonical name paths, plain queries. */
function isStaticCanonical(target: string): boolean {
  if (!/^[A-Za-z0-9._~/?&=-]*$/.test(target)) return false;
  const path = target.split('?')[0]!;
  if (/^\/(tx|block)\/[0-9a-f]{64}\.(json|bin|hex)$/.test(path) || /^\/block-height\/(0|[1-9][0-9]*)\.json$/.test(path) || path === '/stats.json' || path === '/names.json') return true;
  if (path === '/openapi.json' || /^\/schemas\/[a-z-]+\.schema\.json$/.test(path)) return true; // the API contract
  return path.startsWith('/name/') && path.endsWith('.json') && isCanonicalNamePath(path.slice(6, -5));
}

function fromRaw(r: RawResponse): Got {
  return { status: r.status, type: r.headers['content-type'] ?? '', cache: r.headers['cache-control'] ?? '', cors: r.headers['access-control-allow-origin'] ?? '', body: r.body };
}

async function fromResponse(r: Response): Promise<Got> {
  return {
    status: r.status,
    type: r.headers.get('content-type') ?? '',
    cache: r.headers.get('cache-control') ?? '',
    cors: r.headers.get('access-control-allow-origin') ?? '',
    body: Buffer.from(await r.arrayBuffer()),
  };
}

function check(front: string, row: Row, got: Got): void {
  if (got.status === row.status && got.type === row.type && got.cache === row.cache && got.cors === '*' && got.body.equals(row.body)) return;
  const label = `${front} ${row.target.slice(0, 120)}`;
  expect({ status: got.status, type: got.type, cache: got.cache, cors: got.cors, body: got.body.toString('latin1') }, label).toEqual({
    status: row.status,
    type: row.type,
    cache: row.cache,
    cors: '*',
    body: row.body.toString('latin1'),
  });
}

/** Static file store the way the platforms serve it, for the in-process edge code. */
function staticFile(dir: string, pathname: string, cloudflare: boolean): Response {
  let rel = decodeURIComponent(pathname).slice(1);
  if (cloudflare) {
    if (rel === '' || rel.endsWith('/')) rel += 'index.html';
    else if (!/\.[A-Za-z0-9]+$/.test(rel) && existsSync(join(dir, rel + '.html'))) rel += '.html';
  }
  const abs = join(dir, rel);
  try {
    return new Response(readFileSync(abs), { status: 200, headers: { ETag: '"x"' } });
  } catch {
    return new Response(readFileSync(join(dir, '404.html')), { status: 404, headers: { 'Content-Type': 'text/html' } });
  }
}

const HAVE_NGINX = spawnSync('sh', ['-c', 'command -v nginx || test -x /usr/sbin/nginx']).status === 0;
const NGINX_BIN = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
if (!HAVE_NGINX) console.warn('nginx is not installed: the nginx conformance runs are skipped (apt-get install nginx-light)');
/** The real edge runtimes (d): each one process for all trees, started in the background once the trees exist. */
const DENO = denoBinary();
const RUNTIMES: { front: string; binary: Binary; start: (dirs: string[]) => Promise<RuntimeProcess> }[] = [
  { front: "Cloudflare _worker.js in workerd (env.ASSETS: wrangler's Pages asset server)", binary: workerdBinary(), start: startPagesHost },
  { front: 'Netlify Edge Function in Deno', binary: DENO, start: (dirs) => startDenoNetlify(DENO.path!, dirs) },
];
for (const r of RUNTIMES) if (r.binary.skip) console.warn(`${r.binary.skip}: its real-runtime conformance run is skipped`);

async function startNginx(t: { dir: string; info: SiteInfo }, upstream: string | undefined): Promise<{ url: string; prefix: string; proc: ChildProcess; stop: () => Promise<void> }> {
  const port = await freePort();
  const prefix = join(dirname(t.dir), `nginx-${port}`);
  mkdirSync(join(prefix, 'logs'), { recursive: true });
  const snippet = nginxConfig({ root: t.dir, listen: `127.0.0.1:${port}`, upstream, info: t.info });
  writeFileSync(join(prefix, 'snapshot.conf'), snippet);
  const tmp = (n: string) => `${n}_temp_path ${join(prefix, n)};`;
  writeFileSync(
    join(prefix, 'nginx.conf'),
    `worker_processes 1;\nerror_log ${join(prefix, 'logs', 'error.log')} warn;\npid ${join(prefix, 'nginx.pid')};\nevents { worker_connections 256; }\nhttp {\n  access_log off;\n  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(tmp).join('\n  ')}\n  include ${join(prefix, 'snapshot.conf')};\n}\n`,
  );
  const proc = spawn(NGINX_BIN, ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      await rawRequest(url, '/stats.json');
      break;
    } catch (e) {
      if (i > 100 || proc.exitCode !== null) throw new Error(`nginx did not start: ${stderr} ${(e as Error).message}`, { cause: e });
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    prefix,
    proc,
    stop: async () => {
      if (proc.exitCode === null) {
        const exited = new Promise((ok) => proc.once('exit', ok));
        proc.kill('SIGTERM');
        await exited;
      }
      await rm(prefix, { recursive: true, force: true });
    },
  };
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

const silent = new Progress({ write: () => true } as unknown as NodeJS.WriteStream, false);

/** Names the demo chain must have, with '/' and hostile bytes (see src/builder/demo.ts). */
const DEMO_NAMES = ['d/history', '/lead', 'trail/', '..', 'd/100%', 'd/what?', 'd/with space', '~tilde', 'id/json', 'd/a/b'].map((n) => Buffer.from(n));
const NON_UTF8_NAME = Buffer.from([0x64, 0x2f, 0xff, 0xfe]);

function readInfo(dir: string): SiteInfo {
  return JSON.parse(readFileSync(join(dir, SITE_INFO_PATH), 'utf8')) as SiteInfo;
}

/**
 * The three trees, made concurrently once: the demo chain, the demo chain with a small address
 * cap, and the synthetic tree. The suites below run on them in this order.
 */
const SUITES = [
  'demo chain build',
  'demo chain build with maxAddressTxouts 3 (capped addresses)',
  'synthetic tree (NUL bytes and 255-byte names, static files, base58/bech32/capped)',
];
let made: Promise<{ dirs: string[]; trees: Tree[] }> | undefined;
function allTrees(): Promise<{ dirs: string[]; trees: Tree[] }> {
  made ??= (async () => {
    const root = mkdtempSync(join(tmpdir(), 'conformance-'));
    chmodSync(root, 0o755); // nginx workers run as an unprivileged user
    const demo = join(root, 'demo');
    const capped = join(root, 'capped');
    const [synthetic] = await Promise.all([
      writeTestTree(),
      buildSnapshot({ source: demoSource(), outDir: demo, progress: silent }),
      buildSnapshot({ source: demoSource(), outDir: capped, progress: silent, maxAddressTxouts: 3 }),
    ]);
    const trees: Tree[] = [
      { label: 'demo', dir: demo, info: readInfo(demo), names: namesOf(listFiles(demo)), richName: Buffer.from('d/history') },
      { label: 'capped', dir: capped, info: readInfo(capped), names: [], addressesOnly: true },
      { label: 'synthetic', dir: synthetic.dir, info: synthetic.info, names: synthetic.names },
    ];
    return { dirs: [root, synthetic.dir], trees };
  })();
  return made;
}

/** The real runtimes (d), each serving the three trees (URLs in SUITES order). */
let runtimes: Map<string, Promise<RuntimeProcess>> | undefined;
function startRuntimes(): Map<string, Promise<RuntimeProcess>> {
  runtimes ??= new Map(
    RUNTIMES.filter((r) => !r.binary.skip).map((r) => {
      const started = allTrees().then(({ trees }) => r.start(trees.map((t) => t.dir)));
      started.catch(() => undefined); // reported by its tests
      return [r.front, started] as const;
    }),
  );
  return runtimes;
}

beforeAll(() => {
  startRuntimes(); // in the background, while the first suites run on the node server and nginx
});
afterAll(async () => {
  await Promise.all([...(runtimes?.values() ?? [])].map((p) => p.then((r) => r.stop(), () => undefined)));
  // fs/promises: unlinks in parallel (rmSync takes seconds for the ~6000 files on a busy disk).
  await Promise.all((made ? (await made).dirs : []).map((d) => rm(d, { recursive: true, force: true })));
});

for (const [suiteIndex, suite] of SUITES.entries()) {
  describe(`conformance: ${suite}`, () => {
    let t: Tree;
    let rows: Row[];
    let node: RunningServer;
    const nodeGot = new Map<string, Got>();

    beforeAll(async () => {
      t = (await allTrees()).trees[suiteIndex]!;
      rows = buildTable(t);
      node = await startServer({ dir: t.dir, port: 0 });
    });
    afterAll(async () => {
      await node?.close();
    });

    it('table covers the tree', () => {
      expect(new Set(rows.map((r) => r.target)).size).toBe(rows.length);
      if (t.addressesOnly) {
        expect(t.info.cappedAddresses.length).toBeGreaterThan(2);
        expect(rows.filter((r) => r.status === 500).length).toBeGreaterThanOrEqual(t.info.cappedAddresses.length);
        return;
      }
      const variants = (name: Buffer) =>
        new Set(rows.filter((r) => r.status === 200 && r.target.startsWith(`/name/${encodeNamePath(name)}.json`)).map((r) => variantKey(variantFromQuery(r.target.split('?')[1] ?? ''))));
      for (const n of t.names) expect(variants(n).size, nameLabel(n)).toBe(64);
      if (t.label === 'demo') {
        const have = new Set(t.names.map((n) => n.toString('latin1')));
        for (const n of [...DEMO_NAMES, NON_UTF8_NAME]) expect(have.has(n.toString('latin1')), `demo name ${nameLabel(n)}`).toBe(true);
        // The rich name has ≥ 3 operations and is asked in every spelling.
        expect(JSON.parse(readFileSync(join(t.dir, 'v/history/name/d/history.json'), 'utf8')).length).toBeGreaterThanOrEqual(3);
        expect(rows.filter((r) => /^\/name\/d(\/|%2F)history\.json/i.test(r.target)).length).toBeGreaterThan(64 * 3);
        expect(rows.length).toBeGreaterThan(3000);
        // The build wrote the same nginx config the suites generate (absolute root, no upstream).
        expect(readFileSync(join(t.dir, 'nginx.conf'), 'utf8')).toBe(nginxConfig({ root: resolve(t.dir), info: t.info }));
      }
    });

    it('(a) node server (snapshot serve, with its file cache)', async () => {
      const got = await mapLimit(rows, 16, (r) => rawRequest(node.url, r.target));
      rows.forEach((row, i) => {
        check('node', row, fromRaw(got[i]!));
        nodeGot.set(row.target, fromRaw(got[i]!));
      });
    });

    it('(a) node server without the cache (every file from disk) sends the same headers and bytes', async () => {
      const plain = await startServer({ dir: t.dir, port: 0, cache: false });
      try {
        const strip = (r: RawResponse) => ({ status: r.status, headers: Object.entries(r.headers).filter(([k]) => k !== 'date'), body: r.body.toString('latin1') });
        const sample = rows.filter((_, i) => i % 3 === 0);
        const [a, b] = await Promise.all([mapLimit(sample, 8, (r) => rawRequest(plain.url, r.target)), mapLimit(sample, 8, (r) => rawRequest(node.url, r.target))]);
        sample.forEach((row, i) => expect(strip(a[i]!), row.target).toEqual(strip(b[i]!)));
      } finally {
        await plain.close();
      }
    });

    for (const mode of ['proxy', 'static'] as const) {
      it.skipIf(!HAVE_NGINX)(`(b) nginx (${mode === 'proxy' ? 'with snapshot serve upstream: every row' : 'static only: canonical rows'})`, async () => {
        const ng = await startNginx(t, mode === 'proxy' ? new URL(node.url).host : undefined);
        try {
          const selected = mode === 'proxy' ? rows : rows.filter((r) => r.status === 200 && isStaticCanonical(r.target));
          const got = await mapLimit(selected, 16, (r) => rawRequest(ng.url, r.target));
          selected.forEach((row, i) => check(`nginx-${mode}`, row, fromRaw(got[i]!)));
          if (mode === 'static') {
            // Misses answer with the generic per-kind documents.
            for (const [target, msg] of [[`/tx/${'ab'.repeat(32)}.json`, 'Tx not found.'], ['/name/d/nope.json?history', 'Name not found.'], ['/address/foo.json', 'Address not found.'], ['/nope', 'Not found.']] as const) {
              check('nginx-static', errRow(target, 404, msg), fromRaw(await rawRequest(ng.url, target)));
            }
          }
        } catch (e) {
          console.error(readFileSync(join(ng.prefix, 'logs', 'error.log'), 'utf8').slice(-3000));
          throw e;
        } finally {
          await ng.stop();
        }
      });
    }

    /**
     * Every row as an edge runtime sees it: the URL the platform parsed (rows WHATWG parsing
     * rejects are left out). Returns the number of requests made.
     */
    async function runEdge(front: string, get: (parsed: URL, target: string) => Promise<Got>, limit = 1): Promise<number> {
      const jobs: { row: Row; parsed: URL; target: string }[] = [];
      for (const row of rows) {
        let parsed: URL;
        try {
          parsed = new URL(row.target, 'http://site.test');
        } catch {
          continue;
        }
        jobs.push({ row, parsed, target: parsed.pathname + parsed.search });
      }
      const got = await mapLimit(jobs, limit, (j) => get(j.parsed, j.target));
      for (const [i, { row, target }] of jobs.entries()) {
        if (target === row.target) check(front, row, got[i]!);
        else {
          const want = nodeGot.get(target) ?? fromRaw(await rawRequest(node.url, target));
          expect({ ...got[i]!, body: got[i]!.body.toString('latin1') }, `${front} ${row.target} (parsed as ${target})`).toEqual({ ...want, body: want.body.toString('latin1') });
        }
      }
      return jobs.length;
    }

    it('(c) Netlify Edge Function, in-process', async () => {
      const mod = (await import(pathToFileURL(join(t.dir, NETLIFY_FUNCTION)).href)) as { default: (r: Request) => Promise<Response | undefined>; config: { path: string } };
      expect(mod.config.path).toBe('/*');
      const realFetch = globalThis.fetch;
      globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
        const req = new Request(input, init);
        // Netlify runs the function for the sub-request too; it must pass it through.
        expect(await mod.default(req)).toBeUndefined();
        expect(req.headers.get(INTERNAL_HEADER)).toBe('1');
        return staticFile(t.dir, new URL(req.url).pathname, false);
      }) as typeof fetch;
      try {
        await runEdge('netlify', async (url) => fromResponse((await mod.default(new Request(url)))!));
      } finally {
        globalThis.fetch = realFetch;
      }
    });

    it('(c) Cloudflare _worker.js, in-process', async () => {
      const mod = (await import(pathToFileURL(join(t.dir, CLOUDFLARE_WORKER)).href)) as { default: { fetch: (r: Request, env: unknown) => Promise<Response> } };
      const env = { ASSETS: { fetch: async (req: Request) => staticFile(t.dir, new URL(req.url).pathname, true) } };
      await runEdge('cloudflare', async (url) => fromResponse(await mod.default.fetch(new Request(url), env)));
    });

    for (const { front, binary } of RUNTIMES) {
      it.skipIf(binary.skip !== undefined)(`(d) ${front}`, { timeout: 180_000 }, async () => {
        const runtime = await startRuntimes().get(front)!;
        const url = runtime.urls[suiteIndex]!;
        const t0 = performance.now();
        const agent = new Agent({ keepAlive: true, maxSockets: 8 });
        try {
          const n = await runEdge(front, async (_url, target) => fromRaw(await keepAliveRequest(agent, url, target)), 8);
          console.log(`conformance ${t.label}: ${front}: ${n} requests, 0 differences, ${((performance.now() - t0) / 1000).toFixed(1)} s`);
          // HEAD and conditional GET through the glue: the platform's ETag, 304 keeping the API's headers.
          const sample = [JSON_T, BIN_T, HEX_T].map((type) => rows.find((r) => r.status === 200 && r.type === type && /^[\w/.-]+$/.test(r.target))).filter((r) => r !== undefined);
          for (const row of sample) {
            const head = await keepAliveRequest(agent, url, row.target, 'HEAD');
            check(`${front} HEAD`, { ...row, body: Buffer.alloc(0) }, fromRaw(head));
            const etag = head.headers['etag'];
            expect(etag, `${front} ETag of ${row.target}`).toBeTruthy();
            const again = await keepAliveRequest(agent, url, row.target, 'GET', { 'If-None-Match': etag! });
            check(`${front} If-None-Match`, { ...row, status: 304, body: Buffer.alloc(0) }, fromRaw(again));
          }
        } catch (e) {
          console.error(runtime.output().slice(-3000));
          throw e;
        } finally {
          agent.destroy();
        }
      });
    }
  });
}

