/**
 * The manifest (`_manifest.json`) format, its one owner: a line `<sha256> <size> <path>\n` per
 * file, the sha256 as 64 lowercase hex digits, the size in decimal without leading zeros, the
 * path a {@link safePath}; the lines sorted by path in UTF-8 byte order, each path once. The
 * writer (publish/manifest-rows.ts, publish/manifest.ts), the ownership check of a tree
 * (publish/targets.ts), verify and the tests all read and write it through this module.
 */
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { onPath } from '../runtime/io-error.js';

/** What a well-formed line holds. */
export interface ManifestLine {
  sha256: string;
  size: number;
  path: string;
}

/** The text of a line, newline included. */
export function encodeManifestLine(sha256: string, size: number, path: string): string {
  return `${sha256} ${size} ${path}\n`;
}

/** The most bytes {@link putManifestLine} writes for `path`. */
export function maxLineBytes(path: string): number {
  return 64 + 1 + 16 + 1 + path.length * 3 + 1;
}

const HEX = Buffer.from('0123456789abcdef', 'latin1');

/**
 * Writes a line into `chunk` at `at` with no string per line (the writer's hot loop); returns
 * where it ends. The hash is 32 bytes at `hash[hashAt, hashAt + 32)` or, as a string, 64
 * latin1 characters written as they are.
 */
export function putManifestLine(chunk: Buffer, at: number, hash: Uint8Array | string, hashAt: number, size: number, path: string): number {
  if (typeof hash === 'string') at += chunk.write(hash, at, 'latin1');
  else
    for (let j = hashAt, end = j + 32; j < end; j++) {
      chunk[at++] = HEX[hash[j]! >> 4]!;
      chunk[at++] = HEX[hash[j]! & 15]!;
    }
  chunk[at++] = 32;
  at += chunk.write(String(size), at, 'latin1');
  chunk[at++] = 32;
  at += chunk.write(path, at, 'utf8');
  chunk[at++] = 10;
  return at;
}

const LINE = /^([0-9a-f]{64}) (0|[1-9][0-9]{0,15}) ([^]+)$/;

/**
 * One line (without its newline) in the exact format, or undefined; the path is not checked
 * here (see {@link safePath}), so a reader can name an unsafe path apart from a malformed line.
 */
