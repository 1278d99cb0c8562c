// How a document that embeds tx documents becomes recipe segments (src/pack/embedded.ts): a span
// is a reference only when it is exactly the tx document (or its prefix without the placement
// fields), checked by CRC-32, or by sha256 for a document whose CRC-32 is not known; a span of
// the same length with one byte changed stays literal.
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Encoding, type BlobRef, type RecipeSegment } from '../src/contract/pack-format.js';
import { embeddedTxSegments, placementPrefix } from '../src/pack/embedded.js';
import { CRC_UNKNOWN, PREFIX_UNKNOWN, TxBlobs, type TxDocBlob } from '../src/pack/tx-blobs.js';

const txid = 'ab'.repeat(32);
const placement = Buffer.from(`,"block":"${'cd'.repeat(32)}","blocknumber":7,"time":1400000000}`);
// A compact tx document as render/tx.ts lays it out: the head, the fields, the placement fields last.
const prefixText = `{"hash":"${txid}","ver":1,"vin_sz":1,"vout_sz":1,"lock_time":0,"size":85,"in":[],"out":[{"value":"1.00000000"}]`;
const txDoc = Buffer.concat([Buffer.from(prefixText), placement]);
const prefix = prefixText.length;
const blob: BlobRef = { part: 3, offset: 1000, stored: 90, encoding: Encoding.GZIP, crc: 0x12345678 };
const sha48 = (b: Uint8Array) => createHash('sha256').update(b).digest().readUIntBE(0, 6);

/** A document holding `embedded` between literal bytes, as an address document holds a tx. */
const around = (embedded: Uint8Array) => Buffer.concat([Buffer.from(`{"address":"N1","transactions":{"${txid}":`), embedded, Buffer.from('}}')]);

/** The segments' bytes, with each range taken from the tx document. */
function assemble(segs: readonly RecipeSegment[]): Buffer {
  return Buffer.concat(segs.map((s) => (s.type === 'literal' ? s.bytes : txDoc.subarray(s.start, s.start + s.length))));
}

function blobs(doc: Partial<TxDocBlob>): TxBlobs {
  const txs = new TxBlobs();
  txs.setDoc(txid, { blob, size: txDoc.length, sha: sha48(txDoc), crc: crc32(txDoc), prefix, prefixCrc: crc32(txDoc.subarray(0, prefix)), early: false, ...doc });
  return txs;
}

/** `bytes` with the byte at `at` changed (same length). */
const changed = (bytes: Buffer, at: number) => {
  const b = Buffer.from(bytes);
  b[at] = b[at] === 0x31 ? 0x32 : 0x31;
  return b;
};

describe('embedded tx documents', () => {
  it('the placement fields are found where render/tx.ts puts them', () => {
    expect(placementPrefix(txDoc)).toBe(prefix);
  });

  it('a tx document embedded whole is a range of its blob; one changed byte leaves it literal', () => {
    const doc = around(txDoc);
    const segs = embeddedTxSegments(doc, blobs({}))!;
    expect(segs.map((s) => s.type)).toEqual(['literal', 'range', 'literal']);
    expect(segs[1]).toMatchObject({ type: 'range', blob, start: 0, length: txDoc.length });
    expect(assemble(segs).equals(doc)).toBe(true);
    // The byte inside `"out"`, past the head: the head still names the txid, the length is the same.
    expect(embeddedTxSegments(around(changed(txDoc, prefix - 5)), blobs({}))).toBeUndefined();
  });

  it('a block document embeds the prefix without the placement fields: a range [0, prefix)', () => {
    const embedded = Buffer.concat([txDoc.subarray(0, prefix), Buffer.from('}')]);
    const doc = around(embedded);
    const segs = embeddedTxSegments(doc, blobs({}))!;
    expect(segs[1]).toMatchObject({ type: 'range', start: 0, length: prefix });
    expect(assemble(segs).equals(doc)).toBe(true);
    expect(embeddedTxSegments(around(changed(embedded, prefix - 5)), blobs({}))).toBeUndefined();
  });

  it('a document kept from a previous pack: its prefix found by the placement fields, checked by CRC-32 or sha256', () => {
    const embedded = Buffer.concat([txDoc.subarray(0, prefix), Buffer.from('}')]);
    // An identity blob's CRC-32 is the document's; a gzip one's is not known, its sha256 is.
    for (const kept of [{ prefix: PREFIX_UNKNOWN, prefixCrc: 0 }, { prefix: PREFIX_UNKNOWN, prefixCrc: 0, crc: CRC_UNKNOWN }]) {
      const segs = embeddedTxSegments(around(embedded), blobs(kept), placement)!;
      expect(segs[1], JSON.stringify(kept)).toMatchObject({ type: 'range', start: 0, length: prefix });
      expect(embeddedTxSegments(around(changed(embedded, prefix - 5)), blobs(kept), placement), JSON.stringify(kept)).toBeUndefined();
      // Whole, as an address document embeds it.
      expect(embeddedTxSegments(around(txDoc), blobs(kept))![1]).toMatchObject({ type: 'range', length: txDoc.length });
      expect(embeddedTxSegments(around(changed(txDoc, prefix - 5)), blobs(kept))).toBeUndefined();
    }
  });

  it('a recorded CRC-32 that is not the document\'s makes no reference (the check is not skipped)', () => {
    expect(embeddedTxSegments(around(txDoc), blobs({ crc: crc32(txDoc) ^ 1 }))).toBeUndefined();
    expect(embeddedTxSegments(around(txDoc), blobs({ crc: CRC_UNKNOWN, sha: sha48(txDoc) ^ 1 }))).toBeUndefined();
  });
});

describe('tx slices', () => {
  const blob = (offset: number): BlobRef => ({ part: 0, offset, stored: 1000, encoding: Encoding.IDENTITY, crc: 0 });
  const slice = (offset: number, binSha: number) => ({ block: blob(offset), start: 10, length: 100, crc: 1, binSha, hexSha: binSha + 1 });

  it('every different slice of a txid key is kept, first noted first: txids sharing their first 52 bits, one txid in two blocks; the same bytes again once', () => {
    const txs = new TxBlobs();
    // Two txids that agree in their first 13 hex digits (the key) and differ after.
    const a = `${'ab'.repeat(6)}c${'0'.repeat(51)}`;
    const b = `${'ab'.repeat(6)}c${'f'.repeat(51)}`;
    txs.setSlice(a, slice(0, 7));
    txs.setSlice(b, slice(5000, 9));
    txs.setSlice(a, slice(9000, 7)); // a's bytes again, in another block
    txs.setSlice(a, slice(12000, 11)); // a with other bytes (another witness), in another block
    expect(txs.slicesOf(a).map((s) => [s.block.offset, s.binSha])).toEqual([
      [0, 7],
      [5000, 9],
      [12000, 11],
    ]);
    expect(txs.slicesOf(b)).toEqual(txs.slicesOf(a));
    expect(txs.slicesOf('0'.repeat(64))).toEqual([]);
    txs.dropSlices();
    expect(txs.slicesOf(a)).toEqual([]);
  });
});
