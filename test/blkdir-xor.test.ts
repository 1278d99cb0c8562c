// Bitcoin Core ≥ 28 obfuscates blk files with the 8-byte key in blocks/xor.dat. A missing or
// damaged xor.dat used to surface as "no blocks with … magic (wrong --network?)"; now the error
// names xor.dat and says what is wrong with it. Checked on the real Namecoin Core regtest blocks
// dir (obfuscated by the node) and on the plain nbitcoin blk files.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { chainPath } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';


const NMC = NETWORKS['namecoin-regtest'];
const BTC = NETWORKS.bitcoin;
const REAL = () => chainPath('namecoin-core-regtest', 'blocks');

let tmp: string;
let n = 0;

/** A copy of the real regtest blocks dir; `xor`: what to put as xor.dat (undefined: none). */
function regtestCopy(xor: Buffer | 'dir' | undefined): string {
  const dir = join(tmp, `d${n++}`);
  mkdirSync(dir);
  for (const f of readdirSync(REAL())) if (/^blk\d{5}\.dat$/.test(f)) copyFileSync(join(REAL(), f), join(dir, f));
  if (xor === 'dir') mkdirSync(join(dir, 'xor.dat'));
  else if (xor) writeFileSync(join(dir, 'xor.dat'), xor);
  return dir;
}

async function openError(dir: string, net = NMC): Promise<string> {
  try {
    const src = await openBlocksDir(dir, net);
    await src.close();
  } catch (e) {
    return (e as Error).message;
  }
  return 'opened';
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describeShared('chaindata/namecoin-core-regtest/blocks')('xor.dat: a missing or damaged key is named', () => {
  let key: Buffer;
  let rawStart: Buffer;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'snapshot-xor-'));
    key = readFileSync(join(REAL(), 'xor.dat'));
    rawStart = readFileSync(join(REAL(), 'blk00000.dat')).subarray(0, 4);
    // The facts the tests stand on: the node's key is not zero and its files start with the magic, obfuscated.
    expect(key.length).toBe(8);
    expect(key.some((b) => b !== 0)).toBe(true);
    expect(Buffer.from(rawStart.map((b, i) => b ^ key[i]!)).toString('hex')).toBe(NMC.magic);
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('the real dir reads with its xor.dat', async () => {
    expect(await openError(REAL())).toBe('opened');
  });

  it('missing: "the blk files look obfuscated", naming the xor.dat path', async () => {
    const dir = regtestCopy(undefined);
    const msg = await openError(dir);
    expect(msg).toContain(`no blocks with namecoin-regtest magic ${NMC.magic} in 7 blk file(s)`);
    expect(msg).toContain(`the blk files look obfuscated: each of the 7 starts with ${rawStart.toString('hex')}, no known network's magic`);
    expect(msg).toContain(`${join(dir, 'xor.dat')} missing?`);
    expect(msg).not.toContain('wrong --network');
  });

  it('missing, with rev files beside the blk files (a Core blocks dir): says so', async () => {
    const dir = regtestCopy(undefined);
    copyFileSync(chainPath('nbitcoin', 'rev00000.dat'), join(dir, 'rev00000.dat'));
    const msg = await openError(dir);
    expect(msg).toMatch(new RegExp(`the blk files look obfuscated: each of the 7 starts with ${rawStart.toString('hex')}, no known network's magic, in a blocks dir with rev files: ${esc(join(dir, 'xor.dat'))} missing\\?`));
  });

  it('all zeros (Core with -blocksxor=0) while the files are obfuscated: names xor.dat', async () => {
    const dir = regtestCopy(Buffer.alloc(8));
    const msg = await openError(dir);
    expect(msg).toContain(`the blk files look obfuscated`);
    expect(msg).toContain(`${join(dir, 'xor.dat')} holds the all-zero key (no obfuscation): not the xor.dat these blk files were written with?`);
  });

  it('damaged (another 8-byte key): names xor.dat and what the files decode to', async () => {
    const bad = Buffer.from(key.map((b) => b ^ 0x5a));
    const dir = regtestCopy(bad);
    const decoded = Buffer.from(rawStart.map((b, i) => b ^ bad[i]!)).toString('hex');
    const msg = await openError(dir);
    expect(msg).toContain(`no blocks with namecoin-regtest magic ${NMC.magic}`);
    expect(msg).toContain(`with the key in ${join(dir, 'xor.dat')} (${bad.toString('hex')}) the blk files start with ${decoded}, no known network's magic: ${join(dir, 'xor.dat')} damaged, or not the one written with these blk files?`);
  });

  it('wrong length: names xor.dat and its size', async () => {
    const dir = regtestCopy(key.subarray(0, 7));
    expect(await openError(dir)).toBe(`blocks dir ${dir}: ${join(dir, 'xor.dat')} has 7 bytes, expected 8 (Bitcoin Core's blk file obfuscation key): damaged?`);
  });

  it('unreadable (a directory): names xor.dat and why', async () => {
    const dir = regtestCopy('dir');
    expect(await openError(dir)).toMatch(new RegExp(`^blocks dir ${esc(dir)}: cannot read ${esc(join(dir, 'xor.dat'))} \\(EISDIR`));
  });

  it('plain blk files with a key in xor.dat: the files are not obfuscated, the key does not belong to them', async () => {
    const dir = join(tmp, `d${n++}`);
    mkdirSync(dir);
    for (const f of ['blk00000.dat', 'blk00001.dat']) copyFileSync(chainPath('nbitcoin', f), join(dir, f));
    writeFileSync(join(dir, 'xor.dat'), key);
    const msg = await openError(dir, BTC);
    expect(msg).toContain(`no blocks with bitcoin magic ${BTC.magic} in 2 blk file(s)`);
    expect(msg).toContain(`the blk files are not obfuscated (they start with the bitcoin magic ${BTC.magic}), but ${join(dir, 'xor.dat')} holds the key ${key.toString('hex')}: remove it, or put back the xor.dat written with these blk files`);
  });

  it('another network’s files (no xor.dat involved): still "wrong --network?", naming what they hold', async () => {
    const msg = await openError(chainPath('nbitcoin'), NETWORKS.namecoin);
    expect(msg).toContain('no blocks with namecoin magic f9beb4fe in 2 blk file(s)');
    expect(msg).toContain('they start with the bitcoin magic f9beb4d9: wrong --network?');
  });

  it('the real files with their key, opened as another network: "wrong --network?", not xor.dat', async () => {
    const dir = regtestCopy(key);
    const msg = await openError(dir, BTC);
    expect(msg).toContain('they start with the bitcoin-regtest/namecoin-regtest magic fabfb5da: wrong --network?');
    expect(msg).not.toContain('xor.dat');
  });
});
