// CompactSize is read as Bitcoin Core reads it (serialize.h ReadCompactSize, range check on):
// the shortest encoding only ("non-canonical ReadCompactSize()") and nothing above MAX_SIZE
// (0x02000000). A longer encoding of a block's tx count or of an AuxPoW branch count changes
// neither the block hash nor the merkle root, so a lax reader published a block that differs
// from the node's. Every CompactSize site of real blocks is re-encoded here and must fail,
// naming the field and where: the offset in the block, the blk file and absolute offset through
// the blocks-dir source, the node's URL through the RPC source, and exit 1 from the CLI.
//
// The sites are found by a walker of the serialization written here (not the parser under
// test), so the expected offsets are where this test put the bytes.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBlock } from '../src/chain/block.js';
import { ParseError } from '../src/chain/errors.js';
import { sha256d, toDisplayHex } from '../src/chain/hash.js';
import { NETWORKS, type Network } from '../src/chain/networks.js';
import { Reader } from '../src/chain/reader.js';
import { parseTx } from '../src/chain/tx.js';
import { parseValidBlock } from '../src/chain/validate.js';
import { buildSnapshot } from '../src/site/build.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { openRpc } from '../src/source/rpc.js';
import { validatedSource } from '../src/source/block-validation.js';
import { CS_FIELDS, encode, nonCanonical, reencode, sitesOf, width, widths, type Site } from './support/compactsize-sites.js';
import { FakeNode, loadBlocks } from './support/fake-node.js';
import { REPO, chainPath, framedBlocks, namecoinRegtestRecords, nodeArgs, readChain } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';


const MAX_SIZE = 0x02000000;

// ---- Core's cases (src/test/serialize_tests.cpp, BOOST_AUTO_TEST_CASE(noncanonical)), plus MAX_SIZE ----

/** [bytes, value Core reads or the error]: the non-canonical ones throw "non-canonical ReadCompactSize()". */
const CORE_CASES: [string, number | 'non-canonical' | 'too large'][] = [
  ['fd0000', 'non-canonical'], // zero encoded with three bytes
  ['fdfc00', 'non-canonical'], // 0xfc encoded with three bytes
  ['fdfd00', 0xfd], // 0xfd encoded with three bytes is OK
  ['fe00000000', 'non-canonical'], // zero encoded with five bytes
  ['feffff0000', 'non-canonical'], // 0xffff encoded with five bytes
  ['fe00000100', 0x10000], // canonical 5-byte form
  ['ff0000000000000000', 'non-canonical'], // zero encoded with nine bytes
  ['ffffffff0100000000', 'non-canonical'], // 0x01ffffff encoded with nine bytes
  // Canonical, but above MAX_SIZE: ReadCompactSize(range_check = true) throws "size too large".
  ['ff0000000001000000', 'too large'],
  ['fe00000002', MAX_SIZE], // MAX_SIZE itself is allowed
  ['fe01000002', 'too large'],
  ['feffffffff', 'too large'],
];

describe('Reader.varint: Core’s ReadCompactSize cases', () => {
  it.each(CORE_CASES)('%s → %s', (hex, expected) => {
    // Behind 3 other bytes, so the offset in the error is the varint's, not 0.
    const buf = Buffer.concat([Buffer.from('aabbcc', 'hex'), Buffer.from(hex, 'hex')]);
    const r = new Reader(buf, 3);
    if (typeof expected === 'number') {
      expect(r.varint('n')).toBe(expected);
      expect(r.pos).toBe(buf.length);
      return;
    }
    let err: unknown;
    try {
      r.varint('the field');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ParseError);
    expect((err as ParseError).offset).toBe(3);
    const value = hex.length === 6 ? Buffer.from(hex, 'hex').readUInt16LE(1) : hex.length === 10 ? Buffer.from(hex, 'hex').readUInt32LE(1) : Number(Buffer.from(hex, 'hex').readBigUInt64LE(1));
    expect((err as ParseError).what).toBe(
      expected === 'non-canonical'
        ? `the field: non-canonical CompactSize (${hex.slice(0, 2)} ${hex.slice(2)} encodes ${value})`
        : `the field: CompactSize ${value} is above MAX_SIZE ${MAX_SIZE}`,
    );
  });

  it('every 1-, 3- and 5-byte value reads back from its canonical encoding up to MAX_SIZE (Core’s compactsize test)', () => {
    for (let i = 1; i <= MAX_SIZE; i *= 2) {
      for (const v of [i - 1, i]) {
        const r = new Reader(encode(v, width(v)));
        expect(r.varint()).toBe(v);
        expect(r.remaining).toBe(0);
      }
    }
  });
});

