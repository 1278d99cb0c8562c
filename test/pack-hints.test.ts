// Recipe hints (src/pack/hints.ts): a pack build makes its address documents' recipes from the
// hints its render threads kept, without reading the documents back, and gets the very pack the
// scan of the tree's files makes (the same index, byte for byte); a hint whose tx range is not
// the document the pack holds is not taken: the file is read and scanned, and answers as it is.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { Encoding, Kind, type RecipeSegment } from '../src/contract/pack-format.js';
import { packFromTree } from '../src/pack/from-tree.js';
import { HintWriter, RecipeHints, type EmbeddedTx } from '../src/pack/hints.js';
import { PackReader } from '../src/pack/reader.js';
import { TxBlobs } from '../src/pack/tx-blobs.js';
import { buildSnapshot } from '../src/site/build.js';
import { packHosts } from '../src/site/build/pack.js';
import { demoSource } from '../src/source/demo.js';
import { tempDir } from './support/memory-builds.js';
import { expectPackAnswersTree, manifestPaths } from './support/pack-compare.js';

const tmp = tempDir('snapshot-pack-hints-');
const ADDRESS = /^address\/[^/]+\.json$/;

const BLOCK = /^block\/[0-9a-f]{64}\.json$/;

/** How many of the pack's address documents (or the documents `which` matches) are recipes. */
async function addressRecipes(packDir: string, paths: readonly string[], which = ADDRESS): Promise<number> {
  const reader = await PackReader.open(packDir);
  try {
    let n = 0;
    for (const p of paths) if (which.test(p) && (await reader.lookup(p))?.kind === Kind.RECIPE) n++;
    return n;
  } finally {
    await reader.close();
  }
}

/**
 * Hints made from a tree's files alone (not by the renderer): each address document cut at the
 * tx documents its `transactions` holds, each found by its file's bytes after its `"<txid>":`.
 */
function hintsOfTree(tree: string, file: string): void {
  const writer = new HintWriter(file);
  for (const path of manifestPaths(tree).filter((p) => ADDRESS.test(p))) {
    const doc = readFileSync(join(tree, path));
    const txids = Object.keys((JSON.parse(doc.toString('utf8')) as { transactions: Record<string, unknown> }).transactions);
    const parts: Buffer[] = [];
    const ids = new Map<Uint8Array, EmbeddedTx>();
    let from = 0;
    for (const txid of txids) {
      const text = readFileSync(join(tree, 'tx', `${txid}.json`));
      const at = doc.indexOf(Buffer.concat([Buffer.from(`"${txid}":`), text]), from);
      if (at < 0) continue;
      const start = at + txid.length + 3;
      parts.push(doc.subarray(from, start), text);
      ids.set(text, { txid, crc: crc32(text) });
      from = start + text.length;
    }
    parts.push(doc.subarray(from));
    for (const _ of writer.recording(path, parts, (p) => ids.get(p))); // taken as a writer takes them
    writer.keep();
  }
  writer.close();
}

