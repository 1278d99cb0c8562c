/**
 * A Cloudflare Worker (module syntax) answering the API from a pack stored in an R2 bucket, read
 * by range through the bucket binding (see pack-edge.ts). Shipped as plain ES modules with the
 * router and the pack reader (see ship.ts): only relative imports and web-standard APIs.
 */
import type { SiteInfo } from '../contract/layout.js';
import type { RangeSource } from '../contract/pack-source.js';
import { packEdgeHandler, type PackEdgeOptions, type RequestHooks } from './pack-edge.js';

/** The part of an R2 bucket binding the worker uses. */
export interface R2BucketLike {
  get(key: string, options?: { range?: { offset: number; length: number } }): Promise<{ arrayBuffer(): Promise<ArrayBuffer> } | null>;
}

export interface PackWorkerEnv {
  /** The R2 bucket holding `pack.json`, the `.idx` and the `.part` files. */
  BUCKET: R2BucketLike;
  /** Key prefix of the pack's objects in the bucket (e.g. `snapshot/`; default none). */
  PACK_PREFIX?: string;
}

/** A pack's objects in an R2 bucket below a key prefix. */
export class R2Source implements RangeSource {
  constructor(
    private readonly bucket: R2BucketLike,
    private readonly prefix = '',
  ) {}

  describe(name: string): string {
    return `R2 object ${this.prefix}${name}`;
  }

  private async get(name: string, range?: { offset: number; length: number }): Promise<Uint8Array> {
    const obj = await this.bucket.get(this.prefix + name, range && { range });
    if (!obj) throw new Error(`${this.describe(name)} does not exist in the bucket`);
    return new Uint8Array(await obj.arrayBuffer());
  }

  /** R2 answers a range that runs past the end with the bytes up to the end, as the reader expects. */
  read(name: string, offset: number, length: number): Promise<Uint8Array> {
    return this.get(name, { offset, length });
  }

  readAll(name: string): Promise<Uint8Array> {
    return this.get(name);
  }

  async close(): Promise<void> {}
}

/** The worker's default export. */
export function cloudflarePackWorker(
  info: SiteInfo,
  opts: PackEdgeOptions = {},
): { fetch(request: Request, env: PackWorkerEnv, ctx?: RequestHooks): Promise<Response> } {
  let handle: ((request: Request, hooks?: RequestHooks) => Promise<Response>) | undefined;
  return {
    fetch(request, env, ctx) {
      handle ??= packEdgeHandler(info, () => new R2Source(env.BUCKET, env.PACK_PREFIX ?? ''), opts);
      return handle(request, ctx && { waitUntil: (p) => ctx.waitUntil!(p) });
    },
  };
}
