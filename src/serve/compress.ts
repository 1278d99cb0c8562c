/**
 * Content-Encoding for `snapshot serve`: 200 answers of text documents (JSON, hex, the UI) of at
 * least MIN_SIZE bytes are sent with brotli or gzip to clients that accept them
 * (Accept-Encoding, q-values honoured), identity otherwise. Every answer of such a file carries
 * `Vary: Accept-Encoding`; the encoded answer has an ETag of its own (the file's weak ETag with
 * the coding appended inside the quotes), so If-None-Match is answered with 304 for either one.
 * Not encoded: Range requests (byte ranges are of the file), `.bin` (raw block and tx bytes,
 * which barely compress) and error documents.
 * Files held in memory are encoded once per file version (memoized, bounded) and sent with a
 * Content-Length, HEAD included; larger files are encoded as they stream, without a length.
 */
import type { FileHandle } from 'node:fs/promises';
import type http from 'node:http';
import { pipeline, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import { COMMON_HEADERS, type FileResponse } from '../contract/router.js';

/** Smaller documents are sent as they are: a few hundred bytes saved do not pay for the CPU. */
export const MIN_SIZE = 1024;
/** Media types worth encoding (without parameters); `application/octet-stream` (.bin) is not. */
const TEXT_TYPES = new Set(['application/json', 'text/plain', 'text/html', 'text/css', 'text/javascript', 'image/svg+xml', 'application/manifest+json']);
/** Bound of the memoized encoded bodies (bytes of encoded output). */
const MEMO_BYTES = 32 * 1024 * 1024;

export interface Encoding {
  name: 'br' | 'gzip';
  /** Whole-buffer encoder for bodies held in memory (encoded once: the better ratio). */
  encode(body: Buffer): Buffer;
  /** Streaming encoder for files read from disk (the faster setting). */
  stream(sizeHint: number): Transform;
}

const BR = zlib.constants;
// Brotli quality 4 and gzip level 1 (streams): nearly the ratio of the slow settings on JSON at a
// speed that suits serving; bodies encoded once for the memo get gzip's default level.
const ENCODINGS: Record<Encoding['name'], Encoding> = {
  br: {
    name: 'br',
    encode: (b) => zlib.brotliCompressSync(b, { params: { [BR.BROTLI_PARAM_QUALITY]: 4, [BR.BROTLI_PARAM_SIZE_HINT]: b.length } }),
    stream: (n) => zlib.createBrotliCompress({ params: { [BR.BROTLI_PARAM_QUALITY]: 4, [BR.BROTLI_PARAM_SIZE_HINT]: n } }),
  },
  gzip: {
    name: 'gzip',
    encode: (b) => zlib.gzipSync(b, { level: 6 }),
    stream: () => zlib.createGzip({ level: 1 }),
  },
};

/** Whether answers of a file of this type and size may be encoded (and so vary on Accept-Encoding). */
export function encodable(contentType: string, size: number): boolean {
  return size >= MIN_SIZE && TEXT_TYPES.has(contentType.split(';')[0]!.trim());
}

/** `Vary: Accept-Encoding` for every answer of an encodable file (identity and 304 ones too). */
export function varyFor(contentType: string, size: number): string[] {
  return encodable(contentType, size) ? ['Vary', 'Accept-Encoding'] : [];
}

/** q-values of Accept-Encoding (RFC 9110 §12.5.3): the coding's own, else `*`'s, else 0. */
function quality(header: string, coding: string): number {
  let star = 0;
  let own: number | undefined;
  for (const part of header.split(',')) {
    const [token, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!token) continue;
    const qp = params.find((p) => p.startsWith('q='));
    const q = qp === undefined ? 1 : Number(qp.slice(2));
    const value = Number.isFinite(q) ? Math.min(Math.max(q, 0), 1) : 0;
    if (token === coding) own = value;
    else if (token === '*') star = value;
  }
  return own ?? star;
}

/** The encoding of a 200 answer of this file for this request; undefined: identity. */
export function pickEncoding(req: http.IncomingMessage, contentType: string, size: number): Encoding | undefined {
  const accept = req.headers['accept-encoding'];
  if (accept === undefined || req.headers.range !== undefined || !encodable(contentType, size)) return undefined;
  const br = quality(accept, 'br');
  const gzip = quality(accept, 'gzip');
  if (br > 0 && br >= gzip) return ENCODINGS.br;
  return gzip > 0 ? ENCODINGS.gzip : undefined;
}

/** The ETag of the encoded representation: the coding inside the quotes of the file's ETag. */
export function encodedEtag(etag: string, enc: Encoding): string {
  return `${etag.slice(0, -1)}-${enc.name}"`;
}

/** Encoded bodies of files held in memory, per file version; the oldest dropped beyond MEMO_BYTES. */
export class EncodedBodies {
  private map = new Map<string, Buffer>();
  private bytes = 0;

  get(file: string, etag: string, enc: Encoding, body: Buffer): Buffer {
    const key = `${enc.name} ${etag} ${file}`;
    let out = this.map.get(key);
    if (out === undefined) {
      out = enc.encode(body);
      this.map.set(key, out);
      this.bytes += out.length;
      for (const [k, v] of this.map) {
        if (this.bytes <= MEMO_BYTES) break;
        this.map.delete(k);
        this.bytes -= v.length;
      }
    }
    return out;
  }
}

const COMMON_LIST: readonly string[] = Object.entries(COMMON_HEADERS).flat();

interface Version {
  etag: string;
  lastModified: string;
}

function headers(r: FileResponse, v: Version, enc: Encoding): (string | number)[] {
  return [...COMMON_LIST, 'Content-Type', r.contentType, 'Cache-Control', r.cacheControl, 'Content-Encoding', enc.name, 'Vary', 'Accept-Encoding', 'Last-Modified', v.lastModified, 'ETag', encodedEtag(v.etag, enc)];
}

/** 304 when If-None-Match names the encoded ETag; true when answered. */
function notModified(req: http.IncomingMessage, res: http.ServerResponse, r: FileResponse, v: Version, enc: Encoding): boolean {
  if (req.headers['if-none-match'] !== encodedEtag(v.etag, enc)) return false;
  res.writeHead(304, [...COMMON_LIST, 'Content-Type', r.contentType, 'Cache-Control', r.cacheControl, 'Vary', 'Accept-Encoding']);
  res.end();
  return true;
}

/** A 200 file held in memory, encoded (memoized), with its length. */
export function sendEncodedBody(req: http.IncomingMessage, res: http.ServerResponse, r: FileResponse, v: Version, body: Buffer, enc: Encoding, memo: EncodedBodies, head: boolean): void {
  if (notModified(req, res, r, v, enc)) return;
  const out = memo.get(r.file, v.etag, enc, body);
  res.writeHead(200, [...headers(r, v, enc), 'Content-Length', out.length]);
  res.end(head ? undefined : out);
}

/** A 200 file from disk, encoded as it streams (no length); returns true when the stream took over `fh`. */
export function streamEncoded(req: http.IncomingMessage, res: http.ServerResponse, r: FileResponse, v: Version & { size: number }, fh: FileHandle, enc: Encoding, head: boolean): boolean {
  if (notModified(req, res, r, v, enc)) return false;
  res.writeHead(200, headers(r, v, enc));
  if (head) {
    res.end();
    return false;
  }
  // pipeline closes the file and destroys every stream on any error (a client gone mid-file).
  pipeline(fh.createReadStream(), enc.stream(v.size), res, () => undefined);
  return true;
}
