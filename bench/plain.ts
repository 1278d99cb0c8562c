// The benchmarks' baseline: a plain writer that writes given files of a built tree again (same
// paths, same bytes) with no chain work, the way any tool that publishes those files must.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Waits until what earlier runs left to the kernel (dirty pages, trees just deleted: on a disk
 * mounted with `discard`, the freed blocks' discards) is done, so that a timed run does not pay
 * for the one before it. Neither the build nor the plain writer syncs its own writes. A no-op
 * on tmpfs.
 */
export function settle(): void {
  execFileSync('sync');
}

export interface PlainResult {
  /** Seconds spent writing (reading the source files is not timed). */
  seconds: number;
  files: number;
  bytes: number;
}

/**
 * Writes the files `paths` of the tree `src` below `dst`, read in chunks of 20,000 files. With
 * `removeSource`, each chunk is removed from `src` once read (not timed), so that the two
 * copies never both fill the disk or a tmpfs.
 */
export function plainWrite(src: string, paths: readonly string[], dst: string, removeSource = false): PlainResult {
  const dirs = new Set<string>();
  const r: PlainResult = { seconds: 0, files: 0, bytes: 0 };
  for (let i = 0; i < paths.length; i += 20_000) {
    const chunk = paths.slice(i, i + 20_000).map((p) => [p, readFileSync(join(src, p))] as const);
    if (removeSource) for (const [p] of chunk) rmSync(join(src, p));
    const start = performance.now();
    for (const [p, data] of chunk) {
      const path = join(dst, p);
      const d = dirname(path);
      if (!dirs.has(d)) {
        mkdirSync(d, { recursive: true });
        dirs.add(d);
      }
      writeFileSync(path, data);
      r.files++;
      r.bytes += data.length;
    }
    r.seconds += (performance.now() - start) / 1000;
  }
  return r;
}

/** The rows of a tree's `_manifest.json`: `<sha256> <size> <path>` lines. */
export function manifestLines(manifestFile: string): string[] {
  return readFileSync(manifestFile, 'utf8').trim().split('\n');
}
