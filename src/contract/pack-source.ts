/**
 * Where a pack reader's bytes come from, and the one source that needs only web-standard APIs:
 * a base URL read with HTTP `Range` through fetch (Node, workerd, Deno). Dependency-free, so the
 * edge glue ships it as is (src/hosts/ship.ts).
 */

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

/** A pack's files below a base URL, read with `Range: bytes=a-b` (the server must answer 206). */
export class HttpSource implements RangeSource {
  private readonly base: string;
  /**
   * `headers` go with every request (e.g. a marker that lets a host's own function pass the
   * request through to its static files); `fetcher` replaces the global fetch.
   */
  constructor(
    base: string | URL,
    private readonly headers: Readonly<Record<string, string>> = {},
    private readonly fetcher: typeof fetch = (input, init) => fetch(input, init),
  ) {
    const s = String(base);
    this.base = s.endsWith('/') ? s : s + '/';
  }

  describe(name: string): string {
    return this.base + name;
  }

  async read(name: string, offset: number, length: number): Promise<Uint8Array> {
    const url = this.base + name;
    const res = await this.fetcher(url, { headers: { ...this.headers, Range: `bytes=${offset}-${offset + length - 1}`, 'Accept-Encoding': 'identity' } });
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
    const res = await this.fetcher(url, { headers: { ...this.headers, 'Cache-Control': 'no-cache' } });
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`GET ${url}: HTTP ${res.status}`);
    }
    return new Uint8Array(await res.arrayBuffer());
  }

  async close(): Promise<void> {}
}
