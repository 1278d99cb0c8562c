import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ALL_NAME_VARIANTS,
  WITH_FLAGS,
  addressPath,
  blockPath,
  decodeNamePath,
  encodeNamePath,
  errorBody,
  errorDocPath,
  isCanonicalNamePath,
  namePath,
  txPath,
  variantFromQuery,
  variantKey,
} from '../src/contract/layout.js';
import { sha256, toHex } from '../src/contract/sha256.js';
import { api } from '../src/ui/route.js';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const long = Buffer.alloc(255, 'a');

// The name path examples of docs/api.md ("Sending a name"), plus edge cases of its rules.
const EXAMPLES: [Buffer, string][] = [
  [Buffer.from('d/bitcoin'), 'd/bitcoin'],
  [Buffer.from('id/Alice'), 'id/Alice'],
  [Buffer.from('a//b'), 'a/~2Fb'],
  [Buffer.from('/lead'), '~2Flead'],
  [Buffer.from('x/'), 'x~2F'],
  [Buffer.from('/'), '~2F'],
  [Buffer.from('a/../b'), 'a/~2E./b'],
  [Buffer.from('.hidden'), '~2Ehidden'],
  [Buffer.from('a/b.json/c'), 'a/b~2Ejson/c'],
  [Buffer.from('a/b.json'), 'a/b.json'],
  [Buffer.from('x~y'), 'x~7Ey'],
  [Buffer.from('100%'), '100~25'],
  [Buffer.from('q?x#y'), 'q~3Fx~23y'],
  [Buffer.from('a+b'), 'a~2Bb'],
  [Buffer.from('café'), 'caf~C3~A9'],
  [Buffer.from([0xff, 0xfe, 0x00]), '~FF~FE~00'],
  [Buffer.from('a\\b c'), 'a~5Cb~20c'],
  [Buffer.alloc(0), '~'],
  [long, `~x/${sha(long).slice(0, 2)}/${sha(long)}`],
];

describe('encodeNamePath (§8.4 examples)', () => {
  for (const [name, enc] of EXAMPLES) {
    it(`${JSON.stringify(name.toString('latin1'))} -> ${enc}`, () => {
      expect(encodeNamePath(name)).toBe(enc);
      expect(isCanonicalNamePath(enc)).toBe(true);
      if (!enc.startsWith('~x/')) expect(name.equals(decodeNamePath(enc)!)).toBe(true);
      else expect(decodeNamePath(enc)).toBeUndefined();
    });
  }

  it('rejects non-canonical spellings', () => {
    for (const p of ['', 'a/', '/a', 'a//b', '.x', 'a/./b', '~41', '~2f', 'x~', 'x~G0', 'a%20b', 'a+b', 'a b', 'a/b.json/c', '~x/01/' + '0'.repeat(64), '~x/ab/AB' + '0'.repeat(62)]) {
      expect(isCanonicalNamePath(p), p).toBe(false);
      expect(decodeNamePath(p), p).toBeUndefined();
    }
  });
});

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('encodeNamePath (property)', () => {
  it('random hostile byte strings: charset, structure, round trip, injective', () => {
    const rand = rng(42);
    const hostile = Buffer.from('/.~%json+?# \\\x00\xff\x7eAB0_-');
    const seen = new Map<string, string>();
    let n = 0;
    for (let i = 0; i < 30_000; i++) {
      const len = rand() < 0.02 ? 200 + Math.floor(rand() * 600) : Math.floor(rand() * 24);
      const name = Buffer.alloc(len);
      for (let j = 0; j < len; j++) name[j] = rand() < 0.8 ? hostile[Math.floor(rand() * hostile.length)]! : Math.floor(rand() * 256);
      const enc = encodeNamePath(name);
      const label = name.toString('hex');
      expect(enc, label).toMatch(/^[A-Za-z0-9._~/-]+$/);
      const segs = enc.split('/');
      for (const s of segs) {
        expect(s, label).not.toBe('');
        expect(s.startsWith('.'), label).toBe(false);
        expect((s + '.json').length, label).toBeLessThanOrEqual(250);
      }
      for (const s of segs.slice(0, -1)) expect(s.endsWith('.json'), label).toBe(false);
      expect(enc.length + 5, label).toBeLessThanOrEqual(900);
      expect(isCanonicalNamePath(enc), label).toBe(true);
      if (!enc.startsWith('~x/')) expect(name.equals(decodeNamePath(enc)!), label).toBe(true);
      const prev = seen.get(enc);
      if (prev !== undefined) expect(prev, `collision on ${enc}`).toBe(label);
      else {
        seen.set(enc, label);
        n++;
      }
    }
    expect(n).toBeGreaterThan(20_000);
  });
});

