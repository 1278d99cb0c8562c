import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import type { Database } from 'lmdb';
import { onPath } from '../index/io-error.js';
import { manifestValue } from '../index/rows.js';

/**
 * Writes the manifest, `sha256 size path` per line sorted by path, streaming
 * from the database; returns the file count (manifest included), total bytes
 * and the manifest's own sha256 (the tree's generation id). `onProgress(listed)` after every
 * chunk of lines.
 */
export function writeManifest(
  files: Database<Buffer, string>,
  path: string,
  onProgress?: (listed: number) => void,
): { files: number; bytes: number; sha256: string } {
  return onPath(path, 'writing', () => writeManifestTo(files, path, onProgress));
}

function writeManifestTo(
  files: Database<Buffer, string>,
  path: string,
  onProgress?: (listed: number) => void,
): { files: number; bytes: number; sha256: string } {
  const fd = openSync(path, 'w');
  const hash = createHash('sha256');
  let count = 0;
  let bytes = 0;
  let chunk: string[] = [];
  const flushChunk = () => {
    const buf = Buffer.from(chunk.join(''), 'utf8');
    writeSync(fd, buf);
    hash.update(buf);
    chunk = [];
  };
  try {
    for (const { key, value } of files.getRange()) {
      const { size, sha256 } = manifestValue.decode(value);
      chunk.push(`${sha256.toString('hex')} ${size} ${key}\n`);
      bytes += size;
      if (++count % 4096 === 0) {
        flushChunk();
        onProgress?.(count);
      }
    }
    flushChunk();
    onProgress?.(count);
  } finally {
    closeSync(fd);
  }
  return { files: count + 1, bytes, sha256: hash.digest('hex') };
}