export function parseManifestLine(line: string): ManifestLine | undefined {
  const m = LINE.exec(line);
  if (!m || Number(m[2]) > Number.MAX_SAFE_INTEGER) return undefined;
  return { sha256: m[1]!, size: Number(m[2]), path: m[3]! };
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// C0 controls and DEL: the line format cannot hold \n (and readers split at \r); the build
// writes none of them. A backslash is a separator on some hosts, so it could climb out too.
// eslint-disable-next-line no-control-regex
const UNSAFE_CHAR = /[\u0000-\u001f\u007f\\]/;

/**
 * A path a manifest may name, the one rule for the build and verify: relative, '/'-separated
 * components none empty, `.` or `..`; no control character or backslash; well-formed Unicode
 * (it must survive UTF-8; as bytes, they must be UTF-8). Everything the build writes is such a path (test/safe-path.test.ts).
 */
export function safePath(p: string): boolean {
  if (p === '' || UNSAFE_CHAR.test(p) || LONE_SURROGATE.test(p)) return false;
  for (const c of p.split('/')) if (c === '' || c === '.' || c === '..') return false;
  return true;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** {@link safePath} of the UTF-8 bytes `p[from, to)`; false for bytes that are not UTF-8. */
export function safePathBytes(p: Uint8Array, from: number, to: number): boolean {
  let start = from;
  for (let at = from; at <= to; at++) {
    const c = at < to ? p[at]! : 47;
    if (c >= 0x80) {
      try {
        return safePath(UTF8.decode(p.subarray(from, to)));
      } catch {
        return false;
      }
    }
    if (c < 0x20 || c === 0x7f || c === 0x5c) return false;
    if (c !== 47) continue;
    const n = at - start;
    if (n === 0 || (p[start] === 46 && (n === 1 || (n === 2 && p[start + 1] === 46)))) return false;
    start = at + 1;
  }
  return true;
}

/** Strings with UTF-16 code units from U+D800 up sort differently as JS strings than as UTF-8. */
const WIDE = /[\ud800-\uffff]/;

/** Manifest order of two paths: UTF-8 byte order (negative, 0, positive). */
export function compareManifestPaths(a: string, b: string): number {
  if (WIDE.test(a) || WIDE.test(b)) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The indices of `keys` in manifest order (stable: equal keys keep their order). */
export function manifestOrder(keys: readonly string[]): number[] {
  const order = keys.map((_, i) => i);
  if (keys.some((k) => WIDE.test(k))) {
    const bytes = keys.map((k) => Buffer.from(k, 'utf8'));
    order.sort((a, b) => Buffer.compare(bytes[a]!, bytes[b]!));
  } else order.sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
  return order;
}

/** 1 at the bytes of lowercase hex digits. */
const HEX_DIGIT = new Uint8Array(256);
for (const c of HEX) HEX_DIGIT[c] = 1;

const NOT_A_LINE = 'is not "<sha256> <size> <path>"';

/**
 * A file of manifest lines read line by line, never whole (a sorted run of the writer, or a
 * manifest): the current line is `buf[start, end]` (end at its newline), its path
 * `buf[pathAt, end)`. Throws naming the file, line and byte offset of a line that is not in the
 * format; `strict` also checks the hex, the size, the path ({@link safePathBytes}) and the order.
 */
export class ManifestCursor {
  private readonly fd: number;
  buf: Buffer;
  private have = 0;
  start = 0;
  end = -1;
  pathAt = 0;
  size = 0;
  done = false;

  /** Lines read so far, and the file offset of `buf[0]` (for errors). */
  line = 0;
  private base = 0;
  /** The previous line's path, `prev[0, prevLength)` (strict mode: the order is checked). */
  private prev = Buffer.allocUnsafe(256);
  private prevLength = -1;

  constructor(
    readonly path: string,
    /** Ordering of cursors on equal paths: the later write wins (-1: the published manifest). */
    readonly log: string,
    readonly seq: number,
    chunk: number,
    private readonly strict = false,
  ) {
    this.fd = onPath(path, 'reading', () => openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW));
    this.buf = Buffer.allocUnsafe(chunk);
    try {
      this.next();
    } catch (e) {
      if (!this.done) this.close();
      throw e;
    }
  }

  /** Moves to the next line; false at the end. */
  next(): boolean {
    let at = this.end + 1;
    let nl = this.buf.indexOf(10, at);
    while (nl < 0 || nl >= this.have) {
      // Keep the partial line, read more (a line longer than the buffer doubles it).
      this.buf.copy(this.buf, 0, at, this.have);
      this.have -= at;
      this.base += at;
      at = 0;
      if (this.have === this.buf.length) this.buf = Buffer.concat([this.buf, Buffer.alloc(this.buf.length)]);
      const n = onPath(this.path, 'reading', () => readSync(this.fd, this.buf, this.have, this.buf.length - this.have, null));
      if (n === 0) {
        if (this.have > 0) this.malformed(at, this.have, 'has no newline at its end');
        this.done = true;
        this.close();
        return false;
      }
      this.have += n;
      nl = this.buf.indexOf(10, this.have - n);
    }
    this.start = at;
    this.end = nl;
    this.parse();
    return true;
  }

  /** The size field and where the path starts. */
  private parse(): void {
    const { buf, start, end } = this;
    let at = start + 65;
    let size = 0;
    for (let c = buf[at]!; c >= 48 && c <= 57; c = buf[++at]!) size = size * 10 + (c - 48);
    this.line++;
    if (buf[start + 64] !== 32 || buf[at] !== 32 || at === start + 65 || at >= end) this.malformed(start, end, NOT_A_LINE);
    this.size = size;
    this.pathAt = at + 1;
    if (this.strict) this.check();
  }

  /** Strict mode: lowercase hex, a size without leading zeros, a safe path after the previous one. */
  private check(): void {
    const { buf, start, end, pathAt } = this;
    for (let i = start; i < start + 64; i++) if (HEX_DIGIT[buf[i]!] !== 1) this.malformed(start, end, NOT_A_LINE);
    if ((buf[start + 65] === 48 && pathAt - start > 67) || this.size > Number.MAX_SAFE_INTEGER) this.malformed(start, end, NOT_A_LINE);
    if (!safePathBytes(buf, pathAt, end)) this.malformed(start, end, 'names an unsafe path');
    const n = end - pathAt;
    if (this.prevLength >= 0 && this.prev.compare(buf, pathAt, end, 0, this.prevLength) >= 0) this.malformed(start, end, 'is not after the line before it (paths are sorted and unique)');
    if (n > this.prev.length) this.prev = Buffer.allocUnsafe(Math.max(n, 2 * this.prev.length));
    buf.copy(this.prev, 0, pathAt, end);
    this.prevLength = n;
  }

  private malformed(start: number, end: number, why: string): never {
    const text = JSON.stringify(this.buf.toString('utf8', start, Math.min(end, start + 200)));
    throw new Error(`${this.path}: line ${this.line} (offset ${this.base + start}) ${why}: ${text}; not a manifest this tool wrote`);
  }

  /**
   * Compares this line's path with the key `prefix` + `name` (+ `/` when `slash`), in UTF-8 byte
   * order: -1 or 1, 0 when equal, 2 when the key is a proper prefix of the path. An ASCII name is
   * compared in place, with no copy (a tree's walk asks once or more per file).
   */
  compareEntry(prefix: Buffer, name: string, slash: boolean): -1 | 0 | 1 | 2 {
    const { buf, pathAt, end } = this;
    const plen = prefix.length;
    if (plen > 0) {
      const c = buf.compare(prefix, 0, plen, pathAt, Math.min(end, pathAt + plen));
      if (c !== 0) return c as -1 | 1;
    }
    let at = pathAt + plen;
    for (let i = 0; i < name.length; i++, at++) {
      const ch = name.charCodeAt(i);
      if (ch >= 0x80) return this.compareBytes(Buffer.concat([prefix, Buffer.from(slash ? name + '/' : name)]));
      if (at >= end) return -1;
      if (buf[at] !== ch) return buf[at]! < ch ? -1 : 1;
    }
    if (slash) {
      if (at >= end) return -1;
      if (buf[at] !== 47) return buf[at]! < 47 ? -1 : 1;
      at++;
    }
    return at < end ? 2 : 0;
  }

  private compareBytes(key: Buffer): -1 | 0 | 1 | 2 {
    const { buf, pathAt, end } = this;
    const c = buf.compare(key, 0, key.length, pathAt, Math.min(end, pathAt + key.length));
    if (c !== 0) return c as -1 | 1;
    return end - pathAt > key.length ? 2 : 0;
  }

  /** Compares this line's path with `other`'s (UTF-8 byte order). */
  compare(other: ManifestCursor): number {
    return this.buf.compare(other.buf, other.pathAt, other.end, this.pathAt, this.end);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * The paths of a manifest, read strictly (line by line, never whole in memory): every line in
 * the exact format, safe paths in strictly ascending UTF-8 byte order, at least one line.
 * Throws naming the file, line and offset of the first line that is not. What the ownership
 * check of a tree (publish/targets.ts) reads.
 */
export class ManifestPaths {
  private readonly cursor: ManifestCursor;

  constructor(path: string) {
    this.cursor = new ManifestCursor(path, '', -1, 1 << 20, true);
    if (this.cursor.done) throw new Error(`${path}: empty; not a manifest this tool wrote`);
  }

  get done(): boolean {
    return this.cursor.done;
  }

  /**
   * The current path compared with `prefix` + `name` (+ `/` when `slash`), UTF-8 byte order:
   * -1 (it sorts before), 0 (equal), 1 (after), 2 (after, and the key is a prefix of it).
   */
  compare(prefix: Buffer, name: string, slash = false): -1 | 0 | 1 | 2 {
    return this.cursor.compareEntry(prefix, name, slash);
  }

  /** Moves to the next path; false at the end. */
  next(): boolean {
    return this.cursor.next();
  }

  close(): void {
    if (!this.cursor.done) this.cursor.close();
  }
}
