// Block validation: damaged real blocks fail the build naming the block (no tree is published),
// every source (blocks dir, RPC, in-memory) is validated, --skip-invalid, and the rules of
// src/chain/validate.ts on real blocks and on blocks changed one rule at a time.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBlock, type Block } from '../src/chain/block.js';
import { ChainBuilder } from '../src/builder/chain.js';
import { ByteWriter } from '../src/builder/bytes.js';
import { generateChain } from '../src/builder/generate.js';
import { grindHeader, serializeTx } from '../src/builder/serialize.js';
import { locks } from '../src/builder/scripts.js';
import { demoChain } from '../src/builder/demo.js';
import { sha256d, toDisplayHex } from '../src/chain/hash.js';
import { NETWORKS } from '../src/chain/networks.js';
import { checkBlockBody, checkBlockPow, checkPow, consensusOf, parseValidBlock, type Invalid } from '../src/chain/validate.js';
import { buildSnapshot } from '../src/site/build.js';
import { verifySnapshot } from '../src/verify/index.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { memorySource } from '../src/source/memory.js';
import { openRpc } from '../src/source/rpc.js';
import { InvalidBlockError } from '../src/source/block-validation.js';
import { asMemoryBlocks } from './support/chains.js';
import { FakeNode, loadBlocks } from './support/fake-node.js';
import { framedBlocks, namecoinRegtestRecords, nodeArgs, readChain } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const NB = () => readChain('nbitcoin', 'blk00000.dat');
const NB1 = () => readChain('nbitcoin', 'blk00001.dat');

/** Record i of a framed blk buffer: offset of its magic, data offset and length. */
function records(buf: Buffer): { at: number; data: number; len: number }[] {
  const out: { at: number; data: number; len: number }[] = [];
  for (let pos = 0; pos + 8 <= buf.length; ) {
    const len = buf.readUInt32LE(pos + 4);
    out.push({ at: pos, data: pos + 8, len });
    pos += 8 + len;
  }
  return out;
}

const idOf = (raw: Buffer) => toDisplayHex(sha256d(raw.subarray(0, 80)));

let base: string;
let n = 0;
function blocksDir(files: Record<string, Buffer>): string {
  const dir = join(base, `blocks${n++}`);
  mkdirSync(dir);
  for (const [name, buf] of Object.entries(files)) writeFileSync(join(dir, name), buf);
  return dir;
}

async function build(dir: string, out: string, extra: { height?: number; skipInvalid?: boolean } = {}) {
  const src = await openBlocksDir(dir, NETWORKS.bitcoin);
  try {
    return await buildSnapshot({ source: src, outDir: out, hosts: [], ...extra });
  } finally {
    await src.close();
  }
}

async function failure(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected the build to fail');
    },
    (e: Error) => e,
  );
}

function cli(...args: string[]) {
  return spawnSync(process.execPath, [...nodeArgs('src/cli.ts'), ...args], { cwd: ROOT, encoding: 'utf8' });
}

