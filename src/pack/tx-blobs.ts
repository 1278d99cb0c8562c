/**
 * What packFromTree remembers of each transaction while it packs a tree, to store the documents
 * that embed tx documents as recipes over their blobs and a tx's `.bin`/`.hex` as a slice of its
 * block's `.bin`: per tx, where its `.json` blob is, its size and the first 8 bytes of its sha256
 * (and of its prefix without the placement fields, as a block document embeds it), and where its
 * raw bytes sit in its block's blob with their CRC-32.
 *
 * Memory: a Map keyed by the first 52 bits of the txid (a number) to small objects, about 200
 * bytes per tx for the documents (40 MB for 200k txs) and as much for the slices, which are
 * dropped after the first pass. Two txids sharing 52 bits only lose a reference: every use is
 * checked against the bytes' length and hash.
 */
import type { BlobRef } from '../contract/pack-format.js';

/** A tx document's blob and what identifies its bytes. */
export interface TxDocBlob {
  blob: BlobRef;
  size: number;
  /** First 48 bits of the document's sha256 (shaKey). */
  sha: number;
  /** Length of the document without its placement fields (`,"block":…,"time":…}`), or 0 when unknown. */
  prefix: number;
  /** First 48 bits of the sha256 of those `prefix` bytes (0 when `prefix` is). */
  prefixSha: number;
  /** Whether the blob was written before the manifest's line for the document came (to be checked there). */
  early: boolean;
}

/** A tx's raw bytes inside its block's identity blob. */
export interface TxSlice {
  block: BlobRef;
  start: number;
  length: number;
  crc: number;
}

/** The first 52 bits of a txid, as a number (a number key holds no string alive). */
const keyOf = (txid: string) => parseInt(txid.slice(0, 13), 16);

/** The first 48 bits of a sha256 given as hex (a manifest line's). */
export const shaKey = (hex: string): number => parseInt(hex.slice(0, 12), 16);

export class TxBlobs {
  private readonly docs = new Map<number, TxDocBlob>();
  private readonly slices = new Map<number, TxSlice>();

  setDoc(txid: string, doc: TxDocBlob): void {
    this.docs.set(keyOf(txid), doc);
  }

  doc(txid: string): TxDocBlob | undefined {
    return this.docs.get(keyOf(txid));
  }

  setSlice(txid: string, s: TxSlice): void {
    // The first block listing a txid keeps it (a slice is checked against the file before use).
    if (!this.slices.has(keyOf(txid))) this.slices.set(keyOf(txid), s);
  }

  slice(txid: string): TxSlice | undefined {
    return this.slices.get(keyOf(txid));
  }

  /** Slices are needed only until the tx's own files are packed (right after its block's in manifest order). */
  dropSlices(): void {
    this.slices.clear();
  }
}
