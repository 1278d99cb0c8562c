import { describe, expect, it } from 'vitest';
import * as bitcoin from 'bitcoinjs-lib';
import { canonicalAddress, base58Decode } from '../src/contract/address.js';
import { makeRouterSite, route, routeRequest, CACHE_LONG, CACHE_SHORT, type RouteResult } from '../src/contract/router.js';
import { getNetwork } from '../src/chain/networks.js';

const hash = 'ab'.repeat(32);
const nmc = makeRouterSite({ network: 'namecoin-regtest', height: 1, tip: hash, cappedAddresses: [] });
const btc = makeRouterSite({ network: 'bitcoin', height: 1, tip: hash, cappedAddresses: ['1BoatSLRHtKNngkdXEeobR76b53LETtpyT'] });

function summary(r: RouteResult): string {
  return r.type === 'file' ? `file ${r.status} ${r.file} | ${r.missing.body}` : `error ${r.status} ${r.body}`;
}

// One table: raw target → what the router decides.
const TABLE: [string, string, string][] = [
  ['nmc', '/stats.json', 'file 200 stats.json | {"error":"Not found."}'],
  ['nmc', `/tx/${hash.toUpperCase()}.hex`, `file 200 tx/${hash}.hex | {"error":"Tx ${hash.toUpperCase()} not found."}`],
  ['nmc', `/block/${hash}.bin?x`, `file 200 block/${hash}.bin | {"error":"Block ${hash} not found."}`],
  ['nmc', '/tx/1234.json', 'error 404 {"error":"Tx 1234 not found."}'],
  ['nmc', `/tx/${hash}.txt`, 'error 404 {"error":"Not found."}'],
  ['nmc', '/name/d/x.json?with_all&history', 'file 200 v/history-block-height-mrkl_branch-rawtx-tx_idx/name/d/x.json | {"error":"Name d/x not found."}'],
  ['nmc', '/name/d%2Fx.json?raw', 'file 200 name/d/x.json | {"error":"Name d/x not found."}'],
  ['nmc', '/name/a%20b%2B.json', 'file 200 name/a~20b~2B.json | {"error":"Name a b+ not found."}'],
  ['nmc', '/name/%2Fx.json', 'file 200 name/~2Fx.json | {"error":"Name /x not found."}'],
  ['nmc', '/name/x~41.json', 'file 200 name/x~7E41.json | {"error":"Name x~41 not found."}'],
  ['btc', '/name/d/x.json', 'error 404 {"error":"Not found."}'],
  ['btc', '/address/1BoatSLRHtKNngkdXEeobR76b53LETtpyT.json', 'file 500 address/1BoatSLRHtKNngkdXEeobR76b53LETtpyT.json | {"error":"Address 1BoatSLRHtKNngkdXEeobR76b53LETtpyT not found."}'],
  ['btc', '/address/BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4.json', 'file 200 address/bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4.json | {"error":"Address BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4 not found."}'],
  ['btc', '/address/bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5.json', 'error 404 {"error":"Address bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5 is invalid."}'],
  ['nmc', '/address/1BoatSLRHtKNngkdXEeobR76b53LETtpyT.json', 'error 404 {"error":"Address 1BoatSLRHtKNngkdXEeobR76b53LETtpyT is invalid."}'],
  ['nmc', '/', 'file 200 index.html | {"error":"Not found."}'],
  ['nmc', '/assets/app.css', 'file 200 assets/app.css | {"error":"Not found."}'],
  ['nmc', '/names.json', 'file 200 names.json | {"error":"Not found."}'],
  ['btc', '/names.json?x', 'file 200 names.json | {"error":"Not found."}'],
  ['nmc', '/_site.json', 'error 404 {"error":"Not found."}'],
  ['nmc', '/v/history/name/d/x.json', 'error 404 {"error":"Not found."}'],
  ['nmc', '/../etc/passwd', 'error 400 {"error":"Bad request."}'],
  ['nmc', '/name/%2e%2E/x.json', 'error 400 {"error":"Bad request."}'],
  // Dot segments of the request path are hostile; '.'/'..' inside a name (slashes sent as %2F) are data.
  ['nmc', '/name/x%2F.%2Fy.json', 'file 200 name/x/~2E/y.json | {"error":"Name x/./y not found."}'],
  ['nmc', '/name/a%2F..%2Fb.json', 'file 200 name/a/~2E./b.json | {"error":"Name a/../b not found."}'],
  ['nmc', '/name/x/a%2F..%2Fb.json?history', 'file 200 v/history/name/x/a/~2E./b.json | {"error":"Name x/a/../b not found."}'],
  ['nmc', '/name/..%2Fup.json', 'file 200 name/~2E./up.json | {"error":"Name ../up not found."}'],
  ['nmc', '/name/x%2F%2e%2E.json', 'file 200 name/x/~2E..json | {"error":"Name x/.. not found."}'],
  ['nmc', '/name/x/a/../b.json', 'error 400 {"error":"Bad request."}'],
  ['nmc', '/name/x/a/%2e%2e/b.json', 'error 400 {"error":"Bad request."}'],
  ['nmc', '/name/x/.%2E/b.json', 'error 400 {"error":"Bad request."}'],
  ['nmc', '/name/x/./b.json', 'error 400 {"error":"Bad request."}'],
  ['nmc', '/name/a/..', 'error 400 {"error":"Bad request."}'],
  // Decoded, the path would climb above the root: nginx refuses it while parsing, so does the router.
  ['nmc', '/name/..%2F..%2Fetc%2Fpasswd.json', 'error 400 {"error":"Bad request."}'],
  ['nmc', '/%2e%2e%2f_site.json', 'error 400 {"error":"Bad request."}'],
  ['nmc', '/tx/%00.json', 'error 400 {"error":"Bad request."}'],
  ['nmc', '/a\\b', 'error 400 {"error":"Bad request."}'],
  ['nmc', '/a%2', 'error 400 {"error":"Bad request."}'],
  ['nmc', 'http://x/stats.json', 'error 400 {"error":"Bad request."}'],
  ['nmc', '/caf\u00e9', 'error 400 {"error":"Bad request."}'],
];