describeShared('chaindata')('damaged blocks in the nbitcoin blk files fail the build naming kind, file, offset, height and hash', () => {
  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'snapshot-validate-'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  it('flipping byte 1332 of blk00000.dat (block 5’s coinbase value) fails --height 599 naming kind, file, offset, height and hash; nothing is published', async () => {
    const b0 = Buffer.from(NB());
    const rec5 = records(b0)[5]!;
    expect(1332).toBeGreaterThan(rec5.data + 80); // inside block 5's body
    const hash5 = idOf(b0.subarray(rec5.data));
    b0[1332]! ^= 0x01;
    const dir = blocksDir({ 'blk00000.dat': b0, 'blk00001.dat': NB1() });
    const out = join(base, 'o1332');
    const err = await failure(build(dir, out, { height: 599 }));
    expect(err).toBeInstanceOf(InvalidBlockError);
    expect((err as InvalidBlockError).invalid.kind).toBe('bad-txnmrklroot');
    expect(err.message).toMatch(new RegExp(`^blk00000\\.dat offset ${rec5.data}: block ${hash5} at height 5 is invalid: bad-txnmrklroot: `));
    expect(existsSync(out)).toBe(false);

    // The CLI: exit 1, the one line on stderr, no tree.
    const p = cli('build', '--source', `blocks:${dir}`, '--network', 'bitcoin', '--height', '599', '--out', join(base, 'o1332cli'));
    expect(p.status).toBe(1);
    expect(p.stderr).toContain(`snapshot: blk00000.dat offset ${rec5.data}: block ${hash5} at height 5 is invalid: bad-txnmrklroot`);
    expect(existsSync(join(base, 'o1332cli'))).toBe(false);

    // --skip-invalid: the chain stops below block 5, loudly; block 5's wrong coinbase is nowhere.
    const r = await build(dir, join(base, 'o1332skip'), { height: 599, skipInvalid: true });
    expect(r.height).toBe(4);
    expect(r.requestedHeight).toBe(599);
    expect(r.skippedInvalid.map((s) => [s.kind, s.hash, s.height])).toEqual([['bad-txnmrklroot', hash5, 5]]);
    expect(r.warnings.some((w) => w.includes(`blk00000.dat offset ${rec5.data}`) && /main chain stops at height 4/.test(w))).toBe(true);
    expect(existsSync(join(base, 'o1332skip', 'block', `${hash5}.json`))).toBe(false);
    expect((await verifySnapshot(join(base, 'o1332skip'))).ok).toBe(true);
  }, 120_000);

  it('a header bit flip (blk00001.dat byte 17293, mask 0x10) is an invalid block at its offset, not a chain silently ending at 377', async () => {
    const b1 = Buffer.from(NB1());
    const rec = records(b1)[77]!; // height 377
    expect(17293).toBeLessThan(rec.data + 80);
    expect(17293).toBeGreaterThanOrEqual(rec.data);
    b1[17293]! ^= 0x10;
    const bad = idOf(b1.subarray(rec.data));
    const dir = blocksDir({ 'blk00000.dat': NB(), 'blk00001.dat': b1 });
    const err = await failure(build(dir, join(base, 'ohdr')));
    expect(err.message).toMatch(new RegExp(`^blk00001\\.dat offset ${rec.data}: block ${bad} at height 377 is invalid: high-hash: `));
    expect(existsSync(join(base, 'ohdr'))).toBe(false);

    const skipped = await build(dir, join(base, 'ohdrskip'), { height: 599, skipInvalid: true });
    expect([skipped.height, skipped.requestedHeight, skipped.skippedInvalid.map((s) => s.kind)]).toEqual([376, 599, ['high-hash']]);

    const p = cli('build', '--source', `blocks:${dir}`, '--network', 'bitcoin', '--out', join(base, 'ohdrcli'), '--skip-invalid', '--hosts', 'nginx');
    expect(p.status).toBe(0);
    expect(p.stdout).toMatch(/bitcoin height 376 /);
    expect(p.stdout).toMatch(/invalid blocks skipped: 1/);
    // Loud: on stderr, the invalid header and the 222 blocks that no longer connect.
    expect(p.stderr).toContain(`snapshot: warning: skipped: blk00001.dat offset ${rec.data}: block ${bad} at height 377 is invalid: high-hash`);
    expect(p.stderr).toMatch(/snapshot: warning: .*222 block\(s\) with an unknown parent \(orphans\) do not connect to the chain from genesis, so the chain found ends at height 376; the first, \w+ at blk00001\.dat offset \d+/);
  }, 120_000);

  it('block 124’s body under block 123’s header is an invalid block 123 (it was published with "duplicate txids")', async () => {
    const b0 = NB();
    const recs = records(b0);
    const r123 = recs[123]!;
    const r124 = recs[124]!;
    const body = Buffer.concat([b0.subarray(r123.data, r123.data + 80), b0.subarray(r124.data + 80, r124.data + r124.len)]);
    const head = Buffer.from(b0.subarray(r123.at, r123.data));
    head.writeUInt32LE(body.length, 4);
    const changed = Buffer.concat([b0.subarray(0, r123.at), head, body, b0.subarray(r123.data + r123.len)]);
    const dir = blocksDir({ 'blk00000.dat': changed, 'blk00001.dat': NB1() });
    const err = await failure(build(dir, join(base, 'oswap'), { height: 200 }));
    expect(err.message).toMatch(new RegExp(`^blk00000\\.dat offset ${r123.data}: block ${idOf(body)} at height 123 is invalid: bad-txnmrklroot: `));
  }, 60_000);
});

