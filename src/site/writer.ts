import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Store } from '../index/store.js';

/**
 * Writes the site's files into a staging directory and records each one's
 * size and sha256 for the manifest. Directories are created once (cached).
 */
export class SiteWriter {
  private readonly dirs = new Set<string>();
  files = 0;
  bytes = 0;

  constructor(
    readonly root: string,
    private readonly store: Store,
  ) {
    mkdirSync(root, { recursive: true });
    this.dirs.add(root);
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
    const previous = this.store.files.get(rel);
    if (previous) this.bytes -= Number(previous.readBigUInt64LE(0));
    else this.files++;
    this.bytes += buf.length;
    this.store.files.putSync(rel, entry);
  }

  readText(rel: string): string {
    return readFileSync(join(this.root, rel), 'utf8');
  }

  /** `sha256 size path` per line, sorted by path: what `snapshot verify` checks. */
  manifestText(): string {
    const lines: string[] = [];
    for (const { key, value } of this.store.files.getRange()) {
      lines.push(`${value.subarray(8, 40).toString('hex')} ${value.readBigUInt64LE(0)} ${key}\n`);
    }
    return lines.join('');
  }
}
