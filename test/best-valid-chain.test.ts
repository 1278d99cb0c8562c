// The best valid chain (Bitcoin Core's ActivateBestChain / InvalidChainFound): when the branch
// with the most header work holds an invalid block, that block and its descendants are marked
// invalid and the chain is chosen again among the others, by work. Builder chains (bitcoin
// regtest) written as a node's blk files, and the same blocks through the in-memory source.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeBlocksDir } from '../src/builder/blkfiles.js';
import { ChainBuilder, type BlockHandle, type BuiltBlock } from '../src/builder/chain.js';
import { locks } from '../src/builder/scripts.js';
import { parseBlock } from '../src/chain/block.js';
import { NETWORKS } from '../src/chain/networks.js';
import { buildSnapshot, type BuildReport } from '../src/site/build.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { memorySource, type MemoryBlock } from '../src/source/memory.js';
import { InvalidBlockError } from '../src/source/block-validation.js';
import { verifySnapshot } from '../src/verify/index.js';
import { nodeArgs, REPO } from './support/helpers.js';
import { tempDir } from './support/memory-builds.js';

const NET = NETWORKS['bitcoin-regtest'];
const HOSTS = ['netlify', 'cloudflare'] as const; // nginx.conf names the tree's path

/** The block with one byte of its coinbase changed: same header and hash, merkle root no longer matches. */
function badMerkle(b: BuiltBlock): BuiltBlock {
  const raw = Buffer.from(b.raw);
  const cb = parseBlock(raw, { auxpow: false }).txs[0]!;
  const at = raw.indexOf(cb.raw) + cb.raw.length - 1; // the coinbase's last lock-time byte
  raw[at]! ^= 0x01;
  return { ...b, raw };
}

interface Fork {
  /** genesis..258, the valid branch 259.., the heavy branch 259.. (fork at 258), in creation order. */
  all: BuiltBlock[];
  valid: BuiltBlock[];
  heavy: BuiltBlock[];
  /** genesis..258 and the valid branch only: the reference chain. */
  reference: BuiltBlock[];
}

/**
 * A valid chain to 260 beside a heavier branch from 258 (259..262 by default: more blocks at the
 * same target, more work). Both branches carry payments so their documents differ. The valid
 * branch is built first unless `heavyFirst`; the heavy one is the builder's best tip.
 */
function forkedChain(heavyLength = 4, validLength = 2, heavyFirst = false): Fork {
  const cb = new ChainBuilder({ network: NET, seed: 'best-valid' });
  const k = cb.key();
  cb.mine(101);
  cb.block((b) => b.pay(locks.p2pkh(k), 5_000_000n));
  cb.mine(258 - 102);
  const base = cb.tip;
  expect(base.height).toBe(258);
  const branch = (n: number, label: number): BlockHandle[] => {
    const out: BlockHandle[] = [];
    let parent: BlockHandle = base;
    for (let i = 0; i < n; i++) {
      parent = cb.block((b) => b.pay(locks.p2wpkh(k), BigInt(1_000_000 + label * 1000 + i)), { parent });
      out.push(parent);
    }
    return out;
  };
  const h = heavyFirst ? branch(heavyLength, 2) : [];
  const v = branch(validLength, 1);
  if (!heavyFirst) h.push(...branch(heavyLength, 2));
  const chain = cb.build();
  const byHash = new Map(chain.blocks.map((b) => [b.hash, b]));
  const valid = v.map((x) => byHash.get(x.hash)!);
  const heavy = h.map((x) => byHash.get(x.hash)!);
  expect(chain.tip.hash).toBe(heavy[heavyLength - 1]!.hash); // the heavy branch has the most work
  const prefix = chain.main.slice(0, 259);
  return { all: chain.blocks, valid, heavy, reference: [...prefix, ...valid] };
}

/** `blocks` with the ones in `bad` (by hash) given a wrong merkle root. */
function corrupt(blocks: BuiltBlock[], ...bad: BuiltBlock[]): BuiltBlock[] {
  const set = new Set(bad.map((b) => b.hash));
  return blocks.map((b) => (set.has(b.hash) ? badMerkle(b) : b));
}

