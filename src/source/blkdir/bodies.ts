/**
 * Pass 2 of the blocks-dir source: block bodies, read lazily where the header index found them,
 * XOR-decoded, checked against the header hash (a file changed since the scan is an error naming
 * file and offset), and delivered in the order asked with a bounded read-ahead.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { xorObfuscate } from '../../chain/blkfile.js';
import { HEADER_SIZE } from '../../chain/block.js';
import { sha256d, toDisplayHex } from '../../chain/hash.js';

/** Raw (still obfuscated) bytes of the blk files by file number. */
export interface BlkBytes {
  /** Reads `len` bytes at `pos` of file `fi` into `buf`; returns how many were there. */
  read(fi: number, buf: Buffer, pos: number): Promise<number>;
  close(): Promise<void>;
}

/** The blk files on disk, at most 16 open at once (least recently used closed first). */
export function blkFiles(paths: readonly string[]): BlkBytes {
  const handles = new Map<number, Promise<FileHandle>>();
  const handle = (fi: number): Promise<FileHandle> => {
    let h = handles.get(fi);
    if (!h) {
      if (handles.size >= 16) {
        const [oldest, oh] = handles.entries().next().value as [number, Promise<FileHandle>];
        handles.delete(oldest);
        void oh.then((x) => x.close()).catch(() => undefined);
      }
      h = open(paths[fi]!, 'r');
      handles.set(fi, h);
    } else {
      handles.delete(fi); // LRU: move to the end
      handles.set(fi, h);
    }
    return h;
  };
  return {
    async read(fi, buf, pos) {
      const { bytesRead } = await (await handle(fi)).read(buf, 0, buf.length, pos);
      return bytesRead;
    },
    async close() {
      const hs = [...handles.values()];
      handles.clear();
      await Promise.all(hs.map((p) => p.then((x) => x.close()).catch(() => undefined)));
    },
  };
}

/** Where a block is, as the header index has it. */
export interface BodyIndex {
  fileOf: ArrayLike<number>;
  /** Data offset (after the 8-byte record header). */
  posOf: ArrayLike<number>;
  lenOf: ArrayLike<number>;
  fileNames: readonly string[];
  /** Header hash (internal order) and its display hex. */
  hash(i: number): Buffer;
  hashHex(i: number): string;
}

export interface ReadAhead {
  /** Blocks read ahead of the consumer. */
  blocks: number;
  /** Bytes read ahead at most (at least one block is always in flight). */
  bytes: number;
}

export class BodyReader {
  constructor(
    private readonly bytes: BlkBytes,
    private readonly index: BodyIndex,
    private readonly key: Uint8Array | undefined,
    private readonly ahead: ReadAhead,
  ) {}

  /** The body of block `i`, decoded and checked against its header hash. */
  async read(i: number): Promise<Buffer> {
    const { index } = this;
    const name = index.fileNames[index.fileOf[i]!]!;
    const pos = index.posOf[i]!;
    const len = index.lenOf[i]!;
    const buf = Buffer.allocUnsafe(len);
    const bytesRead = await this.bytes.read(index.fileOf[i]!, buf, pos);
    if (bytesRead !== len) {
      throw new Error(`${name} offset ${pos - 8}: block ${index.hashHex(i)} cut short (${bytesRead} of ${len} bytes; file changed since the scan?)`);
    }
    xorObfuscate(buf, pos, this.key);
    const h = sha256d(buf.subarray(0, HEADER_SIZE));
    if (!h.equals(index.hash(i))) {
      throw new Error(`${name} offset ${pos - 8}: expected block ${index.hashHex(i)}, read ${toDisplayHex(h)} (file changed since the scan?)`);
    }
    return buf;
  }

  /** Bodies of the first `count` blocks of `indices`, in order, with bounded read-ahead. */
  async *inOrder(indices: ArrayLike<number>, count: number): AsyncGenerator<{ index: number; raw: Buffer }> {
    const { lenOf } = this.index;
    const queue: { index: number; p: Promise<Buffer> }[] = [];
    let next = 0;
    let queuedBytes = 0;
    const fill = (): void => {
      while (next < count && queue.length < this.ahead.blocks && (queue.length === 0 || queuedBytes + lenOf[indices[next]!]! <= this.ahead.bytes)) {
        const index = indices[next++]!;
        const p = this.read(index);
        p.catch(() => undefined); // surfaced when awaited
        queue.push({ index, p });
        queuedBytes += lenOf[index]!;
      }
    };
    fill();
    while (queue.length > 0) {
      const item = queue.shift()!;
      const raw = await item.p;
      queuedBytes -= lenOf[item.index]!;
      fill();
      yield { index: item.index, raw };
    }
  }

  close(): Promise<void> {
    return this.bytes.close();
  }
}
