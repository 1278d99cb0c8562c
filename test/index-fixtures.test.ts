// Byte-pinned fixtures of the index rows, written by hand from docs/index-schema.md: one
// representative key and value per table and per meta key, each field's bytes on its own line.
// A round trip cannot see a layout change (encode and decode change together); these can. A
// change to any of them is a layout change: it needs a new STORE_FORMAT (pinned below beside them).
import { mkdtempSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  addrOutKey,
  addrOutValue,
  heightValue,
  metaValue,
  nameOpKey,
  nameOpValue,
  offChainValue,
  outputKey,
  snapshotValue,
  spenderValue,
  txHashKey,
  txLocationValue,
  u32le,
  undoneValue,
  type Codec,
  type HeightRecord,
  type MetaRow,
  type NameOpRow,
  type OffChainRecord,
  type PublishedSnapshot,
  type UndoneBlock,
} from '../src/index/rows.js';
import { saveMeta, savePending, saveUndone } from '../src/index/state.js';
import { openStore, STORE_FORMAT } from '../src/index/store.js';
import type { Counters } from '../src/index/stats.js';

/**
 * The index format these fixtures describe. Changing a fixture without changing this number (and
 * STORE_FORMAT in src/index/store.ts) would let a new build read an old index in the wrong layout.
 */
const PINNED_FORMAT = 8;

/** The hex of the fields, in order (each argument one field). */
const hex = (...fields: string[]): string => fields.join('');
/** A string's bytes as hex (ASCII text). */
const ascii = (s: string): string => Buffer.from(s, 'latin1').toString('hex');
/** A u32 LE length-prefixed ASCII string (`str` in the schema) whose length is given as hex by hand. */
const str = (lengthLE: string, s: string): string => {
  expect(Buffer.from(lengthLE, 'hex').readUInt32LE(0), `length prefix of ${JSON.stringify(s)}`).toBe(s.length);
  return lengthLE + ascii(s);
};

/** encode(value) is exactly the fixture, and decode(fixture) is the value. */
function pinned<T>(codec: Codec<T>, value: T, fixture: string): void {
  expect(codec.encode(value).toString('hex')).toBe(fixture);
  expect(codec.decode(Buffer.from(fixture, 'hex'))).toEqual(value);
}

// The genesis coinbase's txid (displayed 4a5e1e4b…eda33b) in internal byte order.
const TXID = '3ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a';
const txid = Buffer.from(TXID, 'hex');
const GENESIS = '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f';
const NMC_GENESIS = '000000000062b72c5e2ceb45fbc8587e807c155b0da735e6483dfba2f0a9c770';
const ADDRESS = '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa';
const NMC_ADDRESS = 'N5ayzGxPf5jBpRi5YhffCVMeXhtJpRCwnE';

// Each figure has different bytes, so a field written in the other byte order changes the hex.
const COUNTERS: Counters = { txs: 1, txins: 2, txouts: 3, size: 0x01_0203_0405, nameOps: 4, scriptTypes: { pubkey_hash: 5 }, p2shTypes: { multisig: 6 } };
const COUNTERS_HEX = hex(
  '0100000000000000', // u64 LE txs 1
  '0200000000000000', // u64 LE txins 2
  '0300000000000000', // u64 LE txouts 3
  '0504030201000000', // u64 LE size 0x0102030405 (above 2^32)
  '0400000000000000', // u64 LE name ops 4
  '01000000', // script types: u32 LE count 1
  str('0b000000', 'pubkey_hash'), // str type (11 bytes)
  '0500000000000000', // u64 LE count 5
  '01000000', // P2SH types: u32 LE count 1
  str('08000000', 'multisig'), // str type (8 bytes)
  '0600000000000000', // u64 LE count 6
);

