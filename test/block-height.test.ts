// `/block-height/<h>.json`: the main-chain block at a height, `{"height":h,"hash":"…"}`, for every
// height 0..tip. Checked against facts the code under test does not make: the header hashes of
// the real Bitcoin blocks 0–599 (sha256d of each 80-byte header, plus the hashes listed in
// chaindata.md), the block documents walked from the tip over prev_block (demo chain), and for
// incremental builds (extension, reorg, lower height) a fresh full build of the same chain.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { compareManifestPaths } from '../src/contract/manifest.js';
import { makeRouterSite, route, type RouteResult } from '../src/contract/router.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { memorySource } from '../src/source/memory.js';
import { verifySnapshot } from '../src/verify/index.js';
import { scenario } from './support/chains.js';
import { framedBlocks, manifestMismatches, readChain } from './support/helpers.js';
import { build, manifest, tempDir } from './support/memory-builds.js';
import { describeShared } from './support/shared-data.js';

const tmp = tempDir('snapshot-height-');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** The height files of a tree: height → parsed document. */
function heightFiles(out: string): Map<number, unknown> {
  const dir = join(out, 'block-height');
  const files = new Map<number, unknown>();
  if (!existsSync(dir)) return files;
  for (const f of readdirSync(dir)) {
    const m = /^(0|[1-9]\d*)\.json$/.exec(f);
    expect(m, `block-height/${f} is named by a height`).not.toBeNull();
    files.set(Number(m![1]), JSON.parse(readFileSync(join(dir, f), 'utf8')));
  }
  return files;
}

/** Main-chain hashes by height, walked from `_site.json`'s tip over the block documents' prev_block. */
function chainFromDocs(out: string): string[] {
  const site = JSON.parse(readFileSync(join(out, '_site.json'), 'utf8')) as { height: number; tip: string };
  const hashes: string[] = [];
  let hash = site.tip;
  for (let h = site.height; h >= 0; h--) {
    hashes[h] = hash;
    hash = (JSON.parse(readFileSync(join(out, 'block', `${hash}.json`), 'utf8')) as { prev_block: string }).prev_block;
  }
  expect(hash).toBe('0'.repeat(64));
  return hashes;
}

function expectHeights(out: string, hashes: readonly string[]): void {
  const files = heightFiles(out);
  expect([...files.keys()].sort((a, b) => a - b)).toEqual(hashes.map((_, h) => h));
  hashes.forEach((hash, h) => {
    expect(files.get(h), `height ${h}`).toEqual({ height: h, hash });
    // Compact, keys in the documented order.
    expect(readFileSync(join(out, 'block-height', `${h}.json`), 'utf8')).toBe(`{"height":${h},"hash":"${hash}"}`);
  });
}

function summary(r: RouteResult): string {
  return r.type === 'file' ? `file ${r.status} ${r.file} ${r.contentType} ${r.cacheControl} | ${r.missing.body}` : `error ${r.status} ${r.body}`;
}

describe('the router maps /block-height/<h>.json', () => {
  const site = makeRouterSite({ network: 'bitcoin', height: 5, tip: 'ab'.repeat(32), cappedAddresses: [] });
  const J = 'application/json; charset=utf-8 public, max-age=60';
  it.each([
    ['/block-height/150.json', `file 200 block-height/150.json ${J} | {"error":"Block at height 150 not found."}`],
    ['/block-height/0.json', `file 200 block-height/0.json ${J} | {"error":"Block at height 0 not found."}`],
    ['/block-height/7.json?x=1', `file 200 block-height/7.json ${J} | {"error":"Block at height 7 not found."}`],
    ['/block-height/%31%35.json', `file 200 block-height/15.json ${J} | {"error":"Block at height 15 not found."}`],
    // Only the canonical decimal spelling is a height.
    ['/block-height/0150.json', 'error 404 {"error":"Block height 0150 is invalid."}'],
    ['/block-height/-1.json', 'error 404 {"error":"Block height -1 is invalid."}'],
    ['/block-height/abc.json', 'error 404 {"error":"Block height abc is invalid."}'],
    ['/block-height/12345678901.json', 'error 404 {"error":"Block height 12345678901 is invalid."}'],
    ['/block-height/.json', 'error 404 {"error":"Not found."}'],
    // Like every other document: the format is part of the path.
    ['/block-height/150', 'error 404 {"error":"Not found."}'],
    ['/block-height/150.bin', 'error 404 {"error":"Not found."}'],
    ['/block-height/150.json/x', 'error 404 {"error":"Not found."}'],
    ['/block-height/', 'error 404 {"error":"Not found."}'],
    ['/block-height', 'error 404 {"error":"Not found."}'],
  ])('%s', (target, want) => {
    expect(summary(route(target, site))).toBe(want);
  });
});

