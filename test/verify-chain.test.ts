// `snapshot verify` rechecks the chain rules from the tree's own .bin files, so a tree
// that is corrupted but consistent (every document agrees with every .bin and the manifest)
// fails. Such trees are made the way the unvalidated build made them: this file replaces the
// validating source wrapper by a pass-through (parse only), then builds from damaged blocks.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { parseBlock } from '../src/chain/block.js';
import { NETWORKS } from '../src/chain/networks.js';
import { buildSnapshot } from '../src/site/build.js';
import { verifySnapshot } from '../src/verify/index.js';
import { memorySource } from '../src/source/memory.js';
import type { ChainSource } from '../src/source/types.js';
import { framedBlocks, manifestMismatches, readChain } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

vi.mock('../src/source/block-validation.js', async (importOriginal) => {
  const orig = await importOriginal<typeof import('../src/source/block-validation.js')>();
  // The build as it was before validation: blocks are parsed, never checked.
  const passThrough = (s: ChainSource) => ({
    ...s,
    skipped: [],
    stoppedAt: undefined,
    tip: () => s.tip(),
    hashAt: (h: number) => s.hashAt(h),
    close: () => s.close(),
    get warnings() {
      return s.warnings;
    },
    async *mainChain(height: number, from?: number) {
      for await (const b of s.mainChain(height, from)) yield { ...b, block: parseBlock(b.raw, { auxpow: s.network.auxpow }) };
    },
    async *offChain(height: number) {
      for await (const b of s.offChain(height)) yield { ...b, block: parseBlock(b.raw, { auxpow: s.network.auxpow }) };
    },
  });
  return { ...orig, validatedSource: passThrough };
});

const sat = (v: string) => BigInt(v.replace('.', ''));

describeShared('chaindata/nbitcoin')('verify rechecks the chain rules from the .bin files', () => {
  let dir: string;
  const blocks = () => [...framedBlocks(readChain('nbitcoin', 'blk00000.dat'))].slice(0, 11).map((b) => Buffer.from(b));
  const source = (raws: Buffer[]) => memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin 0–10');

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-verify-chain-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the untouched chain verifies', async () => {
    const out = join(dir, 'good');
    await buildSnapshot({ source: source(blocks()), outDir: out, hosts: [] });
    expect((await verifySnapshot(out)).problems).toEqual([]);
  }, 60_000);

  it('byte 1332 flipped (block 5’s coinbase pays 7.05032704): a consistent tree, and verify fails on block 5’s merkle root', async () => {
    const raws = blocks();
    // blk00000.dat byte 1332 is byte 1332 − 1185 − 8 of block 5 (record at 1185).
    raws[5]![1332 - 1185 - 8]! ^= 0x01;
    const out = join(dir, 'flip');
    await buildSnapshot({ source: source(raws), outDir: out, hosts: [] });
    const block5 = parseBlock(raws[5]!, { auxpow: false });
    const doc = JSON.parse(readFileSync(join(out, 'tx', `${block5.txs[0]!.txid}.json`), 'utf8')) as { out: { value: string }[] };
    expect(sat(doc.out[0]!.value)).toBe(705_032_704n); // the wrong value the unvalidated build published: 7.05032704
    expect(manifestMismatches(out)).toEqual([]); // consistent: every file as listed
    const r = await verifySnapshot(out);
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([
      { file: `block/${block5.header.id}.bin`, message: expect.stringMatching(/^is an invalid block: bad-txnmrklroot: /) as unknown as string },
    ]);
  }, 60_000);

  it('a tip header whose hash misses its target (nonce changed): verify fails with high-hash', async () => {
    const raws = blocks();
    raws[10]![76]! ^= 0x55; // the tip: no later block names its hash
    const out = join(dir, 'pow');
    await buildSnapshot({ source: source(raws), outDir: out, hosts: [] });
    expect(manifestMismatches(out)).toEqual([]);
    const r = await verifySnapshot(out);
    const tip = parseBlock(raws[10]!, { auxpow: false }).header.id;
    expect(r.problems).toEqual([{ file: `block/${tip}.bin`, message: expect.stringMatching(/^is an invalid block: high-hash: /) as unknown as string }]);
  }, 60_000);
});
