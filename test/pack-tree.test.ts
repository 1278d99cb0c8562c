// A pack made from a built tree answers every file of the tree's manifest byte for byte (plain,
// and as stored gzip when the client accepts it), from a directory and over HTTP Range, with at
// most 2 range reads per lookup once the root is read; absent paths are absent; a damaged byte
// is named by file and offset. Trees: the demo chain and Bitcoin mainnet 0–599 (../shared).
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 as zcrc32, gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { Encoding, Kind, PACK_POINTER, packKey, slotOf } from '../src/contract/pack-format.js';
import { COALESCE_BYTES, COALESCE_GAP } from '../src/contract/pack-reader.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { packFromTree, type FromTreeSummary } from '../src/pack/from-tree.js';
import { MANIFEST_CHUNK_LINES, manifestChunks } from '../src/pack/manifest-chunks.js';
import { answerBytes, DirSource, PackCorruptError, PackReader } from '../src/pack/reader.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { memorySource } from '../src/source/memory.js';
import { framedBlocks, readChain } from './support/helpers.js';
import { tempDir } from './support/memory-builds.js';
import { describeShared } from './support/shared-data.js';
import { rangeServer } from './support/range-server.js';
import { recipeOf, recipeReads } from './support/pack-compare.js';


interface Line {
  path: string;
  size: number;
}

function manifestLines(tree: string): Line[] {
  return readFileSync(join(tree, MANIFEST_PATH), 'utf8')
    .trim()
    .split('\n')
    .map((l) => {
      const [, size, path] = l.split(' ') as [string, string, string];
      return { path, size: Number(size) };
    });
}