/** Every file of a tree (the root followed if it is a symlink), path → bytes. */
function treeFiles(root: string): Map<string, Buffer> {
  const real = realpathSync(root);
  const out = new Map<string, Buffer>();
  for (const e of readdirSync(real, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    out.set(p.slice(real.length + 1), readFileSync(p));
  }
  return out;
}

function expectSameTree(a: string, b: string): void {
  const fa = treeFiles(a);
  const fb = treeFiles(b);
  expect([...fa.keys()].sort()).toEqual([...fb.keys()].sort());
  const differ = [...fa.keys()].filter((p) => !fa.get(p)!.equals(fb.get(p)!));
  expect(differ).toEqual([]);
}

const dir = tempDir('snapshot-best-valid-');
let n = 0;

/** The blocks as a node's blocks dir (in creation order: the valid branch's headers first). */
function blocksDir(blocks: BuiltBlock[]): string {
  return writeBlocksDir(blocks, dir(`blocks${n++}`), { network: NET }).dir;
}

/** Where a block's bytes start in the blk files `blocksDir(blocks)` writes. */
function placeOf(blocks: BuiltBlock[], hash: string): string {
  const rec = writeBlocksDir(blocks, dir(`blocks${n++}`), { network: NET }).records.find((x) => x.hash === hash)!;
  return `${rec.file} offset ${rec.offset + 8}`;
}

async function buildDir(blocksPath: string, out: string, extra: { height?: number; skipInvalid?: boolean } = {}): Promise<BuildReport> {
  const src = await openBlocksDir(blocksPath, NET);
  try {
    return await buildSnapshot({ source: src, outDir: out, hosts: HOSTS, ...extra });
  } finally {
    await src.close();
  }
}

function memBlocks(blocks: BuiltBlock[], main: BuiltBlock[]): MemoryBlock[] {
  const onMain = new Set(main.map((b) => b.hash));
  const mainBlocks = main.map((b) => ({ raw: blocks.find((x) => x.hash === b.hash)!.raw, kind: 'main' as const }));
  const others = blocks.filter((b) => !onMain.has(b.hash)).map((b) => ({ raw: b.raw, kind: 'side' as const, height: b.height }));
  return [...mainBlocks, ...others];
}

async function failure(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected the build to fail');
    },
    (e: Error) => e,
  );
}

const siteInfo = (out: string) => JSON.parse(readFileSync(join(out, 'stats.json'), 'utf8')) as { blocks: { main: number; side: number } };