// ---- the sites of real blocks, found independently ----

function parseError(f: () => unknown): ParseError {
  try {
    f();
  } catch (e) {
    if (e instanceof ParseError) return e;
    throw e;
  }
  throw new Error('no ParseError');
}

interface Sample {
  label: string;
  net: Network;
  block: Buffer;
}

/** Real blocks covering every site: Bitcoin mainnet (legacy), segwit, Namecoin AuxPoW with segwit. */
function samples(): Sample[] {
  const nmc = namecoinRegtestRecords().filter((r) => r.chain === 'main');
  const nmcSegwit = nmc.find((r) => sitesOf(r.data, true).some((s) => s.field === 'witness item count'))!;
  const nmcBranch = nmc.find((r) => sitesOf(r.data, true).some((s) => s.field === 'auxpow chain branch count' && s.value > 0))!;
  const testnet = (JSON.parse(readChain('bitcoin-core', 'blockfilters.json').toString()) as unknown[][]).filter((row) => typeof row[2] === 'string');
  const segwit = testnet.map((row) => Buffer.from(row[2] as string, 'hex')).find((b) => sitesOf(b, false).some((s) => s.field === 'witness item length'))!;
  return [
    { label: 'bitcoin genesis', net: NETWORKS.bitcoin, block: framedBlocks(readChain('nbitcoin', 'blk00000.dat'))[0]! },
    { label: 'bitcoin 951658 (segwit, taproot)', net: NETWORKS.bitcoin, block: Buffer.from(JSON.parse(readChain('electrumx', 'blocks', 'bitcoin_mainnet_951658.json').toString()).block, 'hex') },
    { label: 'testnet3 segwit block', net: NETWORKS['bitcoin-testnet'], block: segwit },
    { label: `namecoin regtest ${nmcSegwit.height} (AuxPoW, segwit)`, net: NETWORKS['namecoin-regtest'], block: nmcSegwit.data },
    { label: `namecoin regtest ${nmcBranch.height} (AuxPoW chain branch)`, net: NETWORKS['namecoin-regtest'], block: nmcBranch.data },
    { label: 'namecoin mainnet 19200 (first AuxPoW)', net: NETWORKS.namecoin, block: Buffer.from(JSON.parse(readChain('electrumx', 'blocks', 'namecoin_mainnet_19200.json').toString()).block, 'hex') },
  ];
}


