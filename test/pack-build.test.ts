// `snapshot build --format pack`: the pack answers every file of the tree the same build makes
// with `--format tree` (the reference), fresh and incremental (extended, reorganised, lowered),
// old parts are never rewritten and unreferenced ones go only after the new pack.json is in
// place; a foreign file, a tree where a pack is asked and a pack where a tree is asked are refused.
import { existsSync, readFileSync, readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { PackReader } from '../src/pack/reader.js';
import { buildSnapshot, type BuildOptions } from '../src/site/build.js';
import { REPACK_GROWTH, REPACK_PARTS, repacks } from '../src/site/build/pack.js';
import { demoSource } from '../src/source/demo.js';
import { memorySource } from '../src/source/memory.js';
import { asMemoryBlocks, scenario } from './support/chains.js';
import { ChainBuilder } from '../src/builder/chain.js';
import { chainPath, framedBlocks, readChain } from './support/helpers.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { HOSTS, NET, tempDir } from './support/memory-builds.js';
import { Kind, PACK_POINTER } from '../src/contract/pack-format.js';
import { dedupOf, expectPackAnswersTree, expectSameAnswers, literalBytes, manifestPaths, packDirEntries, packFiles, recipeOf } from './support/pack-compare.js';
import { describeShared } from './support/shared-data.js';

const tmp = tempDir('snapshot-pack-build-');

/** Every file of a directory with its size, mtime and bytes. */
function stamps(dir: string): Map<string, { size: number; mtimeMs: number; bytes: Buffer }> {
  return new Map([PACK_POINTER, ...packDirEntries(dir)].map((f) => [f, { size: statSync(join(dir, f)).size, mtimeMs: statSync(join(dir, f)).mtimeMs, bytes: readFileSync(join(dir, f)) }]));
}

/** Files of the pack dir other than pack.json are exactly the current and the previous index and their parts. */
async function expectOnlyReferenced(packDir: string, previous: { index: string; parts: string[] } | undefined): Promise<void> {
  const now = await packFiles(packDir);
  const want = new Set([now.index, ...now.parts, ...(previous ? [previous.index, ...previous.parts] : [])]);
  expect(packDirEntries(packDir)).toEqual([...want].sort());
}

const bytesOf = (dir: string) => [PACK_POINTER, ...packDirEntries(dir)].reduce((n, f) => n + statSync(join(dir, f)).size, 0);
function treeBytes(tree: string): { files: number; bytes: number } {
  const lines = readFileSync(join(tree, '_manifest.json'), 'utf8').trim().split('\n');
  return { files: lines.length + 1, bytes: lines.reduce((n, l) => n + Number(l.split(' ')[1]), 0) + statSync(join(tree, '_manifest.json')).size };
}
/**
 * Dedup is on: address and block documents are recipes, together smaller than their gzip; tx
 * `.bin`/`.hex` files point inside their block's blob.
 */
async function expectDedup(pack: string, tree: string, label: string): Promise<void> {
  const d = await dedupOf(pack, tree);
  const txBins = manifestPaths(tree).filter((p) => /^tx\/[0-9a-f]{64}\.bin$/.test(p)).length;
  console.log(`${label}: ${d.recipes} recipes, ${d.recipeStored} bytes stored against ${d.recipeGzip} as gzip; ${d.slices} tx .bin/.hex slices of ${txBins * 2}`);
  expect(d.recipes).toBeGreaterThan(0);
  expect(d.recipeStored).toBeLessThan(d.recipeGzip);
  expect(d.slices).toBeGreaterThan(txBins);
}

/**
 * A pack build's private tree lists its txs' `.bin` and `.hex` files in its manifest without
 * holding them (the pack slices each from its block's `.bin`); a fresh one (`fresh`) its compact
 * address documents too (the pack makes each from its recipe hint); the other files are there.
 */
function expectListed(privateTree: string, fresh: boolean): void {
  const paths = manifestPaths(privateTree);
  const raw = paths.filter((p) => /^tx\/[0-9a-f]{64}\.(bin|hex)$/.test(p));
  expect(raw.length).toBeGreaterThan(100);
  expect(raw.filter((p) => existsSync(join(privateTree, p)))).toEqual([]);
  expect(readdirSync(join(privateTree, 'tx')).filter((f) => !f.endsWith('.json'))).toEqual([]);
  const addresses = paths.filter((p) => p.startsWith('address/'));
  expect(addresses.length).toBeGreaterThan(10);
  const held = addresses.filter((p) => existsSync(join(privateTree, p)));
  if (fresh) expect(held).toEqual([]);
  else expect(held.length).toBeGreaterThan(0); // the ones an incremental build changed
  const listed = new Set([...raw, ...addresses]);
  expect(paths.filter((p) => !listed.has(p) && !existsSync(join(privateTree, p)))).toEqual([]);
}

const stageTime = (r: { stageSeconds: [string, number][] }, pack: boolean) => r.stageSeconds.filter(([s]) => (s === 'pack') === pack).reduce((n, [, t]) => n + t, 0);

describe('build --format pack: the demo chain', () => {
  const demo = (outDir: string, extra: Partial<BuildOptions> = {}) => buildSnapshot({ source: demoSource(), outDir, hosts: HOSTS, ...extra });

  it('answers every file of the tree built with --format tree, and holds only its index and parts', async () => {
    const tree = tmp('demo-tree');
    const pack = tmp('demo-pack');
    const t = await demo(tree);
    const p = await demo(pack, { format: 'pack' });
    await expectPackAnswersTree(pack, tree);
    await expectOnlyReferenced(pack, undefined);
    await expectPackAnswersTree(pack, tree, 'gzip');
    await expectDedup(pack, tree, 'demo');
    expect(existsSync(join(tmp('demo-pack.state'), 'tree', '_manifest.json'))).toBe(true);
    expectListed(join(tmp('demo-pack.state'), 'tree'), true);
    const tb = treeBytes(tree);
    const pb = bytesOf(pack);
    console.log(
      `demo: tree ${tb.files} files ${tb.bytes} bytes; pack ${readdirSync(pack).length} files ${pb} bytes (${(pb / tb.bytes).toFixed(3)}); ` +
        `build tree ${stageTime(t, false).toFixed(2)}s, pack build ${stageTime(p, false).toFixed(2)}s + pack phase ${stageTime(p, true).toFixed(2)}s`,
    );
  }, 240_000);

  it('pretty-printed (no compact tx document to reference: documents stored whole) answers every file of the pretty tree', async () => {
    const tree = tmp('demo-pretty-tree');
    const pack = tmp('demo-pretty-pack');
    await demo(tree, { pretty: true, height: 60 });
    await demo(pack, { pretty: true, height: 60, format: 'pack' });
    await expectPackAnswersTree(pack, tree);
    await expectPackAnswersTree(pack, tree, 'gzip');
  }, 240_000);

  it('extended (120 → 150) and lowered (150 → 120) answers like a fresh pack; old parts are kept untouched, unreferenced ones removed after the swap', async () => {
    const inc = tmp('demo-inc');
    await demo(inc, { format: 'pack', height: 120 });
    expectListed(join(tmp('demo-inc.state'), 'tree'), true);
    // The first run after a fresh pack build finds no previous address document in its tree (it
    // listed them all): it splices the changed ones from their answers in the pack, and writes them.
    const r1 = await demo(inc, { format: 'pack', height: 121 });
    expect(r1.mode).toBe('incremental');
    expect(r1.addressReuse.spliced).toBeGreaterThan(0);
    expect(r1.addressReuse.fallbacks).toBe(0);
    expect(r1.pack!.hinted).toBeGreaterThan(0);
    expectListed(join(tmp('demo-inc.state'), 'tree'), false);
    const tree121 = tmp('demo-tree-121');
    await demo(tree121, { height: 121 });
    await expectPackAnswersTree(inc, tree121);
    const gen1 = await packFiles(inc);
    const before = stamps(inc);
    const r2 = await demo(inc, { format: 'pack' });
    expect(r2.mode).toBe('incremental');
    expect(r2.pack!.carried).toBeGreaterThan(0);
    // The name documents held at 120 changed (expires_in): appended as deltas; the manifest's unchanged chunks kept.
    expect(r2.pack!.deltas).toBeGreaterThan(0);
    expect(r2.pack!.manifestChunksKept).toBeGreaterThan(0);
    // The changed address documents are recipes over the tx documents kept unread from the first
    // generation (their blobs looked up as a recipe needs them), some made from their hints.
    expect(r2.pack!.hinted).toBeGreaterThan(0);
    const { oldParts, changedRecipes } = await (async () => {
      const reader = await PackReader.open(inc);
      try {
        const firstParts = new Set(reader.parts.flatMap((p, i) => (gen1.parts.includes(p.name) ? [i] : [])));
        let over = 0;
        let recipes = 0;
        for (const p of manifestPaths(join(tmp('demo-inc.state'), 'tree')).filter((q) => q.startsWith('address/') || /^block\/[0-9a-f]{64}\.json$/.test(q))) {
          const rec = (await reader.lookup(p))!;
          if (firstParts.has(rec.part) || rec.kind !== Kind.RECIPE) continue; // kept, or stored whole
          recipes++;
          if (p.startsWith('address/') && (await recipeOf(reader, p)).some((x) => x.type === 'range' && firstParts.has(x.blob.part))) over++;
        }
        return { oldParts: over, changedRecipes: recipes };
      } finally {
        await reader.close();
      }
    })();
    expect(oldParts).toBeGreaterThan(0);
    // Each of them, and each changed block document, from its hint, unread: a spliced document's
    // copied entries are clipped from its previous answer's recipe (hints.ts), the rest are this
    // run's tx texts.
    expect(r2.addressReuse.spliced).toBeGreaterThan(0);
    expect(r2.blockDocuments.spliced).toBeGreaterThan(0);
    expect(r2.pack!.hinted).toBe(changedRecipes);
    await expectPackAnswersTree(inc, tmp('demo-tree'));
    await expectSameAnswers(inc, tmp('demo-pack'), manifestPaths(tmp('demo-tree')));
    expectListed(join(tmp('demo-inc.state'), 'tree'), false);
    const gen2 = await packFiles(inc);
    for (const f of [gen1.index, ...gen1.parts]) {
      const now = statSync(join(inc, f));
      expect({ f, size: now.size, mtimeMs: now.mtimeMs }).toEqual({ f, size: before.get(f)!.size, mtimeMs: before.get(f)!.mtimeMs });
      expect(readFileSync(join(inc, f)).equals(before.get(f)!.bytes), f).toBe(true);
    }
    await expectOnlyReferenced(inc, gen1);

    // Lower: the third generation (the records of paths that are gone are left out of the kept ones).
    const r3 = await demo(inc, { format: 'pack', height: 120 });
    expect(r3.pack!.carried).toBeGreaterThan(0);
    const ref = tmp('demo-tree-120');
    await demo(ref, { height: 120 });
    await expectPackAnswersTree(inc, ref);
    await expectOnlyReferenced(inc, gen2);
  }, 240_000);

  it('is written whole again past REPACK_PARTS parts however small they are, or past REPACK_GROWTH times its size when last written whole', () => {
    const parts = (n: number, size: number) => Array.from({ length: n }, () => ({ size }));
    expect(repacks(parts(REPACK_PARTS, 1), 1e9)).toBe(false);
    expect(repacks(parts(REPACK_PARTS + 1, 1), 1e9)).toBe(true);
    expect(repacks(parts(2, 100), 100)).toBe(false);
    expect(repacks([...parts(1, 100), ...parts(1, 101)], 100)).toBe(true);
  });

  it('re-run block by block, is written whole again once its parts have grown past REPACK_GROWTH times their size when last written whole: it stays within a few times a fresh pack, and answers like one', async () => {
    const out = tmp('demo-regrow');
    const partBytes = async () => (await packFiles(out)).parts.reduce((n, f) => n + statSync(join(out, f)).size, 0);
    let wholeAt = 0;
    let wholes = 0;
    let previous: { index: string; parts: string[] } | undefined;
    for (let h = 100; h <= 124; h += 2) {
      const before = h === 100 ? 0 : await partBytes();
      const partsBefore = h === 100 ? 0 : (await packFiles(out)).parts.length;
      const r = await demo(out, { format: 'pack', height: h });
      const now = await partBytes();
      expect(r.pack!.partBytes, `height ${h}`).toBe(now);
      // The rule, checked on the sizes of the files: whole when the parts were past twice their size when last written whole.
      expect(r.pack!.whole, `height ${h}: ${before} bytes of parts, ${wholeAt} when last written whole`).toBe(h === 100 || before > REPACK_GROWTH * wholeAt || partsBefore > REPACK_PARTS);
      if (r.pack!.whole) {
        wholeAt = now;
        if (h > 100) {
          wholes++;
          expect(r.pack!.reused).toBe(0);
          // The unchanged documents' recipes come from the pack it replaces, and it is a fresh pack's, byte for byte.
          expect(r.pack!.rebased).toBeGreaterThan(0);
          const fresh = await demo(tmp(`demo-regrow-fresh-${h}`), { format: 'pack', height: h });
          expect(r.pack!.index).toBe(fresh.pack!.index);
        }
      } else expect(r.pack!.carried).toBeGreaterThan(0);
      await expectOnlyReferenced(out, previous);
      previous = await packFiles(out);
    }
    expect(wholes).toBeGreaterThan(0);
    // Against a pack of the same height written fresh: the same answers, and at most REPACK_GROWTH + 1 times its bytes.
    const fresh = tmp('demo-regrow-fresh');
    await demo(fresh, { format: 'pack', height: 124 });
    const ref = tmp('demo-regrow-tree');
    await demo(ref, { height: 124 });
    await expectSameAnswers(out, fresh, manifestPaths(ref));
    await expectPackAnswersTree(out, ref);
    const freshBytes = (await packFiles(fresh)).parts.reduce((n, f) => n + statSync(join(fresh, f)).size, 0);
    expect(await partBytes()).toBeLessThanOrEqual((REPACK_GROWTH + 1) * freshBytes);

    // Without the record of the last whole size (a state dir from an older version), the pack as it is counts as whole.
    const record = join(tmp('demo-regrow.state'), 'pack-state.json');
    const { wholeBytes: _, ...older } = JSON.parse(readFileSync(record, 'utf8')) as Record<string, unknown>;
    writeFileSync(record, JSON.stringify(older) + '\n');
    const atNow = await partBytes();
    const r = await demo(out, { format: 'pack', height: 126 });
    expect(r.pack!.whole).toBe(false);
    expect(r.pack!.carried).toBeGreaterThan(0);
    expect((JSON.parse(readFileSync(record, 'utf8')) as { wholeBytes: number }).wholeBytes).toBe(atNow);

    // Lowered (the blocks above 118 gone, their txs' outputs unspent again) and written whole: still a fresh pack's bytes,
    // with the old recipe of an address document that did not change damaged in its part: one the private tree holds
    // (an incremental run wrote it) is read instead.
    const fresh118 = await demo(tmp('demo-regrow-fresh-118'), { format: 'pack', height: 118 });
    const tree118 = join(tmp('demo-regrow-fresh-118.state'), 'tree');
    const tree126 = join(tmp('demo-regrow.state'), 'tree');
    const lines = (tree: string) => new Map(readFileSync(join(tree, '_manifest.json'), 'utf8').trim().split('\n').map((l) => [l.split(' ')[2]!, l] as const));
    const at126 = lines(tree126);
    const unchanged = [...lines(tree118)].filter(([p, l]) => p.startsWith('address/') && at126.get(p) === l).map(([p]) => p);
    const same = unchanged.find((p) => existsSync(join(tree126, p)))!;
    const listedOnly = unchanged.find((p) => !existsSync(join(tree126, p)))!;
    expect([same, listedOnly]).not.toContain(undefined);
    /** Flips a byte of `path`'s recipe in the current pack, and makes the next run write the pack whole. */
    const damage = async (path: string) => {
      const reader = await PackReader.open(out);
      const rec = (await reader.lookup(path))!;
      const partFile = join(out, reader.parts[rec.part]!.name);
      await reader.close();
      expect(rec.kind).toBe(Kind.RECIPE);
      const part = readFileSync(partFile);
      part[rec.offset + 1]! ^= 0xff;
      writeFileSync(partFile, part);
      writeFileSync(record, JSON.stringify({ ...(JSON.parse(readFileSync(record, 'utf8')) as object), wholeBytes: 1 }) + '\n');
    };
    await damage(same);
    const lowered = await demo(out, { format: 'pack', height: 118 });
    expect(lowered.pack!.whole).toBe(true);
    expect(lowered.pack!.rebased).toBeGreaterThan(0);
    expect(lowered.pack!.index).toBe(fresh118.pack!.index);

    // One the private tree only lists (unchanged since the fresh build): nothing holds its bytes, so
    // the run stops naming it, and --out keeps its pack; the next run renders every document again.
    expect(existsSync(join(tree126, listedOnly))).toBe(false);
    await damage(listedOnly);
    const pointer = readFileSync(join(out, PACK_POINTER));
    const failed = await demo(out, { format: 'pack', height: 120 }).then(() => undefined, (e: Error) => e.message);
    // The private tree published by that run, and the line of its manifest that lists the document.
    const line = readFileSync(join(tree126, '_manifest.json'), 'utf8').split('\n').findIndex((l) => l.endsWith(` ${listedOnly}`)) + 1;
    expect(line).toBeGreaterThan(0);
    expect(failed).toBe(`${join(realpathSync(tree126), listedOnly)}: listed in _manifest.json (line ${line}) without a file, and neither its recipe hint nor the pack in ${out} gives its bytes`);
    expect(readFileSync(join(out, PACK_POINTER)).equals(pointer)).toBe(true);
    const healed = await demo(out, { format: 'pack', height: 120 });
    expect(healed.mode).toBe('full');
    expect(healed.fullReason).toContain('lists address documents that only the pack made from it holds');
    expect(healed.pack!.whole).toBe(true);
    const fresh120 = await demo(tmp('demo-regrow-fresh-120'), { format: 'pack', height: 120 });
    expect(healed.pack!.index).toBe(fresh120.pack!.index);
    expectListed(tree126, false);
    expect(manifestPaths(tree126).filter((p) => p.startsWith('address/') && !existsSync(join(tree126, p)))).toEqual([]);
  }, 240_000);

  it('removes the files no index refers to only after the new pack.json is in place', async () => {
    const out = tmp('demo-gc');
    await demo(out, { format: 'pack', height: 100 });
    const gen1 = await packFiles(out);
    await demo(out, { format: 'pack', height: 130 });
    const gen2 = await packFiles(out);
    const gone = [gen1.index, ...gen1.parts].filter((f) => !gen2.parts.includes(f));
    expect(gone.length).toBeGreaterThan(0);
    const seen: Record<string, string[]> = {};
    await buildSnapshot({ source: demoSource(), outDir: out, format: 'pack' }, {
      onPackFile: (name) => {
        if (name.endsWith('.idx')) seen['index'] = readdirSync(out);
      },
      onPackStep: (step) => {
        seen[step] = readdirSync(out);
      },
    });
    // Right after the swap every file of both older generations is still there; after the clean-up, the first generation's unreferenced ones are gone.
    for (const f of gone) expect(seen['index'], f).toContain(f);
    for (const f of gone) expect(seen['published'], f).toContain(f);
    expect(readFileSync(join(out, 'pack.json'), 'utf8')).toContain((await packFiles(out)).index);
    await expectOnlyReferenced(out, gen2);
    for (const f of gone) expect(existsSync(join(out, f)), f).toBe(false);
  }, 240_000);

  it('refuses a foreign file in --out, naming it; a tree --out for a pack and a pack --out for a tree', async () => {
    const out = tmp('demo-foreign');
    await demo(out, { format: 'pack', height: 20 });
    writeFileSync(join(out, 'notes.txt'), 'mine');
    await expect(demo(out, { format: 'pack' })).rejects.toThrow(/notes\.txt.*--force/);
    expect(readFileSync(join(out, 'notes.txt'), 'utf8')).toBe('mine');
    await expect(demo(out)).rejects.toThrow(/holds a pack.*--format pack/);
    const tree = tmp('demo-tree-20');
    await demo(tree, { height: 20 });
    await expect(demo(tree, { format: 'pack' })).rejects.toThrow(/holds a snapshot tree.*--format tree/);
    await expect(demo(out, { format: 'pack', hosts: ['nginx'] })).rejects.toThrow('--hosts nginx needs --format tree');
    // Forced: the build goes on and leaves the user's file alone.
    await demo(out, { format: 'pack', force: true });
    expect(readFileSync(join(out, 'notes.txt'), 'utf8')).toBe('mine');
  }, 240_000);

  it('writes the hosts\' glue beside the pack (a Worker project for R2, a Netlify site); a foreign file inside it is refused', async () => {
    const out = tmp('demo-glue');
    await demo(out, { format: 'pack', height: 20 });
    for (const f of ['_pack-worker/index.js', '_pack-worker/wrangler.toml', '_netlify/edge-functions/api.js', 'netlify.toml']) expect(existsSync(join(out, f)), f).toBe(true);
    expect(readFileSync(join(out, '_pack-worker/wrangler.toml'), 'utf8')).toMatch(/binding = "BUCKET"/);
    expect(readFileSync(join(out, 'netlify.toml'), 'utf8')).toMatch(/publish = "\."\n\s*edge_functions = "_netlify\/edge-functions"/);
    // The glue is the build's own: the next run goes on.
    await demo(out, { format: 'pack', height: 25 });
    writeFileSync(join(out, '_netlify', 'edge-functions', 'mine.js'), 'export default () => {};');
    await expect(demo(out, { format: 'pack' })).rejects.toThrow(/_netlify\/edge-functions\/mine\.js.*--force/);
  }, 240_000);
});

describe('build --format pack: a reorganised chain', () => {
  it('a coinbase repeated (BIP30): the address documents that embed it are written (its text is either occurrence\'s), the others listed; the pack answers every file of the tree', async () => {
    const cb = new ChainBuilder({ network: NET, seed: 30 });
    cb.mine(110);
    const repeated = cb.build().main[105]!.txids[0]!;
    cb.block(undefined, { coinbaseOf: 105 });
    cb.mine(3);
    const blocks = asMemoryBlocks(cb.build());
    expect(blocks.filter((b) => b.raw.includes(Buffer.from(repeated, 'hex').reverse())).length).toBe(2);
    const build = (outDir: string, format: 'tree' | 'pack') => buildSnapshot({ source: memorySource(NET, blocks), outDir, hosts: HOSTS, format }, { renderThreadsAbove: 0 });
    const tree = tmp('bip30-tree');
    const pack = tmp('bip30-pack');
    await build(tree, 'tree');
    await build(pack, 'pack');
    await expectPackAnswersTree(pack, tree);
    const privateTree = join(tmp('bip30-pack.state'), 'tree');
    const addresses = manifestPaths(tree).filter((p) => p.startsWith('address/'));
    const embedding = addresses.filter((p) => readFileSync(join(tree, p), 'latin1').includes(`"${repeated}":{"hash":"${repeated}"`));
    expect(embedding.length).toBeGreaterThan(0);
    expect(embedding.length).toBeLessThan(addresses.length);
    expect(addresses.filter((p) => existsSync(join(privateTree, p)))).toEqual(embedding);
  }, 240_000);

  it('after a reorg of depth 5 answers like a fresh pack and like the tree', async () => {
    const sc = scenario(22, { reorg: true, depth: 5 });
    const build = (blocks: typeof sc.before, outDir: string, height: number, format: 'tree' | 'pack') =>
      buildSnapshot({ source: memorySource(NET, blocks), outDir, height, hosts: HOSTS, format });
    const inc = tmp('reorg-inc');
    await build(sc.before, inc, sc.m, 'pack');
    const r = await build(sc.after, inc, sc.n, 'pack');
    expect(r.rolledBackTo).toBe(sc.m - sc.reorgDepth);
    expect(r.pack!.carried).toBeGreaterThan(0);
    const tree = tmp('reorg-tree');
    await build(sc.after, tree, sc.n, 'tree');
    const fresh = tmp('reorg-fresh');
    await build(sc.after, fresh, sc.n, 'pack');
    await expectPackAnswersTree(inc, tree);
    await expectSameAnswers(inc, fresh, manifestPaths(tree));
  }, 240_000);
});

function nbitcoinSource() {
  const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
  return memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin blk files');
}

describeShared('chaindata')('build --format pack: Bitcoin mainnet 0–599', () => {
  it('answers every file of the tree; extended 300 → 599 answers like the fresh pack', async () => {
    const tree = tmp('btc-tree');
    const pack = tmp('btc-pack');
    const t = await buildSnapshot({ source: nbitcoinSource(), outDir: tree, hosts: HOSTS });
    const p = await buildSnapshot({ source: nbitcoinSource(), outDir: pack, format: 'pack' });
    await expectPackAnswersTree(pack, tree);
    await expectOnlyReferenced(pack, undefined);
    await expectPackAnswersTree(pack, tree, 'gzip');
    await expectDedup(pack, tree, 'Bitcoin 0–599');
    const tb = treeBytes(tree);
    const pb = bytesOf(pack);
    console.log(
      `Bitcoin 0–599: tree ${tb.files} files ${tb.bytes} bytes; pack ${readdirSync(pack).length} files ${pb} bytes (${(pb / tb.bytes).toFixed(3)}); ` +
        `build tree ${stageTime(t, false).toFixed(2)}s, pack build ${stageTime(p, false).toFixed(2)}s + pack phase ${stageTime(p, true).toFixed(2)}s`,
    );

    const inc = tmp('btc-inc');
    await buildSnapshot({ source: nbitcoinSource(), outDir: inc, format: 'pack', height: 300 });
    const gen1 = await packFiles(inc);
    const before = stamps(inc);
    const r = await buildSnapshot({ source: nbitcoinSource(), outDir: inc, format: 'pack' });
    expect(r.mode).toBe('incremental');
    expect(r.pack!.carried).toBeGreaterThan(0);
    await expectSameAnswers(inc, pack, manifestPaths(tree));
    await expectPackAnswersTree(inc, tree);
    // Stored once as in the fresh pack: an old block document the extension changed (an output
    // of it spent) references its txs' documents kept from the first generation.
    const embedding = manifestPaths(tree).filter((p) => /^(block\/[0-9a-f]{64}|address\/[^/]+)\.json$/.test(p));
    expect(Object.fromEntries(await literalBytes(inc, embedding))).toEqual(Object.fromEntries(await literalBytes(pack, embedding)));
    for (const f of [gen1.index, ...gen1.parts]) expect(statSync(join(inc, f)).mtimeMs, f).toBe(before.get(f)!.mtimeMs);
    await expectOnlyReferenced(inc, gen1);
    const reader = await PackReader.open(inc);
    expect(reader.header.generation).toBe(2);
    await reader.close();
  }, 240_000);
});

describeShared('chaindata/namecoin-core-regtest/blocks/xor.dat')('build --format pack: the Namecoin Core regtest datadir (blocks:)', () => {
  it('answers every file of the tree, plain and gzip; address and block documents are recipes', async () => {
    const net = NETWORKS['namecoin-regtest'];
    const build = async (outDir: string, format: 'tree' | 'pack') => {
      const source = await openBlocksDir(join(chainPath('namecoin-core-regtest'), 'blocks'), net);
      try {
        return await buildSnapshot({ source, outDir, hosts: HOSTS, format });
      } finally {
        await source.close();
      }
    };
    const tree = tmp('nmc-tree');
    const pack = tmp('nmc-pack');
    await build(tree, 'tree');
    await build(pack, 'pack');
    await expectPackAnswersTree(pack, tree);
    await expectPackAnswersTree(pack, tree, 'gzip');
    await expectDedup(pack, tree, 'Namecoin Core regtest');
    const tb = treeBytes(tree);
    const pb = bytesOf(pack);
    console.log(`Namecoin Core regtest: tree ${tb.files} files ${tb.bytes} bytes; pack ${pb} bytes (${(pb / tb.bytes).toFixed(3)})`);
  }, 240_000);
});
