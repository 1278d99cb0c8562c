/** Where a pack reader's bytes come from: a local directory or a base URL read with HTTP Range. */
import { closeSync, openSync, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { RangeSource } from '../contract/pack-source.js';

// The web-standard part (interface and HTTP source) is edge-shippable; re-exported for one import path.
export { HttpSource, type RangeSource } from '../contract/pack-source.js';

/**
 * A pack's files in a local directory; file handles are kept open until close(). With `sync`,
 * ranges are read with blocking reads on the calling thread: for a batch job that awaits each
 * read before its next step (a build reading its previous pack), where a read through libuv's
 * thread pool costs a round trip of tens of microseconds for a few microseconds of copying from
 * the page cache. A server keeps the default (its other requests go on while a read waits).
 */
export class DirSource implements RangeSource {
  private readonly handles = new Map<string, Promise<FileHandle>>();
  private readonly fds = new Map<string, number>();
  constructor(
    readonly dir: string,
    readonly sync = false,
  ) {}

  describe(name: string): string {
    return join(this.dir, name);
  }

  private handle(name: string): Promise<FileHandle> {
    let h = this.handles.get(name);
    if (!h) {
      h = open(join(this.dir, name), 'r');
      this.handles.set(name, h);
      h.catch(() => this.handles.delete(name));
    }
    return h;
  }

  private fd(name: string): number {
    let fd = this.fds.get(name);
    if (fd === undefined) {
      fd = openSync(join(this.dir, name), 'r');
      this.fds.set(name, fd);
    }
    return fd;
  }

  async read(name: string, offset: number, length: number): Promise<Uint8Array> {
    const buf = new Uint8Array(length);
    let got = 0;
    if (this.sync) {
      const fd = this.fd(name);
      while (got < length) {
        const n = readSync(fd, buf, got, length - got, offset + got);
        if (n === 0) break;
        got += n;
      }
      return got === length ? buf : buf.subarray(0, got);
    }
    const fh = await this.handle(name);
    while (got < length) {
      const { bytesRead } = await fh.read(buf, got, length - got, offset + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return got === length ? buf : buf.subarray(0, got);
  }

  async readAll(name: string): Promise<Uint8Array> {
    const fh = await open(join(this.dir, name), 'r');
    try {
      return new Uint8Array(await fh.readFile());
    } finally {
      await fh.close();
    }
  }

  async close(): Promise<void> {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
    const hs = [...this.handles.values()];
    this.handles.clear();
    for (const h of hs) await h.then((fh) => fh.close()).catch(() => {});
  }
}
