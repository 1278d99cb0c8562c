// A changed document appended as a recipe over its previous answer (src/pack/delta.ts): the
// segment arithmetic against plain concatenation, then through packFromTree and the reader over
// three generations (a delta of a delta), every answer against the tree's file.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Kind, type RecipeSegment } from '../src/contract/pack-format.js';
import { clipSegments, deltaSegments } from '../src/pack/delta.js';
import { packFromTree } from '../src/pack/from-tree.js';
import { answerBytes, PackReader } from '../src/pack/reader.js';
import { tempDir } from './support/memory-builds.js';
import { writeListedTree } from './support/tree-copy.js';

const dir = tempDir('snapshot-pack-delta-');

/** A blob standing for `old` itself: range segments over it are slices of `old`. */
const OLD = { part: 0, offset: 16, stored: 0, encoding: 0, crc: 0 } as const;

/** Segments cutting `old` at random places, literal and ranges over {@link OLD} in turn. */
function pieces(old: Buffer, rnd: () => number): RecipeSegment[] {
  const out: RecipeSegment[] = [];
  for (let at = 0; at < old.length; ) {
    const n = Math.min(old.length - at, 1 + Math.floor(rnd() * 40));
    out.push(out.length % 2 ? { type: 'range', blob: OLD, start: at, length: n } : { type: 'literal', bytes: old.subarray(at, at + n) });
    at += n;
  }
  return out;
}

const assembled = (segs: readonly RecipeSegment[], old: Buffer): Buffer =>
  Buffer.concat(segs.map((s) => (s.type === 'literal' ? s.bytes : old.subarray(s.start, s.start + s.length))));
const literalBytes = (segs: readonly RecipeSegment[]): number => segs.reduce((n, s) => n + (s.type === 'literal' ? s.bytes.length : 0), 0);

describe('delta segments', () => {
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  /** Comma-separated tokens of random lengths, some repeated. */
  const doc = (n: number) => Buffer.from(Array.from({ length: n }, () => randomBytes(1 + Math.floor(rnd() * 12)).toString('base64').replace(/,/g, '') + ',').join(''));

  it('assemble the new bytes from any cut of the old ones, for edits anywhere', () => {
    for (let i = 0; i < 500; i++) {
      const old = i % 2 ? doc(Math.floor(rnd() * 40)) : randomBytes(Math.floor(rnd() * 300));
      const at = Math.floor(rnd() * (old.length + 1));
      const cut = Math.floor(rnd() * (old.length - at + 1));
      const edits = [Buffer.alloc(0), randomBytes(1 + Math.floor(rnd() * 20)), old.subarray(at, at + cut), Buffer.from(',x,'), old];
      const bytes = Buffer.concat([old.subarray(0, at), edits[i % 5]!, old.subarray(at + cut)]);
      const previous = pieces(old, rnd);
      expect(assembled(previous, old).equals(old)).toBe(true);
      const segs = deltaSegments(previous, old, bytes);
      expect(assembled(segs, old).equals(bytes), `case ${i}`).toBe(true);
      for (let j = 0; j < 5; j++) {
        const a = Math.floor(rnd() * (old.length + 1));
        const b = a + Math.floor(rnd() * (old.length - a + 1));
        expect(assembled(clipSegments(previous, a, b), old).equals(old.subarray(a, b))).toBe(true);
      }
    }
  });

  it("take from the old answer every token it has: a name's history with one number changed an entry", () => {
    const entry = (h: number, expires: number) => `{"name":"d/x","value":"v${h}","expires_in":${expires},"height":${h},"rawtx":"${'ab'.repeat(300 + h)}"}`;
    const history = (tip: number) => Buffer.from(`[${[10, 20, 30, 40].map((h) => entry(h, h + 36000 - tip)).join(',')}]`);
    const old = history(100);
    const bytes = history(101);
    const previous: RecipeSegment[] = [{ type: 'range', blob: OLD, start: 0, length: old.length }];
    const segs = deltaSegments(previous, old, bytes);
    expect(assembled(segs, old).equals(bytes)).toBe(true);
    // At most four `"expires_in":…,` tokens are new (the first and the last in part: the common
    // prefix and suffix are ranges up to the byte); everything else is ranges of the old answer.
    expect(literalBytes(segs)).toBeLessThanOrEqual(4 * '"expires_in":35910,'.length);
    expect(literalBytes(segs)).toBeGreaterThanOrEqual(2 * '"expires_in":35910,'.length + 2);
    expect(segs.filter((s) => s.type === 'range')).toHaveLength(5);
    // An entry added at the end: the old ones are still taken from the old answer.
    const grown = Buffer.from(`${bytes.subarray(0, -1).toString()},${entry(50, 35950)}]`);
    const segs2 = deltaSegments(previous, old, grown);
    expect(assembled(segs2, old).equals(grown)).toBe(true);
    expect(literalBytes(segs2)).toBeLessThan(4 * 20 + entry(50, 35950).length + 2);
  });

  it('a document of many equal tokens: edits in its middle assemble, the rest taken from the old answer', () => {
    const old = Buffer.from(`[${'1,'.repeat(20_000)}2]`);
    for (const bytes of [Buffer.from(`[${'1,'.repeat(9_000)}3,${'1,'.repeat(11_000)}2]`), Buffer.from(`[${'1,'.repeat(9_000)}${'1,'.repeat(11_000)}2,4]`), Buffer.from(`[${'1,'.repeat(5_000)}5,${'1,'.repeat(15_000)}2]`)]) {
      const segs = deltaSegments([{ type: 'range', blob: OLD, start: 0, length: old.length }], old, bytes);
      expect(assembled(segs, old).equals(bytes)).toBe(true);
      expect(literalBytes(segs)).toBeLessThanOrEqual(4);
    }
  });

  it('a range segment clipped keeps its blob and moves its start', () => {
    const blob = { part: 3, offset: 100, stored: 50, encoding: 1, crc: 9 } as const;
    const segs: RecipeSegment[] = [{ type: 'literal', bytes: Buffer.from('abc') }, { type: 'range', blob, start: 10, length: 20 }, { type: 'literal', bytes: Buffer.from('xyz') }];
    expect(clipSegments(segs, 2, 8)).toEqual([
      { type: 'literal', bytes: Buffer.from('c') },
      { type: 'range', blob, start: 10, length: 5 },
    ]);
    expect(clipSegments(segs, 20, 26)).toEqual([
      { type: 'range', blob, start: 27, length: 3 },
      { type: 'literal', bytes: Buffer.from('xyz') },
    ]);
  });
});