describe('recipe hints', () => {
  it('keeps a record only for a document that embeds a tx document, all of whose parts were taken; a path hinted twice has no hint, nor a record too short for its head; a cut file is refused, naming it and the offset', () => {
    const file = tmp('unit.hints');
    const writer = new HintWriter(file);
    const text = Buffer.from(`{"hash":"${'ab'.repeat(32)}","ver":1,"pad":"${'x'.repeat(64)}"}`);
    const txOf = (p: Uint8Array) => (p === text ? { txid: 'ab'.repeat(32), crc: crc32(text) } : undefined);
    const take = (path: string, parts: Uint8Array[], all = true) => {
      const it = writer.recording(path, parts, txOf);
      for (let i = 0; i < (all ? parts.length + 1 : 1); i++) it.next();
      writer.keep();
    };
    take('address/a.json', [Buffer.from('{"x":'), text, Buffer.from('}')]);
    take('address/literal.json', [Buffer.from('{"x":1}')]);
    take('address/cut.json', [Buffer.from('{"x":'), text, Buffer.from('}')], false);
    take('address/b.json', [text]);
    take('address/twice.json', [text]);
    take('address/twice.json', [text]);
    writer.close();
    const hints = new RecipeHints([file]);
    expect(['a', 'literal', 'cut', 'b', 'twice'].map((n) => hints.has(`address/${n}.json`))).toEqual([true, false, false, true, false]);
    hints.close();
    const bytes = readFileSync(file);
    // A first record cut inside its document size (its length says so): no hint, and no throw.
    const name = 2 + bytes.readUInt16LE(4);
    const short = Buffer.from(bytes.subarray(0, 4 + name + 4));
    short.writeUInt32LE(name + 4, 0);
    writeFileSync(file, Buffer.concat([short, bytes.subarray(4 + bytes.readUInt32LE(0))]));
    const hints2 = new RecipeHints([file]);
    expect(hints2.has('address/a.json')).toBe(true);
    expect(hints2.segments('address/a.json', 0, new TxBlobs())).toBeUndefined();
    hints2.close();
    writeFileSync(file, bytes.subarray(0, bytes.length - 3));
    expect(() => new RecipeHints([file])).toThrow(`${file}: ${bytes.length - 3} bytes, its last record cut short at offset`);
  });

  it("records the bytes a document takes from its previous version as ranges of it, and makes them the previous answer's segments, clipped, only when that answer is the size the hint says", () => {
    const file = tmp('previous.hints');
    const writer = new HintWriter(file);
    const txid = 'cd'.repeat(32);
    const text = Buffer.from(`{"hash":"${txid}","ver":1,"pad":"${'y'.repeat(64)}"}`);
    // The previous version in a larger buffer (as a pooled read gives it), and a literal sharing that buffer outside its range.
    const pool = Buffer.from(`LITERAL|{"a":[1,2],"b":{"k":"v"}}|`);
    const previous = pool.subarray(8, pool.length - 1);
    const parts = [Buffer.from('{"a":[1,2,3],'), previous.subarray(7, 20), pool.subarray(0, 7), Buffer.from(','), text, previous.subarray(20)];
    for (const _ of writer.recording('address/p.json', parts, (p) => (p === text ? { txid, crc: crc32(text) } : undefined), previous));
    writer.keep();
    writer.close();
    const doc = Buffer.concat(parts);
    const hints = new RecipeHints([file]);
    expect(hints.needs('address/p.json')).toEqual({ txids: [txid], previous: previous.length });
    const txs = new TxBlobs();
    const blob = { part: 0, offset: 1000, stored: text.length, encoding: Encoding.IDENTITY, crc: crc32(text) };
    txs.setDoc(txid, { blob, size: text.length, sha: 0, crc: crc32(text), prefix: 0, prefixCrc: 0, early: false });
    // The previous answer as a recipe: a literal, a range of a stored blob, a literal.
    const old = { part: 0, offset: 0, stored: 64, encoding: Encoding.IDENTITY, crc: 7 };
    const before: RecipeSegment[] = [{ type: 'literal', bytes: previous.subarray(0, 10) }, { type: 'range', blob: old, start: 5, length: 12 }, { type: 'literal', bytes: previous.subarray(22) }];
    const segs = hints.segments('address/p.json', doc.length, txs, before)!;
    const spell = (list: RecipeSegment[]) => list.map((x) => (x.type === 'literal' ? x.bytes.toString() : `<${x.blob.offset}+${x.start},${x.length}>`)).join('');
    // Bytes 10..22 of the previous answer are its range [5, 17) of the old blob.
    expect(spell(segs)).toBe(`{"a":[1,2,3],${previous.subarray(7, 10)}<0+5,10>LITERAL,<1000+0,${text.length}><0+15,2>${previous.subarray(22)}`);
    expect(segs.filter((x, i) => x.type === 'literal' && segs[i + 1]?.type === 'literal')).toEqual([]);
    expect(hints.segments('address/p.json', doc.length, txs)).toBeUndefined();
    expect(hints.segments('address/p.json', doc.length, txs, before.slice(0, 2))).toBeUndefined();
    hints.close();
    // A damaged copied run (outside the previous version): no recipe.
    const bytes = readFileSync(file);
    const run = 4 + 2 + 'address/p.json'.length + 8 + 5 + '{"a":[1,2,3],'.length;
    expect([bytes[run], bytes.readDoubleLE(run + 1), bytes.readDoubleLE(run + 9)]).toEqual([2, previous.length, 7]);
    for (const start of [-1, previous.length - 12]) {
      bytes.writeDoubleLE(start, run + 9);
      writeFileSync(file, bytes);
      const damaged = new RecipeHints([file]);
      expect(damaged.segments('address/p.json', doc.length, txs, before), String(start)).toBeUndefined();
      damaged.close();
    }
  });

  it('reads records through a window in any order, one larger than the window alone, and gives each document back whole', () => {
    const file = tmp('window.hints');
    const writer = new HintWriter(file);
    const txid = 'ef'.repeat(32);
    const text = Buffer.from(`{"hash":"${txid}","ver":2,"pad":"${'z'.repeat(80)}"}`);
    const docs = new Map<string, Buffer[]>();
    for (let i = 0; i < 3000; i++) {
      // Sizes vary so that records straddle the window's end; one is larger than the window (1 MiB).
      const literal = Buffer.from(`{"n":${i},"fill":"${'abcdefgh'.repeat(i === 1500 ? 200_000 : 60 + (i % 97))}","tx":`);
      docs.set(`address/w${i}.json`, [literal, text, Buffer.from(`,"i":${i}}`)]);
    }
    for (const [path, parts] of docs) {
      for (const _ of writer.recording(path, parts, (p) => (p === text ? { txid, crc: crc32(text) } : undefined)));
      writer.keep();
    }
    writer.close();
    expect(readFileSync(file).length).toBeGreaterThan(4 << 20);
    const txs = new TxBlobs();
    const blob = { part: 0, offset: 0, stored: text.length, encoding: Encoding.IDENTITY, crc: crc32(text) };
    txs.setDoc(txid, { blob, size: text.length, sha: 0, crc: crc32(text), prefix: 0, prefixCrc: 0, early: false });
    const paths = [...docs.keys()];
    // Forward, backward, and a fixed shuffle.
    const shuffled = paths.map((p, i) => [(i * 7919) % paths.length, p] as const).sort((a, b) => a[0] - b[0]).map(([, p]) => p);
    for (const order of [paths, [...paths].reverse(), shuffled]) {
      const hints = new RecipeHints([file]);
      for (const path of order) {
        const want = Buffer.concat(docs.get(path)!);
        const segs = hints.segments(path, want.length, txs);
        expect(segs, path).toBeDefined();
        const got = Buffer.concat(segs!.map((x) => (x.type === 'literal' ? x.bytes : text.subarray(x.start, x.start + x.length))));
        if (!got.equals(want)) expect(got.toString(), path).toBe(want.toString());
      }
      hints.close();
    }
  });

  it('a pack build takes every address and block recipe from its hints (threads and main thread), and its pack is the one the scan of the same tree makes', async () => {
    for (const [label, renderThreadsAbove] of [['threads', 0], ['main thread', undefined]] as const) {
      const out = tmp(`build-${label}`);
      const report = await buildSnapshot({ source: demoSource(), outDir: out, format: 'pack', height: 120 }, { renderThreadsAbove });
      const tree = join(tmp(`build-${label}.state`), 'tree');
      // Its private tree lists the address documents without them (made from their hints alone):
      // the reference is the tree build of the same chain and hosts, scanned.
      const whole = tmp(`tree-${label}`);
      await buildSnapshot({ source: demoSource(), outDir: whole, height: 120, hosts: packHosts(undefined) }, { renderThreadsAbove });
      expect(readFileSync(join(whole, MANIFEST_PATH)).equals(readFileSync(join(tree, MANIFEST_PATH)))).toBe(true);
      expect(manifestPaths(tree).filter((p) => p.startsWith('address/') && existsSync(join(tree, p)))).toEqual([]);
      const scanned = await packFromTree(whole, tmp(`scanned-${label}`), { withManifest: true });
      expect(scanned.hinted).toBe(0);
      expect(report.pack!.index, label).toBe(scanned.index);
      const recipes = await addressRecipes(out, manifestPaths(tree));
      const blocks = await addressRecipes(out, manifestPaths(tree), BLOCK);
      expect(recipes).toBeGreaterThan(0);
      expect(blocks).toBeGreaterThan(100);
      expect(report.pack!.hinted, label).toBe(recipes + blocks);
    }
  }, 240_000);

  it('a hint whose tx range is not the document the pack holds, or a damaged one, is not taken: the document is read and answers as the file is', async () => {
    const tree = tmp('tree');
    await buildSnapshot({ source: demoSource(), outDir: tree, height: 120 });
    const hints = tmp('tree.hints');
    hintsOfTree(tree, hints);
    const paths = manifestPaths(tree);
    const plain = await packFromTree(tree, tmp('plain'));
    const hinted = await packFromTree(tree, tmp('hinted'), { hints: [hints] });
    expect(hinted.index).toBe(plain.index);
    expect(hinted.hinted).toBe(await addressRecipes(tmp('plain'), paths));
    // With hints the read thread makes the manifest's chunks: they are checked against the
    // sha256 the build wrote the manifest with as the main thread's are.
    const manifestSha = createHash('sha256').update(readFileSync(join(tree, MANIFEST_PATH))).digest('hex');
    const otherSha = manifestSha.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    await expect(packFromTree(tree, tmp('other-sha'), { hints: [hints], withManifest: true, manifestSha256: otherSha })).rejects.toThrow(`${join(tree, MANIFEST_PATH)} changed while the tree was packed`);
    expect(existsSync(join(tmp('other-sha'), 'pack.json'))).toBe(false);

    // Damaged records: the first's last literal one byte shorter (the byte left over reads as
    // the head of a literal segment cut short), the second's first literal one byte longer. No
    // recipe from either (no throw), and the same pack.
    const damaged = tmp('damaged.hints');
    const h = readFileSync(hints);
    const second = 4 + h.readUInt32LE(0);
    const lastLiteral = h.lastIndexOf(Buffer.from([0, 2, 0, 0, 0, 0x7d, 0x7d]), second - 1); // `}}` ends an address document
    expect(lastLiteral).toBe(second - 7);
    h.writeUInt32LE(1, lastLiteral + 1);
    h[second - 1] = 0;
    const firstLiteral = second + 4 + 2 + h.readUInt16LE(second + 4) + 8;
    expect(h[firstLiteral]).toBe(0);
    h.writeUInt32LE(h.readUInt32LE(firstLiteral + 1) + 1, firstLiteral + 1);
    writeFileSync(damaged, h);
    const fromDamaged = await packFromTree(tree, tmp('from-damaged'), { hints: [damaged] });
    expect(fromDamaged.hinted).toBe(hinted.hinted - 2);
    expect(fromDamaged.index).toBe(plain.index);

    // The tree lists the first damaged record's document without its file (as a pack build's
    // private tree lists its address documents): nothing gives its bytes, the pack is not made.
    const listed = tmp('listed');
    cpSync(tree, listed, { recursive: true, dereference: true });
    const firstPath = h.toString('utf8', 6, 6 + h.readUInt16LE(4));
    expect(firstPath).toMatch(ADDRESS);
    rmSync(join(listed, firstPath));
    const lineNo = manifestPaths(listed).indexOf(firstPath) + 1;
    await expect(packFromTree(listed, tmp('from-listed'), { hints: [damaged] })).rejects.toThrow(
      `${join(listed, firstPath)}: listed in ${MANIFEST_PATH} (line ${lineNo}) without a file, and neither its recipe hint nor the pack in ${tmp('from-listed')} gives its bytes`,
    );
    expect(existsSync(join(tmp('from-listed'), 'pack.json'))).toBe(false);
    // With its hint whole, the same tree packs: the document is its recipe.
    expect((await packFromTree(listed, tmp('from-listed-hinted'), { hints: [hints] })).index).toBe(plain.index);

    // One tx document changed in place (same size, manifest updated): the address documents
    // still embed its old bytes, which their hints' CRC-32 is of.
    const altered = tmp('altered');
    cpSync(tree, altered, { recursive: true, dereference: true }); // the tree is a link to its release
    const doc = readFileSync(join(altered, paths.find((p) => ADDRESS.test(p))!), 'utf8');
    const txid = Object.keys((JSON.parse(doc) as { transactions: Record<string, unknown> }).transactions)[0]!;
    const txPath = `tx/${txid}.json`;
    const bytes = readFileSync(join(altered, txPath));
    const at = bytes.indexOf('"ver":1') + 6;
    bytes[at] = 0x32; // "ver":2
    writeFileSync(join(altered, txPath), bytes);
    // And its raw file changed too: not a slice of its block's bytes any more, it is read and
    // stored as it is (a fresh pack with hints takes the tx raw files' lines in its second pass).
    const rawPath = `tx/${txid}.bin`;
    const raw = readFileSync(join(altered, rawPath));
    raw[raw.length - 1] = raw[raw.length - 1]! ^ 1;
    writeFileSync(join(altered, rawPath), raw);
    const shaOf = new Map([
      [txPath, createHash('sha256').update(bytes).digest('hex')],
      [rawPath, createHash('sha256').update(raw).digest('hex')],
    ]);
    const manifest = readFileSync(join(altered, MANIFEST_PATH), 'utf8').replace(/^[0-9a-f]{64} (\d+) (\S+)$/gm, (line, size: string, p: string) =>
      shaOf.has(p) ? `${shaOf.get(p)} ${size} ${p}` : line,
    );
    writeFileSync(join(altered, MANIFEST_PATH), manifest);
    const s = await packFromTree(altered, tmp('altered-pack'), { hints: [hints], withManifest: true });
    expect(s.hinted).toBeLessThan(hinted.hinted);
    expect(s.slices).toBe(hinted.slices - 1);
    await expectPackAnswersTree(tmp('altered-pack'), altered);
  }, 240_000);
});
