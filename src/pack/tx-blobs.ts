/**
 * What packFromTree remembers of each transaction while it packs a tree, to store the documents
 * that embed tx documents as recipes over their blobs and a tx's `.bin`/`.hex` as a slice of its
 * block's `.bin`: per tx, where its `.json` blob is, its size and the first 8 bytes of its sha256
 * (and of its prefix without the placement fields, as a block document embeds it), and where its
 * raw bytes sit in its block's blob with their CRC-32.
 *
 * Memory: the documents' rows are columns of typed arrays, found through a Map keyed by the
 * first 52 bits of the txid (a number): about 100 bytes per tx (20 MB for 200k txs, 0.7 GB for
 * Namecoin mainnet's 7M). The slices are small objects, about 200 bytes per tx, dropped after the
 * first pass. Two txids sharing 52 bits only lose a reference: every use is checked against the
 * bytes' length and hash.
 */
import type { BlobRef, Encoding } from '../contract/pack-format.js';

/** TxDocBlob.prefix of a document kept from a previous pack unread: not known until read (see packFromTree). */
export const PREFIX_UNKNOWN = 0xffffffff;
/** TxDocBlob.crc of a document kept from a previous pack unread and stored gzip: not known (its sha256 is). */
export const CRC_UNKNOWN = -1;

/** A tx document's blob and what identifies its bytes. */
export interface TxDocBlob {
  blob: BlobRef;
  size: number;
  /** First 48 bits of the document's sha256 (shaKey). */
  sha: number;
  /** CRC-32 of the document's bytes, or CRC_UNKNOWN. */
  crc: number;
  /** Length of the document without its placement fields (`,"block":…,"time":…}`): 0 when it has none, PREFIX_UNKNOWN when not read. */
  prefix: number;
  /** CRC-32 of those `prefix` bytes (0 when `prefix` is). */
  prefixCrc: number;
  /** Whether the blob was written before the manifest's line for the document came (to be checked there). */
  early: boolean;
}

/** A tx's raw bytes inside its block's identity blob, and what identifies its `.bin` and `.hex` files (TxPlace's). */
export interface TxSlice {
  block: BlobRef;
  start: number;
  length: number;
  crc: number;
  binSha: number;
  hexSha: number;
}

/** The first 52 bits of a txid, as a number (a number key holds no string alive). */
const keyOf = (txid: string) => parseInt(txid.slice(0, 13), 16);

/** The first 48 bits of a sha256 given as hex (a manifest line's). */
export const shaKey = (hex: string): number => parseInt(hex.slice(0, 12), 16);

/** Growable columns of the document rows (typed arrays: no object per tx). */
class DocRows {
  part = new Uint16Array(1024);
  offset = new Float64Array(1024);
  stored = new Uint32Array(1024);
  encoding = new Uint8Array(1024);
  crc = new Uint32Array(1024);
  size = new Uint32Array(1024);
  sha = new Float64Array(1024);
  docCrc = new Float64Array(1024);
  prefix = new Uint32Array(1024);
  prefixCrc = new Uint32Array(1024);
  state = new Uint8Array(1024);
  length = 0;

  grow(): void {
    const cap = Math.max(1024, this.part.length * 2);
    const more = <T extends Uint8Array | Uint16Array | Uint32Array | Float64Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(cap);
      b.set(a);
      return b;
    };
    this.part = more(this.part);
    this.offset = more(this.offset);
    this.stored = more(this.stored);
    this.encoding = more(this.encoding);
    this.crc = more(this.crc);
    this.size = more(this.size);
    this.sha = more(this.sha);
    this.docCrc = more(this.docCrc);
    this.prefix = more(this.prefix);
    this.prefixCrc = more(this.prefixCrc);
    this.state = more(this.state);
  }
}

/** DocRows.state: the row's blob was written before its manifest line came (EARLY), or is not looked up yet (PENDING). */
const SETTLED = 0;
const EARLY = 1;
const PENDING = 2;

/** The document rows of a TxBlobs, as a thread is sent them (TxBlobs.docsCopy, TxBlobs.ofDocs). */
export interface TxDocsCopy {
  keys: Float64Array;
  rows: Uint32Array;
  columns: Omit<DocRows, 'grow'>;
}

export class TxBlobs {
  private readonly docRow = new Map<number, number>();
  private readonly rows = new DocRows();
  /** By txid key: the slice, or the different slices of txids sharing a key or of one txid in several blocks. */
  private readonly slices = new Map<number, TxSlice | TxSlice[]>();
  private pendingRows = 0;

  /** Rows noted with setPending and not yet resolved or forgotten. */
  get pendingCount(): number {
    return this.pendingRows;
  }

  private row(txid: string): number {
    const key = keyOf(txid);
    const r = this.rows;
    let i = this.docRow.get(key);
    if (i === undefined) {
      if (r.length === r.part.length) r.grow();
      i = r.length++;
      this.docRow.set(key, i);
    }
    return i;
  }

  setDoc(txid: string, doc: TxDocBlob): void {
    const r = this.rows;
    const i = this.row(txid);
    if (r.state[i] === PENDING) this.pendingRows--;
    r.part[i] = doc.blob.part;
    r.offset[i] = doc.blob.offset;
    r.stored[i] = doc.blob.stored;
    r.encoding[i] = doc.blob.encoding;
    r.crc[i] = doc.blob.crc;
    r.size[i] = doc.size;
    r.sha[i] = doc.sha;
    r.docCrc[i] = doc.crc;
    r.prefix[i] = doc.prefix;
    r.prefixCrc[i] = doc.prefixCrc;
    r.state[i] = doc.early ? EARLY : SETTLED;
  }