describe('every height of a build has its block-height document', () => {
  it('demo chain: each height names the block document found at that height from the tip', async () => {
    const out = tmp('demo');
    await buildSnapshot({ source: demoSource(), outDir: out, full: true });
    const hashes = chainFromDocs(out);
    expect(hashes.length).toBeGreaterThan(100);
    expectHeights(out, hashes);
    expect((await verifySnapshot(out)).problems).toEqual([]);
  });

  describeShared('chaindata/nbitcoin')('Bitcoin mainnet 0–599', () => {
    it('each height names the block whose header hashes to it (sha256d), and the hashes chaindata.md lists', async () => {
      const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
      // The chain from the raw headers alone: each block's hash and its prev link.
      const byPrev = new Map<string, string>();
      for (const raw of raws) {
        const header = raw.subarray(0, 80);
        const hash = Buffer.from(createHash('sha256').update(createHash('sha256').update(header).digest()).digest()).reverse().toString('hex');
        byPrev.set(Buffer.from(header.subarray(4, 36)).reverse().toString('hex'), hash);
      }
      const hashes: string[] = [];
      for (let prev = '0'.repeat(64); byPrev.has(prev); prev = hashes[hashes.length - 1]!) hashes.push(byPrev.get(prev)!);
      expect(hashes.length).toBe(600);
      const known: [number, string][] = [
        [0, '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f'],
        [9, '000000008d9dc510f23c2657fc4f67bea30078cc05a90eb89e84cc475c080805'],
        [100, '000000007bc154e0fa7ea32218a72fe2c1bb9f86cf8c9ebf9a715ed27fdb229a'],
        [170, '00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee'],
        [299, '00000000b9b003c04b2fe21b4f7a2fa809eb643852573c3a1748653e2019f01c'],
        [300, '0000000062b69e4a2c3312a5782d7798b0711e9ebac065cd5d19f946439f8609'],
        [599, '0000000042844571bc6bce8e1c0fbec99466971eaff89fef8c0d123582181d4d'],
      ];
      for (const [h, hash] of known) expect(hashes[h], `height ${h}`).toBe(hash);

      const dir = mkdtempSync(join(tmpdir(), 'snapshot-height-btc-'));
      dirs.push(dir);
      const out = join(dir, 'out');
      await buildSnapshot({ source: memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin blk files'), outDir: out, full: true });
      expectHeights(out, hashes);
    });
  });
});

describe('incremental builds keep the height documents exact (equal to a fresh build)', () => {
  const cases = [
    { what: 'extension', seed: 61, reorg: false, depth: undefined },
    { what: 'reorg of 5', seed: 62, reorg: true, depth: 5 },
  ];
  it.each(cases)('$what', async ({ seed, reorg, depth }) => {
    const sc = scenario(seed, { reorg, depth });
    const inc = tmp(`inc-${seed}`);
    const fresh = tmp(`fresh-${seed}`);
    await build(sc.before, inc, sc.m);
    const r = await build(sc.after, inc, sc.n);
    expect(r.mode).toBe('incremental');
    await build(sc.after, fresh, sc.n);
    expectHeights(inc, chainFromDocs(fresh));
    expect(manifest(inc)).toBe(manifest(fresh));
    expect(manifestMismatches(inc)).toEqual([]);
  });

  it('a lower height deletes the documents above it', async () => {
    const sc = scenario(63, { reorg: false });
    const out = tmp('down');
    const fresh = tmp('down-fresh');
    await build(sc.after, out, sc.n);
    expect(heightFiles(out).has(sc.n)).toBe(true);
    const r = await build(sc.after, out, sc.n - 5);
    expect(r.mode).toBe('incremental');
    await build(sc.after, fresh, sc.n - 5);
    expectHeights(out, chainFromDocs(fresh));
    expect(manifest(out)).toBe(manifest(fresh));
  });
});

describe('snapshot verify checks the height documents', () => {
  it('names a height document with the wrong hash, a missing one and one above the tip', async () => {
    const sc = scenario(64, { reorg: false });
    const out = tmp('verify');
    await build(sc.after, out, sc.n);
    expect((await verifySnapshot(out)).problems).toEqual([]);
    const hashes = chainFromDocs(out);
    // Wrong hash (the manifest updated too, so only the content check can see it).
    const wrong = `{"height":3,"hash":"${hashes[4]}"}`;
    const lines = manifest(out).split('\n');
    const i = lines.findIndex((l) => l.endsWith(' block-height/3.json'));
    lines[i] = `${createHash('sha256').update(wrong).digest('hex')} ${wrong.length} block-height/3.json`;
    writeFileSync(join(out, 'block-height/3.json'), wrong);
    // Missing: file and manifest line gone.
    const j = lines.findIndex((l) => l.endsWith(' block-height/7.json'));
    rmSync(join(out, 'block-height/7.json'));
    lines.splice(j, 1);
    // Above the tip.
    const above = `{"height":999,"hash":"${hashes[0]}"}`;
    writeFileSync(join(out, 'block-height/999.json'), above);
    lines.splice(lines.length - 1, 0, `${createHash('sha256').update(above).digest('hex')} ${above.length} block-height/999.json`);
    const sorted = lines.filter((l) => l !== '').sort((a, b) => compareManifestPaths(a.split(' ')[2]!, b.split(' ')[2]!));
    writeFileSync(join(out, '_manifest.json'), sorted.join('\n') + '\n');
    const r = await verifySnapshot(out);
    expect(r.problems).toEqual([
      { file: 'block-height/3.json', message: `hash is ${hashes[4]}, but the main-chain block at height 3 is ${hashes[3]}` },
      { file: 'block-height/999.json', message: `is above the snapshot height ${sc.n}` },
      { file: 'block-height/7.json', message: 'is missing: every height 0–' + sc.n + ' has a block-height document' },
    ]);
  });
});