describeShared('chaindata')('every CompactSize site of real blocks: a longer encoding is refused at its offset', () => {
  let rows: { sample: Sample; site: Site }[];
  beforeAll(() => {
    rows = [];
    for (const sample of samples()) {
      // Each field's first and last site in the block: the first tx and the last, first input and last.
      const byField = new Map<string, Site[]>();
      for (const s of sitesOf(sample.block, sample.net.auxpow)) byField.set(s.field, [...(byField.get(s.field) ?? []), s]);
      for (const list of byField.values()) for (const site of new Set([list[0]!, list[list.length - 1]!])) rows.push({ sample, site });
    }
  });

  it('the samples cover every site and parse as they are', () => {
    expect(new Set(rows.map((r) => r.site.field))).toEqual(new Set(CS_FIELDS));
    for (const s of samples()) expect(parseBlock(s.block, { auxpow: s.net.auxpow }).raw.length).toBe(s.block.length);
  });

  it('each longer encoding of the value that is there (3, 5 and 9 bytes): ParseError at the site, naming the field', () => {
    const failures: string[] = [];
    for (const { sample, site } of rows) {
      for (const w of widths(site)) {
        const bad = reencode(sample.block, site, encode(site.value, w));
        const label = `${sample.label}: ${site.field} at ${site.offset} as ${w} bytes`;
        try {
          const e = parseError(() => parseBlock(bad, { auxpow: sample.net.auxpow }));
          if (e.offset !== site.offset || e.what !== nonCanonical(site, w)) failures.push(`${label}: ${e.message}`);
        } catch (e) {
          failures.push(`${label}: ${(e as Error).message}`);
        }
        // parseValidBlock (every source's path, the RPC hex included) says 'malformed' at that offset.
        const res = parseValidBlock(bad, sample.net);
        if (res.invalid?.kind !== 'malformed' || res.invalid.offset !== site.offset) failures.push(`${label}: parseValidBlock ${JSON.stringify(res.invalid)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('each of Core’s cases at each site: non-canonical and too-large ones refused at the site, the canonical ones read past it', () => {
    const failures: string[] = [];
    for (const { sample, site } of rows) {
      for (const [hex, expected] of CORE_CASES) {
        const bad = reencode(sample.block, site, Buffer.from(hex, 'hex'));
        const label = `${sample.label}: ${site.field} at ${site.offset} = ${hex}`;
        let e: ParseError | undefined;
        try {
          parseBlock(bad, { auxpow: sample.net.auxpow });
        } catch (x) {
          if (!(x instanceof ParseError)) throw x;
          e = x;
        }
        if (expected === 'non-canonical' || expected === 'too large') {
          const want = expected === 'non-canonical' ? /: non-canonical CompactSize \(/ : /: CompactSize \d+ is above MAX_SIZE 33554432$/;
          if (!e || e.offset !== site.offset || !e.what.startsWith(`${site.field}: `) || !want.test(e.what)) failures.push(`${label}: ${e?.message ?? 'parsed'}`);
        } else if (e && e.offset === site.offset && /non-canonical|MAX_SIZE/.test(e.what)) failures.push(`${label}: refused a canonical CompactSize: ${e.message}`);
        // (a canonical value may still be refused: the block cannot hold that many, or the bytes after it no longer parse)
      }
    }
    expect(failures).toEqual([]);
  });

  it('a standalone tx (parseTx: the tx documents’ path) refuses a longer encoding too', () => {
    const block = samples()[0]!.block;
    const tx = block.subarray(81); // genesis: 1 tx after the 1-byte count
    const site = sitesOf(block, false).find((s) => s.field === 'output count')!;
    const e = parseError(() => parseTx(reencode(tx, { ...site, offset: site.offset - 81 }, encode(site.value, 3))));
    expect(e.offset).toBe(site.offset - 81);
    expect(e.what).toBe(nonCanonical(site, 3));
  });
});

// ---- through the sources: blk file + absolute offset, node URL, CLI exit ----

let tmp: string;
let nDir = 0;

/** Writes blocks as blk files (`magic | len | block` records); returns the dir and each block's absolute data offset. */
function writeBlocksDir(magic: string, blocks: { file: string; data: Buffer }[]): { dir: string; offsets: number[] } {
  const dir = join(tmp, `blocks${nDir++}`);
  mkdirSync(dir);
  const parts = new Map<string, Buffer[]>();
  const sizes = new Map<string, number>();
  const offsets: number[] = [];
  for (const b of blocks) {
    const head = Buffer.alloc(8);
    Buffer.from(magic, 'hex').copy(head);
    head.writeUInt32LE(b.data.length, 4);
    parts.set(b.file, [...(parts.get(b.file) ?? []), head, b.data]);
    const at = sizes.get(b.file) ?? 0;
    offsets.push(at + 8);
    sizes.set(b.file, at + 8 + b.data.length);
  }
  for (const [f, p] of parts) writeFileSync(join(dir, f), Buffer.concat(p));
  return { dir, offsets };
}

/** Reads the whole dir through the validating wrapper, as a build does: the error, or undefined. */
async function readAll(dir: string, net: Network): Promise<Error | undefined> {
  let src;
  try {
    src = validatedSource(await openBlocksDir(dir, net));
  } catch (e) {
    return e as Error;
  }
  try {
    const tip = await src.tip();
    for await (const b of src.mainChain(tip.height)) void b;
    for await (const b of src.offChain(tip.height)) void b;
    return undefined;
  } catch (e) {
    return e as Error;
  } finally {
    await src.close();
  }
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describeShared('chaindata')('blocks dir: a block with a longer CompactSize fails naming the blk file, the absolute offset and the field', () => {
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'snapshot-compactsize-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  interface DirRow {
    label: string;
    net: Network;
    magic: string;
    blocks: { file: string; data: Buffer }[];
    /** Which block was changed, and how. */
    index: number;
    site: Site;
    w: number;
  }

  function dirRows(): DirRow[] {
    const rows: DirRow[] = [];
    const nb: { file: string; data: Buffer }[] = [];
    for (const file of ['blk00000.dat', 'blk00001.dat']) for (const data of framedBlocks(readChain('nbitcoin', file))) nb.push({ file, data });
    const nmc = namecoinRegtestRecords().map((r) => ({ file: r.file, data: r.data }));
    for (const [label, net, magic, blocks] of [
      ['bitcoin (nbitcoin blk files)', NETWORKS.bitcoin, 'f9beb4d9', nb],
      ['namecoin regtest (Namecoin Core blk files)', NETWORKS['namecoin-regtest'], 'fabfb5da', nmc],
    ] as const) {
      const seen = new Set<string>();
      // Each field at the first block (from height 1: genesis has no AuxPoW) where it occurs.
      for (let i = 1; i < blocks.length && seen.size < CS_FIELDS.length; i++) {
        for (const site of sitesOf(blocks[i]!.data, net.auxpow)) {
          if (seen.has(site.field)) continue;
          seen.add(site.field);
          for (const w of widths(site)) rows.push({ label, net, magic, blocks, index: i, site, w });
        }
      }
    }
    return rows;
  }

  it('every site of the bitcoin and the namecoin regtest chain, 3, 5 and 9 bytes', async () => {
    const rows = dirRows();
    expect(new Set(rows.filter((r) => r.net.auxpow).map((r) => r.site.field))).toEqual(new Set(CS_FIELDS));
    const failures: string[] = [];
    for (const row of rows) {
      const blocks = row.blocks.map((b, i) => (i === row.index ? { ...b, data: reencode(b.data, row.site, encode(row.site.value, row.w)) } : b));
      const { dir, offsets } = writeBlocksDir(row.magic, blocks);
      const err = await readAll(dir, row.net);
      rmSync(dir, { recursive: true, force: true });
      const file = blocks[row.index]!.file;
      const at = offsets[row.index]! + row.site.offset;
      const want = new RegExp(`^${escape(file)} offset ${at}: block ${toDisplayHex(sha256d(blocks[row.index]!.data.subarray(0, 80)))} .*is invalid: malformed: ${escape(nonCanonical(row.site, row.w))}`);
      if (!err || !want.test(err.message)) failures.push(`${row.label} block #${row.index} ${row.site.field} as ${row.w} bytes: expected ${file} offset ${at}; got ${err?.message ?? 'no error'}`);
    }
    expect(failures).toEqual([]);
  }, 240_000);

  it('the genesis tx count as fd 0100 (record length + 2) fails the CLI build: exit 1, blk00000.dat offset 88', async () => {
    const b0 = readChain('nbitcoin', 'blk00000.dat');
    expect(b0[88]).toBe(1); // the genesis tx count
    const changed = Buffer.concat([b0.subarray(0, 88), Buffer.from('fd0100', 'hex'), b0.subarray(89)]);
    changed.writeUInt32LE(b0.readUInt32LE(4) + 2, 4);
    const dir = join(tmp, 'cli-blocks');
    mkdirSync(dir);
    writeFileSync(join(dir, 'blk00000.dat'), changed);
    copyFileSync(chainPath('nbitcoin', 'blk00001.dat'), join(dir, 'blk00001.dat'));
    const out = join(tmp, 'cli-out');
    const res = await new Promise<{ code: number | null; stderr: string }>((ok) => {
      execFile(process.execPath, [...nodeArgs('src/cli.ts'), 'build', '--source', `blocks:${dir}`, '--network', 'bitcoin', '--height', '599', '--out', out], { cwd: REPO, encoding: 'utf8' }, (err, _stdout, stderr) =>
        ok({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
      );
    });
    expect(res.code).not.toBe(0);
    expect(res.code).not.toBeNull();
    expect(res.stderr).toContain(`blk00000.dat offset 88: block ${NETWORKS.bitcoin.genesis} at height 0 is invalid: malformed: tx count: non-canonical CompactSize (fd 0100 encodes 1)`);
    expect(() => readFileSync(join(out, 'block', '0.bin'))).toThrow();
  }, 120_000);
});

describeShared('chaindata')('RPC: the node’s hex goes through the same parser', () => {
  it('block 102 with its tx count as fd ‖ u16: the build fails naming the node URL, height, hash, field and byte', async () => {
    const main = loadBlocks();
    const site = sitesOf(main[102]!, false).find((s) => s.field === 'tx count')!;
    const raw = reencode(main[102]!, site, encode(site.value, 3));
    // The node's getchaintxstats (the fake node parses its blocks for it): counted from the real blocks.
    const heightOf = new Map(main.map((b, h) => [toDisplayHex(sha256d(b.subarray(0, 80))), h]));
    heightOf.set(toDisplayHex(sha256d(raw.subarray(0, 80))), 102);
    const txsUpTo = (h: number) => main.slice(0, h + 1).reduce((n, b) => n + sitesOf(b, false).find((s) => s.field === 'tx count')!.value, 0);
    main[102] = raw;
    const node = await new FakeNode({ main, side: [] }).start();
    node.fault = (req, res, body) => {
      if (req.methods.length !== 1 || req.methods[0] !== 'getchaintxstats') return false;
      const { id, params } = JSON.parse(body) as { id: unknown; params: [number, string] };
      const h = heightOf.get(params[1])!;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ result: { time: 0, txcount: txsUpTo(h), window_final_block_hash: params[1], window_final_block_height: h, window_block_count: 0 }, error: null, id }));
      return true;
    };
    const dir = mkdtempSync(join(tmpdir(), 'snapshot-compactsize-rpc-'));
    try {
      const source = await openRpc(node.url, { network: NETWORKS['bitcoin-regtest'] });
      let err: Error | undefined;
      try {
        await buildSnapshot({ source, outDir: join(dir, 'o'), hosts: [] });
      } catch (e) {
        err = e as Error;
      } finally {
        await source.close();
      }
      expect(err?.message).toBe(
        `rpc ${node.url}: block ${toDisplayHex(sha256d(raw.subarray(0, 80)))} at height 102 is invalid: malformed: ${nonCanonical(site, 3)} (byte ${site.offset} of the block)`,
      );
    } finally {
      await node.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describeShared('chaindata')('Core’s other tx serialization rule: no witness record of empty stacks', () => {
  it('the genesis coinbase with the segwit marker and an empty witness stack: refused at the marker ("Superfluous witness record")', () => {
    const tx = framedBlocks(readChain('nbitcoin', 'blk00000.dat'))[0]!.subarray(81);
    expect(parseTx(tx).inputs).toHaveLength(1);
    const odd = Buffer.concat([tx.subarray(0, 4), Buffer.from('0001', 'hex'), tx.subarray(4, tx.length - 4), Buffer.from('00', 'hex'), tx.subarray(tx.length - 4)]);
    const e = parseError(() => parseTx(odd));
    expect(e.offset).toBe(4);
    expect(e.what).toMatch(/^superfluous witness record/);
  });
});