describe('the best valid chain: the heavy branch’s first block is invalid', () => {
  const fork = forkedChain();
  const bad = fork.heavy[0]!;
  const blocks = corrupt(fork.all, bad);
  let reference = '';

  it('reference: the valid chain alone, built to 260', async () => {
    reference = dir('reference');
    const r = await buildDir(blocksDir(fork.reference), reference, { height: 260 });
    expect([r.height, r.tip]).toEqual([260, fork.valid[1]!.hash]);
    expect(r.blocks).toEqual({ main: 261, side: 0, orphan: 0 });
  }, 120_000);

  it('blocks dir, --skip-invalid --height 260: the tree is at 260 on the valid branch, byte for byte the valid chain’s; the bad block is named', async () => {
    const out = dir('skip');
    const r = await buildDir(blocksDir(blocks), out, { height: 260, skipInvalid: true });
    expect(r.height).toBe(260);
    expect(r.tip).toBe(fork.valid[1]!.hash);
    expect(r.requestedHeight).toBeUndefined();
    // The invalid block first; the heavy branch's other blocks build on it.
    expect(r.skippedInvalid[0]).toMatchObject({ kind: 'bad-txnmrklroot', hash: bad.hash, height: 259 });
    expect(r.skippedInvalid.slice(1).map((s) => [s.hash, s.kind])).toEqual(fork.heavy.slice(1).map((b) => [b.hash, 'bad-prevblk']));
    expect(r.warnings.some((w) => w.includes(bad.hash) && w.includes('bad-txnmrklroot'))).toBe(true);
    expectSameTree(out, reference);
    expect((await verifySnapshot(out)).ok).toBe(true);
  }, 120_000);

  it('blocks dir, no --height: the best valid tip, 260', async () => {
    const r = await buildDir(blocksDir(blocks), dir('skip-tip'), { skipInvalid: true });
    expect([r.height, r.tip]).toEqual([260, fork.valid[1]!.hash]);
  }, 120_000);

  it('blocks dir without --skip-invalid: the build fails naming the invalid block (file, offset, height, hash, kind)', async () => {
    const d = blocksDir(blocks);
    const err = await failure(buildDir(d, dir('strict'), { height: 260 }));
    expect(err).toBeInstanceOf(InvalidBlockError);
    expect((err as InvalidBlockError).invalid).toMatchObject({ kind: 'bad-txnmrklroot', hash: bad.hash, height: 259 });
    const head = `${placeOf(blocks, bad.hash)}: block ${bad.hash} at height 259 is invalid: bad-txnmrklroot: `;
    expect(err.message.slice(0, head.length)).toBe(head);
    // …and the chain the build would take without it and the 3 blocks built on it.
    expect(err.message).toContain(`without it and the 3 block(s) built on it the chain with the most work ends at height 260 (${fork.valid[1]!.hash})`);
  }, 120_000);

  it('the CLI: exit 1 naming the block without --skip-invalid; with it exit 0 at height 260', () => {
    const d = blocksDir(blocks);
    const run = (...extra: string[]) =>
      spawnSync(process.execPath, [...nodeArgs('src/cli.ts'), 'build', '--source', `blocks:${d}`, '--network', 'bitcoin-regtest', '--height', '260', '--hosts', 'netlify', ...extra], { cwd: REPO, encoding: 'utf8' });
    const strict = run('--out', dir('cli-strict'));
    expect(strict.status).toBe(1);
    expect(strict.stderr).toMatch(new RegExp(`block ${bad.hash} at height 259 is invalid: bad-txnmrklroot`));
    const skip = run('--out', dir('cli-skip'), '--skip-invalid');
    expect(skip.stderr).toContain(bad.hash);
    expect(skip.status).toBe(0);
    expect(skip.stdout).toMatch(/bitcoin-regtest height 260 /);
    expect(skip.stdout).toContain(`(tip ${fork.valid[1]!.hash})`);
    expect(JSON.parse(readFileSync(join(dir('cli-skip'), 'block', `${fork.valid[1]!.hash}.json`), 'utf8')).prev_block).toBe(fork.valid[0]!.hash);
  }, 120_000);

  it('in-memory source, the heavy branch given as the main chain: --skip-invalid builds the valid chain, equal to the reference', async () => {
    const chain = memBlocks(blocks, [...fork.reference.slice(0, 259), ...corrupt(fork.heavy, bad)]);
    const err = await failure(buildSnapshot({ source: memorySource(NET, chain), outDir: dir('mem-strict'), height: 260, hosts: HOSTS }));
    expect((err as InvalidBlockError).invalid).toMatchObject({ kind: 'bad-txnmrklroot', hash: bad.hash, height: 259 });
    const out = dir('mem-skip');
    const r = await buildSnapshot({ source: memorySource(NET, chain), outDir: out, height: 260, hosts: HOSTS, skipInvalid: true });
    expect([r.height, r.tip]).toEqual([260, fork.valid[1]!.hash]);
    expect(siteInfo(out).blocks).toMatchObject({ main: 261, side: 0 });
    expectSameTree(out, reference);
  }, 120_000);
});

