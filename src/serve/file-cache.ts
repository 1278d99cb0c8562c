/**
 * In-memory cache of small files for `snapshot serve`, in front of reading each file from disk.
 *
 * - Keyed by the router's canonical file path; holds files up to `maxFileBytes` (default
 *   64 KiB) and at most `maxBytes` in total (default 64 MiB), least recently used evicted first.
 *   Larger files are remembered as "large" and streamed from disk; absent files (and directories)
 *   are remembered as "absent" (negative entries count towards the byte budget too).
 * - A file is read once through one file handle (open, fstat, read), so the body, size and
 *   mtime always belong together, and the ETag/Last-Modified are the ones the disk path sends for
 *   it (`W/"<size>-<mtime ms>"`).
 * - Validation: the tree is immutable between builds and a rebuild swaps the whole tree (the
 *   `out` symlink renamed to a new release directory), which changes the inode of the tree root
 *   (followed through the symlink) and of `_manifest.json`. {@link TreeWatch} re-stats both at most once per `revalidateMs`
 *   (default 1 s) — the requests that arrive once the interval has passed wait for that check —
 *   and clears the cache when either changed. So after a rebuild, at most ~1 s of responses can
 *   still come from the previous tree (each one a complete, consistent file of it); editing a
 *   single file in place is not detected unless `_manifest.json` or the root directory changes
 *   too (touch `_manifest.json` or restart).
 * - Symlinks below the root are never followed ({@link TreeRoot}): such a file is absent (404).
 */
import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface CacheOptions {
  /** Total bytes held (bodies plus a small per-entry overhead); default 64 MiB. */
  maxBytes?: number;
  /** Largest file held in memory; larger ones are streamed from disk. Default 64 KiB. */
  maxFileBytes?: number;
  /** Minimum interval between checks of the tree's identity, ms; default 1000. */
  revalidateMs?: number;
}

export interface CachedFile {
  kind: 'file';
  body: Buffer;
  etag: string;
  lastModified: string;
  /** Modification time in ms (If-Range compares Last-Modified only when it is a strong validator). */
  mtimeMs: number;
  /** Headers sent with it besides the file's own (a pack's Content-Encoding and Vary). */
  extra?: (string | number)[];
  /** Pre-built 200 header list for the last content type / cache policy it was sent with. */
  headers?: { contentType: string; cacheControl: string; list: (string | number)[] };
}

export type CacheEntry = CachedFile | { kind: 'absent' } | { kind: 'large' };

const ABSENT: CacheEntry = { kind: 'absent' };
const LARGE: CacheEntry = { kind: 'large' };
const ENTRY_OVERHEAD = 200;

/** Errors meaning "no such file" (for the router's paths): cached as absent. */
export const ABSENT_CODES: ReadonlySet<string> = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'ENAMETOOLONG', 'ELOOP']);

/**
 * The tree's root, and the check that keeps every read inside it: a file is read only when its
 * real path is the root's real path joined with the router's path, so no component below the
 * root is a symlink (whether it points out of the tree or inside it). The root itself may be one
 * (`out` -> `out.releases/<n>`, as builds publish it); its real path is resolved again when a
 * check fails, which follows a swap of `out`. The check and the read are two steps: the tree is
 * immutable between builds, so only someone who can write into the published release could race
 * them (and the final component is opened with O_NOFOLLOW).
 */
export class TreeRoot {
  private real: string | undefined;

  constructor(readonly dir: string) {}

  private async resolveRoot(): Promise<string | undefined> {
    return (this.real = await realpath(this.dir).catch(() => undefined));
  }

  /** The real path to read `file` (a router path) from; undefined when it is absent or reached through a symlink. */
  async resolve(file: string): Promise<string | undefined> {
    let abs: string;
    try {
      abs = await realpath(join(this.dir, file));
    } catch {
      return undefined;
    }
    const root = this.real ?? (await this.resolveRoot());
    if (root !== undefined && abs === join(root, file)) return abs;
    const now = await this.resolveRoot();
    return now !== undefined && now !== root && abs === join(now, file) ? abs : undefined;
  }
}

