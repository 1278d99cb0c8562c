/** Where a pack reader's bytes come from: a local directory or a base URL read with HTTP Range. */
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { RangeSource } from '../contract/pack-source.js';

// The web-standard part (interface and HTTP source) is edge-shippable; re-exported for one import path.
export { HttpSource, type RangeSource } from '../contract/pack-source.js';

/** A pack's files in a local directory; file handles are kept open until close(). */
export class DirSource implements RangeSource {
  private readonly handles = new Map<string, Promise<FileHandle>>();
  constructor(readonly dir: string) {}

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

  async read(name: string, offset: number, length: number): Promise<Uint8Array> {
    const fh = await this.handle(name);
    const buf = new Uint8Array(length);
    let got = 0;
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
    const hs = [...this.handles.values()];
    this.handles.clear();
    for (const h of hs) await h.then((fh) => fh.close()).catch(() => {});
  }
}
