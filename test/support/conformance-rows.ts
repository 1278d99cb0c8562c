// The conformance table (test/conformance.test.ts): requests derived from a built tree with the
// expected status, content type, cache policy and body. Shared with the suites that check other
// front ends against the same rows (test/pack-hosts.test.ts).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as bitcoin from 'bitcoinjs-lib';
import { ALL_NAME_VARIANTS, WITH_FLAGS, decodeNamePathBytes, encodeNamePath, namePath, variantFromQuery, type NameVariant, type SiteInfo } from '../../src/contract/layout.js';
import { CLOUDFLARE_WORKER } from '../../src/hosts/cloudflare.js';
import { NETLIFY_FUNCTION } from '../../src/hosts/netlify.js';

export const JSON_T = 'application/json; charset=utf-8';
export const BIN_T = 'application/octet-stream';
export const HEX_T = 'text/plain; charset=utf-8';
export const SHORT = 'public, max-age=60';
export const LONG = 'public, max-age=31536000, immutable';

export interface Row {
  target: string;
  status: number;
  type: string;
  cache: string;
  body: Buffer;
}

export function errRow(target: string, status: number, message: string): Row {
  return { target, status, type: JSON_T, cache: SHORT, body: Buffer.from(JSON.stringify({ error: message })) };
}

/** Percent-encodes name bytes the way a client would (unreserved and '/' kept). */
export function natural(name: Buffer, keepSlash = true): string {
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
export function spellings(v: NameVariant, i: number): string[] {
  const flags = WITH_FLAGS.filter((f) => v.with.has(f)).map((f) => `with_${f}`);
  const keys = v.history ? ['history', ...flags] : flags;
  const out = [keys.length ? '?' + keys.join('&') : ''];
  out.push('?' + [...keys].reverse().map((k, j) => `${k}=${j % 2 ? '0' : ''}`).concat(['raw', `_=${i}`]).join('&'));
  if (v.with.size === 5) out.push(`?with_tx_idx&with_all${v.history ? '&history=1' : ''}&raw`);
  if (keys.length) out.push('?' + keys.map((k) => k.replace('_', '%5F').replace('h', '%68')).join('&'));
  return out;
}

/** A tree under test and what the table derives from it. */
export interface Tree {
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
export function listFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...listFiles(dir, p));
    else out.push(p);
  }
  return out;
}

/** Names of a built tree, from its `name/<enc>.json` files. */
export function namesOf(files: string[]): Buffer[] {
  const out: Buffer[] = [];
  for (const f of files) {
    const m = /^name\/(.+)\.json$/.exec(f);
    const bytes = m ? decodeNamePathBytes(m[1]!) : undefined;
    if (bytes) out.push(Buffer.from(bytes));
  }
  return out;
}

/** Name bytes as the router's error text renders them (UTF-8, else Latin-1). */
export function nameLabel(name: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(name);
  } catch {
    return name.toString('latin1');
  }
}

export function buildTable(t: Tree): Row[] {
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
