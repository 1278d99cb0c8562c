// The blocks-dir stages on buffers, no files: the header index (pass 1) over real regtest blocks
// framed out of order with a duplicate, choosing the chain the node had; the body reader giving
// back every block byte for byte and naming file and offset when the bytes changed.
import { expect, it } from 'vitest';
import { xorObfuscate } from '../src/chain/blkfile.js';
import { NETWORKS } from '../src/chain/networks.js';
import { BodyReader, type BlkBytes } from '../src/source/blkdir/bodies.js';
import { HeaderIndex } from '../src/source/blkdir/headers.js';
import { BufferWindow } from '../src/source/blkdir/records.js';
import { blockId, loadBlocks } from './support/fake-node.js';
import { describeShared } from './support/shared-data.js';


const NET = NETWORKS['bitcoin-regtest'];
const KEY = Uint8Array.from([0x9e, 0xc6, 0xb7, 0xd3, 0x34, 0x52, 0x9f, 0x63]);

/** `blocks` framed as records with the network magic, XORed by absolute offset as on disk. */
function blkBytes(blocks: Buffer[]): Buffer {
  const parts = blocks.map((raw) => {
    const head = Buffer.alloc(8);
    Buffer.from(NET.magic, 'hex').copy(head);
    head.writeUInt32LE(raw.length, 4);
    return Buffer.concat([head, raw]);
  });
  const out = Buffer.concat(parts);
  xorObfuscate(out, 0, KEY);
  return out;
}

/** The files of `data` as the body reader's byte store. */
const memoryBytes = (data: Buffer[]): BlkBytes => ({
  async read(fi, buf, pos) {
    return data[fi]!.copy(buf, 0, pos, Math.min(data[fi]!.length, pos + buf.length));
  },
  async close() {},
});

describeShared('chaindata')('blocks dir stages on buffers', () => {
  const main = loadBlocks();
  // Two "files": the upper half first, then the lower half, and a second copy of block 7.
  const files = [blkBytes(main.slice(50)), blkBytes([...main.slice(0, 50), main[7]!])];
  const names = ['blk00000.dat', 'blk00001.dat'];

  async function indexed() {
    const warnings: string[] = [];
    const index = new HeaderIndex(NET, names, warnings, 1 << 20);
    const skipped: string[] = [];
    for (const [fi, data] of files.entries()) await index.addFile(fi, new BufferWindow(data, 0, KEY), (from, to, why) => skipped.push(`${from}-${to} ${why}`));
    return { index, warnings, skipped, sel: index.select() };
  }

  it('header index: every record indexed once, the duplicate named, the chain chosen in height order', async () => {
    const { index, warnings, skipped, sel } = await indexed();
    expect(skipped).toEqual([]);
    expect(index.records).toBe(main.length + 1);
    expect(index.tree.size).toBe(main.length);
    expect(index.duplicates).toBe(1);
    const firstAt = main.slice(0, 7).reduce((n, b) => n + 8 + b.length, 0); // block 7 in the second file
    const dupAt = main.slice(0, 50).reduce((n, b) => n + 8 + b.length, 0);
    expect(warnings).toEqual([`blk00001.dat offset ${dupAt}: duplicate copy of block ${blockId(main[7]!)} (first at blk00001.dat offset ${firstAt}); counted once`]);
    expect(sel.tipHeight).toBe(main.length - 1);
    expect(Array.from(sel.main, (i) => index.tree.hashHex(i))).toEqual(main.map(blockId));
    expect(index.placeOf(sel.main[50]!)).toEqual({ file: 'blk00000.dat', offset: 8 });
    expect(index.rejected).toEqual([]);
  });

  it('body reader: the main chain read back byte for byte in height order; changed bytes name file and offset', async () => {
    const { index, sel } = await indexed();
    const bodyIndex = { fileNames: names, fileOf: index.fileOf, posOf: index.posOf, lenOf: index.lenOf, hash: (i: number) => index.tree.hash(i), hashHex: (i: number) => index.tree.hashHex(i) };
    const reader = new BodyReader(memoryBytes(files), bodyIndex, KEY, { blocks: 4, bytes: 2000 });
    const got: Buffer[] = [];
    for await (const { raw } of reader.inOrder(sel.main, sel.main.length)) got.push(raw);
    expect(got.length).toBe(main.length);
    got.forEach((raw, h) => expect(raw.equals(main[h]!)).toBe(true));

    const damaged = files.map((f) => Buffer.from(f));
    damaged[0]![8 + 10]! ^= 0xff; // a header byte of block 50
    const bad = new BodyReader(memoryBytes(damaged), bodyIndex, KEY, { blocks: 4, bytes: 2000 });
    await expect(bad.read(sel.main[50]!)).rejects.toThrow(new RegExp(`^blk00000\\.dat offset 0: expected block ${blockId(main[50]!)}, read [0-9a-f]{64} \\(file changed since the scan\\?\\)$`));
    const short = new BodyReader(memoryBytes([files[0]!.subarray(0, 100), files[1]!]), bodyIndex, KEY, { blocks: 4, bytes: 2000 });
    await expect(short.read(sel.main[50]!)).rejects.toThrow(`blk00000.dat offset 0: block ${blockId(main[50]!)} cut short (92 of ${main[50]!.length} bytes; file changed since the scan?)`);
  });
});
