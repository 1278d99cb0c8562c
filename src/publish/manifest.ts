import { createHash } from 'node:crypto';
import { closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { onPath, writeAll } from '../runtime/io-error.js';
import { isDeletion, listRuns } from './manifest-rows.js';

/** What a written manifest lists: the file count (manifest included), total bytes, its own sha256 (the tree's generation id). */
export interface ManifestSummary {
  files: number;
  bytes: number;
  sha256: string;
}

/** A manifest file being written: lines copied into a chunk, hashed and written 1 MiB at a time. */
class ManifestOut {
  private readonly fd: number;
  private readonly hash = createHash('sha256');
  private chunk = Buffer.allocUnsafe(1 << 20);
  private at = 0;
  lines = 0;
  bytes = 0;

  constructor(path: string) {
    // Never through a symlink planted at the path.
    this.fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o666);
  }

  /** Copies `buf[start, end)` (whole lines, `lines` of them, listing `bytes`). */
  copy(buf: Buffer, start: number, end: number, lines: number, bytes: number): void {
    if (this.at + end - start > this.chunk.length) this.flush();
    if (end - start > this.chunk.length) this.write(buf.subarray(start, end));
    else this.at += buf.copy(this.chunk, this.at, start, end);
    this.lines += lines;
    this.bytes += bytes;
  }

  private write(buf: Buffer): void {
    writeAll(this.fd, buf);
    this.hash.update(buf);
  }

  flush(): void {
    this.write(this.chunk.subarray(0, this.at));
    this.at = 0;
  }

  finish(): ManifestSummary {
    this.flush();
    return { files: this.lines + 1, bytes: this.bytes, sha256: this.hash.digest('hex') };
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * A sorted file of manifest lines read line by line (`<64 hex> <size> <path>\n`): the current
 * line is `buf[start, end]` (end at its newline), its path `buf[pathAt, end)`.
 */
class LineCursor {
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
    /** Checks every line as the manifest writer makes it (ManifestPaths). */
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
    if (buf[start + 64] !== 32 || buf[at] !== 32 || at === start + 65 || at >= end) this.malformed(start, end, 'is not "<sha256> <size> <path>"');
    this.size = size;
    this.pathAt = at + 1;
    if (this.strict) this.check();
  }

  /** Strict mode: lowercase hex, a size without leading zeros, a safe path after the previous one. */
  private check(): void {
    const { buf, start, end, pathAt } = this;
    for (let i = start; i < start + 64; i++) if (HEX_DIGIT[buf[i]!] !== 1) this.malformed(start, end, 'is not "<sha256> <size> <path>"');
    if (buf[start + 65] === 48 && pathAt - start > 67) this.malformed(start, end, 'is not "<sha256> <size> <path>"');
    if (!safePath(buf, pathAt, end)) this.malformed(start, end, 'names an unsafe path');
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
  compare(other: LineCursor): number {
    return this.buf.compare(other.buf, other.pathAt, other.end, this.pathAt, this.end);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** 1 at the bytes of lowercase hex digits. */
const HEX_DIGIT = new Uint8Array(256);
for (const c of Buffer.from('0123456789abcdef', 'latin1')) HEX_DIGIT[c] = 1;

/** `p[from, to)` is a relative path of whole components: none empty, `.` or `..`, no NUL (UTF-8 bytes). */
function safePath(p: Buffer, from: number, to: number): boolean {
  let start = from;
  for (let at = from; at <= to; at++) {
    const c = at < to ? p[at]! : 47;
    if (c === 0) return false;
    if (c !== 47) continue;
    const n = at - start;
    if (n === 0 || (p[start] === 46 && (n === 1 || (n === 2 && p[start + 1] === 46)))) return false;
    start = at + 1;
  }
  return true;
}

/**
 * The paths of a manifest, read strictly (line by line, never whole in memory): every line as
 * the manifest writer makes it, `<64 lowercase hex> <size> <path>\n`, safe paths in strictly
 * ascending UTF-8 byte order, at least one line. Throws naming the file, line and offset of the
 * first line that is not. What the ownership check of a tree (publish.ts) reads.
 */
export class ManifestPaths {
  private readonly cursor: LineCursor;

  constructor(path: string) {
    this.cursor = new LineCursor(path, '', -1, 1 << 20, true);
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

/** A binary min-heap of cursors by path. */
class CursorHeap {
  readonly items: LineCursor[] = [];

  push(c: LineCursor): void {
    const h = this.items;
    h.push(c);
    for (let i = h.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (h[p]!.compare(h[i]!) <= 0) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  pop(): LineCursor {
    const h = this.items;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        if (l >= h.length) break;
        const c = l + 1 < h.length && h[l + 1]!.compare(h[l]!) < 0 ? l + 1 : l;
        if (h[i]!.compare(h[c]!) <= 0) break;
        [h[i], h[c]] = [h[c]!, h[i]!];
        i = c;
      }
    }
    return top;
  }
}

/**
 * Writes the manifest, `sha256 size path` per line sorted by path (UTF-8 byte order): a
 * streaming merge of the sorted runs of this run's rows in `rowsDir` (manifest-rows.ts) and, in
 * an incremental build, the `previous` (published) manifest, whose lines the runs replace
 * (a path rewritten) or hide (a path deleted); the previous manifest's other lines are copied
 * through. `onProgress(listed, total)` every 64Ki lines and at the end, `total` estimated
 * from the `rows` in the runs and the size of the previous manifest until the end.
 */
export function writeManifest(
  rowsDir: string,
  previous: string | undefined,
  path: string,
  rows: number,
  onProgress?: (listed: number, total: number) => void,
): ManifestSummary {
  const runs = listRuns(rowsDir);
  const runBytes = runs.reduce((n, r) => n + statSync(r.path).size, 0);
  const prevBytes = previous === undefined ? 0 : statSync(previous).size;
  const total = rows + Math.round(prevBytes / (rows > 0 ? runBytes / rows : 140));
  const heap = new CursorHeap();
  const cursors = runs.map((r) => new LineCursor(r.path, r.log, r.seq, 1 << 17));
  const prev = previous === undefined ? undefined : new LineCursor(previous, '', -1, 1 << 20);
  try {
    return onPath(path, 'writing', () => {
      const out = new ManifestOut(path);
      try {
        for (const c of cursors) if (!c.done) heap.push(c);
        let reported = 0;
        const tick = () => out.lines - reported >= 65536 && onProgress?.((reported = out.lines), Math.max(total, out.lines));
        while (heap.items.length > 0) {
          const first = heap.pop();
          let winner = first;
          const same: LineCursor[] = [first];
          while (heap.items.length > 0 && heap.items[0]!.compare(first) === 0) {
            const c = heap.pop();
            same.push(c);
            if (c.log !== winner.log) throw new Error(`${path}: ${first.buf.toString('utf8', first.pathAt, first.end)} was written by two threads in one build`);
            if (c.seq > winner.seq) winner = c;
          }
          // The published lines before this path are copied through, consecutive ones at once.
          if (prev && !prev.done) {
            let cmp = prev.compare(winner);
            while (cmp < 0) {
              out.copy(prev.buf, prev.start, prev.end + 1, 1, prev.size);
              tick();
              if (!prev.next()) break;
              cmp = prev.compare(winner);
            }
            if (cmp === 0 && !prev.done) prev.next(); // replaced or deleted
          }
          if (!isDeletion(winner.buf, winner.start)) out.copy(winner.buf, winner.start, winner.end + 1, 1, winner.size);
          for (const c of same) if (c.next()) heap.push(c);
          tick();
        }
        while (prev && !prev.done) {
          out.copy(prev.buf, prev.start, prev.end + 1, 1, prev.size);
          tick();
          prev.next();
        }
        const summary = out.finish();
        onProgress?.(out.lines, out.lines);
        return summary;
      } finally {
        out.close();
      }
    });
  } finally {
    for (const c of [...cursors, ...(prev ? [prev] : [])]) if (!c.done) c.close();
  }
}
