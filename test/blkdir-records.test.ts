// The blk record scanner (src/source/blkdir/records.ts) on hand-made buffers, no files: framing,
// Core ≥ 28 raw-zero padding under an XOR key, junk and truncated records skipped with their
// absolute offsets, a key that shares bytes with the magic, a base offset, window edges.
import { describe, expect, it } from 'vitest';
import { xorObfuscate } from '../src/chain/blkfile.js';
import { BufferWindow, scanRecords, WINDOW } from '../src/source/blkdir/records.js';

const MAGIC = Buffer.from('fabfb5da', 'hex');
const OPTS = { magic: MAGIC, networkName: 'testnet', maxBlockSize: 1 << 20 };

/** A record: magic, length, then `len` bytes of `fill` (the first byte its index, to tell records apart). */
function record(len: number, fill: number, id = 0): Buffer {
  const b = Buffer.alloc(8 + len, fill);
  MAGIC.copy(b, 0);
  b.writeUInt32LE(len, 4);
  b[8] = id;
  return b;
}

/** The bytes as on disk from `base` on: `parts` XORed by absolute offset, `null` parts raw zeros of the given length. */
function disk(parts: (Buffer | number)[], key?: Uint8Array, base = 0): Buffer {
  const out: Buffer[] = [];
  let pos = base;
  for (const p of parts) {
    if (typeof p === 'number') out.push(Buffer.alloc(p));
    else {
      const b = Buffer.from(p);
      xorObfuscate(b, pos, key);
      out.push(b);
    }
    pos += typeof p === 'number' ? p : p.length;
  }
  return Buffer.concat(out);
}

async function scan(raw: Buffer, key?: Uint8Array, base = 0) {
  const records: { pos: number; len: number; id: number }[] = [];
  const skipped: { from: number; to: number; why: string }[] = [];
  await scanRecords(new BufferWindow(raw, base, key), OPTS, {
    record: (pos, len, header) => void records.push({ pos, len, id: header[0]! }),
    skipped: (from, to, why) => void skipped.push({ from, to, why }),
  }, base);
  return { records, skipped };
}

describe('blk record scanner on buffers', () => {
  it('records back to back, then raw-zero padding: every record, no warning', async () => {
    const { records, skipped } = await scan(disk([record(100, 0x11, 1), record(81, 0x22, 2), 5000]));
    expect(records).toEqual([
      { pos: 0, len: 100, id: 1 },
      { pos: 108, len: 81, id: 2 },
    ]);
    expect(skipped).toEqual([]);
  });

  it('junk between records is skipped once, from its first byte to the next magic', async () => {
    const junk = Buffer.alloc(37, 0x5c);
    const { records, skipped } = await scan(disk([record(90, 0x11, 1), junk, record(90, 0x22, 2)]));
    expect(records.map((r) => [r.pos, r.id])).toEqual([
      [0, 1],
      [98 + 37, 2],
    ]);
    expect(skipped).toEqual([{ from: 98, to: 98 + 37, why: 'no testnet magic fabfb5da' }]);
  });

  it('a record cut off by the end of the data, and a record header cut off, are skipped naming their offsets', async () => {
    const cut = record(200, 0x33, 2).subarray(0, 150);
    let res = await scan(disk([record(90, 0x11, 1), cut]));
    expect(res.records.map((r) => r.pos)).toEqual([0]);
    expect(res.skipped).toEqual([{ from: 98, to: 248, why: 'record of 200 bytes truncated by end of file (142 left)' }]);
    res = await scan(disk([record(90, 0x11, 1), MAGIC.subarray(0, 4), Buffer.from([1, 2])]));
    expect(res.skipped).toEqual([{ from: 98, to: 104, why: 'record header cut off at end of file' }]);
  });

  it('an interrupted write (a record restarting inside another) is skipped up to the restart', async () => {
    const torn = Buffer.concat([MAGIC, Buffer.from([200, 0, 0, 0])]); // length 200, then the magic again
    const { records, skipped } = await scan(disk([torn, record(300, 0x11, 1)]));
    expect(records.map((r) => r.pos)).toEqual([8]);
    expect(skipped).toEqual([{ from: 0, to: 8, why: 'record body starts with the magic again (interrupted write)' }]);
  });

  it('XOR key sharing bytes with the magic: raw-zero padding decodes to the magic but is not a record', async () => {
    // Raw zeros at a multiple of 8 decode to the key itself: the magic, then a length. A record
    // there has raw-zero magic bytes too (only its length bytes are not), right after the padding.
    const key = Uint8Array.from([...MAGIC, 0x33, 0x44, 0x55, 0x66]);
    const padded = disk([record(90, 0x11, 1), 6, 64, record(90, 0x22, 2), 3000], key);
    const { records, skipped } = await scan(padded, key);
    expect(records.map((r) => [r.pos, r.id])).toEqual([
      [0, 1],
      [98 + 70, 2],
    ]);
    expect(skipped).toEqual([]);
  });

  it('a base offset: positions are absolute and the XOR stream is keyed by them', async () => {
    const key = Uint8Array.from([0x9e, 0xc6, 0xb7, 0xd3, 0x34, 0x52, 0x9f, 0x63]);
    const base = 1_000_003;
    const raw = disk([record(120, 0x11, 1), Buffer.alloc(5, 0x77), record(80, 0x22, 2), 40], key, base);
    const { records, skipped } = await scan(raw, key, base);
    expect(records.map((r) => [r.pos, r.len, r.id])).toEqual([
      [base, 120, 1],
      [base + 128 + 5, 80, 2],
    ]);
    expect(skipped).toEqual([{ from: base + 128, to: base + 133, why: 'no testnet magic fabfb5da' }]);
  });

  it('padding and junk longer than a read window, with a record straddling a window edge', async () => {
    const key = Uint8Array.from([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08]);
    const big = record(WINDOW + 500, 0x44, 3); // longer than a window
    const raw = disk([record(90, 0x11, 1), WINDOW + 13, record(90, 0x22, 2), Buffer.alloc(WINDOW * 2, 0x5c), big, WINDOW], key);
    const { records, skipped } = await scan(raw, key);
    const second = 98 + WINDOW + 13;
    const junkAt = second + 98;
    expect(records.map((r) => [r.pos, r.id])).toEqual([
      [0, 1],
      [second, 2],
      [junkAt + WINDOW * 2, 3],
    ]);
    expect(skipped).toEqual([{ from: junkAt, to: junkAt + WINDOW * 2, why: 'no testnet magic fabfb5da' }]);
  });
});