/** Bytes of the pack directory (what a host stores). */
function dirBytes(dir: string): number {
  return readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

/**
 * Every file of the manifest through `reader`: plain and gzip-accepted answers equal the tree's
 * bytes. Counts the range reads of each answer, read to its end: the largest for stored and hex
 * entries; for recipes, with `recipes` (another reader of the pack, for decoding them), each
 * must take exactly the reads the format's coalescing rule gives (recipeReads).
 */
async function expectEveryFile(
  reader: PackReader,
  tree: string,
  lines: Line[],
  alternate = false,
  recipes?: PackReader,
): Promise<{ maxReads: number; gzipAnswers: number; recipeAnswers: number; recipeReads: number[]; uncoalesced: number }> {
  let maxReads = 0;
  let gzipAnswers = 0;
  const recipeReadCounts: number[] = [];
  let uncoalesced = 0;
  for (const [i, { path }] of lines.entries()) {
    const want = readFileSync(join(tree, path));
    if (!alternate || i % 2 === 0) {
      const before = reader.reads;
      const plain = await reader.get(path);
      expect(plain, path).toBeDefined();
      expect(plain!.contentEncoding).toBe('identity');
      const got = Buffer.from(await answerBytes(plain!));
      const reads = reader.reads - before;
      if (plain!.kind === Kind.RECIPE) {
        recipeReadCounts.push(reads);
        if (recipes) {
          const segs = await recipeOf(recipes, path);
          expect(reads, path).toBe(recipeReads(segs, COALESCE_GAP, COALESCE_BYTES));
          uncoalesced += 2 + segs.filter((x) => x.type === 'range').length;
        }
      } else maxReads = Math.max(maxReads, reads);
      if (!got.equals(want)) expect(got.toString('latin1'), path).toBe(want.toString('latin1'));
      expect(plain!.size, path).toBe(want.length);
    }
    const before = reader.reads;
    const zipped = await reader.get(path, { acceptEncoding: 'br, gzip;q=0.8, deflate' });
    expect(zipped, path).toBeDefined();
    const zbytes = await answerBytes(zipped!);
    if (zipped!.kind !== Kind.RECIPE) maxReads = Math.max(maxReads, reader.reads - before);
    expect(zipped!.size, path).toBe(zbytes.length);
    if (zipped!.contentEncoding === 'gzip') {
      gzipAnswers++;
      expect(gunzipSync(zbytes).equals(want), path).toBe(true);
    } else expect(Buffer.from(zbytes).equals(want), path).toBe(true);
  }
  const recipeAnswers = recipeReadCounts.length;
  return { maxReads, gzipAnswers, recipeAnswers, recipeReads: recipeReadCounts, uncoalesced };
}

/** `suite`: vitest's `describe`, or `describeShared(…)` for a tree built from ../shared. */
function packSuite(title: string, suite: typeof describe, buildTree: (out: string) => Promise<unknown>) {
  suite(title, () => {
    const dir = tempDir('snapshot-pack-');
    let tree: string;
    let packDir: string;
    let lines: Line[];
    let summary: FromTreeSummary;

    beforeAll(async () => {
      tree = dir('tree');
      packDir = dir('pack');
      await buildTree(tree);
      lines = manifestLines(tree);
      summary = await packFromTree(tree, packDir);
    });

    it('holds every manifest file; identical files share a blob; .hex files are derived from their .bin', () => {
      expect(summary.files).toBe(lines.length);
      expect(summary.entries).toBe(lines.length);
      expect(summary.treeBytes).toBe(lines.reduce((n, l) => n + l.size, 0));
      const hexFiles = lines.filter((l) => /^(tx|block)\/[0-9a-f]{64}\.hex$/.test(l.path)).length;
      expect(hexFiles).toBeGreaterThan(0);
      expect(summary.hexEntries).toBe(hexFiles);
      // A .hex shares its .bin's blob: at least one blob fewer per .hex, and name variants/errors dedup.
      expect(summary.blobs).toBeLessThanOrEqual(lines.length - hexFiles);
      const packBytes = dirBytes(packDir);
      console.log(
        `${title}: ${lines.length} files, tree ${summary.treeBytes} bytes, pack ${packBytes} bytes ` +
          `(${(packBytes / summary.treeBytes).toFixed(3)}; index ${summary.indexBytes}, ${summary.parts.length} part(s)), ${summary.blobs} blobs, ` +
          `${2 ** summary.bucketBits} slots of ${summary.slotCapacity}`,
      );
      expect(packBytes).toBeLessThan(summary.treeBytes);
    });

    it('is deterministic: the same tree packed again gives the same files, byte for byte', async () => {
      const again = dir('again');
      const s2 = await packFromTree(tree, again);
      expect(s2.index).toBe(summary.index);
      const files = readdirSync(packDir).sort();
      expect(readdirSync(again).sort()).toEqual(files);
      for (const f of files) expect(readFileSync(join(again, f)).equals(readFileSync(join(packDir, f))), f).toBe(true);
    });

    it('a tx .bin or .hex that is not the slice of its block (by its manifest line) is stored as the file is', async () => {
      const altered = dir('altered');
      cpSync(tree, altered, { recursive: true, dereference: true }); // the tree is a link to its release: its files are copied
      const bin = lines.find((l) => /^tx\/[0-9a-f]{64}\.bin$/.test(l.path))!.path;
      const hex = lines.filter((l) => /^tx\/[0-9a-f]{64}\.hex$/.test(l.path)).at(-1)!.path;
      // Same sizes: one byte of the .bin flipped; the .hex in upper case (not what a .bin spells).
      const binBytes = readFileSync(join(altered, bin));
      binBytes[binBytes.length - 1]! ^= 0xff;
      const hexText = readFileSync(join(altered, hex), 'latin1').toUpperCase();
      const edits = new Map<string, Buffer>([
        [bin, binBytes],
        [hex, Buffer.from(hexText, 'latin1')],
      ]);
      for (const [p, b] of edits) writeFileSync(join(altered, p), b);
      const manifest = readFileSync(join(altered, MANIFEST_PATH), 'utf8').replace(/^[0-9a-f]{64} (\d+) (\S+)$/gm, (line, size: string, p: string) => {
        const b = edits.get(p);
        return b ? `${createHash('sha256').update(b).digest('hex')} ${size} ${p}` : line;
      });
      writeFileSync(join(altered, MANIFEST_PATH), manifest);
      const s = await packFromTree(altered, dir('altered-pack'));
      expect(s.slices).toBe(summary.slices - 2);
      const reader = await PackReader.open(s.dir);
      try {
        for (const [p, b] of edits) expect(Buffer.from(await answerBytes((await reader.get(p))!)).equals(b), p).toBe(true);
        expect(await reader.verify()).toEqual([]);
      } finally {
        await reader.close();
      }
    });

    it("a tree listing its txs' .bin and .hex without the files (a pack build's private tree) packs the same pack; appended, a listed file its block does not give is its previous answer, checked by its line", async () => {
      const listed = dir('listed');
      cpSync(tree, listed, { recursive: true, dereference: true });
      const raw = lines.filter((l) => /^tx\/[0-9a-f]{64}\.(bin|hex)$/.test(l.path)).map((l) => l.path);
      expect(raw.length).toBeGreaterThan(100);
      for (const p of raw) rmSync(join(listed, p));
      // Fresh: every one is a slice of its block's `.bin`, the pack the same as the full tree's, byte for byte.
      const fresh = await packFromTree(listed, dir('listed-pack'));
      expect(fresh.index).toBe(summary.index);
      for (const f of readdirSync(packDir)) expect(readFileSync(join(fresh.dir, f)).equals(readFileSync(join(packDir, f))), f).toBe(true);

      // Appended with the build's changed paths naming one tx's files alone (its block kept unread): their previous answers.
      const [bin, hex] = [raw.find((p) => p.endsWith('.bin'))!, raw.find((p) => p.endsWith('.hex'))!];
      const appended = dir('listed-appended');
      cpSync(packDir, appended, { recursive: true });
      const s2 = await packFromTree(listed, appended, { changed: new Set([bin, hex]) });
      expect(s2.reused).toBe(lines.length);
      const reader = await PackReader.open(appended);
      try {
        for (const p of [bin, hex]) expect(Buffer.from(await answerBytes((await reader.get(p))!)).equals(readFileSync(join(tree, p))), p).toBe(true);
        expect(await reader.verify()).toEqual([]);
      } finally {
        await reader.close();
      }

      // A listed line whose bytes neither a block packed now nor the previous pack holds: named, no pack written.
      const manifest = readFileSync(join(listed, MANIFEST_PATH), 'utf8');
      const at = manifest.indexOf(` ${bin}\n`);
      const lineStart = manifest.lastIndexOf('\n', at) + 1;
      writeFileSync(join(listed, MANIFEST_PATH), manifest.slice(0, lineStart) + '0'.repeat(64) + manifest.slice(lineStart + 64));
      const wrong = dir('listed-wrong');
      cpSync(packDir, wrong, { recursive: true });
      const pointer = readFileSync(join(wrong, PACK_POINTER));
      await expect(packFromTree(listed, wrong, { changed: new Set([bin]) })).rejects.toThrow(`${join(listed, bin)}: listed in ${MANIFEST_PATH}`);
      expect(readFileSync(join(wrong, PACK_POINTER)).equals(pointer)).toBe(true);
    });

    it('answers every file byte for byte from the directory, ≤ 2 range reads per lookup after the root', async () => {
      const reader = await PackReader.open(packDir, { slotCache: 0 });
      try {
        expect(reader.reads).toBe(2); // pack.json and the first 16 KiB of the index
        const decoder = await PackReader.open(packDir);
        const r = await expectEveryFile(reader, tree, lines, false, decoder);
        await decoder.close();
        expect(r.maxReads).toBeLessThanOrEqual(2);
        expect(r.gzipAnswers).toBeGreaterThan(0);
        // Address and block documents are recipes; nearby tx documents are fetched together.
        expect(r.recipeAnswers).toBeGreaterThan(0);
        const total = r.recipeReads.reduce((a, b) => a + b, 0);
        expect(total).toBeLessThan(r.uncoalesced);
        const sorted = [...r.recipeReads].sort((a, b) => a - b);
        console.log(
          `${title}: ${lines.length} lookups × 2 encodings, at most ${r.maxReads} range reads each for stored and hex entries (slot cache off); ` +
            `${r.recipeAnswers} recipe answers: reads min ${sorted[0]} / median ${sorted[sorted.length >> 1]} / p90 ${sorted[Math.floor(sorted.length * 0.9)]} / max ${sorted.at(-1)}, ` +
            `${total} in all against ${r.uncoalesced} uncoalesced`,
        );
      } finally {
        await reader.close();
      }
    });

    it('read with blocking reads (syncReads): the same answers with the same range reads; with decoded blobs kept, fewer; a missing part is named', async () => {
      const sync = await PackReader.open(packDir, { slotCache: 0, syncReads: true });
      const plain = await PackReader.open(packDir, { slotCache: 0 });
      try {
        expect([(sync.source as DirSource).sync, (plain.source as DirSource).sync]).toEqual([true, false]);
        const a = await expectEveryFile(sync, tree, lines);
        const b = await expectEveryFile(plain, tree, lines);
        expect(a).toEqual(b);
        expect(sync.reads).toBe(plain.reads);
        expect(sync.bytesRead).toBe(plain.bytesRead);
        expect(await sync.verify()).toEqual([]);
      } finally {
        await sync.close();
        await plain.close();
      }
      // Decoded blobs kept for the recipes that name them again: the same answers, fewer reads.
      const cached = await PackReader.open(packDir, { slotCache: 0, syncReads: true, decodedCache: 1 << 24 });
      const uncached = await PackReader.open(packDir, { slotCache: 0, syncReads: true });
      try {
        const recipes = lines.filter((l) => /^(address|block)\//.test(l.path));
        const c = await expectEveryFile(cached, tree, recipes);
        const u = await expectEveryFile(uncached, tree, recipes);
        expect(c.recipeAnswers).toBe(u.recipeAnswers);
        expect(c.recipeAnswers).toBeGreaterThan(0);
        expect(cached.reads).toBeLessThan(uncached.reads);
        expect(cached.bytesRead).toBeLessThan(uncached.bytesRead);
      } finally {
        await cached.close();
        await uncached.close();
      }
      const gone = dir('part-gone');
      cpSync(packDir, gone, { recursive: true });
      const reader = await PackReader.open(gone, { syncReads: true });
      try {
        const part = reader.parts[0]!.name;
        rmSync(join(gone, part));
        const target = lines.find((l) => l.path.startsWith('tx/'))!.path;
        await expect(reader.get(target)).rejects.toThrow(join(gone, part));
      } finally {
        await reader.close();
      }
    });

    it('gzipCrc: a gzip blob’s trailer gives the CRC-32 of its decoded bytes; an identity blob or another size gives none', async () => {
      const reader = await PackReader.open(packDir);
      try {
        let gzip = 0;
        for (const { path } of lines.filter((l) => l.path.startsWith('tx/') || l.path.startsWith('name/'))) {
          const rec = (await reader.lookup(path))!;
          const crc = await reader.gzipCrc(rec, rec.size);
          if (rec.encoding !== Encoding.GZIP) {
            expect(crc, path).toBeUndefined();
            continue;
          }
          gzip++;
          expect(crc, path).toBe(zcrc32(readFileSync(join(tree, path))));
          expect(await reader.gzipCrc(rec, rec.size + 1), path).toBeUndefined();
        }
        expect(gzip).toBeGreaterThan(0);
      } finally {
        await reader.close();
      }
    });

    it('a lookup whose slot is cached costs one read; absent paths are undefined', async () => {
      const reader = await PackReader.open(packDir);
      try {
        const p = lines.find((l) => l.path.startsWith('tx/'))!.path;
        await reader.get(p);
        const before = reader.reads;
        await reader.get(p);
        expect(reader.reads - before).toBe(1);
        const absent = [
          `tx/${'0'.repeat(64)}.json`,
          `block/${'f'.repeat(64)}.bin`,
          'address/1BitcoinEaterAddressDontSendf59kuE.json',
          `${p}.gz`,
          p.toUpperCase(),
          '',
          MANIFEST_PATH,
        ];
        for (const a of absent) {
          const r0 = reader.reads;
          expect(await reader.get(a), a).toBeUndefined();
          expect(reader.reads - r0).toBeLessThanOrEqual(1);
        }
      } finally {
        await reader.close();
      }
    });

    it('over HTTP Range (a local static server) gives the same answers', async () => {
      const { url, server, requests } = await rangeServer(packDir);
      try {
        const reader = await PackReader.open(url, { slotCache: 0 });
        // One request a file: plain for half of them, gzip accepted for the other half.
        const { maxReads, gzipAnswers } = await expectEveryFile(reader, tree, lines, true);
        expect(maxReads).toBeLessThanOrEqual(2);
        expect(gzipAnswers).toBeGreaterThan(0);
        // Every counted read was one HTTP request (plus none uncounted).
        expect(requests()).toBe(reader.reads);
        expect(await reader.get(`tx/${'0'.repeat(64)}.json`)).toBeUndefined();
        await reader.close();
      } finally {
        await new Promise((r) => server.close(r));
      }
    }, 180_000);

    it('a damaged byte of a part is named by part file and offset (get and verify)', async () => {
      const damaged = dir('damaged');
      cpSync(packDir, damaged, { recursive: true });
      const probe = await PackReader.open(damaged);
      const target = lines.find((l) => l.path.startsWith('block/') && l.path.endsWith('.json'))!.path;
      const rec = (await probe.lookup(target))!;
      expect(await probe.verify()).toEqual([]);
      await probe.close();
      const part = probe.parts[rec.part]!.name;
      const file = join(damaged, part);
      const bytes = readFileSync(file);
      const at = rec.offset + Math.floor(rec.stored / 2);
      bytes[at]! ^= 0x20;
      writeFileSync(file, bytes);
      const reader = await PackReader.open(damaged);
      try {
        const err = await reader.get(target).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(PackCorruptError);
        expect((err as Error).message).toBe(`${file}: bytes ${rec.offset}–${rec.offset + rec.stored - 1} fail their CRC-32 (entry ${target})`);
        const problems = await reader.verify();
        expect(problems).toContain(`${file}: sha256 differs from the part table's`);
        expect(problems.some((p) => p.startsWith(`${file}: bytes ${rec.offset}–${rec.offset + rec.stored - 1} fail their CRC-32`))).toBe(true);
        expect(problems).toHaveLength(2);
      } finally {
        await reader.close();
      }
    });

    it('a damaged byte of a directory slot is named by index file and slot offset', async () => {
      const damaged = dir('damaged-index');
      cpSync(packDir, damaged, { recursive: true });
      const index = JSON.parse(readFileSync(join(damaged, PACK_POINTER), 'utf8')).index as string;
      const reader0 = await PackReader.open(damaged);
      const h = reader0.header;
      await reader0.close();
      const bytes = readFileSync(join(damaged, index));
      const slotBytes = 8 + h.slotCapacity * 40;
      // Damage the first record of slot 0 (every slot of these trees holds records).
      bytes[h.slotsOffset + 8 + 3]! ^= 1;
      writeFileSync(join(damaged, index), bytes);
      const reader = await PackReader.open(damaged);
      try {
        const inSlot0 = lines.find((l) => slotOf(packKey(l.path), h.bucketBits) === 0)!.path;
        await expect(reader.get(inSlot0)).rejects.toThrow(
          `${join(damaged, index)} at offset ${h.slotsOffset}: directory slot checksum mismatch (slot bytes ${h.slotsOffset}–${h.slotsOffset + slotBytes - 1} are damaged)`,
        );
      } finally {
        await reader.close();
      }
    });

    it('a re-run on a changed tree appends a part and a new index; old parts are never rewritten', async () => {
      // A copy of the tree with one file changed and one added, and its manifest to match.
      const tree2 = dir('tree2');
      mkdirSync(tree2);
      const changed = lines.find((l) => l.path.startsWith('address/'))!.path;
      const added = 'errors/extra.json';
      const out: string[] = [];
      const manifestText = new Map(readFileSync(join(tree, MANIFEST_PATH), 'utf8').trim().split('\n').map((m) => [m.slice(m.lastIndexOf(' ') + 1), m]));
      const put = (path: string, b: Buffer) => {
        mkdirSync(join(tree2, path, '..'), { recursive: true });
        writeFileSync(join(tree2, path), b);
        out.push(`${createHash('sha256').update(b).digest('hex')} ${b.length} ${path}`);
      };
      for (const l of [...lines, { path: added, size: 0 }].sort((a, b) => (a.path < b.path ? -1 : 1))) {
        if (l.path === added) put(added, Buffer.from('{"error":"extra"}'));
        else if (l.path === changed) put(changed, Buffer.concat([readFileSync(join(tree, changed)).subarray(0, -1), Buffer.from(',"x":1}')]));
        else {
          mkdirSync(join(tree2, l.path, '..'), { recursive: true });
          copyFileSync(join(tree, l.path), join(tree2, l.path));
          out.push(manifestText.get(l.path)!);
        }
      }
      writeFileSync(join(tree2, MANIFEST_PATH), out.join('\n') + '\n');

      const appended = dir('appended');
      cpSync(packDir, appended, { recursive: true });
      const before = new Map(readdirSync(appended).map((f) => [f, readFileSync(join(appended, f))]));
      const oldIndex = JSON.parse(before.get(PACK_POINTER)!.toString()).index as string;
      const s2 = await packFromTree(tree2, appended);
      expect(s2.reused).toBe(lines.length - 1);
      expect(s2.newParts).toHaveLength(1);
      expect(s2.parts.map((p) => p.name).slice(0, summary.parts.length)).toEqual(summary.parts.map((p) => p.name));
      // Only the changed and the added file were written (each maybe gzip), plus the new part's header.
      expect(s2.parts.at(-1)!.size).toBeLessThan(16 + readFileSync(join(tree2, changed)).length + 100);
      for (const [f, b] of before) if (f !== PACK_POINTER) expect(readFileSync(join(appended, f)).equals(b), f).toBe(true);
      expect(JSON.parse(readFileSync(join(appended, PACK_POINTER), 'utf8')).index).not.toBe(oldIndex);

      const reader = await PackReader.open(appended);
      try {
        expect(reader.header.generation).toBe(2);
        await expectEveryFile(reader, tree2, manifestLines(tree2));
        expect(await reader.verify()).toEqual([]);
      } finally {
        await reader.close();
      }
    });
  });
}

packSuite('pack of the demo tree', describe, (out) => buildSnapshot({ source: demoSource(), outDir: out }));

packSuite('pack of the Bitcoin mainnet 0–599 tree', describeShared('chaindata/nbitcoin'), (out) => {
  const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
  return buildSnapshot({ source: memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin blk files'), outDir: out });
});

describe('the manifest of a packed tree', () => {
  const dir = tempDir('snapshot-pack-manifest-');
  /** A tree of `files` with its manifest (sha256 by node:crypto), and `edit` applied to the manifest's text. */
  const smallTree = (name: string, files: Record<string, string>, edit = (text: string) => text) => {
    const tree = dir(name);
    const lines = Object.entries(files)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([path, text]) => {
        mkdirSync(join(tree, path, '..'), { recursive: true });
        writeFileSync(join(tree, path), text);
        return `${createHash('sha256').update(text).digest('hex')} ${Buffer.byteLength(text)} ${path}\n`;
      });
    writeFileSync(join(tree, MANIFEST_PATH), edit(lines.join('')));
    return tree;
  };
  const files = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`name/n${String(i).padStart(4, '0')}.json`, `{"name":"n${i}","value":"${'v'.repeat(i % 300)}"}`]));

  /** 32-bit FNV-1a, as the chunks are cut by (docs/pack-format.md). */
  const fnv = (b: Buffer) => b.reduce((h, c) => Math.imul(h ^ c, 0x01000193) >>> 0, 0x811c9dc5);

  it('is cut into chunks after the lines whose path hashes to 0 modulo 64, read in blocks', () => {
    const tree = smallTree('chunks', files);
    const want = readFileSync(join(tree, MANIFEST_PATH));
    const it = manifestChunks(join(tree, MANIFEST_PATH));
    const chunks: Buffer[] = [];
    let r = it.next();
    for (; !r.done; r = it.next()) chunks.push(r.value);
    expect(r.value).toBe(createHash('sha256').update(want).digest('hex'));
    expect(Buffer.concat(chunks).equals(want)).toBe(true);
    const ends = want.toString('latin1').split('\n').slice(0, -1).map((l) => fnv(Buffer.from(l.slice(l.indexOf(' ', 65) + 1), 'latin1')) % MANIFEST_CHUNK_LINES === 0);
    expect(chunks.length).toBe(ends.filter(Boolean).length + (ends.at(-1) ? 0 : 1));
    expect(chunks.length).toBeGreaterThan(4);
    let line = 0;
    for (const c of chunks) {
      const n = c.toString('latin1').split('\n').length - 1;
      line += n;
      expect(ends.slice(line - n, line - 1).some(Boolean)).toBe(false);
      expect(ends[line - 1] || line === ends.length).toBe(true);
    }
  });

  it('is stored with withManifest as a recipe over its chunks and answered byte for byte; an append stores only the chunks that changed', async () => {
    const tree = smallTree('tree', files);
    const packDir = dir('pack');
    const s1 = await packFromTree(tree, packDir, { withManifest: true });
    const changed = 'name/n1500.json';
    const tree2 = smallTree('tree2', { ...files, [changed]: '{"name":"n1500","value":"changed"}' });
    const s2 = await packFromTree(tree2, packDir, { withManifest: true, changed: new Set([changed]) });
    expect(s1.manifestChunks).toBeGreaterThan(4);
    expect(s1.manifestChunksKept).toBe(0);
    expect(s2.manifestChunks).toBe(s1.manifestChunks);
    expect(s2.manifestChunksKept).toBe(s1.manifestChunks - 1);
    const want = readFileSync(join(tree2, MANIFEST_PATH));
    const reader = await PackReader.open(packDir);
    try {
      for (const acceptEncoding of ['identity', 'gzip']) {
        const a = (await reader.get(MANIFEST_PATH, { acceptEncoding }))!;
        expect(a.kind).toBe(Kind.RECIPE);
        expect(a.contentEncoding).toBe('identity');
        expect(Buffer.from(await answerBytes(a)).equals(want)).toBe(true);
      }
      // The appended part holds one chunk and the recipe, not the manifest again.
      expect(reader.parts.at(-1)!.size).toBeLessThan(want.length / 4);
      expect(await reader.verify()).toEqual([]);
    } finally {
      await reader.close();
    }

    // A previous chunk that does not read back (damaged in its part): every chunk is stored again.
    const r2 = await PackReader.open(packDir);
    const first = (await r2.recipe(MANIFEST_PATH, (await r2.lookup(MANIFEST_PATH))!))[0]!;
    await r2.close();
    if (first.type !== 'range') throw new Error('a manifest chunk is a range');
    const partFile = join(packDir, s2.parts[first.blob.part]!.name);
    const bytes = readFileSync(partFile);
    bytes[first.blob.offset + 5]! ^= 0xff;
    writeFileSync(partFile, bytes);
    const tree3 = smallTree('tree3', { ...files, [changed]: '{"name":"n1500","value":"again"}' });
    const s3 = await packFromTree(tree3, packDir, { withManifest: true, changed: new Set([changed]) });
    expect(s3.manifestChunksKept).toBe(0);
    const r3 = await PackReader.open(packDir);
    try {
      expect(Buffer.from(await answerBytes((await r3.get(MANIFEST_PATH))!)).equals(readFileSync(join(tree3, MANIFEST_PATH)))).toBe(true);
    } finally {
      await r3.close();
    }
  });

  it("is checked against the sha256 its build wrote it with: another fails naming the manifest, no pack left", async () => {
    const tree = smallTree('other-sha', files);
    const packDir = dir('other-sha-pack');
    const sha = createHash('sha256').update(readFileSync(join(tree, MANIFEST_PATH))).digest('hex');
    await expect(packFromTree(tree, packDir, { withManifest: true, manifestSha256: sha.replace(/^./, (c) => (c === '0' ? '1' : '0')) })).rejects.toThrow(`${join(tree, MANIFEST_PATH)} changed while the tree was packed`);
    expect(readdirSync(packDir)).toEqual([]);
    await packFromTree(tree, packDir, { withManifest: true, manifestSha256: sha });
    expect(readdirSync(packDir)).toContain(PACK_POINTER);
  });

  it('a line not in the format is named by file, line and offset', async () => {
    const tree = smallTree('bad', files, (text) => text.replace(/^([0-9a-f]{64}) (\d+) (name\/n0002\.json)$/m, '$1 +$2 $3'));
    const manifestPath = join(tree, MANIFEST_PATH);
    const offset = readFileSync(manifestPath, 'utf8').split('\n').slice(0, 2).join('\n').length + 1;
    await expect(packFromTree(tree, dir('bad-pack'))).rejects.toThrow(`${manifestPath}: line 3 (offset ${offset}) is not "<sha256> <size> <path>"`);
  });
});
