import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addrOutKey,
  addrOutValue,
  manifestValue,
  nameOpKey,
  nameOpValue,
  outPointKey,
  spenderValue,
  txLocationValue,
  u32le,
} from '../src/index/rows.js';

const hash = (b: number) => Buffer.alloc(32, b);

describe('index row codecs', () => {
  it('round-trip every table', () => {
    expect(outPointKey.decode(outPointKey.encode({ txHash: hash(1), vout: 70000 }))).toEqual({ txHash: hash(1), vout: 70000 });
    expect(spenderValue.decode(spenderValue.encode({ txHash: hash(2), vin: 3 }))).toEqual({ txHash: hash(2), vin: 3 });
    const loc = { height: 600000, index: 2500, offset: 1_000_000, length: 400 };
    expect(txLocationValue.decode(txLocationValue.encode(loc))).toEqual(loc);
    const ak = { address: '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', height: 9, txIndex: 1, vout: 2 };
    expect(addrOutKey.decode(addrOutKey.encode(ak))).toEqual(ak);
    expect(addrOutValue.decode(addrOutValue.encode({ value: 2_100_000_000_000_000n, txHash: hash(3) }))).toEqual({ value: 2_100_000_000_000_000n, txHash: hash(3) });
    const nk = { name: Buffer.from('d/bitcoin\0\xff', 'latin1'), height: 1, txIndex: 2, vout: 3 };
    expect(nameOpKey.decode(nameOpKey.encode(nk))).toEqual(nk);
    for (const address of ['N5ayzGxPf5jBpRi5YhffCVMeXhtJpRCwnE', null]) {
      const row = { op: 'name_update' as const, txHash: hash(4), address, value: Buffer.from([0, 0xff, 0x22]) };
      expect(nameOpValue.decode(nameOpValue.encode(row))).toEqual(row);
    }
    const first = { op: 'name_firstupdate' as const, txHash: hash(5), address: 'x', value: Buffer.alloc(0) };
    expect(nameOpValue.decode(nameOpValue.encode(first))).toEqual(first);
    expect(manifestValue.decode(manifestValue.encode({ size: 2 ** 40, sha256: hash(6) }))).toEqual({ size: 2 ** 40, sha256: hash(6) });
    expect(u32le.decode(u32le.encode(0xffffffff))).toBe(0xffffffff);
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
    const table = /\.(spent|p2sh|coinbases|txloc|addrOuts|addrCount|names|heights|offchain)\.(get|put|remove|getRange|getKeys|getCount)\b/;
    expect(outside.filter((f) => table.test(readFileSync(f, 'utf8'))).map((f) => relative(SRC, f))).toEqual([]);
    const lmdbValues = outside.filter((f) => /^import (?!type)[^;]*from 'lmdb'/m.test(readFileSync(f, 'utf8')));
    expect(lmdbValues.map((f) => relative(SRC, f))).toEqual([]);
  });
});