describe('sha256', () => {
  it('matches node:crypto', () => {
    const rand = rng(7);
    for (const len of [...Array.from({ length: 300 }, (_, i) => i), 1000, 1 << 20]) {
      const b = Buffer.alloc(len);
      for (let i = 0; i < len; i++) b[i] = Math.floor(rand() * 256);
      expect(toHex(sha256(b)), `${len} bytes`).toBe(sha(b));
      // A view into a larger buffer, and the same input again (no state kept between calls).
      if (len > 2) expect(toHex(sha256(b.subarray(1, len - 1)))).toBe(sha(b.subarray(1, len - 1)));
      expect(toHex(sha256(b))).toBe(sha(b));
    }
  });
});

describe('variants', () => {
  it('has 64 distinct keys, base first', () => {
    expect(ALL_NAME_VARIANTS).toHaveLength(64);
    expect(new Set(ALL_NAME_VARIANTS.map(variantKey)).size).toBe(64);
    expect(variantKey(ALL_NAME_VARIANTS[0]!)).toBe('');
    expect(WITH_FLAGS).toEqual(['block', 'height', 'mrkl_branch', 'rawtx', 'tx_idx']);
  });

  const QUERIES: [string, string][] = [
    ['', ''],
    ['?', ''],
    ['raw', ''],
    ['history', 'history'],
    ['?history=0', 'history'],
    ['history=', 'history'],
    ['HISTORY', ''],
    ['with_all', 'block-height-mrkl_branch-rawtx-tx_idx'],
    ['with_tx_idx&with_all', 'block-height-mrkl_branch-rawtx-tx_idx'],
    ['history&with_height&with_rawtx&with_mrkl_branch&with_tx_idx&raw', 'history-height-mrkl_branch-rawtx-tx_idx'],
    ['with_rawtx=1&foo=bar&with_block&_=123', 'block-rawtx'],
    ['%68istory&with%5Fheight=x', 'history-height'],
    ['with_bogus&with_&with_alll', ''],
    ['a=%ZZ&history', 'history'],
    ['&&history&&', 'history'],
  ];
  for (const [q, key] of QUERIES) {
    it(`query ${JSON.stringify(q)} -> ${JSON.stringify(key)}`, () => expect(variantKey(variantFromQuery(q))).toBe(key));
  }
});

describe('paths', () => {
  it('builds the flat layout', () => {
    const h = 'ab'.repeat(32);
    expect(txPath(h, 'bin')).toBe(`tx/${h}.bin`);
    expect(blockPath(h, 'json')).toBe(`block/${h}.json`);
    expect(addressPath('n1')).toBe('address/n1.json');
    expect(namePath(Buffer.from('d/x'), variantFromQuery(''))).toBe('name/d/x.json');
    expect(namePath(Buffer.from('d/x'), variantFromQuery('with_all&history'))).toBe('v/history-block-height-mrkl_branch-rawtx-tx_idx/name/d/x.json');
    expect(errorDocPath('tx')).toBe('errors/tx.json');
    expect(errorBody('Tx "a" not found.')).toBe('{"error":"Tx \\"a\\" not found."}');
  });
});

describe('src/contract owns the document paths', () => {
  // The hosts and the browsing UI name documents through contract/paths.ts (layout.ts), never
  // by spelling a path: a moved document moves for all of them.
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts'))
      .map((e) => join(e.parentPath, e.name));
  const SPELLED = /[`'"]\/?(tx|block|address|name|errors|v)\/[^`'"\n]*\.(json|bin|hex)\b/;

  it('no document path is spelled in src/hosts or src/ui', () => {
    const src = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');
    const hits = [...files(join(src, 'hosts')), ...files(join(src, 'ui'))].flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .map((line, i) => `${relative(src, f)}:${i + 1}: ${line.trim()}`)
        .filter((l) => SPELLED.test(l.slice(l.indexOf(': ') + 2))),
    );
    expect(hits).toEqual([]);
  });

  it('the UI reads the documents the build writes', () => {
    const id = 'ab'.repeat(32);
    expect([api.tx(id), api.tx(id, 'hex'), api.block(id), api.block(id, 'hex'), api.address('1A1z')]).toEqual([
      txPath(id, 'json'),
      txPath(id, 'hex'),
      blockPath(id, 'json'),
      blockPath(id, 'hex'),
      addressPath('1A1z'),
    ]);
    const name = Buffer.from('d/bitcoin');
    expect(api.name(name)).toBe(namePath(name, ALL_NAME_VARIANTS[0]!));
    expect(api.name(name, 'history')).toBe(`${namePath(name, ALL_NAME_VARIANTS[0]!)}?history`);
  });
});
