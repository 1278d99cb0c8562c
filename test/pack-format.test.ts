// The pack codec (src/contract/pack-format.ts) against independent facts: the CRC-32 check
// value, node:crypto's sha256, Buffer's hex, and round trips of every structure; damaged bytes
// fail naming the file and the offset.
import { createHash, randomBytes } from 'node:crypto';
import { crc32 as zcrc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Encoding,
  HEADER_SIZE,
  Kind,
  PackFormatError,
  RECORD_SIZE,
  SLOT_HEADER,
  checkSlot,
  chooseBucketBits,
  compareKeys,
  crc32,
  decodeHeader,
  decodePartTable,
  decodePointer,
  decodeRecipe,
  decodeRecord,
  encodeHeader,
  encodePartTable,
  encodePointer,
  encodeRecipe,
  encodeRecord,
  encodeSlot,
  findInSlot,
  hexBytes,
  packKey,
  slotOf,
  type PackHeader,
  type PackRecord,
  type RecipeSegment,
} from '../src/contract/pack-format.js';

const HEADER: PackHeader = {
  version: 1,
  bucketBits: 7,
  slotCapacity: 300,
  partCount: 2,
  entries: 2 ** 33 + 5,
  blobs: 12345,
  slotsOffset: 1000,
  slotsLength: 128 * (8 + 300 * 40),
  partTableOffset: 128,
  partTableLength: 200,
  generation: 3,
};

