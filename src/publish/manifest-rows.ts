import { closeSync, mkdirSync, openSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { manifestOrder, maxLineBytes, putManifestLine, safePath } from '../contract/manifest.js';
import { onPath, writeAll } from '../runtime/io-error.js';

/** The line of a deleted path in a run: never listed, it hides the published manifest's line. */
const DELETED_MARK = '-'.repeat(64);
/** Rows a log keeps in memory before it writes them out as one sorted run. */
const RUN_ROWS = 100_000;

/**
 * The manifest rows of the files one thread wrote or deleted in this run (render threads,
 * writer threads, the main thread's inline renderer each own one): kept in memory, sorted by
 * path (UTF-8 byte order) and written as a *run* of manifest lines (`sha256 size path`; a
 * deletion has 64 dashes as its hash) to `<dir>/<name>.<seq>` every {@link RUN_ROWS} rows and
 * at {@link seal}. The manifest stage merges all runs, and in an incremental build the
 * published manifest, into `_manifest.json` (manifest.ts): no index write per file, no work on
 * the main thread. A path written twice by one log (the BIP30 duplicate txids) keeps its last
 * row. The runs are scratch: a killed build leaves them to the next build, which removes them
 * ({@link resetRowsDir}) and never publishes a manifest it did not finish.
 */
export class ManifestRows {
  private paths: string[] = [];
  private sizes: number[] = [];
  private readonly digests: Buffer;
  private seq = 0;
  /** Rows written out so far. */
  rows = 0;

  constructor(
    private readonly dir: string,
    private readonly name: string,
    private readonly runRows = RUN_ROWS,
  ) {
    this.digests = Buffer.alloc(runRows * 32);
  }

  /** A file written: its size and sha256 (32 bytes at `digests[at, at + 32)`). */
  written(path: string, size: number, digests: Uint8Array, at: number): void {
    this.digests.set(digests.subarray(at, at + 32), this.paths.length * 32);
    this.add(path, size);
  }

  /** A path deleted (or absent) in this tree. */
  deleted(path: string): void {
    this.add(path, -1);
  }

  private add(path: string, size: number): void {
    // The build lists only paths verify accepts: one rule, contract/manifest.ts.
    if (!safePath(path)) throw new Error(`refusing to list the unsafe path ${JSON.stringify(path)} in the manifest`);
    this.paths.push(path);
    this.sizes.push(size);
    if (this.paths.length >= this.runRows) this.spill();
  }

  /** Writes the rows kept in memory as one sorted run. */
  private spill(): void {
    const n = this.paths.length;
    if (n === 0) return;
    const { paths, sizes, digests } = this;
    // Stable: equal paths stay in write order, and the last one is kept below.
    const order = manifestOrder(paths);
    const path = join(this.dir, `${this.name}.${this.seq++}`);
    onPath(path, 'writing', () => {
      const fd = openSync(path, 'wx');
      try {
        let chunk = Buffer.allocUnsafe(1 << 20);
        let at = 0;
        for (let k = 0; k < n; k++) {
          const i = order[k]!;
          if (k + 1 < n && paths[order[k + 1]!] === paths[i]) continue; // rewritten later in this run
          const path = paths[i]!;
          const room = maxLineBytes(path);
          if (at + room > chunk.length) {
            writeAll(fd, chunk.subarray(0, at));
            at = 0;
            if (room > chunk.length) chunk = Buffer.allocUnsafe(room);
          }
          at = putManifestLine(chunk, at, sizes[i]! < 0 ? DELETED_MARK : digests, i * 32, Math.max(sizes[i]!, 0), path);
          this.rows++;
        }
        writeAll(fd, chunk.subarray(0, at));
      } finally {
        closeSync(fd);
      }
    });
    this.paths = [];
    this.sizes = [];
  }

  /** Writes out what is left; returns the rows this log wrote. */
  seal(): number {
    this.spill();
    return this.rows;
  }
}

/** Empties (creates) the directory of this run's manifest rows. */
export function resetRowsDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  onPath(dir, 'creating', () => mkdirSync(dir, { recursive: true }));
}

/** The runs in `dir`, each with its log's name and sequence number. */
export function listRuns(dir: string): { path: string; log: string; seq: number }[] {
  return readdirSync(dir).map((f) => {
    const dot = f.lastIndexOf('.');
    return { path: join(dir, f), log: f.slice(0, dot), seq: Number(f.slice(dot + 1)) };
  });
}

/** Whether a run's line (at `start`) is a deletion. */
export function isDeletion(buf: Buffer, start: number): boolean {
  return buf[start] === 0x2d; // '-': hex digits never are
}