describeShared('chaindata')('a record that does not parse is named by file and absolute offset', () => {
  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'snapshot-validate-parse-'));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  it('block 5 announcing 2 txs (it holds 1): the error is at the end of the block in blk00000.dat, not at an offset inside the block', async () => {
    const b0 = Buffer.from(NB());
    const rec5 = records(b0)[5]!;
    expect(b0[rec5.data + 80]).toBe(1); // the tx count
    b0[rec5.data + 80] = 2;
    const dir = blocksDir({ 'blk00000.dat': b0, 'blk00001.dat': NB1() });
    const err = await failure(build(dir, join(base, 'o'), { height: 10 }));
    expect((err as InvalidBlockError).invalid.kind).toBe('malformed');
    // The second tx would start where the block ends: the absolute offset of that byte.
    expect(err.message).toMatch(new RegExp(`^blk00000\\.dat offset ${rec5.data + rec5.len}: block ${idOf(b0.subarray(rec5.data))} at height 5 is invalid: malformed: tx version: need 4 bytes, 0 left \\(the block starts at offset ${rec5.data}\\)$`));
  }, 60_000);
});

/** A builder chain (Namecoin regtest, merge-mined) whose block 102 holds a coinbase and two payments. */
function builderChain() {
  const cb = new ChainBuilder({ network: NETWORKS['namecoin-regtest'], seed: 'validate' });
  const k = cb.key();
  cb.mine(101);
  cb.block((b) => {
    b.pay(locks.p2pkh(k), 1_000_000n);
    b.pay(locks.p2wpkh(k), 2_000_000n);
  });
  cb.mine(2);
  return asMemoryBlocks(cb.build());
}

/** CVE-2012-2459 on a block of 3 txs: the last repeated, same merkle root. */
function duplicateLastTx(raw: Buffer): Buffer {
  const block = parseBlock(raw, { auxpow: true });
  const txStart = 80 + (block.auxpow?.size ?? 0);
  expect(raw[txStart]).toBe(3);
  return Buffer.concat([raw.subarray(0, txStart), Buffer.from([4]), raw.subarray(txStart + 1), block.txs[2]!.raw]);
}

describe('every source is validated: in-memory (builder) and off-chain blocks', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-validate-mem-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('the duplicated-tail merkle mutation (same root, a repeated tx) is refused: bad-txns-duplicate, naming the source and height', async () => {
    const blocks = builderChain();
    const mutated = duplicateLastTx(blocks[102]!.raw);
    expect(parseBlock(mutated, { auxpow: true }).header.merkleRoot.equals(parseBlock(blocks[102]!.raw, { auxpow: true }).header.merkleRoot)).toBe(true);
    blocks[102] = { ...blocks[102]!, raw: mutated };
    const err = await failure(buildSnapshot({ source: memorySource(NETWORKS['namecoin-regtest'], blocks, 'builder chain'), outDir: join(dir, 'o'), hosts: [] }));
    expect((err as InvalidBlockError).invalid.kind).toBe('bad-txns-duplicate');
    expect(err.message).toMatch(new RegExp(`^builder chain: block ${idOf(mutated)} at height 102 is invalid: bad-txns-duplicate: `));
  }, 60_000);

  it('an invalid orphan fails the build; --skip-invalid leaves it out and counts it', async () => {
    const chain = demoChain();
    const blocks = asMemoryBlocks(chain);
    const i = blocks.findIndex((b) => b.kind === 'orphan');
    const raw = Buffer.from(blocks[i]!.raw);
    raw[raw.length - 5]! ^= 0xff; // the last tx's lock time
    blocks[i] = { ...blocks[i]!, raw };
    const source = () => memorySource(chain.network, blocks, 'the demo chain');
    const err = await failure(buildSnapshot({ source: source(), outDir: join(dir, 'demo'), hosts: [] }));
    expect(err.message).toMatch(new RegExp(`^the demo chain: block ${idOf(raw)}( at height \\d+)? \\(orphan block\\) is invalid: bad-txnmrklroot: `));
    const r = await buildSnapshot({ source: source(), outDir: join(dir, 'demo'), hosts: [], skipInvalid: true });
    expect(r.height).toBe(chain.main.length - 1);
    expect(r.requestedHeight).toBeUndefined();
    expect(r.blocks.orphan).toBe(chain.orphans.length - 1);
    expect(r.skippedInvalid.map((s) => [s.kind, s.chain])).toEqual([['bad-txnmrklroot', 'orphan']]);
    expect(existsSync(join(dir, 'demo', 'block', `${idOf(raw)}.json`))).toBe(false);
    expect((await verifySnapshot(join(dir, 'demo'))).ok).toBe(true);
  }, 120_000);
});

