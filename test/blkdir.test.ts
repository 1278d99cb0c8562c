import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { parseBlock } from '../src/chain/block.js';
import { sha256d, toDisplayHex } from '../src/chain/hash.js';
import { NETWORKS } from '../src/chain/networks.js';
import { blockWork } from '../src/chain/work.js';
import { xorObfuscate } from '../src/chain/blkfile.js';
import { openBlocksDir, type BlocksDirSource } from '../src/source/blkdir.js';
import { expandHome, openSource } from '../src/source/index.js';
import type { OffChainBlock, SourceBlock } from '../src/source/types.js';
import { chainPath, framedBlocks, readChain } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

const BTC = NETWORKS.bitcoin;
const TIP_599 = '0000000042844571bc6bce8e1c0fbec99466971eaff89fef8c0d123582181d4d';
const KNOWN: Record<number, string> = {
  0: BTC.genesis,
  9: '000000008d9dc510f23c2657fc4f67bea30078cc05a90eb89e84cc475c080805',
  100: '000000007bc154e0fa7ea32218a72fe2c1bb9f86cf8c9ebf9a715ed27fdb229a',
  170: '00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee',
  299: '00000000b9b003c04b2fe21b4f7a2fa809eb643852573c3a1748653e2019f01c',
  300: '0000000062b69e4a2c3312a5782d7798b0711e9ebac065cd5d19f946439f8609',
  599: TIP_599,
};

