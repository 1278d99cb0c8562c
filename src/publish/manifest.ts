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

/** Reads a manifest file line by line (whole lines as byte ranges of a chunk), in 1 MiB chunks. */
function* manifestLines(path: string): Generator<{ buf: Buffer; start: number; end: number }> {
  const fd = onPath(path, 'reading', () => openSync(path, 'r'));
  try {
    let buf = Buffer.alloc(1 << 20);
    let have = 0;
    for (;;) {
      if (have === buf.length) buf = Buffer.concat([buf, Buffer.alloc(buf.length)]); // a line longer than the buffer
      const n = onPath(path, 'reading', () => readSync(fd, buf, have, buf.length - have, null));
      have += n;
      let start = 0;
      for (let nl = buf.indexOf(10, start); nl !== -1 && nl < have; nl = buf.indexOf(10, start)) {
        yield { buf, start, end: nl + 1 };
        start = nl + 1;
      }
      if (n === 0) {
        if (start < have) throw new Error(`${path}: the last line has no newline (offset ${start}): not a manifest this tool wrote`);
        return;
      }
      buf.copy(buf, 0, start, have);
      have -= start;
    }
  } finally {
    closeSync(fd);
  }
}

/** The size field of a manifest line `<64 hex> <size> <path>\n`, and where its path starts. */
function parseLine(buf: Buffer, start: number, end: number, path: string): { size: number; pathAt: number } {
  let at = start + 65;
  let size = 0;
  for (let c = buf[at]!; c >= 48 && c <= 57; c = buf[++at]!) size = size * 10 + (c - 48);
  if (buf[start + 64] !== 32 || buf[at] !== 32 || at === start + 65 || at >= end) {
    throw new Error(`${path}: malformed manifest line at its bytes ${start}..: not a manifest this tool wrote`);
  }
  return { size, pathAt: at + 1 };
}

/**
 * Writes the manifest of a tree that is `previous`'s tree with the files `changed` (written or
 * deleted this run) changed: a streaming merge of the previous manifest's sorted lines with the
 * changed paths' current database rows (a path without a row is gone). The bytes equal
 * {@link writeManifest}'s for the same database, at O(changed) database reads; the previous
 * manifest is copied through in large slices.
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
      /** Emits the changed paths sorted before `upTo` (all when undefined); true when `upTo` itself is one. */
      const emitChangedBefore = (upTo: Buffer | undefined): boolean => {
        for (; next < sorted.length; next++) {
          const cmp = upTo === undefined ? -1 : Buffer.compare(sorted[next]!, upTo);
          if (cmp > 0) return false;
          const key = sorted[next]!.toString('utf8');
          const value = files.get(key);
          if (value) out.line(key, value);
          if (cmp === 0) return ++next > 0;
        }
        return false;
      };
      let seen = 0;
      for (const { buf, start, end } of manifestLines(previous)) {
        const { size, pathAt } = parseLine(buf, start, end, previous);
        if (next < sorted.length && emitChangedBefore(buf.subarray(pathAt, end - 1))) continue;
        out.push(Buffer.from(buf.subarray(start, end)));
        out.bytes += size;
        out.lines++;
        if (++seen % 65536 === 0) onProgress?.(out.lines);
      }
      emitChangedBefore(undefined);
      const summary = out.finish();
      onProgress?.(out.lines);
      return summary;
    } finally {
      out.close();
    }
  });
}