describe('route', () => {
  for (const [net, target, want] of TABLE) {
    it(`${net} ${target}`, () => expect(summary(route(target, net === 'nmc' ? nmc : btc))).toBe(want));
  }
  it('sets content types and cache policy', () => {
    const bin = route(`/tx/${hash}.bin`, nmc);
    const json = route(`/tx/${hash}.json`, nmc);
    expect(bin.type === 'file' && [bin.contentType, bin.cacheControl]).toEqual(['application/octet-stream', CACHE_LONG]);
    expect(json.type === 'file' && [json.contentType, json.cacheControl]).toEqual(['application/json; charset=utf-8', CACHE_SHORT]);
    expect(routeRequest('DELETE', '/stats.json', nmc).status).toBe(405);
  });
  it('an extension that names an Object.prototype member is just an unknown type', () => {
    for (const ext of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const r = route(`/assets/x.${ext}`, nmc);
      expect(r.type === 'file' && r.contentType, ext).toBe('application/octet-stream');
    }
  });
});

describe('address validation', () => {
  const cases: [string, string, boolean][] = [];
  for (const name of ['bitcoin', 'bitcoin-testnet', 'namecoin', 'namecoin-regtest'] as const) {
    const net = getNetwork(name);
    const h = Buffer.alloc(20, 9);
    cases.push([name, bitcoin.address.toBase58Check(h, net.pubKeyHash), true]);
    if (net.scriptHash !== undefined) cases.push([name, bitcoin.address.toBase58Check(h, net.scriptHash), true]);
    cases.push([name, bitcoin.address.toBase58Check(h, 0x42), false]);
    cases.push([name, bitcoin.address.toBech32(h, 0, net.bech32), true]);
    cases.push([name, bitcoin.address.toBech32(Buffer.alloc(32, 1), 0, net.bech32), true]);
    cases.push([name, bitcoin.address.toBech32(Buffer.alloc(32, 1), 1, net.bech32), true]);
    cases.push([name, bitcoin.address.toBech32(Buffer.alloc(25, 1), 0, net.bech32), false]);
    cases.push([name, bitcoin.address.toBech32(h, 0, 'xx'), false]);
  }
  // BIP 350 vectors: v1+ must be bech32m, v0 bech32.
  cases.push(['bitcoin', 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', true]);
  cases.push(['bitcoin', 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd', false]);
  cases.push(['bitcoin', 'bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs', true]);
  cases.push(['bitcoin', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', true]);
  cases.push(['bitcoin', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3T4', false]);
  cases.push(['bitcoin', '1111111111111111111114oLvT2', true]);
  cases.push(['bitcoin', '1BoatSLRHtKNngkdXEeobR76b53LETtpyT', true]);
  cases.push(['bitcoin', '1BoatSLRHtKNngkdXEeobR76b53LETtpy0', false]);
  for (const [net, addr, valid] of cases) {
    it(`${net} ${addr} ${valid ? 'valid' : 'invalid'}`, () => {
      const n = getNetwork(net);
      expect(canonicalAddress(addr, { pubKeyHash: n.pubKeyHash, scriptHash: n.scriptHash, bech32: n.bech32 }) !== undefined).toBe(valid);
    });
  }
  it('base58 decodes leading ones as zero bytes', () => {
    expect(Buffer.from(base58Decode('11z')!).toString('hex')).toBe('000039');
    expect(base58Decode('0OIl')).toBeUndefined();
  });
});