describe('pack format codec', () => {
  it('crc32 gives the CRC-32 check value and agrees with zlib', () => {
    // The catalogued check value of CRC-32/ISO-HDLC for "123456789".
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    for (const n of [0, 1, 7, 1000, 65537]) {
      const b = randomBytes(n);
      expect(crc32(b)).toBe(zcrc32(b));
      expect(crc32(b.subarray(n >> 1), crc32(b.subarray(0, n >> 1)))).toBe(zcrc32(b));
    }
  });

  it('keys are the first 128 bits of sha256 of the tree path', () => {
    const long = (unit: string, n: number) => `name/${unit.repeat(n)}.json`;
    const paths = ['tx/00.json', 'v/history-rawtx/name/d~2falpha.json', 'stats.json', 'name/é.json', 'name/😀.json', long('a', 3000), long('é', 1100), long('😀', 600), long('€', 1014), long('€', 1015)];
    // Twice each, in turn: a key does not depend on the path hashed before it.
    for (const p of [...paths, ...paths]) {
      expect(Buffer.from(packKey(p)).toString('hex'), p.slice(0, 40)).toBe(createHash('sha256').update(p, 'utf8').digest('hex').slice(0, 32));
    }
  });

  it('slotOf is the top bits of the key; bucket bits aim at a few hundred entries a slot', () => {
    const key = Uint8Array.from([0b10110011, 0xff, 0, 1, ...new Array(12).fill(0)]);
    expect(slotOf(key, 0)).toBe(0);
    expect(slotOf(key, 1)).toBe(1);
    expect(slotOf(key, 4)).toBe(0b1011);
    expect(slotOf(key, 12)).toBe(0b101100111111);
    expect(slotOf(key, 32)).toBe(0xb3ff0001);
    expect(chooseBucketBits(0)).toBe(0);
    expect(chooseBucketBits(512)).toBe(0);
    expect(chooseBucketBits(513)).toBe(1);
    expect(chooseBucketBits(5e9)).toBe(24);
  });

  it('hexBytes is lowercase hex without a newline', () => {
    const b = randomBytes(300);
    expect(Buffer.from(hexBytes(b)).toString('latin1')).toBe(b.toString('hex'));
  });

  it('header round trip; a damaged byte, another magic or version fail naming the offset', () => {
    const b = encodeHeader(HEADER);
    expect(b.length).toBe(HEADER_SIZE);
    expect(decodeHeader(b, 'x.idx')).toEqual(HEADER);
    const bad = b.slice();
    bad[40]! ^= 1;
    expect(() => decodeHeader(bad, 'x.idx')).toThrow('x.idx at offset 124: header checksum mismatch');
    const v2 = b.slice();
    v2[8] = 2;
    expect(() => decodeHeader(v2, 'x.idx')).toThrow('x.idx at offset 8: has pack format version 2; this reader reads version 1');
    expect(() => decodeHeader(new TextEncoder().encode('PMTiles'.padEnd(200)), 'y')).toThrow(/y at offset 0: is not a pack index/);
    expect(() => decodeHeader(b.subarray(0, 100), 'z')).toThrow(PackFormatError);
  });

  it('part table round trip; a damaged byte fails', () => {
    const parts = [
      { name: 'aa.part', size: 2 ** 30 + 17, sha256: new Uint8Array(randomBytes(32)) },
      { name: 'bb.part', size: 16, sha256: new Uint8Array(randomBytes(32)) },
    ];
    const t = encodePartTable(parts);
    expect(decodePartTable(t, 2, 'i', 128)).toEqual(parts);
    const bad = t.slice();
    bad[3]! ^= 0x80;
    expect(() => decodePartTable(bad, 2, 'i', 128)).toThrow('i at offset 128: part table checksum mismatch');
    expect(() => decodePartTable(encodePartTable([{ ...parts[0]!, name: '../etc' }]), 1, 'i', 128)).toThrow(/is not a plain file name/);
  });

  it('records round trip (offsets past 4 GiB included)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        fc.constantFrom(Kind.STORED, Kind.HEX, Kind.RECIPE),
        fc.constantFrom(Encoding.IDENTITY, Encoding.GZIP),
        fc.integer({ min: 0, max: 0xffff }),
        fc.integer({ min: 0, max: 2 ** 48 - 1 }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 0, max: 0xffffffff }),
        (key, kind, encoding, part, offset, stored, size, crc) => {
          const r: PackRecord = { key, kind, encoding, part, offset, stored, size, crc };
          const b = new Uint8Array(RECORD_SIZE + 3);
          encodeRecord(r, b, 3);
          expect(decodeRecord(b, 3, 'i', 0)).toEqual(r);
        },
      ),
    );
    expect(() => encodeRecord({ key: new Uint8Array(16), kind: 0, encoding: 0, part: 0, offset: 2 ** 48, stored: 0, size: 0, crc: 0 }, new Uint8Array(40))).toThrow(RangeError);
  });

  it('slots: sorted records are found, absent keys are not, a damaged slot names its bytes', () => {
    const keys = Array.from({ length: 50 }, () => new Uint8Array(randomBytes(16))).sort(compareKeys);
    const recs = new Uint8Array(keys.length * RECORD_SIZE);
    keys.forEach((key, i) => encodeRecord({ key, kind: Kind.STORED, encoding: Encoding.GZIP, part: 1, offset: 16 + i, stored: i, size: 2 * i, crc: i }, recs, i * RECORD_SIZE));
    const slot = encodeSlot(recs, keys.length, 64);
    expect(slot.length).toBe(SLOT_HEADER + 64 * RECORD_SIZE);
    const count = checkSlot(slot, 64, 'p.idx', 5000);
    expect(count).toBe(50);
    keys.forEach((key, i) => expect(findInSlot(slot, count, key, 'p.idx', 5000)?.offset).toBe(16 + i));
    for (let i = 0; i < 20; i++) expect(findInSlot(slot, count, new Uint8Array(randomBytes(16)), 'p.idx', 5000)).toBeUndefined();
    expect(findInSlot(encodeSlot(recs, 0, 4), 0, keys[0]!, 'p.idx', 0)).toBeUndefined();
    const bad = slot.slice();
    bad[SLOT_HEADER + 7 * RECORD_SIZE + 30]! ^= 4;
    expect(() => checkSlot(bad, 64, 'p.idx', 5000)).toThrow(`p.idx at offset 5000: directory slot checksum mismatch (slot bytes 5000–${5000 + slot.length - 1} are damaged)`);
  });

  it('recipes round trip; trailing or unknown bytes fail', () => {
    const segs: RecipeSegment[] = [
      { type: 'literal', bytes: new TextEncoder().encode('{"a":') },
      { type: 'range', blob: { part: 3, offset: 2 ** 40, stored: 700, encoding: Encoding.GZIP, crc: 0xdeadbeef }, start: 0, length: 1200 },
      { type: 'literal', bytes: new Uint8Array(0) },
      { type: 'range', blob: { part: 0, offset: 16, stored: 5, encoding: Encoding.IDENTITY, crc: 1 }, start: 2, length: 3 },
    ];
    const b = encodeRecipe(segs);
    expect(decodeRecipe(b, 'r', 0)).toEqual(segs);
    expect(() => decodeRecipe(Uint8Array.from([...b, 0]), 'r', 100)).toThrow(`r at offset ${100 + b.length}: 1 bytes after 4 recipe segments`);
    expect(() => decodeRecipe(Uint8Array.from([1, 9]), 'r', 0)).toThrow('r at offset 2: unknown recipe segment type 9');
  });

  it('pack.json round trip; another format or a path in it fails', () => {
    expect(decodePointer(encodePointer('0123.idx'), 'pack.json').index).toBe('0123.idx');
    const enc = (o: unknown) => new TextEncoder().encode(JSON.stringify(o));
    expect(() => decodePointer(enc({ format: 'chain-snapshot-pack', version: 1, index: '../x' }), 'pack.json')).toThrow(/is not a plain file name/);
    expect(() => decodePointer(enc({ format: 'chain-snapshot-pack', version: 9, index: 'a.idx' }), 'pack.json')).toThrow(/version 9/);
  });
});