/** Reads one file as a cache entry; rejects on errors other than "absent" (the caller then tries the disk path). */
async function readEntry(abs: string, maxFileBytes: number): Promise<CacheEntry> {
  let fh;
  try {
    fh = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    if (ABSENT_CODES.has((e as NodeJS.ErrnoException).code ?? '')) return ABSENT;
    throw e;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return ABSENT;
    if (st.size > maxFileBytes) return LARGE;
    const body = Buffer.allocUnsafe(st.size);
    let off = 0;
    while (off < body.length) {
      const { bytesRead } = await fh.read(body, off, body.length - off, off);
      if (bytesRead === 0) throw new Error(`${abs} shrank while reading`);
      off += bytesRead;
    }
    return { kind: 'file', body, etag: `W/"${st.size}-${st.mtime.getTime()}"`, lastModified: st.mtime.toUTCString(), mtimeMs: st.mtime.getTime() };
  } finally {
    await fh.close();
  }
}

export class FileCache {
  readonly maxBytes: number;
  readonly maxFileBytes: number;
  private readonly entries = new Map<string, CacheEntry>();
  private readonly pending = new Map<string, Promise<CacheEntry>>();
  private generation = 0;
  bytes = 0;
  readonly tree: TreeRoot;

  constructor(root: string, opts: CacheOptions = {}) {
    this.tree = new TreeRoot(root);
    this.maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
    this.maxFileBytes = Math.min(opts.maxFileBytes ?? 64 * 1024, this.maxBytes);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entry for a file (marked most recently used), if cached. */
  get(file: string): CacheEntry | undefined {
    const e = this.entries.get(file);
    if (e !== undefined) {
      this.entries.delete(file);
      this.entries.set(file, e);
    }
    return e;
  }

  /** Reads a file into the cache (concurrent loads of the same file share one read). */
  load(file: string): Promise<CacheEntry> {
    let p = this.pending.get(file);
    if (p) return p;
    const gen = this.generation;
    p = this.tree
      .resolve(file)
      .then((abs) => (abs === undefined ? ABSENT : readEntry(abs, this.maxFileBytes)))
      .then(
      (e) => {
        if (gen === this.generation) {
          this.pending.delete(file);
          this.set(file, e);
        }
        return e;
      },
      (err: unknown) => {
        if (gen === this.generation) this.pending.delete(file);
        throw err;
      },
    );
    this.pending.set(file, p);
    return p;
  }

  /** Drops everything (the tree changed); loads in flight are not stored. */
  clear(): void {
    this.entries.clear();
    this.pending.clear();
    this.bytes = 0;
    this.generation++;
  }

  private cost(file: string, e: CacheEntry): number {
    return ENTRY_OVERHEAD + file.length * 2 + (e.kind === 'file' ? e.body.length : 0);
  }

  private set(file: string, e: CacheEntry): void {
    const cost = this.cost(file, e);
    if (cost > this.maxBytes) return;
    const old = this.entries.get(file);
    if (old !== undefined) {
      this.bytes -= this.cost(file, old);
      this.entries.delete(file);
    }
    this.entries.set(file, e);
    this.bytes += cost;
    if (this.bytes > this.maxBytes) {
      for (const [k, v] of this.entries) {
        this.entries.delete(k);
        this.bytes -= this.cost(k, v);
        if (this.bytes <= this.maxBytes) break;
      }
    }
  }
}

/**
 * Identity of a tree: inode and mtime of its root directory and of `_manifest.json` (a rebuild
 * renames a new directory onto the root; `snapshot build --hosts` adding files changes the
 * root's mtime). Checked at most once per interval; `onChange` runs (and is awaited) when the
 * identity differs from the previous one.
 */
export class TreeWatch {
  private signature: string | undefined;
  private checkedAt = -Infinity;
  private checking: Promise<void> | undefined;

  constructor(
    private readonly root: string,
    private readonly intervalMs: number,
    private readonly onChange: () => Promise<void> | void,
  ) {}

  /** True when a check is due (the caller then awaits {@link check} before answering). */
  due(now: number): boolean {
    return now - this.checkedAt >= this.intervalMs;
  }

  check(): Promise<void> {
    this.checking ??= this.run().finally(() => {
      this.checking = undefined;
      this.checkedAt = performance.now();
    });
    return this.checking;
  }

  private async run(): Promise<void> {
    const sig = await TreeWatch.signatureOf(this.root);
    if (this.signature !== undefined && sig !== this.signature) await this.onChange();
    this.signature = sig;
  }

  static async signatureOf(root: string): Promise<string> {
    const part = async (p: string) => {
      try {
        const s = await stat(p, { bigint: true });
        return `${s.dev}:${s.ino}:${s.mtimeNs}:${s.size}`;
      } catch (e) {
        return (e as NodeJS.ErrnoException).code ?? 'error';
      }
    };
    const [a, b] = await Promise.all([part(root), part(join(root, '_manifest.json'))]);
    return `${a}|${b}`;
  }
}