describe('appended documents as deltas', () => {
  /** Name-like documents: a changing number near the start, then bulk that stays (as a name variant's `rawtx`). */
  const doc = (name: string, expires: number, bulk: string) => `{"name":"${name}","expires_in":${expires},"rawtx":"${bulk}"}`;
  const bulk = Array.from({ length: 6 }, () => randomBytes(700).toString('hex'));
  const files = (expires: number, extra: Record<string, string> = {}) => ({
    ...Object.fromEntries(bulk.map((b, i) => [`name/n${i}.json`, doc(`n${i}`, expires - i, b)])),
    'stats.json': `{"height":${expires}}`,
    ...extra,
  });

  it('take a few bytes a run, answer as the tree, and stay recipes over stored blobs through a delta of a delta', async () => {
    const pack = dir('pack');
    const gen = [files(100), files(99), files(98, { 'name/n5.json': doc('n5', 1, randomBytes(700).toString('hex')) })];
    let parts = 0;
    for (const [g, tree] of gen.entries()) {
      const root = dir(`tree${g}`);
      writeListedTree(root, tree);
      const changed = g === 0 ? undefined : new Set(Object.keys(tree).filter((p) => tree[p as keyof typeof tree] !== gen[g - 1]![p as keyof typeof tree]));
      const s = await packFromTree(root, pack, { ...(changed && { changed }) });
      const r = await PackReader.open(pack);
      try {
        for (const [p, text] of Object.entries(tree)) {
          const a = (await r.get(p))!;
          expect(Buffer.from(await answerBytes(a)).toString(), `${p}, generation ${g + 1}`).toBe(text);
        }
        expect(await r.verify()).toEqual([]);
        if (g > 0) {
          // n0–n4 differ in their number alone: deltas; n5 in its bulk too (generation 3): stored.
          expect(s.deltas).toBe(g === 1 ? 6 : 5);
          const n5 = (await r.lookup('name/n5.json'))!;
          expect(n5.kind).toBe(g === 1 ? Kind.RECIPE : Kind.STORED);
          // Each delta's ranges name stored blobs of the first generation's part.
          for (let i = 0; i < 5; i++) {
            const p = `name/n${i}.json`;
            const segs = await r.recipe(p, (await r.lookup(p))!);
            expect(segs.length, p).toBeLessThanOrEqual(3);
            for (const seg of segs) if (seg.type === 'range') expect(seg.blob.part).toBe(0);
          }
          // The new part holds the recipes, not the documents again.
          const part = r.parts.at(-1)!;
          expect(part.size).toBeLessThan((g === 1 ? 0 : 1500) + 6 * 100);
        }
        parts = r.parts.length;
      } finally {
        await r.close();
      }
    }
    expect(parts).toBe(3);
  });

  it('a previous answer that does not read back (a damaged blob) leaves its document stored, the others deltas', async () => {
    const pack = dir('damaged');
    const gen = [files(100), files(99)];
    writeListedTree(dir('damaged-tree0'), gen[0]!);
    await packFromTree(dir('damaged-tree0'), pack);
    const r0 = await PackReader.open(pack);
    const n0 = (await r0.lookup('name/n0.json'))!;
    const partFile = join(pack, r0.parts[n0.part]!.name);
    await r0.close();
    const bytes = readFileSync(partFile);
    bytes[n0.offset + 10]! ^= 0xff;
    writeFileSync(partFile, bytes);

    writeListedTree(dir('damaged-tree1'), gen[1]!);
    const s = await packFromTree(dir('damaged-tree1'), pack, { changed: new Set(Object.keys(gen[1]!)) });
    expect(s.deltas).toBe(5);
    const r = await PackReader.open(pack);
    try {
      expect((await r.lookup('name/n0.json'))!.kind).toBe(Kind.STORED);
      for (const [p, text] of Object.entries(gen[1]!)) expect(Buffer.from(await answerBytes((await r.get(p))!)).toString(), p).toBe(text);
    } finally {
      await r.close();
    }
  });
});
