/** What a pack reader hands back: answers, their encodings, and the error for a damaged blob. */
import { concatBytes } from './pack-bytes.js';
import type { Kind } from './pack-format.js';

/** A blob whose bytes fail their checksum: names the part file and the absolute offset. */
export class PackCorruptError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
    readonly length: number,
    what: string,
  ) {
    super(`${file}: bytes ${offset}–${offset + length - 1} fail their CRC-32 (${what})`);
    this.name = 'PackCorruptError';
  }
}

export interface GetOptions {
  /** The request's Accept-Encoding (header text or list of codings); gzip blobs are sent as stored when it allows gzip. */
  acceptEncoding?: string | readonly string[];
}

/** A found entry: `bytes` or `stream` (recipes), encoded as `contentEncoding`, `size` bytes in that encoding. */
export interface PackAnswer {
  contentEncoding: 'identity' | 'gzip';
  size: number;
  bytes?: Uint8Array;
  stream?: AsyncIterable<Uint8Array>;
  kind: Kind;
}

/** True when an Accept-Encoding value allows gzip (`gzip`, `x-gzip` or `*` with q > 0). */
export function acceptsGzip(accept: string | readonly string[] | undefined): boolean {
  if (accept === undefined) return false;
  const text = typeof accept === 'string' ? accept : accept.join(',');
  let star = false;
  let gzip: boolean | undefined;
  for (const item of text.split(',')) {
    const [coding, ...params] = item.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const ok = q === undefined || Number(q.slice(2)) > 0;
    if (coding === 'gzip' || coding === 'x-gzip') gzip = ok;
    else if (coding === '*') star = ok;
  }
  return gzip ?? star;
}

/** The answer's bytes (a stream collected). */
export async function answerBytes(a: PackAnswer): Promise<Uint8Array> {
  if (a.bytes) return a.bytes;
  const chunks: Uint8Array[] = [];
  for await (const c of a.stream!) chunks.push(c);
  return concatBytes(chunks);
}
