// The pack writer's paths that a tree conversion does not take: spilled sorted runs, several
// parts, a path added twice, and recipe entries (synthetic, and real address documents
// assembled from the tx documents they embed).
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { crc32, gunzipSync, gzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { Encoding, Kind, PACK_POINTER, packKey, type RecipeSegment } from '../src/contract/pack-format.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { packFromTree } from '../src/pack/from-tree.js';
import { rawOfHex } from '../src/pack/tree-files.js';
import { answerBytes, PackReader } from '../src/pack/reader.js';
import { PackWriter, RECIPE_GZIP_MIN } from '../src/pack/writer.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { tempDir } from './support/memory-builds.js';
import { writeListedTree } from './support/tree-copy.js';

const dir = tempDir('snapshot-pack-writer-');

describe('pack writer', () => {
  it('spilled runs and parts cut small give the same answers as one run in one part', async () => {
    const docs = Array.from({ length: 3000 }, (_, i) => ({ path: `tx/${i.toString(16).padStart(64, '0')}.json`, bytes: Buffer.from(JSON.stringify({ i, pad: 'x'.repeat(i % 200) })) }));
    // Paths of 2-, 3- and 4-byte UTF-8 characters, one of 65,535 bytes (the longest a record takes).
    docs.push(...Array.from({ length: 60 }, (_, i) => ({ path: `name/${['é', '名', '𝄞'][i % 3]!.repeat(1 + i)}`, bytes: Buffer.from(`n${i}`) })));
    docs.push({ path: `name/${'x'.repeat(0xffff - 5)}`, bytes: Buffer.from('long') });
    const one = new PackWriter(dir('one'));
    const many = new PackWriter(dir('many'), { runEntries: 100, maxPartBytes: 20_000 });
    // 429 runs of 7: merged in tiers of 64 while adding (levels 0, 1 and 2 at the end).
    const tiny = new PackWriter(dir('tiny-runs'), { runEntries: 7 });
    // Added out of key order (paths in reverse) on purpose.
    for (const d of [...docs].reverse()) {
      one.add(d.path, d.bytes);
      many.add(d.path, d.bytes);
      tiny.add(d.path, d.bytes);
    }
    const a = one.finish();
    const b = many.finish();
    const c = tiny.finish();
    expect(readFileSync(join(c.dir, c.index)).equals(readFileSync(join(a.dir, a.index)))).toBe(true);
    expect(a.parts).toHaveLength(1);
    expect(b.parts.length).toBeGreaterThan(3);
    for (const p of b.parts) expect(p.size).toBeLessThanOrEqual(20_000);
    // No leftovers: parts, index, pack.json only.
    expect(readdirSync(dir('many')).sort()).toEqual([...b.parts.map((p) => p.name), b.index, 'pack.json'].sort());
    for (const d of [a, b]) {
      const r = await PackReader.open(d.dir);
      for (const doc of docs) expect(Buffer.from(await answerBytes((await r.get(doc.path))!)).equals(doc.bytes), doc.path).toBe(true);
      expect(await r.verify()).toEqual([]);
      await r.close();
    }
  });

  it('a path added twice fails at finish, naming it, and leaves no pack behind', () => {
    const w = new PackWriter(dir('twice'), { runEntries: 2 });
    w.add('stats.json', Buffer.from('{}'));
    w.add('a', Buffer.from('1'));
    w.add('b', Buffer.from('2'));
    w.add('stats.json', Buffer.from('{"x":1}'));
    expect(() => w.finish()).toThrow('pack writer: stats.json was added twice');
    expect(readdirSync(dir('twice'))).toEqual([]);
    // A path a record cannot hold is refused by its length, and not counted.
    const long = new PackWriter(dir('long'));
    expect(() => long.add(`name/${'é'.repeat(0x8000)}`, Buffer.from('x'))).toThrow('pack writer: path of 65541 bytes: name/é');
    expect(() => long.add('', Buffer.from('x'))).toThrow('pack writer: path of 0 bytes');
    expect(long.finish().entries).toBe(0);
    // The same within the one run held in memory.
    const m = new PackWriter(dir('twice-memory'));
    for (const p of ['x', 'é', 'y', 'é']) m.add(p, Buffer.from(p));
    expect(() => m.finish()).toThrow('pack writer: é was added twice');
    // The same across tiers of merged runs.
    const t = new PackWriter(dir('twice-tiers'), { runEntries: 1 });
    for (let i = 0; i < 200; i++) t.add(`p/${i}`, Buffer.from(String(i)));
    t.add('p/17', Buffer.from('again'));
    expect(() => t.finish()).toThrow('pack writer: p/17 was added twice');
  });

  it('keep: the new index holds the base’s records but the dropped and the re-added ones; a count not expected writes no index', async () => {
    const d = dir('keep');
    // Enough entries for several slots, and for the slot count to shrink when most are dropped.
    const paths = Array.from({ length: 5000 }, (_, i) => `address/a${i}.json`);
    const base = new PackWriter(d);
    for (const p of paths) base.add(p, Buffer.from(`old ${p}`));
    const first = base.finish();
    const open = () => PackReader.open(d);
    let r = await open();
    const keepOf = (drop: string[]) => ({ index: r.index, header: r.header, drop: drop.map(packKey) });
    const dropped = paths.filter((_, i) => i % 10 === 3);
    const again = paths.filter((_, i) => i % 10 === 5);
    const w = new PackWriter(d, { base: { parts: r.parts, generation: r.header.generation }, keep: keepOf(dropped) });
    for (const p of again) w.add(p, Buffer.from(`new ${p}`));
    w.add('address/added.json', Buffer.from('added'));
    const expected = paths.length - dropped.length + 1;
    const second = w.finish({ entries: expected });
    await r.close();
    expect(second.entries).toBe(expected);
    expect(second.kept).toBe(paths.length - dropped.length - again.length);
    r = await open();
    try {
      expect(r.header.generation).toBe(2);
      for (const [i, p] of paths.entries()) {
        const a = await r.get(p);
        const want = i % 10 === 3 ? undefined : i % 10 === 5 ? `new ${p}` : `old ${p}`;
        expect(a && Buffer.from(await answerBytes(a)).toString(), p).toBe(want);
      }
      expect(Buffer.from(await answerBytes((await r.get('address/added.json'))!)).toString()).toBe('added');
      expect(await r.verify()).toEqual([]);
      // Most dropped: fewer slots than the base's, every kept record still found.
      // Left: the first 100 paths but the ones dropped before, and address/added.json.
      const left = paths.slice(0, 100).filter((_, i) => i % 10 !== 3).length + 1;
      const w3 = new PackWriter(d, { base: { parts: r.parts, generation: r.header.generation }, keep: keepOf(paths.slice(100)) });
      expect(() => w3.finish({ entries: left + 1 })).toThrow(
        `pack writer: the new index would hold ${left} entries (0 added, ${left} kept from the base pack), not the ${left + 1} expected: the base pack is not the one made from the tree its changed paths are relative to`,
      );
      expect(readFileSync(join(d, PACK_POINTER), 'utf8')).toContain(second.index); // nothing replaced
      const w4 = new PackWriter(d, { base: { parts: r.parts, generation: r.header.generation }, keep: keepOf(paths.slice(100)) });
      const fourth = w4.finish({ entries: left });
      expect(fourth.bucketBits).toBeLessThan(second.bucketBits);
    } finally {
      await r.close();
    }
    r = await open();
    try {
      for (const [i, p] of paths.slice(0, 100).entries()) expect((await r.get(p)) !== undefined, p).toBe(i % 10 !== 3);
      expect(await r.get('address/added.json')).toBeDefined();
      expect(await r.get(paths[100]!)).toBeUndefined();
      expect(first.entries).toBe(paths.length);
    } finally {
      await r.close();
    }
  });

  it('identical contents share a blob; a .hex entry answers the lowercase hex of its .bin blob', async () => {
    const w = new PackWriter(dir('dedup'));
    const raw = randomBytes(500);
    const bin = w.add('tx/a.bin', raw);
    const hex = w.addHex('tx/a.hex', raw);
    const e1 = w.add('errors/tx.json', Buffer.from('{"error":"Tx not found."}'));
    const e2 = w.add('v/history/name/x.json', Buffer.from('{"error":"Tx not found."}'));
    expect(hex.blob).toEqual(bin.blob);
    expect(e2.blob).toEqual(e1.blob);
    const s = w.finish();
    expect(s.blobs).toBe(2);
    const r = await PackReader.open(s.dir);
    const h = (await r.get('tx/a.hex', { acceptEncoding: 'gzip' }))!;
    expect(h.kind).toBe(Kind.HEX);
    expect(h.contentEncoding).toBe('identity');
    expect(Buffer.from(h.bytes!).toString('latin1')).toBe(raw.toString('hex'));
    await r.close();
  });

  it('a recipe assembles literals and ranges of gzip and identity blobs, in order', async () => {
    const w = new PackWriter(dir('recipe'));
    const text = Buffer.from(JSON.stringify({ a: 'y'.repeat(2000), b: [1, 2, 3] }));
    const zipped = w.add('doc.json', text);
    expect(zipped.blob.encoding).toBe(Encoding.GZIP);
    const raw = randomBytes(300);
    const plain = w.add('raw.bin', raw);
    expect(plain.blob.encoding).toBe(Encoding.IDENTITY);
    const segs: RecipeSegment[] = [
      { type: 'literal', bytes: Buffer.from('[') },
      { type: 'range', blob: zipped.blob, start: 0, length: text.length },
      { type: 'literal', bytes: Buffer.from(',') },
      { type: 'range', blob: plain.blob, start: 10, length: 20 },
      { type: 'range', blob: zipped.blob, start: 5, length: 7 },
      { type: 'literal', bytes: Buffer.from(']') },
    ];
    const want = Buffer.concat([Buffer.from('['), text, Buffer.from(','), raw.subarray(10, 30), text.subarray(5, 12), Buffer.from(']')]);
    expect(w.addRecipe('r.json', segs).size).toBe(want.length);
    w.addRecipe('bad.json', [{ type: 'range', blob: plain.blob, start: 290, length: 20 }]);
    const s = w.finish();
    const r = await PackReader.open(s.dir);
    const a = (await r.get('r.json', { acceptEncoding: 'gzip' }))!;
    expect(a.kind).toBe(Kind.RECIPE);
    expect(a.contentEncoding).toBe('identity');
    expect(a.size).toBe(want.length);
    expect(Buffer.from(await answerBytes(a)).equals(want)).toBe(true);
    await expect(answerBytes((await r.get('bad.json'))!)).rejects.toThrow('recipe of bad.json: segment 0 asks for bytes 290–309 of a blob of 300');
    await r.close();
  });

  it('a recipe asked to be compressed is stored gzip from RECIPE_GZIP_MIN bytes on, identity below', async () => {
    const w = new PackWriter(dir('recipe-gzip'));
    const doc = w.add('doc.json', Buffer.from('{"tx":1}'), { compress: false });
    const recipeOf = (literal: number): RecipeSegment[] => [
      { type: 'literal', bytes: Buffer.from('"'.padEnd(literal, 'k')) },
      { type: 'range', blob: doc.blob, start: 0, length: 8 },
    ];
    const short = w.addRecipe('short.json', recipeOf(RECIPE_GZIP_MIN / 2), { compress: true });
    const long = w.addRecipe('long.json', recipeOf(RECIPE_GZIP_MIN), { compress: true });
    const asked = w.addRecipe('asked.json', recipeOf(RECIPE_GZIP_MIN), { compress: false });
    expect([short.blob.encoding, long.blob.encoding, asked.blob.encoding]).toEqual([Encoding.IDENTITY, Encoding.GZIP, Encoding.IDENTITY]);
    const r = await PackReader.open(w.finish().dir);
    for (const [path, literal] of [['short.json', RECIPE_GZIP_MIN / 2], ['long.json', RECIPE_GZIP_MIN]] as const) {
      const want = Buffer.concat([Buffer.from('"'.padEnd(literal, 'k')), Buffer.from('{"tx":1}')]);
      expect(Buffer.from(await answerBytes((await r.get(path))!)).equals(want)).toBe(true);
    }
    await r.close();
  });
});

describe('rawOfHex', () => {
  it('gives the bytes of exactly lowercase hex text, else undefined', () => {
    const raw = randomBytes(300);
    expect(Buffer.from(rawOfHex(Buffer.from(raw.toString('hex')))!).equals(raw)).toBe(true);
    expect(rawOfHex(Buffer.from(''))).toEqual(new Uint8Array(0));
    const refused = [raw.toString('hex').toUpperCase(), 'abc', '0g', 'ab cd', '00zz', 'ab\n', `${raw.toString('hex')}0`];
    for (const text of refused) expect(rawOfHex(Buffer.from(text)), text).toBeUndefined();
  });
});

describe('recipes on real address documents (demo tree)', () => {
  let tree: string;
  let paths: string[];
  beforeAll(async () => {
    tree = dir('tree');
    await buildSnapshot({ source: demoSource(), outDir: tree });
    paths = readFileSync(join(tree, MANIFEST_PATH), 'utf8').trim().split('\n').map((l) => l.split(' ')[2]!);
  });

  /** Segments of an address document: literals between the verbatim texts of its tx documents. */
  function segmentsOf(doc: Buffer, txBlobs: Map<string, { blob: RecipeSegment & { type: 'range' } }>): { segs: RecipeSegment[]; pieces: Buffer[] } {
    const txids = Object.keys((JSON.parse(doc.toString()) as { transactions: Record<string, unknown> }).transactions);
    const segs: RecipeSegment[] = [];
    const pieces: Buffer[] = [];
    let at = 0;
    const found = txids
      .map((t) => {
        const ref = txBlobs.get(t)!;
        const text = readFileSync(join(tree, `tx/${t}.json`));
        return { ref, at: doc.indexOf(text), text };
      })
      .sort((a, b) => a.at - b.at);
    for (const f of found) {
      expect(f.at).toBeGreaterThanOrEqual(at);
      pieces.push(doc.subarray(at, f.at), f.text);
      segs.push({ type: 'literal', bytes: doc.subarray(at, f.at) }, f.ref.blob);
      at = f.at + f.text.length;
    }
    pieces.push(doc.subarray(at));
    segs.push({ type: 'literal', bytes: doc.subarray(at) });
    return { segs, pieces };
  }

  it('every address document, stored as a recipe over its tx documents, is answered byte for byte', async () => {
    const w = new PackWriter(dir('addr-pack'));
    const txBlobs = new Map<string, { blob: RecipeSegment & { type: 'range' } }>();
    for (const p of paths.filter((q) => !q.startsWith('address/'))) {
      const bytes = readFileSync(join(tree, p));
      const { blob } = w.add(p, bytes);
      const m = /^tx\/([0-9a-f]{64})\.json$/.exec(p);
      if (m) txBlobs.set(m[1]!, { blob: { type: 'range', blob, start: 0, length: bytes.length } });
    }
    const addresses = paths.filter((q) => q.startsWith('address/'));
    expect(addresses.length).toBeGreaterThan(10);
    let embedded = 0;
    let docBytes = 0;
    let multiMember = 0;
    for (const p of addresses) {
      const doc = readFileSync(join(tree, p));
      const { segs, pieces } = segmentsOf(doc, txBlobs);
      embedded += segs.filter((s) => s.type === 'range').length;
      docBytes += doc.length;
      w.addRecipe(p, segs);
      // The gzip members a recipe could be sent as: gzip of each literal, the stored tx blobs between.
      const cat = Buffer.concat(pieces.map((b) => gzipSync(b)));
      multiMember += cat.length;
      // Concatenated members are one valid gzip stream (RFC 1952 §2.2) for zlib.
      expect(gunzipSync(cat).equals(doc), p).toBe(true);
    }
    expect(embedded).toBeGreaterThan(addresses.length - 1);
    const s = w.finish();
    const r = await PackReader.open(s.dir, { slotCache: 0 });
    for (const p of addresses) {
      const a = (await r.get(p))!;
      expect(a.kind).toBe(Kind.RECIPE);
      const got = Buffer.from(await answerBytes(a));
      expect(got.equals(readFileSync(join(tree, p))), p).toBe(true);
      expect(a.size).toBe(got.length);
    }
    expect(await r.verify()).toEqual([]);
    await r.close();
    console.log(`demo address documents: ${addresses.length} docs, ${docBytes} bytes, ${embedded} embedded tx documents; as multi-member gzip ${multiMember} bytes`);
  });
});

describe('bad input is named', () => {
  it('a tree file that differs from its manifest line fails naming the file and the line; nothing is left behind', async () => {
    const tree = dir('tiny');
    writeListedTree(tree, { 'stats.json': '{"a":1}', 'tx/ab.hex': 'abcd', 'tx/ab.bin': '\xab\xcd' });
    writeFileSync(join(tree, 'tx/ab.hex'), 'abce');
    await expect(packFromTree(tree, dir('tiny-pack'))).rejects.toThrow(`${join(tree, 'tx/ab.hex')}: 4 bytes that differ from _manifest.json line 3 (size 4, sha256 `);
    expect(readdirSync(dir('tiny-pack'))).toEqual([]);
    await expect(packFromTree(dir('nowhere'), dir('tiny-pack'))).rejects.toThrow(`${dir('nowhere')}: no _manifest.json; not a finished snapshot tree`);
  });

  it('a file the manifest lists that is not in the tree fails naming it; nothing is left behind', async () => {
    const tree = dir('tiny-gone');
    writeListedTree(tree, { 'stats.json': '{"a":1}', 'tx/ab.hex': 'abcd', 'tx/ab.bin': '\xab\xcd' });
    rmSync(join(tree, 'stats.json'));
    await expect(packFromTree(tree, dir('tiny-gone-pack'))).rejects.toThrow(`${tree}/stats.json: ENOENT`);
    expect(readdirSync(dir('tiny-gone-pack'))).toEqual([]);
  });

  it('a .hex that is not exactly lowercase hex is stored as it is', async () => {
    const tree = dir('tiny-hex');
    writeListedTree(tree, { 'tx/a.hex': 'ABCD', 'tx/b.hex': 'abcd\n', 'tx/c.hex': '00ff' });
    const s = await packFromTree(tree, dir('tiny-hex-pack'));
    expect(s.hexEntries).toBe(1);
    const r = await PackReader.open(dir('tiny-hex-pack'));
    for (const [p, text] of [['tx/a.hex', 'ABCD'], ['tx/b.hex', 'abcd\n'], ['tx/c.hex', '00ff']] as const) {
      expect(Buffer.from(await answerBytes((await r.get(p))!)).toString('latin1')).toBe(text);
    }
    expect((await r.get('tx/c.hex'))!.kind).toBe(Kind.HEX);
    await r.close();
  });

  it('a server that ignores Range is refused by name', async () => {
    const tree = dir('tiny-http');
    writeListedTree(tree, { 'stats.json': '{}' });
    const packDir = dir('tiny-http-pack');
    await packFromTree(tree, packDir);
    const server = createServer((req, res) => {
      const name = new URL(req.url!, 'http://x').pathname.slice(1);
      res.writeHead(200).end(readFileSync(join(packDir, name)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const index = JSON.parse(readFileSync(join(packDir, 'pack.json'), 'utf8')).index as string;
      await expect(PackReader.open(url)).rejects.toThrow(`GET ${url}${index} (Range bytes=0-16383): HTTP 200, expected 206 Partial Content`);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('slices: a tx’s .bin and .hex as a byte range of its block’s .bin (demo tree)', () => {
  it('every main-chain tx of the demo tree is answered from its block’s bytes; a wrong slice fails its CRC', async () => {
    const tree = dir('slice-tree');
    await buildSnapshot({ source: demoSource(), outDir: tree });
    const paths = readFileSync(join(tree, MANIFEST_PATH), 'utf8').trim().split('\n').map((l) => l.split(' ')[2]!);
    const w = new PackWriter(dir('slice-pack'));
    const blocks = new Map<string, ReturnType<PackWriter['add']>['blob']>();
    for (const p of paths.filter((q) => /^block\/[0-9a-f]{64}\.bin$/.test(q))) blocks.set(p.slice(6, 70), w.add(p, readFileSync(join(tree, p))).blob);
    let slices = 0;
    const want = new Map<string, Buffer>();
    for (const p of paths.filter((q) => /^tx\/[0-9a-f]{64}\.bin$/.test(q))) {
      const txid = p.slice(3, 67);
      const raw = readFileSync(join(tree, p));
      const blockHash = (JSON.parse(readFileSync(join(tree, `tx/${txid}.json`), 'utf8')) as { block: string }).block;
      const blockRaw = readFileSync(join(tree, `block/${blockHash}.bin`));
      const at = blockRaw.indexOf(raw);
      expect(at, p).toBeGreaterThan(80); // after the block header
      const slice = { length: raw.length, crc: crc32(raw) };
      w.addSlice(p, blocks.get(blockHash)!, at, slice);
      w.addSlice(`tx/${txid}.hex`, blocks.get(blockHash)!, at, slice, { hex: true });
      want.set(p, raw);
      want.set(`tx/${txid}.hex`, readFileSync(join(tree, `tx/${txid}.hex`)));
      slices++;
    }
    expect(slices).toBeGreaterThan(100);
    const first = [...blocks.values()][0]!;
    expect(() => w.addSlice('x', first, first.stored - 2, { length: 3, crc: 0 })).toThrow(`pack writer: x: bytes ${first.stored - 2}–${first.stored} are outside the ${first.stored}-byte blob they slice`);
    // A slice whose bytes are not where it says: its CRC is of the claimed bytes.
    w.addSlice('wrong.bin', first, 0, { length: 10, crc: crc32(new Uint8Array(10)) });
    const s = w.finish();
    expect(s.blobs).toBe(blocks.size);
    const r = await PackReader.open(s.dir, { slotCache: 0 });
    for (const [p, bytes] of want) {
      const before = r.reads;
      const a = (await r.get(p, { acceptEncoding: 'gzip' }))!;
      expect(r.reads - before).toBe(2);
      expect(Buffer.from(a.bytes!).equals(bytes), p).toBe(true);
    }
    await expect(r.get('wrong.bin')).rejects.toThrow(/\.part: bytes 16–25 fail their CRC-32 \(entry wrong\.bin\)/);
    expect((await r.verify()).filter((m) => m.includes('fail their CRC-32'))).toHaveLength(1);
    await r.close();
  });
});
