import { createHash } from 'node:crypto';
import { closeSync, constants, openSync, statSync } from 'node:fs';
import { ManifestCursor } from '../contract/manifest.js';
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

/** A binary min-heap of cursors by path. */
class CursorHeap {
  readonly items: ManifestCursor[] = [];

  push(c: ManifestCursor): void {
    const h = this.items;
    h.push(c);
    for (let i = h.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (h[p]!.compare(h[i]!) <= 0) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  pop(): ManifestCursor {
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
  const cursors = runs.map((r) => new ManifestCursor(r.path, r.log, r.seq, 1 << 17));
  const prev = previous === undefined ? undefined : new ManifestCursor(previous, '', -1, 1 << 20);
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
          const same: ManifestCursor[] = [first];
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