  /**
   * A document kept from a previous pack unread, known by its manifest line alone (`size`, `sha`
   * as shaKey): its blob is looked up only when a recipe may name it (setDoc then, or forget).
   * Until then doc() does not give it. A row already known stays as it is.
   */
  setPending(txid: string, size: number, sha: number): void {
    if (this.docRow.has(keyOf(txid))) return;
    const i = this.row(txid);
    const r = this.rows;
    r.size[i] = size;
    r.sha[i] = sha;
    r.state[i] = PENDING;
    this.pendingRows++;
  }

  /** The manifest line's size and sha of a pending document (setPending), or undefined. */
  pending(txid: string): { size: number; sha: number } | undefined {
    const i = this.docRow.get(keyOf(txid));
    return i === undefined || this.rows.state[i] !== PENDING ? undefined : { size: this.rows.size[i]!, sha: this.rows.sha[i]! };
  }

  /** A pending document whose blob is not to be used (not found as its line says): no recipe names it. */
  forget(txid: string): void {
    const key = keyOf(txid);
    const i = this.docRow.get(key);
    if (i === undefined || this.rows.state[i] !== PENDING) return;
    this.docRow.delete(key); // its row stays unused
    this.pendingRows--;
  }

  doc(txid: string): TxDocBlob | undefined {
    const i = this.rowOf(txid);
    return i === undefined ? undefined : this.docAt(i);
  }

  /** The row of `txid`'s document (for docAt), or undefined (also while it is pending). */
  rowOf(txid: string): number | undefined {
    const i = this.docRow.get(keyOf(txid));
    return i === undefined || this.rows.state[i] === PENDING ? undefined : i;
  }

  /** The document at row `i` (rowOf's). */
  docAt(i: number): TxDocBlob {
    const r = this.rows;
    return {
      blob: { part: r.part[i]!, offset: r.offset[i]!, stored: r.stored[i]!, encoding: r.encoding[i]! as Encoding, crc: r.crc[i]! },
      size: r.size[i]!,
      sha: r.sha[i]!,
      crc: r.docCrc[i]!,
      prefix: r.prefix[i]!,
      prefixCrc: r.prefixCrc[i]!,
      early: r.state[i] === EARLY,
    };
  }

  /** The document's blob was written early and its manifest line has come: it is an ordinary one now. */
  settle(txid: string): void {
    const i = this.rowOf(txid);
    if (i !== undefined) this.rows.state[i] = SETTLED;
  }

  /**
   * Notes where `txid`'s raw bytes sit in a block's blob. Every different slice is kept: a txid
   * whose bytes are in several blocks (a duplicate coinbase, a tx with another witness in an
   * off-chain block) and txids sharing a key each have theirs; the caller picks the one whose
   * bytes its file lists (a pack build's private tree lists its txs' raw files without them).
   */
  setSlice(txid: string, s: TxSlice): void {
    const key = keyOf(txid);
    const had = this.slices.get(key);
    if (had === undefined) return void this.slices.set(key, s);
    const list = Array.isArray(had) ? had : [had];
    if (list.some((o) => o.length === s.length && o.binSha === s.binSha)) return;
    list.push(s);
    if (list.length === 2) this.slices.set(key, list);
  }

  /** The slices noted for `txid`'s key (setSlice), first noted first. */
  slicesOf(txid: string): readonly TxSlice[] {
    const had = this.slices.get(keyOf(txid));
    return had === undefined ? [] : Array.isArray(had) ? had : [had];
  }

  /**
   * The document rows (not the slices, nor pending rows' state beyond their mark), for another
   * thread to look documents up in: TxBlobs.ofDocs. The arrays are copies (cut to the rows' count).
   */
  docsCopy(): TxDocsCopy {
    const keys = new Float64Array(this.docRow.size);
    const rows = new Uint32Array(this.docRow.size);
    let i = 0;
    for (const [k, r] of this.docRow) {
      keys[i] = k;
      rows[i++] = r;
    }
    const r = this.rows;
    const n = r.length;
    const columns = {
      part: r.part.slice(0, n),
      offset: r.offset.slice(0, n),
      stored: r.stored.slice(0, n),
      encoding: r.encoding.slice(0, n),
      crc: r.crc.slice(0, n),
      size: r.size.slice(0, n),
      sha: r.sha.slice(0, n),
      docCrc: r.docCrc.slice(0, n),
      prefix: r.prefix.slice(0, n),
      prefixCrc: r.prefixCrc.slice(0, n),
      state: r.state.slice(0, n),
      length: n,
    };
    return { keys, rows, columns };
  }

  /** A TxBlobs holding the document rows `copy` (docsCopy's) holds. */
  static ofDocs(copy: TxDocsCopy): TxBlobs {
    const t = new TxBlobs();
    Object.assign(t.rows, copy.columns);
    for (let i = 0; i < copy.keys.length; i++) t.docRow.set(copy.keys[i]!, copy.rows[i]!);
    for (let i = 0; i < copy.columns.length; i++) if (copy.columns.state[i] === PENDING) t.pendingRows++;
    return t;
  }

  /** Slices are needed only until the tx's own files are packed (right after its block's in manifest order). */
  dropSlices(): void {
    this.slices.clear();
  }
}
