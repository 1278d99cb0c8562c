import { closeSync, openSync, readSync, writeSync } from 'node:fs';

/** Where one block's bytes sit in the spill file. */
export interface SpilledBlock {
  offset: number;
  length: number;
}

/**
 * The source is read once; its blocks are appended here so that the render
 * pass can walk them again without a second trip to the node.
 */
export class BlocksSpill {
  private fd: number;
  private size = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w+');
  }

  append(raw: Buffer): SpilledBlock {
    writeSync(this.fd, raw, 0, raw.length, this.size);
    const at = { offset: this.size, length: raw.length };
    this.size += raw.length;
    return at;
  }

  read(at: SpilledBlock): Buffer {
    const buf = Buffer.allocUnsafe(at.length);
    let done = 0;
    while (done < at.length) {
      const n = readSync(this.fd, buf, done, at.length - done, at.offset + done);
      if (n === 0) throw new Error(`block spill ${this.path} ends early at offset ${at.offset + done}`);
      done += n;
    }
    return buf;
  }

  close(): void {
    closeSync(this.fd);
  }
}