describe('index rows are laid out as docs/index-schema.md says', () => {
  it('the fixtures are those of index format 8', () => {
    expect(STORE_FORMAT, 'a layout change needs a new STORE_FORMAT and new fixtures here').toBe(PINNED_FORMAT);
  });

  it('spent: key = position of the spent output (u32 BE each), value = spender txid ‖ u32 LE vin', () => {
    pinned(outputKey, { height: 600000, txIndex: 2500, vout: 3 }, hex(
      '000927c0', // u32 BE height 600000
      '000009c4', // u32 BE tx index 2500
      '00000003', // u32 BE vout 3
    ));
    pinned(spenderValue, { txHash: txid, vin: 258 }, hex(
      TXID, // spender txid (32, internal order)
      '02010000', // u32 LE vin 258
    ));
  });

  it('coinbases: key = txid, value = u32 LE height', () => {
    pinned(txHashKey, txid, TXID);
    pinned(u32le, 91880, 'e8660100'); // u32 LE 91880 = 0x000166e8
  });

  it('txloc: key = txid, value = u32 LE height, index, offset, length, then each P2SH vout', () => {
    const loc = { height: 600000, index: 2500, offset: 1_000_000, length: 400, p2sh: [1, 258] };
    pinned(txLocationValue, loc, hex(
      'c0270900', // u32 LE height 600000
      'c4090000', // u32 LE index in block 2500
      '40420f00', // u32 LE byte offset in block 1000000
      '90010000', // u32 LE byte length 400
      '01000000', // u32 LE P2SH vout 1
      '02010000', // u32 LE P2SH vout 258
    ));
    pinned(txLocationValue, { ...loc, p2sh: [] }, 'c0270900c409000040420f0090010000'); // no P2SH output: 16 bytes
  });

  it('addrOuts: key = address ‖ 0x00 ‖ position (u32 BE each), value = u64 LE satoshis ‖ txid', () => {
    pinned(addrOutKey, { address: ADDRESS, height: 600000, txIndex: 258, vout: 3 }, hex(
      ascii(ADDRESS), // address, latin1
      '00', // separator
      '000927c0', // u32 BE height 600000
      '00000102', // u32 BE tx index 258
      '00000003', // u32 BE vout 3
    ));
    pinned(addrOutValue, { value: 5_000_000_000n, txHash: txid }, hex(
      '00f2052a01000000', // u64 LE value 5000000000 = 0x012a05f200
      TXID, // txid (32)
    ));
  });

  it('names: key = u16 BE name length ‖ name ‖ position (u32 BE each), value = op ‖ txid ‖ branch ‖ address ‖ value', () => {
    pinned(nameOpKey, { name: Buffer.from('d/bitcoin'), height: 1234, txIndex: 1, vout: 258 }, hex(
      '0009', // u16 BE name length 9
      ascii('d/bitcoin'), // name
      '000004d2', // u32 BE height 1234
      '00000001', // u32 BE tx index 1
      '00000102', // u32 BE vout 258
    ));
    const update: NameOpRow = { op: 'name_update', txHash: txid, branch: [Buffer.alloc(32, 0xaa), Buffer.alloc(32, 0xbb)], address: NMC_ADDRESS, value: Buffer.from('{}') };
    pinned(nameOpValue, update, hex(
      '01', // u8 op 1: name_update
      TXID, // txid (32)
      '02', // u8 branch length 2
      'aa'.repeat(32), // merkle branch hash 1
      'bb'.repeat(32), // merkle branch hash 2
      '22', // u8 address length 34
      ascii(NMC_ADDRESS), // address, latin1
      '7b7d', // value bytes '{}' (to the end)
    ));
    const first: NameOpRow = { op: 'name_firstupdate', txHash: txid, branch: null, address: null, value: Buffer.from([0xff, 0x00]) };
    pinned(nameOpValue, first, hex(
      '00', // u8 op 0: name_firstupdate
      TXID, // txid (32)
      'ff', // branch length 0xff: the block's txids are not unique (no branch follows)
      'ff', // address length 0xff: no address (none follows)
      'ff00', // value bytes
    ));
  });

  it('offchain: value = u8 kind ‖ u32 LE height (0xffffffff: none) ‖ raw block', () => {
    pinned<OffChainRecord>(offChainValue, { kind: 'side', height: 500, raw: Buffer.from('0100000000', 'hex') }, hex(
      '00', // u8 kind 0: side
      'f4010000', // u32 LE height 500
      '0100000000', // raw block (to the end)
    ));
    pinned<OffChainRecord>(offChainValue, { kind: 'orphan', height: null, raw: Buffer.alloc(0) }, hex(
      '01', // u8 kind 1: orphan
      'ffffffff', // no height
    ));
  });

  const height: HeightRecord = { hash: GENESIS, offset: 2 ** 40 + 3, length: 285, time: 1231006505, work: '4295032833', delta: COUNTERS };
  const HEIGHT_HEX = hex(
    '20000000', // bytes: u32 LE length 32
    GENESIS, // block hash, display order
    '0300000000010000', // u64 LE spill offset 2^40 + 3
    '1d010000', // u32 LE length 285
    '29ab5f49', // u32 LE header time 1231006505 = 0x495fab29
    '05000000', // bytes: u32 LE length 5
    '0100010001', // cumulative work 4295032833 = 0x0100010001, big-endian, no leading zeros
    COUNTERS_HEX, // Counters delta
  );
  it('heights: value = bytes hash ‖ u64 LE offset ‖ u32 LE length ‖ u32 LE time ‖ bytes work ‖ Counters', () => {
    pinned(heightValue, height, HEIGHT_HEX);
  });

  const meta: MetaRow = {
    format: PINNED_FORMAT,
    network: 'namecoin',
    genesis: NMC_GENESIS,
    options: '{}',
    tip: 722000,
    totals: COUNTERS,
    addresses: 204600,
    duplicates: [{ txid: GENESIS, height: 91880 }],
  };
  const metaHex = (tipPlusOne: string, duplicates: string) =>
    hex(
      ascii('csix'), // magic
      '08000000', // u32 LE format 8
      str('08000000', 'namecoin'), // str network
      str('40000000', NMC_GENESIS), // str genesis (64 hex digits)
      str('02000000', '{}'), // str options
      tipPlusOne, // u32 LE tip + 1
      COUNTERS_HEX, // Counters totals
      '381f0300', // u32 LE addresses 204600 = 0x00031f38
      duplicates, // u32 LE count ‖ (str txid ‖ u32 LE height)*
    );
  const META_HEX = metaHex(
    '51040b00', // tip 722000: 722001 = 0x000b0451
    hex('01000000', str('40000000', GENESIS), 'e8660100'), // one duplicate: txid, height 91880
  );
  it("meta 'meta': 'csix' ‖ u32 LE format ‖ strs ‖ u32 LE tip + 1 ‖ Counters ‖ u32 LE addresses ‖ duplicates; the format is read first", () => {
    pinned(metaValue, meta, META_HEX);
    expect(metaValue.formatOf(Buffer.from(META_HEX, 'hex'))).toBe(PINNED_FORMAT);
    // An empty index: tip -1 is stored as 0.
    pinned(metaValue, { ...meta, tip: -1, duplicates: [] }, metaHex('00000000', '00000000'));
  });

  const snapshot: PublishedSnapshot = { generation: 'e3'.repeat(32), height: 722000, hash: GENESIS, capped: ['N1', 'N2'], offchain: [] };
  const SNAPSHOT_HEX = hex(
    str('40000000', 'e3'.repeat(32)), // str generation (the manifest's sha256)
    '50040b00', // u32 LE height 722000 = 0x000b0450
    str('40000000', GENESIS), // str tip hash
    '02000000', // capped: u32 LE count 2
    str('02000000', 'N1'),
    str('02000000', 'N2'),
    '00000000', // off-chain: u32 LE count 0
  );
  it("meta 'published' and 'pending': str generation ‖ u32 LE height ‖ str hash ‖ str list capped ‖ str list off-chain", () => {
    pinned(snapshotValue, snapshot, SNAPSHOT_HEX);
  });

  const undone: UndoneBlock = { height: 722000, hash: GENESIS, offset: 2 ** 40 + 3, length: 1_000_000, time: 1_700_000_000, work: '4295032833' };
  const UNDONE_HEX = hex(
    '50040b00', // u32 LE height 722000
    str('40000000', GENESIS), // str hash
    '0300000000010000', // u64 LE spill offset 2^40 + 3
    '40420f00', // u32 LE length 1000000
    '00f15365', // u32 LE header time 1700000000 = 0x6553f100
    str('0a000000', '4295032833'), // str cumulative work, decimal
  );
  it("meta 'undone/<height>': u32 LE height ‖ str hash ‖ u64 LE offset ‖ u32 LE length ‖ u32 LE time ‖ str work", () => {
    pinned(undoneValue, undone, UNDONE_HEX);
  });

  describe('keys and values as LMDB stores them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'index-fixtures-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("heights keys are u32 in the machine's byte order (LMDB integer keys); meta keys are 'meta', 'pending', 'undone/' ‖ 10 decimal digits; offchain keys the hash's hex", async () => {
      const store = openStore(dir);
      try {
        store.heights.putSync(600000, heightValue.encode(height));
        store.offchain.putSync(GENESIS, offChainValue.encode({ kind: 'orphan', height: null, raw: Buffer.alloc(0) }));
        saveMeta(store, meta);
        saveUndone(store, undone);
        savePending(store, { ...meta, published: null, pending: null, undone: [], capped: [], offchain: [] }, snapshot);
        // The same tables opened with binary keys: the bytes as stored.
        const raw = (name: string) =>
          [...store.root.openDB<Buffer, Buffer>(name, { keyEncoding: 'binary', encoding: 'binary' }).getRange()].map(({ key, value }) => [
            Buffer.from(key).toString('hex'),
            Buffer.from(value).toString('hex'),
          ]);
        // LMDB's integer keys (lmdb-js `uint32`, MDB_INTEGERKEY) are native-endian, compared as numbers.
        const key = os.endianness() === 'LE' ? 'c0270900' : '000927c0'; // u32 600000
        expect(raw('heights')).toEqual([[key, HEIGHT_HEX]]);
        expect(raw('offchain')).toEqual([[ascii(GENESIS), '01ffffffff']]);
        expect(raw('meta')).toEqual([
          [ascii('meta'), META_HEX],
          [ascii('pending'), SNAPSHOT_HEX],
          [ascii('undone/0000722000'), UNDONE_HEX],
        ]);
      } finally {
        await store.close();
      }
    });
  });
});
