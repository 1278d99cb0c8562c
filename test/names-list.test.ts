/**
 * names.json: every name of a Namecoin snapshot, checked against the demo chain's own list of
 * name operations and against the name documents of the same tree; an incremental extension
 * writes it byte for byte as a full build does; other networks have none.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainBuilder } from '../src/builder/chain.js';
import { DEMO_NAME_OPS, DEMO_TIP_HEIGHT } from '../src/builder/demo.js';
import { NETWORKS } from '../src/chain/networks.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { NAMES_PATH, encodeNamePath, namePathEncoded, variantFromQuery } from '../src/contract/layout.js';
import { memorySource } from '../src/source/memory.js';

const DEPTH = 30; // namecoin-regtest name expiration depth
const HOSTS = ['netlify', 'cloudflare'] as const; // nginx.conf names the tree's path

interface Entry {
  name: string;
  path: string;
  height: number;
  expires_in: number;
}

let root: string;
let at140: string;
const read = (dir: string, rel: string) => readFileSync(join(dir, rel), 'utf8');

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'snapshot-names-'));
  await buildSnapshot({ source: demoSource(), outDir: join(root, 'full'), hosts: HOSTS });
  // Extended: 140 first, then 150 into the same tree (incremental).
  await buildSnapshot({ source: demoSource(), outDir: join(root, 'inc'), height: 140, hosts: HOSTS });
  at140 = read(join(root, 'inc'), NAMES_PATH);
  const r = await buildSnapshot({ source: demoSource(), outDir: join(root, 'inc'), hosts: HOSTS });
  expect(r.mode).toBe('incremental');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** What names.json must say at `height`, from the demo chain's list of operations. */
function expected(height: number): { height: number; count: number; names: Entry[] } {
  const last = new Map<string, number>();
  for (const op of DEMO_NAME_OPS) if (op.height <= height) last.set(op.nameHex, op.height);
  const names = [...last].map(([hex, h]) => {
    const bytes = Buffer.from(hex, 'hex');
    let name: string;
    try {
      name = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch {
      name = bytes.toString('latin1');
    }
    return { name, path: encodeNamePath(bytes), height: h, expires_in: h + DEPTH - height };
  });
  names.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { height, count: names.length, names };
}

describe('names.json', () => {
  it('lists every name with its path, last operation height and expires_in, sorted by path (compact JSON)', () => {
    const text = read(join(root, 'full'), NAMES_PATH);
    const doc = JSON.parse(text);
    expect(doc).toEqual(expected(DEMO_TIP_HEIGHT));
    expect(text).toBe(JSON.stringify(doc));
    expect(Object.keys(doc)).toEqual(['height', 'count', 'names']);
    for (const e of doc.names) expect(Object.keys(e)).toEqual(['name', 'path', 'height', 'expires_in']);
    expect(doc.count).toBeGreaterThanOrEqual(13);
    expect(doc.names.some((e: Entry) => e.name === 'd/\u00ff\u00fe')).toBe(true); // not UTF-8: Latin-1, like the documents
  });

  it('agrees with the name documents of the same tree', () => {
    const out = join(root, 'full');
    const doc = JSON.parse(read(out, NAMES_PATH));
    for (const e of doc.names as Entry[]) {
      const base = JSON.parse(read(out, `name/${e.path}.json`));
      expect(base.name).toBe(e.name);
      expect(base.expires_in).toBe(e.expires_in);
      const withHeight = JSON.parse(read(out, namePathEncoded(e.path, variantFromQuery('with_height'))));
      expect(withHeight.height).toBe(e.height);
    }
  });

  it('an extended snapshot (140 → 150) writes it byte for byte as a full build; the list at 140 is that height’s', () => {
    expect(read(join(root, 'inc'), NAMES_PATH)).toBe(read(join(root, 'full'), NAMES_PATH));
    expect(JSON.parse(at140)).toEqual(expected(140));
    const manifest = read(join(root, 'inc'), '_manifest.json');
    expect(manifest).toBe(read(join(root, 'full'), '_manifest.json'));
    expect(manifest).toMatch(/ names\.json\n/);
  });

  it('Bitcoin networks have no names.json', async () => {
    const cb = new ChainBuilder({ network: NETWORKS['bitcoin-regtest'], seed: 5 });
    for (let i = 0; i < 3; i++) cb.block();
    const blocks = cb.build().main.map((b) => ({ raw: b.raw, kind: b.kind, height: b.height }));
    const out = join(root, 'btc');
    await buildSnapshot({ source: memorySource(NETWORKS['bitcoin-regtest'], blocks), outDir: out, hosts: HOSTS });
    expect(existsSync(join(out, 'stats.json'))).toBe(true);
    expect(existsSync(join(out, NAMES_PATH))).toBe(false);
  });
});
