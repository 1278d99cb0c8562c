import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addrOutKey,
  addrOutValue,
  heightValue,
  metaValue,
  nameOpKey,
  nameOpValue,
  offChainValue,
  outputKey,
  outputRange,
  spenderValue,
  txLocationValue,
  u32le,
  snapshotValue,
  undoneValue,
  type HeightRecord,
  type MetaRow,
} from '../src/index/rows.js';
import { STORE_FORMAT } from '../src/index/store.js';
import type { Counters } from '../src/index/stats.js';

const hash = (b: number) => Buffer.alloc(32, b);

describe('index row codecs', () => {
  it('round-trip every table', () => {
    const out = { height: 600000, txIndex: 2500, vout: 70000 };
    expect(outputKey.decode(outputKey.encode(out))).toEqual(out);
    expect(spenderValue.decode(spenderValue.encode({ txHash: hash(2), vin: 3 }))).toEqual({ txHash: hash(2), vin: 3 });
    for (const p2sh of [[], [0], [1, 7, 499]]) {
      const loc = { height: 600000, index: 2500, offset: 1_000_000, length: 400, p2sh };
      expect(txLocationValue.decode(txLocationValue.encode(loc))).toEqual(loc);
    }
    const ak = { address: '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', height: 9, txIndex: 1, vout: 2 };
    expect(addrOutKey.decode(addrOutKey.encode(ak))).toEqual(ak);
    expect(addrOutValue.decode(addrOutValue.encode({ value: 2_100_000_000_000_000n, txHash: hash(3) }))).toEqual({ value: 2_100_000_000_000_000n, txHash: hash(3) });
    const nk = { name: Buffer.from('d/bitcoin\0\xff', 'latin1'), height: 1, txIndex: 2, vout: 3 };
    expect(nameOpKey.decode(nameOpKey.encode(nk))).toEqual(nk);
    for (const address of ['N5ayzGxPf5jBpRi5YhffCVMeXhtJpRCwnE', null]) {
      for (const branch of [[], [hash(7), hash(8), hash(9)], null]) {
        const row = { op: 'name_update' as const, txHash: hash(4), address, value: Buffer.from([0, 0xff, 0x22]), branch };
        expect(nameOpValue.decode(nameOpValue.encode(row))).toEqual(row);
      }
    }
    const first = { op: 'name_firstupdate' as const, txHash: hash(5), address: 'x', value: Buffer.alloc(0), branch: [hash(1)] };
    expect(nameOpValue.decode(nameOpValue.encode(first))).toEqual(first);
    expect(u32le.decode(u32le.encode(0xffffffff))).toBe(0xffffffff);
    for (const rec of [
      { kind: 'side' as const, height: 0, raw: Buffer.from('0100', 'hex') },
      { kind: 'orphan' as const, height: null, raw: Buffer.alloc(0) },
      { kind: 'side' as const, height: 0xfffffffe, raw: hash(3) },
    ]) {
      expect(offChainValue.decode(offChainValue.encode(rec))).toEqual(rec);
    }
  });

  const counters = (n: number): Counters => ({
    txs: n,
    txins: 2 * n,
    txouts: 3 * n,
    // Totals outgrow 32 bits (Bitcoin mainnet: ~700 GB of blocks).
    size: 700e9 + n,
    nameOps: 0,
    scriptTypes: { pubkey_hash: n, 'name_update': 1 },
    p2shTypes: n ? { multisig: 5, unknown: 1 } : {},
  });

  it('heights rows round-trip, with chain work far above 2^64 and totals above 2^32', () => {
    const genesisWork = (2n ** 32n + 1n).toString();
    const rec: HeightRecord = {
      hash: '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f',
      offset: 2 ** 40 + 3,
      length: 285,
      time: 1231006505,
      work: (2n ** 200n * 3n + 7n).toString(),
      delta: counters(7),
    };
    expect(heightValue.decode(heightValue.encode(rec))).toEqual(rec);
    for (const work of ['0', '1', genesisWork]) expect(heightValue.decode(heightValue.encode({ ...rec, work, delta: counters(0) }))).toEqual({ ...rec, work, delta: counters(0) });
  });

  it('meta rows round-trip and tell their format before decoding; an older (msgpack) meta is recognised as another format', () => {
    const meta: MetaRow = {
      format: STORE_FORMAT,
      network: 'namecoin',
      genesis: '000000000062b72c5e2ceb45fbc8587e807c155b0da735e6483dfba2f0a9c770',
      options: JSON.stringify({ pretty: false, cap: 10000, hosts: ['netlify'], out: '/srv/ünïcode' }),
      tip: -1,
      totals: counters(3),
      addresses: 204_600,
      duplicates: [{ txid: 'e3bf3d07d4b0375638d5f1db5255fe07ba2c4cb067cd81b84ee974b6585fb468', height: 91880 }],
    };
    const enc = metaValue.encode(meta);
    expect(metaValue.decode(enc)).toEqual(meta);
    expect(metaValue.formatOf(enc)).toBe(STORE_FORMAT);
    const tipped = { ...meta, tip: 722000, duplicates: [] };
    expect(metaValue.decode(metaValue.encode(tipped))).toEqual(tipped);
    // The published snapshot and a block of it undone (its spill offset beyond 4 GiB, its work beyond 2^64).
    const snapshot = { generation: 'a'.repeat(64), height: 722000, hash: 'b'.repeat(64), capped: ['N1', 'N2'], offchain: [] };
    expect(snapshotValue.decode(snapshotValue.encode(snapshot))).toEqual(snapshot);
    const undone = { height: 722000, hash: 'c'.repeat(64), offset: 2 ** 40 + 3, length: 1_000_000, time: 1_700_000_000, work: (2n ** 90n).toString() };
    expect(undoneValue.decode(undoneValue.encode(undone))).toEqual(undone);
    // Format 4 stored meta as msgpack: a map whose first byte is a fixmap (0x8a for its 10 fields).
    expect(metaValue.formatOf(Buffer.from([0x8a, 0xa6, 0x66, 0x6f, 0x72, 0x6d, 0x61, 0x74, 0x04]))).toBe(0);
    expect(() => metaValue.decode(enc.subarray(0, enc.length - 1))).toThrow(/ends at byte/);
  });

  it('the spends of one block, and of one tx, are one key range, apart from the neighbouring blocks and txs', () => {
    const keys = [
      { height: 9, txIndex: 70000, vout: 5 },
      { height: 10, txIndex: 0, vout: 0 },
      { height: 10, txIndex: 3, vout: 0xffffffff },
      { height: 10, txIndex: 4, vout: 0 },
      { height: 10, txIndex: 0xffffffff, vout: 0xffffffff },
      { height: 11, txIndex: 0, vout: 0 },
      { height: 256, txIndex: 0, vout: 0 },
    ].map((p) => outputKey.encode(p));
    const inRange = (r: { start: Buffer; end: Buffer }) => keys.filter((k) => Buffer.compare(k, r.start) >= 0 && Buffer.compare(k, r.end) < 0).map((k) => outputKey.decode(k));
    expect(inRange(outputRange(10)).map((p) => [p.txIndex, p.vout])).toEqual([[0, 0], [3, 0xffffffff], [4, 0], [0xffffffff, 0xffffffff]]);
    expect(inRange(outputRange(10, 3))).toEqual([{ height: 10, txIndex: 3, vout: 0xffffffff }]);
    expect(inRange(outputRange(255))).toEqual([]);
  });

  it('keys of one address or name sort in chain order, apart from other addresses and names', () => {
    const positions = [
      { height: 0, txIndex: 5, vout: 1 },
      { height: 1, txIndex: 0, vout: 300 },
      { height: 1, txIndex: 256, vout: 0 },
      { height: 256, txIndex: 0, vout: 0 },
      { height: 65536, txIndex: 0, vout: 0 },
    ];
    const addrKeys = (address: string) => positions.map((p) => addrOutKey.encode({ address, ...p }));
    const shuffled = [...addrKeys('1B'), ...addrKeys('1A'), ...addrKeys('1AB')].reverse().sort(Buffer.compare);
    expect(shuffled.map((k) => addrOutKey.decode(k).address)).toEqual([...Array(5).fill('1A'), ...Array(5).fill('1AB'), ...Array(5).fill('1B')]);
    expect(shuffled.slice(0, 5).map((k) => addrOutKey.decode(k).height)).toEqual(positions.map((p) => p.height));
    const nameKeys = (name: string) => positions.map((p) => nameOpKey.encode({ name: Buffer.from(name), ...p }));
    const names = [...nameKeys('d/b'), ...nameKeys('d/a')].reverse().sort(Buffer.compare);
    expect(names.map((k) => nameOpKey.decode(k).name.toString())).toEqual([...Array(5).fill('d/a'), ...Array(5).fill('d/b')]);
    expect(names.slice(5).map((k) => nameOpKey.decode(k).txIndex)).toEqual(positions.map((p) => p.txIndex));
  });
});

describe('only src/index knows the index tables', () => {
  const SRC = join(import.meta.dirname, '..', 'src');
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((e) => (statSync(join(dir, e)).isDirectory() ? files(join(dir, e)) : e.endsWith('.ts') ? [join(dir, e)] : []));
  const outside = files(SRC).filter((f) => !relative(SRC, f).startsWith('index'));

  it('no module outside src/index reads or writes an index table but the manifest writer through its codec', () => {
    const table = /\.(spent|coinbases|txloc|addrOuts|names|heights|offchain)\.(get|put|remove|getRange|getKeys|getCount|getKeysCount)\b/;
    expect(outside.filter((f) => table.test(readFileSync(f, 'utf8'))).map((f) => relative(SRC, f))).toEqual([]);
    const lmdbValues = outside.filter((f) => /^import (?!type)[^;]*from 'lmdb'/m.test(readFileSync(f, 'utf8')));
    expect(lmdbValues.map((f) => relative(SRC, f))).toEqual([]);
  });
});