describeShared('chaindata')('every source is validated: RPC', () => {
  it('a block whose body does not match its header fails naming the node URL, height and hash', async () => {
    const main = loadBlocks();
    const raw = Buffer.from(main[102]!);
    raw[raw.length - 10]! ^= 0x04;
    main[102] = raw;
    const node = await new FakeNode({ main, side: [] }).start();
    const dir = mkdtempSync(join(tmpdir(), 'snapshot-validate-rpc-'));
    try {
      const source = await openRpc(node.url, { network: NETWORKS['bitcoin-regtest'] });
      const err = await failure(buildSnapshot({ source, outDir: join(dir, 'o'), hosts: [] }).finally(() => source.close()));
      expect(err.message).toMatch(new RegExp(`^rpc ${node.url.replace(/\./g, '\\.')}: block ${idOf(raw)} at height 102 is invalid: bad-txnmrklroot: `));
      expect(existsSync(join(dir, 'o'))).toBe(false);
    } finally {
      await node.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

// ---- the rules, one at a time ----

const kindOf = (i: Invalid | undefined) => i?.kind ?? 'valid';

describeShared('chaindata')('validate.ts on real blocks', () => {
  it('accepts every real block of the shared data (Bitcoin 0–599, Namecoin Core regtest with its AuxPoW variants, mainnet AuxPoW, segwit, testnet, regtest)', () => {
    const checked: string[] = [];
    const expectValid = (label: string, raw: Buffer, net: (typeof NETWORKS)[keyof typeof NETWORKS], height?: number) => {
      const res = parseValidBlock(raw, net, height);
      expect(res.invalid, `${label} at ${height}`).toBeUndefined();
      checked.push(label);
    };
    [...framedBlocks(NB()), ...framedBlocks(NB1())].forEach((b, h) => expectValid('nbitcoin', b, NETWORKS.bitcoin, h));
    for (const r of namecoinRegtestRecords()) expectValid('namecoin-core-regtest', r.data, NETWORKS['namecoin-regtest'], r.height);
    for (const f of ['namecoingenesis.blk', 'namecoinblock.blk', 'namecointhreedifferentopinoneblock.blk']) {
      for (const b of framedBlocks(readChain('hadoopcryptoledger', f))) expectValid(f, b, NETWORKS.namecoin, f === 'namecoingenesis.blk' ? 0 : undefined);
    }
    for (const f of ['namecoin_mainnet_19200.json', 'namecoin_mainnet_19204.json']) {
      expectValid(f, Buffer.from(JSON.parse(readChain('electrumx', 'blocks', f).toString()).block, 'hex'), NETWORKS.namecoin, Number(/_(\d+)\./.exec(f)![1]));
    }
    expectValid('block2019Jan', framedBlocks(readChain('hadoopcryptoledger', 'block2019Jan.blk'))[0]!, NETWORKS.bitcoin, 556977);
    expectValid('951658', Buffer.from(JSON.parse(readChain('electrumx', 'blocks', 'bitcoin_mainnet_951658.json').toString()).block, 'hex'), NETWORKS.bitcoin, 951658);
    expectValid('413567', readChain('bitcoin-core', 'block413567.raw'), NETWORKS.bitcoin, 413567);
    loadBlocks().forEach((b, h) => expectValid('rpc_getblockstats', b, NETWORKS['bitcoin-regtest'], h));
    for (const row of JSON.parse(readChain('bitcoin-core', 'blockfilters.json').toString()) as unknown[][]) {
      if (typeof row[0] === 'number' && typeof row[2] === 'string') expectValid('blockfilters', Buffer.from(row[2], 'hex'), NETWORKS['bitcoin-testnet'], row[0]);
    }
    expect(checked.filter((c) => c === 'namecoin-core-regtest')).toHaveLength(264);
    expect(checked).toHaveLength(600 + 264 + 3 + 2 + 3 + 104 + 10);
  });

  it('accepts the builder’s demo chain (regtest PoW solved, real AuxPoW) and every block of it', () => {
    const chain = demoChain();
    for (const b of [...chain.main, ...chain.side, ...chain.orphans]) expect(kindOf(parseValidBlock(b.raw, chain.network, b.kind === 'orphan' ? undefined : b.height).invalid), b.hash).toBe('valid');
  });

  it('accepts the fast chain generator’s blocks (the build benchmarks’ chains), merge-mined or not', () => {
    for (const [net, auxpow, profile] of [
      [NETWORKS['namecoin-regtest'], true, 'bench'],
      [NETWORKS['namecoin-regtest'], false, 'bench'],
      [NETWORKS['bitcoin-regtest'], false, 'bench'],
      [NETWORKS['namecoin-regtest'], true, 'real'],
      [NETWORKS['bitcoin-regtest'], false, 'real'],
    ] as const) {
      let count = 0;
      for (const b of generateChain({ network: net, seed: 3, txCount: 1500, txPerBlock: 40, auxpow, profile })) {
        expect(kindOf(parseValidBlock(b.raw, net, b.height).invalid), `${net.name} ${profile} ${b.height}`).toBe('valid');
        count++;
      }
      expect(count).toBeGreaterThan(130);
    }
  });

  it('compact bits: negative, zero, overflowing and above-limit targets are bad-diffbits (Core’s SetCompact flags); a hash above the target is high-hash', () => {
    const c = consensusOf(NETWORKS.bitcoin);
    const easy = Buffer.alloc(32); // hash 0 meets any valid target
    expect(kindOf(checkPow(easy, 0x1d00ffff, c))).toBe('valid');
    expect(kindOf(checkPow(easy, 0x1d80ffff, c))).toBe('bad-diffbits'); // sign bit
    expect(kindOf(checkPow(easy, 0x1d000000, c))).toBe('bad-diffbits'); // zero
    expect(kindOf(checkPow(easy, 0x01003456, c))).toBe('bad-diffbits'); // mantissa shifted out: zero
    expect(kindOf(checkPow(easy, 0xff123456, c))).toBe('bad-diffbits'); // overflow
    expect(kindOf(checkPow(easy, 0x1d01ffff, c))).toBe('bad-diffbits'); // above Bitcoin's powLimit
    expect(kindOf(checkPow(easy, 0x207fffff, consensusOf(NETWORKS['bitcoin-regtest'])))).toBe('valid');
    expect(kindOf(checkPow(Buffer.alloc(32, 0xff), 0x207fffff, consensusOf(NETWORKS['bitcoin-regtest'])))).toBe('high-hash');
    const one = parseBlock(framedBlocks(NB())[1]!, { auxpow: false }); // 00000000839a8e68…
    expect(kindOf(checkPow(one.header.hash, one.header.bits, c))).toBe('valid');
    expect(kindOf(checkPow(one.header.hash, 0x1c00ffff, c))).toBe('high-hash'); // a 256× harder target
  });

  it('the merkle root: a changed tx is bad-txnmrklroot, a repeated tail (CVE-2012-2459) is bad-txns-duplicate with the same root', () => {
    const raw = readChain('bitcoin-core', 'block413567.raw');
    const net = NETWORKS.bitcoin;
    const block = parseBlock(raw, { auxpow: false });
    expect(block.txs.length % 2).toBe(1);
    const dup: Block = { ...block, txs: [...block.txs, block.txs[block.txs.length - 1]!] };
    expect(kindOf(checkBlockBody(dup, net, 413567))).toBe('bad-txns-duplicate');
    const fewer: Block = { ...block, txs: block.txs.slice(0, -1) };
    expect(kindOf(checkBlockBody(fewer, net, 413567))).toBe('bad-txnmrklroot');
  });

  it('coinbase rules and the BIP141 witness commitment', () => {
    const net = NETWORKS.bitcoin;
    const seg = () => parseBlock(framedBlocks(readChain('hadoopcryptoledger', 'block2019Jan.blk'))[0]!, { auxpow: false });
    // The witness reserved value must be one 32-byte item; the commitment must match the wtxids.
    const a = seg();
    a.txs[0]!.inputs[0]!.witness = [Buffer.alloc(31)];
    expect(kindOf(checkBlockBody(a, net, 556977))).toBe('bad-witness-nonce-size');
    const b = seg();
    const w = b.txs.find((t, i) => i > 0 && t.inputs.some((x) => x.witness))!;
    w.raw = Buffer.from(w.raw);
    w.raw[w.raw.length - 6]! ^= 1; // a witness byte: the txid stays, the wtxid changes
    w.inputs.find((x) => x.witness)!.witness![0] = Buffer.from('00', 'hex');
    expect(kindOf(checkBlockBody(b, net, 556977))).toBe('bad-witness-merkle-match');
    // Before segwit activation (height below 481824) witness data is not allowed at all.
    expect(kindOf(checkBlockBody(seg(), net, 400000))).toBe('unexpected-witness');
    // Coinbase placement (header root recomputed so the merkle check passes).
    const g = parseBlock(framedBlocks(NB())[170]!, { auxpow: false });
    expect(g.txs).toHaveLength(2);
    const swapped: Block = { ...g, txs: [g.txs[1]!, g.txs[0]!] };
    swapped.header = { ...g.header, merkleRoot: sha256d(Buffer.concat([g.txs[1]!.hash, g.txs[0]!.hash])) };
    expect(kindOf(checkBlockBody(swapped, net, 170))).toBe('bad-cb-missing');
    const two: Block = { ...g, txs: [g.txs[0]!, g.txs[0]!] };
    two.header = { ...g.header, merkleRoot: sha256d(Buffer.concat([g.txs[0]!.hash, g.txs[0]!.hash])) };
    expect(kindOf(checkBlockBody(two, net, 170))).toBe('bad-txns-duplicate'); // a repeated pair is the mutation first
    const cb2: Block = { ...g, txs: [g.txs[0]!, parseBlock(framedBlocks(NB())[9]!, { auxpow: false }).txs[0]!] };
    cb2.header = { ...g.header, merkleRoot: sha256d(Buffer.concat(cb2.txs.map((t) => t.hash))) };
    expect(kindOf(checkBlockBody(cb2, net, 170))).toBe('bad-cb-multiple');
  });

  it('Namecoin mainnet: the first AuxPoW block’s parent PoW, a plain block’s own PoW, the chain ID and the legacy rule', () => {
    const net = NETWORKS.namecoin;
    const load = (h: number) => Buffer.from(JSON.parse(readChain('electrumx', 'blocks', `namecoin_mainnet_${h}.json`).toString()).block, 'hex');
    const aux = parseBlock(load(19200), { auxpow: true });
    expect(aux.auxpow).toBeDefined();
    expect(kindOf(checkBlockPow(aux, net, 19200))).toBe('valid');
    expect(kindOf(checkPow(aux.header.hash, aux.header.bits, consensusOf(net)))).toBe('high-hash'); // the child's own hash does not meet the target
    aux.auxpow!.parentHeader.hash = sha256d(Buffer.concat([aux.auxpow!.parentHeader.raw.subarray(0, 76), Buffer.from([1, 2, 3, 4])]));
    expect(kindOf(checkBlockPow(aux, net, 19200))).toBe('auxpow-high-hash');

    const plainRaw = load(19204);
    const plain = parseBlock(plainRaw, { auxpow: true });
    expect(plain.auxpow).toBeUndefined();
    expect(plain.header.version & 0x100).toBe(0);
    expect(kindOf(checkBlockPow(plain, net, 19204))).toBe('valid');
    const renonced = Buffer.from(plainRaw);
    renonced[79]! ^= 0x40;
    expect(kindOf(parseValidBlock(renonced, net, 19204).invalid)).toBe('high-hash');
    // A version announcing an AuxPoW with none, a wrong chain ID, a legacy block after 19200.
    expect(kindOf(checkBlockPow({ ...plain, header: { ...plain.header, version: plain.header.version | 0x100 } }, net, 19204))).toBe('bad-auxpow');
    expect(kindOf(checkBlockPow({ ...plain, header: { ...plain.header, version: (2 << 16) | 1 } }, net, 19204))).toBe('bad-chain-id');
    expect(kindOf(checkBlockPow({ ...plain, header: { ...plain.header, version: 1 } }, net, 19204))).toBe('late-legacy-block');
  });
});

/** Re-serializes an AuxPoW section (Namecoin's CAuxPow layout). */
function writeAuxPow(a: NonNullable<Block['auxpow']>, coinbaseRaw: Buffer, parent: Buffer): Buffer {
  const w = new ByteWriter(coinbaseRaw.length + 400);
  w.bytes(coinbaseRaw);
  w.bytes(a.blockHash);
  w.varint(a.coinbaseBranch.length);
  for (const b of a.coinbaseBranch) w.bytes(b);
  w.i32(a.coinbaseIndex);
  w.varint(a.chainBranch.length);
  for (const b of a.chainBranch) w.bytes(b);
  w.i32(a.chainIndex);
  w.bytes(parent);
  return w.copy();
}

describeShared('chaindata')('validate.ts: CAuxPow::check rule by rule, on a real Namecoin Core regtest AuxPoW block', () => {
  /** A merge-mined block with a chain merkle branch and the marker (blocks-manifest + chain.json). */
  function realAuxBlock(): Buffer {
    for (const { data } of namecoinRegtestRecords()) {
      const a = parseBlock(data, { auxpow: true }).auxpow;
      if (a && a.chainBranch.length >= 2 && a.coinbaseBranch.length >= 1 && a.coinbaseTx.inputs[0]!.script.includes(Buffer.from('fabe6d6d', 'hex'))) return Buffer.from(data);
    }
    throw new Error('no merge-mined block with a chain branch in the regtest data');
  }

  const net = NETWORKS['namecoin-regtest'];

  /** Rebuilds the block with a changed parent coinbase script / AuxPoW fields, re-solving the parent PoW so only the rule under test fails. */
  function variant(raw: Buffer, change: (a: NonNullable<Block['auxpow']>, script: Buffer) => Buffer | void, parentVersion?: number): Block {
    const blk = parseBlock(raw, { auxpow: true });
    const a = blk.auxpow!;
    const cb = a.coinbaseTx;
    const script = Buffer.from(cb.inputs[0]!.script);
    const newScript = change(a, script) ?? script;
    const tx = serializeTx({
      version: cb.version,
      inputs: cb.inputs.map((i, k) => ({ prevHash: i.prevHash, prevIndex: i.prevIndex, script: k === 0 ? newScript : i.script, sequence: i.sequence, witness: i.witness })),
      outputs: cb.outputs,
      lockTime: cb.lockTime,
    });
    let root = tx.hash;
    for (const sib of a.coinbaseBranch) root = sha256d(Buffer.concat([root, sib]));
    const parent = Buffer.from(a.parentHeader.raw);
    root.copy(parent, 36);
    if (parentVersion !== undefined) parent.writeUInt32LE(parentVersion >>> 0, 0);
    grindHeader(parent);
    const rebuilt = Buffer.concat([raw.subarray(0, 80), writeAuxPow(a, tx.raw, parent), raw.subarray(80 + a.size)]);
    return parseBlock(rebuilt, { auxpow: true });
  }
  const rule = (b: Block) => {
    const r = checkBlockPow(b, net);
    return r ? `${r.kind}: ${r.detail}` : 'valid';
  };

  it('the unchanged block and a re-solved copy are valid', () => {
    const raw = realAuxBlock();
    expect(rule(parseBlock(raw, { auxpow: true }))).toBe('valid');
    expect(rule(variant(raw, () => undefined))).toBe('valid');
  });

  it('each rule fails on its own', () => {
    const raw = realAuxBlock();
    const mm = Buffer.from('fabe6d6d', 'hex');
    expect(rule(variant(raw, (_a, s) => Buffer.concat([s, mm])))).toMatch(/^bad-auxpow: several merged-mining headers/);
    expect(rule(variant(raw, (_a, s) => { const i = s.indexOf(mm); return Buffer.concat([s.subarray(0, i + 4), Buffer.from([0]), s.subarray(i + 4)]); }))).toMatch(/^bad-auxpow: the merged-mining header is not just before the chain merkle root/);
    // Without the marker the root must start within the first 20 bytes (Core's backward compatibility).
    const unmarked = (pad: number) => variant(raw, (_a, s) => { const i = s.indexOf(mm); return Buffer.concat([Buffer.alloc(pad, 1), s.subarray(0, i), s.subarray(i + 4)]); });
    expect(rule(unmarked(0))).toBe('valid');
    expect(rule(unmarked(21))).toMatch(/^bad-auxpow: without a merged-mining header the chain merkle root must start in the first 20 bytes/);
    expect(rule(variant(raw, (_a, s) => { const i = s.indexOf(mm) + 4; s[i + 5]! ^= 1; return s; }))).toMatch(/^bad-auxpow: the chain merkle root is not in the parent coinbase/);
    expect(rule(variant(raw, (_a, s) => { const i = s.indexOf(mm) + 36; s[i]! ^= 0x08; return s; }))).toMatch(/^bad-auxpow: chain merkle tree size \d+ does not match the branch length/);
    expect(rule(variant(raw, (_a, s) => { const i = s.indexOf(mm) + 40; s.writeUInt32LE((s.readUInt32LE(i) + 1) >>> 0, i); return s; }))).toMatch(/^bad-auxpow: chain index \d+ is not the expected \d+/);
    expect(rule(variant(raw, (_a, s) => s.subarray(0, s.indexOf(mm) + 36 + 4)))).toMatch(/^bad-auxpow: no chain merkle tree size and nonce/);
    expect(rule(variant(raw, (a) => { a.coinbaseBranch[0] = Buffer.alloc(32, 9); }))).toBe('valid'); // the parent root is recomputed from the changed branch
    expect(rule(variant(raw, () => undefined, 0x20000000 | 0x100))).toMatch(/^bad-auxpow: the parent block has the AuxPoW version flag/);
    expect(rule(variant(raw, () => undefined, (1 << 16) | 4))).toMatch(/^bad-auxpow: the parent block has our chain ID/);
    // The coinbase branch no longer leads to the parent's root (the parent is not recomputed here).
    const blk = parseBlock(raw, { auxpow: true });
    blk.auxpow!.coinbaseBranch[0] = Buffer.alloc(32, 7);
    expect(rule(blk)).toMatch(/^bad-auxpow: the coinbase merkle branch does not lead to the parent block's merkle root/);
    const long = parseBlock(raw, { auxpow: true });
    long.auxpow!.chainBranch = Array.from({ length: 31 }, () => Buffer.alloc(32));
    expect(rule(long)).toMatch(/^bad-auxpow: chain merkle branch too long/);
    const moved = parseBlock(raw, { auxpow: true });
    moved.auxpow!.chainIndex ^= 1; // another leaf: another chain root, not in the coinbase
    expect(rule(moved)).toMatch(/^bad-auxpow: the chain merkle root is not in the parent coinbase/);
  });
});