describe('the best valid chain: an invalid block deeper in the heavy branch (Core: most work among the blocks not known invalid)', () => {
  const fork = forkedChain(6); // heavy branch 259..264

  it('the heavy branch’s valid prefix has more work than the valid branch: it stays the main chain, to 261', async () => {
    const bad = fork.heavy[3]!; // height 262: 259..261 valid, 3 blocks > the valid branch's 2
    expect(bad.height).toBe(262);
    const blocks = corrupt(fork.all, bad);
    const d = blocksDir(blocks);
    const r = await buildDir(d, dir('deep-tip'), { skipInvalid: true });
    expect([r.height, r.tip, r.requestedHeight]).toEqual([261, fork.heavy[2]!.hash, 264]);
    expect(r.skippedInvalid[0]).toMatchObject({ kind: 'bad-txnmrklroot', hash: bad.hash, height: 262 });
    expect(r.blocks.side).toBe(2); // the valid branch
    // At 260 the snapshot follows the heavy branch, whatever lies above.
    const at260 = await buildDir(d, dir('deep-260'), { height: 260, skipInvalid: true });
    expect(at260.tip).toBe(fork.heavy[1]!.hash);
    // Without --skip-invalid: fails naming it.
    const err = await failure(buildDir(d, dir('deep-strict')));
    expect((err as InvalidBlockError).invalid).toMatchObject({ kind: 'bad-txnmrklroot', hash: bad.hash, height: 262 });
  }, 120_000);

  it('the heavy branch’s valid prefix has less work: the valid branch wins, to 260', async () => {
    const bad = fork.heavy[1]!; // height 260: only 259 valid, 1 block < the valid branch's 2
    const blocks = corrupt(fork.all, bad);
    const d = blocksDir(blocks);
    const r = await buildDir(d, dir('shallow-tip'), { skipInvalid: true });
    expect([r.height, r.tip]).toEqual([260, fork.valid[1]!.hash]);
    expect(r.skippedInvalid[0]).toMatchObject({ kind: 'bad-txnmrklroot', hash: bad.hash, height: 260 });
    const at260 = dir('shallow-260');
    const r260 = await buildDir(d, at260, { height: 260, skipInvalid: true });
    expect([r260.height, r260.tip, r260.requestedHeight]).toEqual([260, fork.valid[1]!.hash, undefined]);
    // The same through the in-memory source.
    const mem = memBlocks(blocks, [...fork.reference.slice(0, 259), ...corrupt(fork.heavy, bad)]);
    const rm = await buildSnapshot({ source: memorySource(NET, mem), outDir: dir('shallow-mem'), height: 260, hosts: HOSTS, skipInvalid: true });
    expect([rm.height, rm.tip]).toEqual([260, fork.valid[1]!.hash]);
    expect((await verifySnapshot(at260)).ok).toBe(true);
  }, 120_000);
});

describe('the best valid chain: an invalid block no other branch contests, found during the scan', () => {
  // The heavy branch (259, 260) is seen first; the other branch's one block at 259 ties with the
  // heavy 259 but loses the tie, so nothing decides between them before the scan.
  const fork = forkedChain(2, 1, true);

  it('the scan sets it aside and goes on along the branch chosen again (259 of the other branch)', async () => {
    const bad = fork.heavy[0]!;
    const blocks = corrupt(fork.all, bad);
    const d = blocksDir(blocks);
    const src = await openBlocksDir(d, NET);
    expect(src.choice!.decisiveHeights()).toEqual([]); // found by the scan, not before it
    await src.close();
    const r = await buildDir(d, dir('scan-tip'), { skipInvalid: true });
    expect([r.height, r.tip, r.requestedHeight]).toEqual([259, fork.valid[0]!.hash, 260]);
    expect(r.skippedInvalid.map((s) => [s.hash, s.kind])).toEqual([
      [bad.hash, 'bad-txnmrklroot'],
      [fork.heavy[1]!.hash, 'bad-prevblk'],
    ]);
    expect(r.warnings.find((w) => w.includes(bad.hash))).toMatch(/the main chain is chosen again by work: to height 259 \(\w+\), forking at height 258/);
    const at259 = dir('scan-259');
    const r259 = await buildDir(d, at259, { height: 259, skipInvalid: true });
    expect([r259.height, r259.tip, r259.requestedHeight]).toEqual([259, fork.valid[0]!.hash, undefined]);
    const ref = dir('scan-ref');
    await buildDir(blocksDir(fork.reference), ref, { height: 259 });
    expectSameTree(at259, ref);
    // Without --skip-invalid the scan stops at it, as for any invalid main block.
    const err = await failure(buildDir(d, dir('scan-strict')));
    expect((err as InvalidBlockError).invalid).toMatchObject({ kind: 'bad-txnmrklroot', hash: bad.hash, height: 259 });
  }, 120_000);
});

describe('the best valid chain and incremental builds', () => {
  const fork = forkedChain();
  const bad = fork.heavy[0]!;

  it('a tree of the valid chain at 260 is kept, not rolled back, when a heavier invalid branch appears', async () => {
    const out = dir('inc');
    await buildDir(blocksDir(fork.reference), out, { height: 260 });
    const r = await buildDir(blocksDir(corrupt(fork.all, bad)), out, { height: 260, skipInvalid: true });
    expect(r.mode).toBe('incremental');
    expect(r.rolledBackTo).toBeUndefined();
    expect([r.height, r.tip]).toEqual([260, fork.valid[1]!.hash]);
    const fresh = dir('inc-fresh');
    await buildDir(blocksDir(fork.reference), fresh, { height: 260 });
    expectSameTree(out, fresh);
  }, 120_000);
});
