/** Where a pack reader's bytes come from: a local directory or a base URL read with HTTP Range. */
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** Where a pack's files are read from. */
export interface RangeSource {
  /** The file `name` as a path or URL, for messages. */
  describe(name: string): string;
  /** Up to `length` bytes of `name` from `offset` (fewer only at the end of the file). */
  read(name: string, offset: number, length: number): Promise<Uint8Array>;
  /** The whole (small) file `name`. */
  readAll(name: string): Promise<Uint8Array>;
  close(): Promise<void>;
}

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

/** A pack's files below a base URL, read with `Range: bytes=a-b` (the server must answer 206). */
export class HttpSource implements RangeSource {
  private readonly base: string;
  constructor(base: string | URL) {
    const s = String(base);
    this.base = s.endsWith('/') ? s : s + '/';
  }

  describe(name: string): string {
    return this.base + name;
  }

  async read(name: string, offset: number, length: number): Promise<Uint8Array> {
    const url = this.base + name;
    const res = await fetch(url, { headers: { Range: `bytes=${offset}-${offset + length - 1}`, 'Accept-Encoding': 'identity' } });
    if (res.status === 416) {
      await res.body?.cancel();
      return new Uint8Array(0);
    }
    if (res.status !== 206) {
      await res.body?.cancel();
      throw new Error(`GET ${url} (Range bytes=${offset}-${offset + length - 1}): HTTP ${res.status}, expected 206 Partial Content`);
    }
    const m = /^bytes (\d+)-(\d+)\//.exec(res.headers.get('content-range') ?? '');
    if (!m || Number(m[1]) !== offset) {
      await res.body?.cancel();
      throw new Error(`GET ${url}: Content-Range ${JSON.stringify(res.headers.get('content-range'))} does not start at ${offset}`);
    }
    const body = new Uint8Array(await res.arrayBuffer());
    if (body.length > length) throw new Error(`GET ${url}: ${body.length} bytes for a range of ${length}`);
    return body;
  }

  async readAll(name: string): Promise<Uint8Array> {
    const url = this.base + name;
    const res = await fetch(url, { headers: { 'Cache-Control': 'no-cache' } });
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`GET ${url}: HTTP ${res.status}`);
    }
    return new Uint8Array(await res.arrayBuffer());
  }

  async close(): Promise<void> {}
}
