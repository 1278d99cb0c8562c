import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Network } from '../chain/networks.js';
import { xorObfuscate } from '../chain/blkfile.js';
import { Prng } from './prng.js';

/** Bitcoin Core's MAX_BLOCKFILE_SIZE. */
export const MAX_BLOCKFILE_SIZE = 128 * 1024 * 1024;

export interface WriteBlocksDirOptions {
  network: Network;
  /** Start a new blkNNNNN.dat when the next record would pass this size (default 128 MiB). A bigger block gets a file of its own. */
  maxFileSize?: number;
  /** 8-byte obfuscation key: written to xor.dat and applied as byte ^= key[filePos % 8] over every blk file (framing included), as Core 28+. */
  xorKey?: Buffer;
  /** Write the blocks in a deterministic random order (within and across files). */
  shuffle?: boolean;
  /** Seed of the shuffle (default 0). */
  seed?: number | string;
  /**
   * Pre-allocate each file in chunks of this many bytes (Core: 16 MiB), the
   * tail left as raw zero bytes on disk — not obfuscated, exactly as Core's
   * fallocate leaves it. Default: no padding.
   */
  chunkSize?: number;
}

export interface WrittenRecord {
  /** File name, e.g. blk00000.dat. */
  file: string;
  /** Offset of the record's magic in the file. */
  offset: number;
  /** Block length (the framing's size field). */
  size: number;
  /** Block hash when the input block carried one. */
  hash: string | undefined;
}

export interface WrittenBlocksDir {
  dir: string;
  /** File names in order. */
  files: string[];
  /** Every record in write order. */
  records: WrittenRecord[];
}

/**
 * Writes `blocks` as a node's blocks directory: blk00000.dat, blk00001.dat, …
 * of `magic | size LE | block` records, plus xor.dat when a key is given.
 */
export function writeBlocksDir(blocks: Iterable<{ raw: Buffer; hash?: string }>, dir: string, opts: WriteBlocksDirOptions): WrittenBlocksDir {
  const magic = Buffer.from(opts.network.magic, 'hex');
  const maxFileSize = opts.maxFileSize ?? MAX_BLOCKFILE_SIZE;
  let list: Iterable<{ raw: Buffer; hash?: string }> = blocks;
  if (opts.shuffle) list = new Prng(`blkfiles/${opts.seed ?? 0}`).shuffle([...blocks]);
  mkdirSync(dir, { recursive: true });
  if (opts.xorKey) {
    if (opts.xorKey.length !== 8) throw new Error('xor key must be 8 bytes');
    writeFileSync(join(dir, 'xor.dat'), opts.xorKey);
  }
  const files: string[] = [];
  const records: WrittenRecord[] = [];
  let parts: Buffer[] = [];
  let size = 0;
  const flush = () => {
    if (size === 0) return;
    const name = `blk${String(files.length).padStart(5, '0')}.dat`;
    const data = Buffer.concat(parts, size);
    xorObfuscate(data, 0, opts.xorKey);
    let out = data;
    if (opts.chunkSize) {
      const padded = Math.ceil(size / opts.chunkSize) * opts.chunkSize;
      out = Buffer.alloc(padded);
      data.copy(out);
    }
    writeFileSync(join(dir, name), out);
    files.push(name);
    parts = [];
    size = 0;
  };
  for (const b of list) {
    const recLen = 8 + b.raw.length;
    if (size > 0 && size + recLen > maxFileSize) flush();
    const head = Buffer.allocUnsafe(8);
    magic.copy(head, 0);
    head.writeUInt32LE(b.raw.length, 4);
    records.push({ file: `blk${String(files.length).padStart(5, '0')}.dat`, offset: size, size: b.raw.length, hash: b.hash });
    parts.push(head, b.raw);
    size += recLen;
  }
  flush();
  return { dir, files, records };
}
