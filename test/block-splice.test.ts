// Incremental runs splice the documents of older blocks whose txs got new spenders: only the
// changed txs are rendered, the others' bytes come from the block's previous document
// (src/pipeline/block-document.ts). The result must equal a full build's bytes, the cheap path
// must really be taken (BuildReport.blockDocuments), and a previous document that is missing or
// altered must fall back to a whole render.
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { blockPath } from '../src/contract/layout.js';
import { previousElements } from '../src/pipeline/block-document.js';
import { arrayElementRanges } from '../src/render/json-scan.js';
import { type BuildHooks, type BuildOptions, type BuildReport } from '../src/site/build.js';
import { type MemoryBlock } from '../src/source/memory.js';
import { verifySnapshot } from '../src/verify/index.js';
import { scenario } from './support/chains.js';
import { manifestMismatches } from './support/helpers.js';
import { build as buildMemory, keepOutput, manifest, tempDir } from './support/memory-builds.js';

const tmp = tempDir('snapshot-splice-');

// The main thread's renderer (render-pool.ts): one test below runs the threads.
const build = (blocks: MemoryBlock[], outDir: string, height: number, extra: Partial<BuildOptions> = {}, hooks: BuildHooks = {}) =>
  buildMemory(blocks, outDir, height, extra, { renderThreadsAbove: 1e9, ...hooks });

/** The block documents of a tree, as block hash → the hashes of the txs listed in it (parsed independently). */
const txidsOfBlock = (dir: string, hash: string): string[] =>
  (JSON.parse(readFileSync(join(dir, blockPath(hash, 'json')), 'utf8')) as { tx: { hash: string }[] }).tx.map((t) => t.hash);

describe('older block documents are spliced, not re-rendered', () => {
  it.each([
    { seed: 41, reorg: false, depth: undefined },
    { seed: 22, reorg: true, depth: 5 },
  ])('seed $seed, reorg $reorg: the spliced tree equals a full build, and older blocks were spliced', async ({ seed, reorg, depth }) => {
    const sc = scenario(seed, { reorg, depth });
    const inc = tmp(`inc-${seed}`);
    const fresh = tmp(`fresh-${seed}`);
    await build(sc.before, inc, sc.m);
    const second = await build(sc.after, inc, sc.n);
    expect(second.mode).toBe('incremental');
    const full = await build(sc.after, fresh, sc.n);
    expect(manifest(inc)).toBe(manifest(fresh));
    expect(manifestMismatches(inc)).toEqual([]);
    expect((await verifySnapshot(inc)).problems).toEqual([]);
    // Every block above the fork is new and rendered whole; the fork block (next_block) and the
    // blocks whose outputs the new blocks spend are spliced.
    const fork = sc.m - sc.reorgDepth;
    expect(second.blockDocuments.rendered).toBe(sc.n - fork);
    expect(second.blockDocuments.spliced).toBeGreaterThan(1);
    expect(second.blockDocuments.fallback).toBe(0);
    expect(full.blockDocuments).toEqual({ rendered: sc.n + 1, spliced: 0, fallback: 0 });
  });

  it('on the render threads too', async () => {
    const sc = scenario(42, { reorg: false });
    const inc = tmp('threads');
    await build(sc.before, inc, sc.m);
    const second = await build(sc.after, inc, sc.n, {}, { renderThreadsAbove: 0 });
    expect(second.renderThreads).toBeGreaterThan(0);
    expect(second.blockDocuments.spliced).toBeGreaterThan(1);
    await build(sc.after, tmp('threads-fresh'), sc.n);
    expect(manifest(inc)).toBe(manifest(tmp('threads-fresh')));
  });

  describe('a previous document that cannot be spliced', () => {
    // One first snapshot, put back before each case (at the same path: the output's path is a
    // build option), and one full build of the later chain to compare with.
    const sc = scenario(43, { reorg: false });
    const inc = () => tmp('fallback');
    let first: BuildReport;
    let restore: () => void;
    let fresh: string;
    beforeAll(async () => {
      first = await build(sc.before, inc(), sc.m);
      restore = keepOutput(inc());
      await build(sc.after, tmp('fallback-fresh'), sc.n);
      fresh = manifest(tmp('fallback-fresh'));
    });

    it.each(['missing', 'altered', 'truncated'] as const)('a %s previous document falls back to a whole render with the same bytes', async (how) => {
      restore();
      // The first snapshot's tip gains a next_block: always an older block of the second run.
      const path = join(inc(), blockPath(first.tip, 'json'));
      const text = readFileSync(path, 'utf8');
      const cbTxid = txidsOfBlock(inc(), first.tip)[0]!;
      unlinkSync(path); // a hard link shared with no other release: replace, never modify in place
      if (how === 'altered') writeFileSync(path, text.replace(cbTxid, cbTxid.replace(/^./, (c) => (c === '0' ? '1' : '0'))));
      if (how === 'truncated') writeFileSync(path, text.slice(0, text.indexOf('"mrkl_tree"') - 30));
      const second = await build(sc.after, inc(), sc.n);
      expect(second.blockDocuments.fallback).toBe(1);
      expect(manifest(inc())).toBe(fresh);
      expect(manifestMismatches(inc())).toEqual([]);
    });
  });

  it('pretty output renders older blocks whole, with the same bytes as a full build', async () => {
    const sc = scenario(44, { reorg: false });
    const inc = tmp('pretty');
    await build(sc.before, inc, sc.m, { pretty: true });
    const second = await build(sc.after, inc, sc.n, { pretty: true });
    expect(second.blockDocuments.spliced).toBe(0);
    expect(second.blockDocuments.fallback).toBeGreaterThan(0);
    await build(sc.after, tmp('pretty-fresh'), sc.n, { pretty: true });
    expect(manifest(inc)).toBe(manifest(tmp('pretty-fresh')));
  });
});

describe('previous block document checks', () => {
  const txs = (...ids: string[]) => ids.map((txid) => ({ txid })) as never[];
  const head = '{"hash":"ab","n_tx":2,"tx":[';
  const doc = (s: string) => Buffer.from(s);

  it('splits the tx array into its elements, strings with brackets and escapes included', () => {
    const d = doc(`${head}{"hash":"01","x":"]},\\"["},{"hash":"02","y":[1,{"z":2}]}],"mrkl_tree":[]}`);
    const r = previousElements(d, head, txs('01', '02'))!;
    expect(r.length).toBe(4);
    expect(d.toString('utf8', r[0], r[1])).toBe('{"hash":"01","x":"]},\\"["}');
    expect(d.toString('utf8', r[2], r[3])).toBe('{"hash":"02","y":[1,{"z":2}]}');
  });

  it('refuses another head, another tx count or order, and an unclosed array', () => {
    const good = `${head}{"hash":"01","a":1},{"hash":"02","a":2}],"mrkl_tree":[]}`;
    expect(previousElements(doc(good), head, txs('01', '02'))).toBeDefined();
    expect(previousElements(doc(good.replace('"n_tx":2', '"n_tx":3')), head, txs('01', '02'))).toBeUndefined();
    expect(previousElements(doc(good), head, txs('02', '01'))).toBeUndefined();
    expect(previousElements(doc(good), head, txs('01', '02', '03'))).toBeUndefined();
    expect(previousElements(doc(good), head, txs('01'))).toBeUndefined();
    expect(previousElements(doc(good.slice(0, 60)), head, txs('01', '02'))).toBeUndefined();
    expect(previousElements(undefined, head, txs('01', '02'))).toBeUndefined();
    expect(arrayElementRanges(doc('[]'), 1)).toEqual([]);
  });
});
