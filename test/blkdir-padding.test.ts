// Core ≥ 28 blk files: records are XOR-obfuscated with xor.dat, but the
// pre-allocated tail (fallocate) is raw zeros that never went through the XOR
// stream. Core's reindex finds no magic there and moves on silently; so must we.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeBlocksDir } from '../src/builder/blkfiles.js';
import { xorObfuscate } from '../src/chain/blkfile.js';
import { demoChain } from '../src/builder/demo.js';
import { NETWORKS } from '../src/chain/networks.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { chainPath } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

const NMC = NETWORKS['namecoin-regtest'];
const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describe('blocks dir: Core ≥ 28 pre-allocation padding', () => {
  it('XORed records followed by raw zero padding read with no warning and every block intact', async () => {
    const chain = demoChain();
    const dir = mkdtempSync(join(tmpdir(), 'blk-pad-'));
    temps.push(dir);
    const key = Buffer.from('9ec6b7d334529f63', 'hex');
    const blocks = [...chain.main, ...chain.side]; // the demo's orphans would add their own warning
    const res = writeBlocksDir(blocks, dir, { network: NMC, maxFileSize: 40_000, chunkSize: 16_384, xorKey: key, shuffle: true, seed: 11 });
    // The fixture really is what Core writes: each file ends in raw zeros that are not the key stream.
    let padded = 0;
    for (const f of res.files) {
      const data = readFileSync(join(dir, f));
      const last = res.records.filter((r) => r.file === f).at(-1)!;
      const end = last.offset + 8 + last.size;
      if (end < data.length) padded++;
      expect(data.subarray(end).every((b) => b === 0)).toBe(true);
    }
    expect(padded).toBeGreaterThan(1);
    const src = await openBlocksDir(dir, NMC);
    try {
      expect(src.warnings).toEqual([]);
      expect(src.scanStats.skippedRanges).toBe(0);
      expect(src.scanStats.records).toBe(blocks.length);
      const got: Buffer[] = [];
      for await (const b of src.mainChain(chain.tip.height)) got.push(b.raw);
      expect(got.map((b) => b.toString('hex'))).toEqual(chain.main.map((b) => b.raw.toString('hex')));
    } finally {
      await src.close();
    }
  });

  it('junk after the padding is still reported, at its own offset', async () => {
    const chain = demoChain();
    const dir = mkdtempSync(join(tmpdir(), 'blk-pad-'));
    temps.push(dir);
    const key = Buffer.from('0102030405060708', 'hex');
    const res = writeBlocksDir(chain.main.slice(0, 5), dir, { network: NMC, chunkSize: 16_384, xorKey: key });
    const path = join(dir, res.files[0]!);
    const data = readFileSync(path);
    data.fill(0x55, 16_000, 16_010); // raw junk inside the padding
    writeFileSync(path, data);
    const src = await openBlocksDir(dir, NMC);
    try {
      expect(src.warnings).toEqual([`${res.files[0]} offset 16000: skipped 10 bytes (no namecoin-regtest magic fabfb5da)`]);
    } finally {
      await src.close();
    }
  });

  it('records after raw zeros whose key turns their magic into raw zeros are still found (crash-restart layout)', async () => {
    const chain = demoChain();
    const dir = mkdtempSync(join(tmpdir(), 'blk-pad-'));
    temps.push(dir);
    // The worst key: the magic itself, so a record at an offset ≡ 0 (mod 8) starts with 4 raw zero bytes.
    const key = Buffer.concat([Buffer.from(NMC.magic, 'hex'), Buffer.from('01020304', 'hex')]);
    writeFileSync(join(dir, 'xor.dat'), key);
    const frames = (blocks: { raw: Buffer }[]) =>
      Buffer.concat(blocks.flatMap((b) => [Buffer.from(NMC.magic, 'hex'), Buffer.from(Uint32Array.of(b.raw.length).buffer), b.raw]));
    const first = frames(chain.main.slice(0, 3));
    xorObfuscate(first, 0, key);
    const gap = Buffer.alloc(8 - (first.length % 8) + 4096); // raw zeros up to an offset ≡ 0 (mod 8)
    const second = frames(chain.main.slice(3, 6));
    const at = first.length + gap.length;
    expect(at % 8).toBe(0);
    xorObfuscate(second, at, key);
    expect(second.subarray(0, 4).equals(Buffer.alloc(4))).toBe(true);
    writeFileSync(join(dir, 'blk00000.dat'), Buffer.concat([first, gap, second, Buffer.alloc(5000)]));
    const src = await openBlocksDir(dir, NMC);
    try {
      expect(src.warnings).toEqual([]);
      expect(src.scanStats.records).toBe(6);
      expect((await src.tip()).hash).toBe(chain.main[5]!.hash);
    } finally {
      await src.close();
    }
  });
});

const REAL = chainPath('namecoin-core-regtest');
describeShared('chaindata/namecoin-core-regtest')('blocks dir: real Namecoin Core regtest datadir (xor.dat, fastprune)', () => {
  it('reads all 264 records with 0 warnings; blk00006.dat ends in raw zero padding', async () => {
    const manifest = JSON.parse(readFileSync(join(REAL, 'blocks-manifest.json'), 'utf8')) as {
      files: Record<string, { size: number; sha256: string; data_end?: number; zero_padding?: number; blocks?: unknown[] }>;
    };
    let records = 0;
    for (const [name, f] of Object.entries(manifest.files)) {
      const data = readFileSync(join(REAL, 'blocks', name));
      expect(createHash('sha256').update(data).digest('hex'), name).toBe(f.sha256);
      records += f.blocks?.length ?? 0;
    }
    const pad = manifest.files['blk00006.dat']!;
    expect(pad.zero_padding).toBeGreaterThan(0);
    const tail = readFileSync(join(REAL, 'blocks', 'blk00006.dat')).subarray(pad.data_end!);
    expect(tail.length).toBe(pad.zero_padding);
    expect(tail.every((b) => b === 0)).toBe(true);

    const src = await openBlocksDir(join(REAL, 'blocks'), NMC);
    try {
      expect(src.warnings).toEqual([]);
      expect(src.scanStats.records).toBe(records);
      expect(src.scanStats.skippedBytes).toBe(0);
      expect(await src.tip()).toEqual({ height: 260, hash: 'c7f3e020fd13e5828dcfc2d439f685a99bfddc3ba34c3aad32a9e8f21c8d396b' });
    } finally {
      await src.close();
    }
  });
});
