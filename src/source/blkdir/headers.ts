/**
 * Pass 1 of the blocks-dir source: the header index. Each record the scanner finds adds its
 * 80-byte header (checked against its own proof of work; a merge-mined header with its AuxPoW)
 * and its place (file number, data offset, length) to compact typed storage; duplicates are
 * counted once with a warning, headers failing their proof of work are set aside as rejected.
 * The best chain is then chosen by cumulative work (chain-select.ts).
 */
import { AUXPOW_VERSION_FLAG, HEADER_SIZE } from '../../chain/block.js';
import { toDisplayHex } from '../../chain/hash.js';
import type { Network } from '../../chain/networks.js';
import { checkBlockHead } from '../../chain/validate.js';
import { HeaderTree, type ChainSelection } from '../chain-select.js';
import type { BlockPlace, RejectedBlock } from '../types.js';
import { scanRecords, WINDOW, type ByteWindow } from './records.js';

export class HeaderIndex {
  readonly tree = new HeaderTree(1024);
  fileOf = new Uint16Array(1024);
  /** Data offset (after the 8-byte record header). */
  posOf = new Float64Array(1024);
  lenOf = new Uint32Array(1024);
  /** Headers that fail their own proof of work (damaged): kept out of the chain, reported by the validating wrapper. */
  readonly rejected: RejectedBlock[] = [];
  private readonly rejectedPrev: Buffer[] = [];
  private readonly rejectedHashes = new Set<string>();
  records = 0;
  duplicates = 0;

  constructor(
    readonly network: Network,
    /** File names by file number (places in warnings and errors). */
    readonly fileNames: readonly string[],
    readonly warnings: string[],
    readonly maxBlockSize: number,
  ) {}

  /** Indexes the records of file `fi` read through `r`; `skipped` hears about bytes that are no record. */
  async addFile(fi: number, r: ByteWindow, skipped: (from: number, to: number, why: string) => void): Promise<void> {
    const { network } = this;
    const name = this.fileNames[fi]!;
    const magic = Buffer.from(network.magic, 'hex');
    await scanRecords(r, { magic, networkName: network.name, maxBlockSize: this.maxBlockSize }, {
      skipped,
      record: async (pos, len, hdr) => {
        this.records++;
        let header = hdr;
        // A merge-mined header's proof of work is the AuxPoW after it: check it with the record in the window.
        let head = header;
        if (network.auxpow && header.readUInt32LE(0) & AUXPOW_VERSION_FLAG) {
          const w = await r.at(pos, Math.min(8 + len, WINDOW));
          const wrel = pos - w.start;
          head = w.buf.subarray(wrel + 8, Math.min(w.buf.length, wrel + 8 + len));
          header = head.subarray(0, HEADER_SIZE);
        }
        const checked = checkBlockHead(head, network);
        // (an AuxPoW longer than the window is checked when the block is read)
        const invalid = checked.invalid?.kind === 'malformed' && head.length < len ? undefined : checked.invalid;
        if (invalid) {
          const hash = toDisplayHex(checked.hash);
          if (!this.rejectedHashes.has(hash)) {
            this.rejected.push({ hash, height: undefined, place: { file: name, offset: pos + 8 }, invalid });
            this.rejectedPrev.push(Buffer.from(header.subarray(4, 36)));
          }
          this.rejectedHashes.add(hash);
          return;
        }
        this.add(fi, pos, len, header, checked.hash);
      },
    });
  }

  private add(fi: number, pos: number, len: number, header: Buffer, hash: Buffer): void {
    const { tree } = this;
    const { index, isNew } = tree.add(header, hash);
    if (!isNew) {
      this.duplicates++;
      const first = this.fileNames[this.fileOf[index]!]!;
      this.warnings.push(
        `${this.fileNames[fi]} offset ${pos}: duplicate copy of block ${tree.hashHex(index)} (first at ${first} offset ${this.posOf[index]! - 8}); counted once`,
      );
      return;
    }
    if (index >= this.fileOf.length) {
      const cap = this.fileOf.length * 2;
      const a = new Uint16Array(cap);
      a.set(this.fileOf);
      this.fileOf = a;
      const b = new Float64Array(cap);
      b.set(this.posOf);
      this.posOf = b;
      const c = new Uint32Array(cap);
      c.set(this.lenOf);
      this.lenOf = c;
    }
    this.fileOf[index] = fi;
    this.posOf[index] = pos + 8;
    this.lenOf[index] = len;
  }

  /** Where block `i` is stored: its file and the absolute offset of its first byte. */
  placeOf(i: number): BlockPlace {
    return { file: this.fileNames[this.fileOf[i]!]!, offset: this.posOf[i]! };
  }

  /** Chooses the best chain from genesis; the rejected headers learn their heights where their parent is known. */
  select(): ChainSelection {
    const sel = this.tree.select(this.network.genesis);
    this.rejected.forEach((r, k) => {
      const parent = this.tree.indexOf(this.rejectedPrev[k]!);
      if (parent !== -1 && sel.height[parent]! >= 0) r.height = sel.height[parent]! + 1;
    });
    return sel;
  }

  /** Bytes held by the header and position storage. */
  get byteSize(): number {
    return this.tree.byteSize + this.fileOf.byteLength + this.posOf.byteLength + this.lenOf.byteLength;
  }
}
