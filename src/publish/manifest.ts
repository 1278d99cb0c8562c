import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import type { Database } from 'lmdb';
import { onPath } from '../index/io-error.js';
import { manifestValue } from '../index/rows.js';

/** What a written manifest lists: the file count (manifest included), total bytes, its own sha256 (the tree's generation id). */
export interface ManifestSummary {
  files: number;
  bytes: number;
  sha256: string;
}

/** A manifest file being written: lines buffered, hashed and written in chunks. */
class ManifestOut {
  private readonly fd: number;
  private readonly hash = createHash('sha256');
  private parts: Buffer[] = [];
  private pending = 0;
  lines = 0;
  bytes = 0;

  constructor(path: string) {
    this.fd = openSync(path, 'w');
  }

  push(part: Buffer): void {
    this.parts.push(part);
    this.pending += part.length;
    if (this.pending >= 1 << 20) this.flush();
  }

  line(path: string, value: Buffer): void {
    const { size, sha256 } = manifestValue.decode(value);
    this.push(Buffer.from(`${sha256.toString('hex')} ${size} ${path}\n`, 'utf8'));
    this.bytes += size;
    this.lines++;
  }

  flush(): void {
    const buf = Buffer.concat(this.parts);
    writeSync(this.fd, buf);
    this.hash.update(buf);
    this.parts = [];
    this.pending = 0;
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
 * Writes the manifest, `sha256 size path` per line sorted by path (UTF-8 byte order, the
 * database's key order), streaming from the database. `onProgress(listed)` after every chunk.
 */
export function writeManifest(files: Database<Buffer, string>, path: string, onProgress?: (listed: number) => void): ManifestSummary {
  return onPath(path, 'writing', () => {
    const out = new ManifestOut(path);
    try {
      for (const { key, value } of files.getRange()) {
        out.line(key, value);
        if (out.lines % 4096 === 0) onProgress?.(out.lines);
      }
      const summary = out.finish();
      onProgress?.(out.lines);
      return summary;
    } finally {
      out.close();
    }
  });
}

/** Reads a manifest file in chunks of whole lines (1 MiB, more for a longer line): `buf[0, end)`. */
function* manifestChunks(path: string): Generator<{ buf: Buffer; end: number }> {
  const fd = onPath(path, 'reading', () => openSync(path, 'r'));
  try {
    let buf = Buffer.alloc(1 << 20);
    let have = 0;
    for (;;) {
      if (have === buf.length) buf = Buffer.concat([buf, Buffer.alloc(buf.length)]); // a line longer than the buffer
      const n = onPath(path, 'reading', () => readSync(fd, buf, have, buf.length - have, null));
      have += n;
      const end = buf.lastIndexOf(10, have - 1) + 1;
      if (n === 0) {
        if (have > 0) throw new Error(`${path}: the last line has no newline: not a manifest this tool wrote`);
        return;
      }
      if (end > 0) yield { buf, end };
      buf.copy(buf, 0, end, have);
      have -= end;
    }
  } finally {
    closeSync(fd);
  }
}

/** The size field of a manifest line `<64 hex> <size> <path>\n` at `start`, and where its path starts. */
function parseLine(buf: Buffer, start: number, end: number, path: string): { size: number; pathAt: number } {
  let at = start + 65;
  let size = 0;
  for (let c = buf[at]!; c >= 48 && c <= 57; c = buf[++at]!) size = size * 10 + (c - 48);
  if (buf[start + 64] !== 32 || buf[at] !== 32 || at === start + 65 || at >= end) {
    throw new Error(`${path}: malformed manifest line "${buf.toString('utf8', start, Math.min(end, start + 200)).trimEnd()}": not a manifest this tool wrote`);
  }
  return { size, pathAt: at + 1 };
}

/**
 * Writes the manifest of a tree that is `previous`'s tree with the files `changed` (written or
 * deleted this run) changed: a streaming merge of the previous manifest's sorted lines with the
 * changed paths' current database rows (a path without a row is gone). The bytes equal
 * {@link writeManifest}'s for the same database, at O(changed) database reads; the previous
 * manifest's unchanged lines are copied through as whole runs.
 */
export function mergeManifest(
  previous: string,
  files: Database<Buffer, string>,
  changed: Iterable<string>,
  path: string,
  onProgress?: (listed: number) => void,
): ManifestSummary {
  const sorted = [...changed].map((p) => Buffer.from(p, 'utf8')).sort(Buffer.compare);
  return onPath(path, 'writing', () => {
    const out = new ManifestOut(path);
    try {
      let next = 0;
      /** Emits the changed paths that sort before the path `buf[from, to)` (all when buf is undefined); true when that path is one. */
      const emitChangedBefore = (buf?: Buffer, from = 0, to = 0): boolean => {
        for (; next < sorted.length; next++) {
          const cmp = buf === undefined ? -1 : sorted[next]!.compare(buf, from, to);
          if (cmp > 0) return false;
          const key = sorted[next]!.toString('utf8');
          const value = files.get(key);
          if (value) out.line(key, value);
          if (cmp === 0) return ++next > 0;
        }
        return false;
      };
      for (const { buf, end } of manifestChunks(previous)) {
        let run = 0; // start of the run of unchanged lines being copied
        const copyRun = (upTo: number) => upTo > run && out.push(Buffer.from(buf.subarray(run, upTo)));
        for (let at = 0; at < end; ) {
          const nl = buf.indexOf(10, at);
          const { size, pathAt } = parseLine(buf, at, nl, previous);
          if (next < sorted.length && sorted[next]!.compare(buf, pathAt, nl) <= 0) {
            copyRun(at);
            const replaced = emitChangedBefore(buf, pathAt, nl);
            run = replaced ? nl + 1 : at;
          }
          if (run <= at) {
            out.bytes += size;
            out.lines++;
          }
          at = nl + 1;
        }
        copyRun(end);
        onProgress?.(out.lines);
      }
      emitChangedBefore();
      const summary = out.finish();
      onProgress?.(out.lines);
      return summary;
    } finally {
      out.close();
    }
  });
}
