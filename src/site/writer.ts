import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BucketSpill } from '../index/bucket-spill.js';

/**
 * Writes the site's files into a staging directory and records each one's
 * size and sha256 for the manifest (spilled to disk, so memory stays flat).
 * Directories are created once (cached).
 */
export class SiteWriter {
  private readonly dirs = new Set<string>();
  private readonly entries: BucketSpill;
  /** Files written (a path written twice counts twice until the manifest is made). */
  writes = 0;

  constructor(
    readonly root: string,
    workDir: string,
  ) {
    mkdirSync(root, { recursive: true });
    this.dirs.add(root);
    this.entries = new BucketSpill(workDir, 'files', 64);
  }

  write(rel: string, data: string | Buffer): void {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const path = join(this.root, rel);
    const dir = dirname(path);
    if (!this.dirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.dirs.add(dir);
    }
    writeFileSync(path, buf);
    const entry = Buffer.allocUnsafe(40);
    entry.writeBigUInt64LE(BigInt(buf.length), 0);
    createHash('sha256').update(buf).digest().copy(entry, 8);
    this.entries.add(rel, entry);
    this.writes++;
  }

  readText(rel: string): string {
    return readFileSync(join(this.root, rel), 'utf8');
  }

  /**
   * Writes the manifest, `sha256 size path` per line, to `rel`; returns the
   * file count and total bytes. Lines are grouped by a hash of the path and
   * sorted by path within a group: canonical, whatever the write order, and
   * made one bucket at a time. A path written twice keeps its last entry.
   */
  writeManifest(rel: string): { files: number; bytes: number } {
    this.entries.finish();
    const out = openSync(join(this.root, rel), 'w');
    let files = 0;
    let bytes = 0;
    try {
      for (let b = 0; b < this.entries.buckets; b++) {
        const latest = new Map(this.entries.readBucket(b));
        const lines: string[] = [];
        for (const path of [...latest.keys()].sort()) {
          const e = latest.get(path)!;
          const size = Number(e.readBigUInt64LE(0));
          lines.push(`${e.subarray(8, 40).toString('hex')} ${size} ${path}\n`);
          files++;
          bytes += size;
        }
        writeSync(out, lines.join(''));
      }
    } finally {
      closeSync(out);
    }
    return { files: files + 1, bytes };
  }
}
