import { closeSync, fstatSync, openSync } from 'node:fs';
import { onPath, readAll, writeAll } from '../runtime/io-error.js';

/** Where one block's bytes sit in the spill file. */
export interface SpilledBlock {
  offset: number;
  length: number;
}

/**
 * The blocks of the main chain, appended in the order they were scanned: the
 * source is read once, and later passes (and later builds) read blocks back
 * from here. Blocks rolled back by a reorg stay behind as dead bytes.
 */
export class BlocksSpill {
  private readonly fd: number;
  private size: number;

  constructor(
    readonly path: string,
    readOnly = false,
  ) {
    this.fd = onPath(path, 'block spill', () => openSync(path, readOnly ? 'r' : 'a+'));
    this.size = fstatSync(this.fd).size;
  }

  append(raw: Buffer): SpilledBlock {
    onPath(this.path, 'block spill', () => {
      writeAll(this.fd, raw);
    });
    const at = { offset: this.size, length: raw.length };
    this.size += raw.length;
    return at;
  }

  read(at: SpilledBlock): Buffer {
    const buf = Buffer.allocUnsafe(at.length);
    readAll(this.fd, buf, at.length, at.offset, this.path, 'block spill');
    return buf;
  }

  close(): void {
    closeSync(this.fd);
  }
}