const temps: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'blkdir-test-'));
  temps.push(d);
  return d;
}
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function frame(magic: string, blocks: Buffer[]): Buffer {
  const m = Buffer.from(magic, 'hex');
  return Buffer.concat(
    blocks.flatMap((b) => {
      const len = Buffer.alloc(4);
      len.writeUInt32LE(b.length);
      return [m, len, b];
    }),
  );
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const blockId = (raw: Buffer): string => toDisplayHex(sha256d(raw.subarray(0, 80)));

/** Deterministic shuffle (LCG). */
function shuffle<T>(arr: T[], seed: number): T[] {
  const a = [...arr];
  let s = seed;
  for (let i = a.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

describeShared('chaindata')('blocks dir source (real chain data)', () => {
  const nb = (f: string): string => chainPath('nbitcoin', f);
  const allBlocks = (): Buffer[] => [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];

  async function checkNbitcoinChain(src: BlocksDirSource): Promise<SourceBlock[]> {
    expect(await src.tip()).toEqual({ height: 599, hash: TIP_599 });
    const blocks = await collect(src.mainChain(599));
    expect(blocks.map((b) => b.height)).toEqual([...Array(600).keys()]);
    for (const [h, hash] of Object.entries(KNOWN)) expect(blocks[Number(h)]!.hash).toBe(hash);
    let txs = 0;
    for (const b of blocks) {
      expect(blockId(b.raw)).toBe(b.hash);
      txs += parseBlock(b.raw, { auxpow: false }).txs.length;
    }
    expect(txs).toBe(616);
    expect(await collect(src.offChain(599))).toEqual([]);
    expect(src.tipWork).toBe(600n * blockWork(0x1d00ffff));
    return blocks;
  }

  it('reads the nbitcoin dir (two files, numeric order; rev*.dat, index/ and other files ignored)', async () => {
    const dir = tempDir();
    for (const f of ['blk00000.dat', 'blk00001.dat', 'rev00000.dat']) copyFileSync(nb(f), join(dir, f));
    mkdirSync(join(dir, 'index'));
    writeFileSync(join(dir, 'index', 'blk00002.dat'), 'not a block file');
    writeFileSync(join(dir, 'blk00002.dat.bak'), Buffer.alloc(100, 0xf9));
    const src = await openBlocksDir(dir, BTC);
    try {
      expect(src.files).toEqual(['blk00000.dat', 'blk00001.dat']);
      expect(src.scanStats).toMatchObject({ files: 2, records: 600, headers: 600, duplicates: 0, skippedRanges: 0 });
      expect(src.warnings).toEqual([]);
      await checkNbitcoinChain(src);
      // a prefix of the chain
      const first10 = await collect(src.mainChain(9));
      expect(first10.map((b) => b.hash).at(-1)).toBe(KNOWN[9]);
    } finally {
      await src.close();
    }
  });

  it('incompleteblk.dat as blk00001: zero padding skipped, duplicate block 598 counted once', async () => {
    const dir = tempDir();
    copyFileSync(nb('blk00000.dat'), join(dir, 'blk00000.dat'));
    copyFileSync(nb('incompleteblk.dat'), join(dir, 'blk00001.dat'));
    const src = await openBlocksDir(dir, BTC);
    try {
      await checkNbitcoinChain(src);
      expect(src.scanStats).toMatchObject({ records: 601, headers: 600, duplicates: 1, skippedRanges: 0 });
      expect(src.warnings).toHaveLength(1);
      expect(src.warnings[0]).toMatch(/^blk00001\.dat offset 70450: duplicate copy of block [0-9a-f]{64} \(first at blk00001\.dat offset \d+\)/);
    } finally {
      await src.close();
    }
  });

  it('height above the tip is an error naming the tip height', async () => {
    const dir = tempDir();
    copyFileSync(nb('blk00000.dat'), join(dir, 'blk00000.dat'));
    const src = await openBlocksDir(dir, BTC);
    try {
      expect((await src.tip()).height).toBe(299);
      await expect(collect(src.mainChain(600))).rejects.toThrow(/height 600 is above the tip .*height 299, 00000000b9b003c0/);
    } finally {
      await src.close();
    }
  });

  it('the same 600 blocks out of order, split differently, XOR-obfuscated, with junk and padding give the same chain', async () => {
    const ref = await openBlocksDir(chainPath('nbitcoin'), BTC); // read-only shared dir: only blk files are used
    const refBlocks = await collect(ref.mainChain(599));
    await ref.close();

    const dir = tempDir();
    const key = Buffer.from('a1b2c3d4e5f60718', 'hex');
    writeFileSync(join(dir, 'xor.dat'), key);
    const shuffled = shuffle(allBlocks(), 42);
    const sizes = [7, 150, 1, 242, 200]; // blocks per file
    let k = 0;
    const magic = Buffer.from(BTC.magic, 'hex');
    for (const [fi, n] of sizes.entries()) {
      let data = frame(BTC.magic, shuffled.slice(k, k + n));
      k += n;
      if (fi === 1) {
        // junk, a record with a bad length, then the rest; and a duplicate
        const bad = Buffer.concat([magic, Buffer.from([0xff, 0xff, 0xff, 0x7f]), Buffer.alloc(20, 0x33)]);
        data = Buffer.concat([Buffer.from('garbage!'), bad, data, frame(BTC.magic, [shuffled[0]!])]);
      }
      xorObfuscate(data, 0, key);
      data = Buffer.concat([data, Buffer.alloc(4096)]); // pre-allocated tail: raw zeros, not obfuscated (Core ≥ 28)
      writeFileSync(join(dir, `blk${String(fi).padStart(5, '0')}.dat`), data);
    }
    expect(k).toBe(600);
    const src = await openBlocksDir(dir, BTC, { readAhead: 3 });
    try {
      const blocks = await checkNbitcoinChain(src);
      for (let h = 0; h < 600; h++) expect(blocks[h]!.raw.equals(refBlocks[h]!.raw)).toBe(true);
      expect(src.scanStats.duplicates).toBe(1);
      expect(src.warnings.some((w) => /^blk00001\.dat offset 0: skipped 8 bytes/.test(w))).toBe(true);
      expect(src.warnings.some((w) => /^blk00001\.dat offset 8: skipped 28 bytes \(record length 2147483647 is above/.test(w))).toBe(true);
      expect(src.warnings.some((w) => /^blk00001\.dat offset \d+: duplicate copy/.test(w))).toBe(true);
    } finally {
      await src.close();
    }
    // Without xor.dat the same files hold no readable blocks.
    rmSync(join(dir, 'xor.dat'));
    await expect(openBlocksDir(dir, BTC)).rejects.toThrow(/no blocks with bitcoin magic f9beb4d9/);
  });

  it('namecoin20192blks.blk: 624 bytes of junk skipped with a warning, 1 AuxPoW block found (orphan)', async () => {
    const dir = tempDir();
    copyFileSync(chainPath('hadoopcryptoledger', 'namecoingenesis.blk'), join(dir, 'blk00000.dat'));
    copyFileSync(chainPath('hadoopcryptoledger', 'namecoin20192blks.blk'), join(dir, 'blk00001.dat'));
    const src = await openBlocksDir(dir, NETWORKS.namecoin);
    try {
      expect(await src.tip()).toEqual({ height: 0, hash: NETWORKS.namecoin.genesis });
      expect(src.warnings[0]).toBe(`blk00001.dat offset 0: skipped 624 bytes (no namecoin magic f9beb4fe)`);
      const off = await collect(src.offChain(0));
      expect(off.map((b) => [b.kind, b.hash, b.height])).toEqual([
        ['orphan', 'bc4e533628d895788f1b276a45ebe6b60d2d3abe78271abe0eab5ea1d8191165', undefined],
      ]);
      const block = parseBlock(off[0]!.raw, { auxpow: true });
      expect(block.auxpow).toBeDefined();
      expect(block.header.time).toBe(1546776451);
    } finally {
      await src.close();
    }
  });

  it('multiblock.blk: genesis is the main chain, the other two blocks are orphans', async () => {
    const dir = tempDir();
    copyFileSync(chainPath('hadoopcryptoledger', 'multiblock.blk'), join(dir, 'blk00000.dat'));
    const src = await openBlocksDir(dir, BTC);
    try {
      expect(await src.tip()).toEqual({ height: 0, hash: BTC.genesis });
      const main = await collect(src.mainChain(0));
      expect(main).toHaveLength(1);
      const off: OffChainBlock[] = await collect(src.offChain(0));
      expect(off.map((b) => b.kind)).toEqual(['orphan', 'orphan']);
      for (const b of off) expect(blockId(b.raw)).toBe(b.hash);
      expect(src.warnings.some((w) => /2 block\(s\) with an unknown parent/.test(w))).toBe(true);
    } finally {
      await src.close();
    }
  });

  it('a pruned dir (blk00000.dat missing) is a clear error naming the missing file and heights', async () => {
    const dir = tempDir();
    copyFileSync(nb('blk00001.dat'), join(dir, 'blk00001.dat'));
    await expect(openBlocksDir(dir, BTC)).rejects.toThrow(
      /genesis block 000000000019d6.* is not in the blk files; blk00000\.dat missing \(files start at blk00001\.dat: a pruned node\?\), so heights from 0 up to the lowest block held \(0000000062b69e4a2c3312a5782d7798b0711e9ebac065cd5d19f946439f8609, at blk00001\.dat offset 0\) are missing/,
    );
  });

  it('a pruned regtest dir names the missing heights from the BIP34 coinbase height', async () => {
    const blocks = (JSON.parse(readFileSync(chainPath('bitcoin-core', 'rpc_getblockstats.json'), 'utf8')) as { blocks: string[] }).blocks.map((h) =>
      Buffer.from(h, 'hex'),
    );
    const dir = tempDir();
    const net = NETWORKS['bitcoin-regtest'];
    writeFileSync(join(dir, 'blk00002.dat'), frame(net.magic, blocks.slice(50)));
    await expect(openBlocksDir(dir, net)).rejects.toThrow(/blk00000\.dat, blk00001\.dat missing .* heights 0–49 are missing \(the lowest block held, [0-9a-f]{64}, is height 50/);
    // a gap in the middle: the chain stops at the gap, asking above it names the tip and the missing file
    writeFileSync(join(dir, 'blk00000.dat'), frame(net.magic, blocks.slice(0, 30)));
    const src = await openBlocksDir(dir, net);
    try {
      expect((await src.tip()).height).toBe(29);
      await expect(collect(src.mainChain(103))).rejects.toThrow(/height 103 is above the tip .*height 29.*blk00001\.dat missing.*54 block\(s\) have an unknown parent/);
    } finally {
      await src.close();
    }
  });

  it('wrong network: no blocks with its magic', async () => {
    await expect(openBlocksDir(chainPath('nbitcoin'), NETWORKS.namecoin)).rejects.toThrow(/no blocks with namecoin magic f9beb4fe in 2 blk file/);
    await expect(openBlocksDir(join(tmpdir(), 'no-such-dir-xyz'), BTC)).rejects.toThrow(/cannot read it/);
  });

  it('a block changed on disk after the scan is an error naming the file and offset', async () => {
    const dir = tempDir();
    copyFileSync(nb('blk00000.dat'), join(dir, 'blk00000.dat'));
    const src = await openBlocksDir(dir, BTC);
    try {
      // overwrite the nonce of block 1 (record at 8 + 285)
      const fd = openSync(join(dir, 'blk00000.dat'), 'r+');
      writeSync(fd, Buffer.from([0xde, 0xad]), 0, 2, 293 + 8 + 76);
      closeSync(fd);
      await expect(collect(src.mainChain(5))).rejects.toThrow(/^blk00000\.dat offset 293: expected block 00000000839a8e6886ab5951d76f411475428afc90947ee320161bbf18eb6048, read/);
    } finally {
      await src.close();
    }
  });

  it('openSource parses blocks:<dir> and rejects other specs', async () => {
    const src = await openSource(`blocks:${chainPath('nbitcoin')}`, BTC);
    expect((await src.tip()).hash).toBe(TIP_599);
    expect(src.description).toContain(chainPath('nbitcoin'));
    await src.close();
    await expect(openSource(`blocks:${chainPath('nbitcoin')}`, undefined)).rejects.toThrow(/needs --network/);
    await expect(openSource('file:/tmp/x', BTC)).rejects.toThrow(/expected blocks:<dir>.* or rpc:<url>/);
    await expect(openSource('/tmp/blocks', BTC)).rejects.toThrow(/expected blocks:<dir>/);
    expect(expandHome('~/x/blocks', '/home/u')).toBe('/home/u/x/blocks');
    expect(expandHome('/abs', '/home/u')).toBe('/abs');
  });
});
