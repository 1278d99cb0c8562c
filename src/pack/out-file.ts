/** The pack writer's output files: parts, the index and spilled runs. */
import { createHash, type Hash } from 'node:crypto';
import { closeSync, constants, fsyncSync, openSync } from 'node:fs';
import { onPath, writeAll } from '../runtime/io-error.js';

const WRITE_CHUNK = 1 << 20;

/** A file written through a 1 MiB buffer, hashed as it goes (a `scratch` file: neither hashed nor synced). */
export class OutFile {
  readonly fd: number;
  readonly hash: Hash | undefined;
  private buf = Buffer.allocUnsafe(WRITE_CHUNK);
  private at = 0;
  size = 0;

  constructor(
    readonly path: string,
    private readonly opts: { scratch?: boolean } = {},
  ) {
    this.hash = opts.scratch ? undefined : createHash('sha256');
    this.fd = onPath(path, 'creating', () => openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o666));
  }

  write(b: Uint8Array): void {
    if (this.at + b.length > this.buf.length) this.flush();
    if (b.length > this.buf.length) this.raw(b);
    else {
      this.buf.set(b, this.at);
      this.at += b.length;
    }
    this.size += b.length;
  }

  private raw(b: Uint8Array): void {
    onPath(this.path, 'writing', () => writeAll(this.fd, b));
    this.hash?.update(b);
  }

  flush(): void {
    if (this.at > 0) this.raw(this.buf.subarray(0, this.at));
    this.at = 0;
  }

  /** Flushes, syncs and closes; returns the sha256 of everything written (a scratch file: flushes and closes). */
  close(): Buffer {
    this.flush();
    if (!this.opts.scratch) onPath(this.path, 'syncing', () => fsyncSync(this.fd));
    closeSync(this.fd);
    return this.hash?.digest() ?? Buffer.alloc(0);
  }
}
