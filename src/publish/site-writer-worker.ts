/**
 * The file-writing thread of SiteWriter (site-writer.ts). In `fresh` mode it writes every file; in
 * `update` mode (a staging tree made of hard links to the published one, see UpdateOf) it
 * compares each file with the published version and leaves files whose bytes are unchanged
 * alone — so they keep their mtime — and replaces the others by a new file (the link removed,
 * then an exclusive create), which never touches the published copy; a stale path (the staging
 * tree's own older copy) is overwritten in place. A deletion (end -1) removes the file. It keeps
 * the manifest rows of its files itself (manifest-rows.ts) and answers each batch with their
 * status; 'seal' writes out its last rows.
 */
import { linkSync, lstatSync, mkdirSync, rmSync, rmdirSync, unlinkSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { sha256 } from '../chain/hash.js';
import { createHashed, errCode, overwriteHashed, readIfAny, symlinkError } from './hashed-files.js';
import { ManifestRows } from './manifest-rows.js';

/**
 * What an update-mode writer follows. The staging tree is the published tree made of hard
 * links, except at the `stale` paths: the spare release (staging/publish.ts) still holds there
 * its own, older copy — the paths the last run changed, which this run's writes handle (the
 * build links the ones left afterwards, staging.ts refreshTree). A stale copy is the staging
 * tree's alone (one link), so it is overwritten in place: no unlink, link, new file or rename,
 * and no blocks freed and allocated again (the spare's copy of a document that changes every
 * run, a hub address or a name's variants, is the same file run after run).
 */
export interface UpdateOf {
  /** The published release: the previous bytes of every file are read from it. */
  published: string;
  stale: readonly string[];
}

/** UpdateOf as a thread holds it: the stale paths not handled yet. */
export interface UpdateTarget {
  published: string;
  stale: Set<string>;
}

export const updateTarget = (u: UpdateOf | undefined): UpdateTarget | undefined => u && { published: u.published, stale: new Set(u.stale) };

export interface WriterWorkerData {
  /** Marks a writer thread (this module is also imported by site-writer.ts, which may itself run in a worker). */
  kind: 'snapshot-writer';
  root: string;
  /** Absent: `fresh` mode. */
  update?: UpdateOf;
  /** Where its manifest rows go, and the name of its runs. */
  rowsDir: string;
  rowsName: string;
}

/** One batch: the paths, where each file's bytes end in `data` (-1: delete), the bytes, and each file's flags (HEX, CHANGED, LISTED). */
export interface WriteBatch {
  paths: string[];
  ends: Int32Array;
  data: ArrayBuffer;
  flags?: Uint8Array;
}

/** Flags of a file of a batch: the file is its bytes in hex. */
export const HEX = 1;
/** The caller knows the bytes differ from the published file's: written without reading that one (a wrong hint costs a write, never a wrong file). */
export const CHANGED = 2;

/**
 * The file is listed in the manifest (its size and sha256) and not written: a pack build's
 * private tree lists its txs' `.bin` and `.hex` files this way (listFile), since the pack
 * stores each as a slice of its block's `.bin`, checked against that line (src/pack/from-tree.ts).
 */
export const LISTED = 4;

/** Per file: 0 written, 1 unchanged, 2 deleted, 3 absent (nothing to delete). */
export const WRITTEN = 0;
export const UNCHANGED = 1;
export const DELETED = 2;
export const ABSENT = 3;

export interface WorkerReply {
  status?: Uint8Array;
  bytes?: number;
  error?: string;
  code?: string;
  path?: string;
  /** The answer to 'seal': the rows this thread's log wrote. */
  sealed?: number;
}

function sameBytes(old: Buffer, parts: readonly Uint8Array[]): boolean {
  let at = 0;
  for (const p of parts) {
    if (at + p.length > old.length || Buffer.compare(old.subarray(at, at + p.length), p) !== 0) return false;
    at += p.length;
  }
  return at === old.length;
}

/**
 * Makes sure `dir` (below `root`, the tree's own directory) is a real directory all the way
 * down, each missing component created when `create`; a symlink (or a file) on the way is an
 * error, so nothing below it is ever written or removed. Each directory is checked once per
 * thread (`dirs`). False when it is absent and not created.
 */
export function ensureDir(root: string, dir: string, dirs: Set<string>, create = true): boolean {
  if (dir === root || dirs.has(dir)) return true;
  if (!dir.startsWith(root + sep)) throw new Error(`${dir} is not below ${root}`);
  if (!ensureDir(root, dirname(dir), dirs, create)) return false;
  let st = lstatSync(dir, { throwIfNoEntry: false });
  if (st === undefined && create) {
    try {
      mkdirSync(dir);
    } catch (e) {
      if (errCode(e) !== 'EEXIST') throw e;
    }
    st = lstatSync(dir, { throwIfNoEntry: false });
  }
  if (st === undefined) return false;
  if (st.isSymbolicLink()) throw symlinkError(dir, 'write');
  if (!st.isDirectory()) throw Object.assign(new Error(`${dir} is not a directory`), { code: 'ENOTDIR' });
  dirs.add(dir);
  return true;
}

/** Forgets `dir` and the directories above it (another thread may have removed them). */
function forgetDir(root: string, dir: string, dirs: Set<string>): void {
  for (let d = dir; d.startsWith(root + sep); d = dirname(d)) dirs.delete(d);
}

/**
 * Removes the directories from `dir` up that a deletion left empty (never `root`): a tree holds
 * no directory its manifest does not account for (publish.ts foreignPath).
 */
export function pruneEmpty(root: string, dir: string, dirs: Set<string>): void {
  for (let d = dir; d.startsWith(root + sep); d = dirname(d)) {
    try {
      rmdirSync(d);
    } catch {
      return; // not empty (or gone already)
    }
    dirs.delete(d);
  }
}

/**
 * Runs `f`, which writes in `dir`, after {@link ensureDir}; again when it fails with ENOENT: the
 * directory was removed meanwhile by another thread's {@link pruneEmpty}.
 */
function inDir<T>(root: string, dir: string, dirs: Set<string>, f: () => T): T {
  for (let attempt = 0; ; attempt++) {
    try {
      ensureDir(root, dir, dirs);
      return f();
    } catch (e) {
      if (errCode(e) !== 'ENOENT' || attempt >= 3) throw e;
      forgetDir(root, dir, dirs);
    }
  }
}

/**
 * Writes (bytes, or a list of byte parts) or deletes (null) one file below `root`; returns its
 * status and records its manifest row in `rows` (a written file's sha256, a deleted path).
 * In update mode the status is against the published tree, and a stale path is handled here
 * (removed from `update.stale`): overwritten in place, linked to the published file when that
 * one is unchanged, or removed. Throws with `at.path` set to the file.
 */
export function writeFile(
  root: string,
  update: UpdateTarget | undefined,
  dirs: Set<string>,
  rel: string,
  /** A list or sequence of parts (taken once, as they are written, except in update mode). */
  data: Uint8Array | Iterable<Uint8Array> | null,
  rows: ManifestRows,
  at: { path: string },
  /** update mode: the published file's bytes when the caller already read them (null: no file, or one known to differ). */
  known?: Buffer | null,
): number {
  const path = (at.path = join(root, rel));
  const dir = dirname(path);
  const stale = update?.stale.delete(rel) === true;
  if (data === null) {
    rows.deleted(rel);
    let removed = false;
    try {
      // The link itself when it is one (never what it points to); nothing through a symlinked directory.
      if (ensureDir(root, dir, dirs, false)) {
        rmSync(path);
        removed = true;
      }
    } catch (e) {
      if (errCode(e) !== 'ENOENT') throw e;
    }
    if (removed) pruneEmpty(root, dir, dirs);
    // A stale copy is not the published file: the status is the published tree's.
    if (stale) return lstatSync(join(update!.published, rel), { throwIfNoEntry: false }) ? DELETED : ABSENT;
    return removed ? DELETED : ABSENT;
  }
  const parts: Iterable<Uint8Array> = data instanceof Uint8Array ? [data] : data;
  let written: [digest: Buffer, size: number] | undefined;
  if (update) {
    const published = join(update.published, rel);
    const old = known === undefined ? readIfAny(published) : (known ?? undefined);
    // Compared with the old bytes before writing: the parts are needed twice, so taken as a list.
    const list = Array.isArray(parts) ? (parts as readonly Uint8Array[]) : [...parts];
    if (old && sameBytes(old, list)) {
      if (stale) {
        inDir(root, dir, dirs, () => {
          rmSync(path, { force: true });
          linkSync(published, path);
        });
      }
      return UNCHANGED;
    }
    if (stale && ensureDir(root, dir, dirs, false)) written = overwriteHashed(path, list);
    if (!written) {
      // A new file at `path`: the staging tree's link to the published file is removed, never
      // written through (the exclusive create fails rather than open a file somebody linked
      // there meanwhile). Not write-to-temp + rename, which costs more per file on ext4. Nothing
      // needs the step to be atomic: a killed build's staging tree is discarded, never published
      // or taken as the spare.
      written = inDir(root, dir, dirs, () => {
        try {
          unlinkSync(path);
        } catch (e) {
          if (errCode(e) !== 'ENOENT') throw e;
        }
        return createHashed(path, list, 'wx');
      });
    }
  } else {
    // Tried again only when the open fails, before any part is taken (a generator's are taken once).
    written = inDir(root, dir, dirs, () => createHashed(path, parts));
  }
  rows.written(rel, written[1], written[0], 0);
  return WRITTEN;
}

/**
 * Lists `data` at `rel` in the manifest rows (its size and sha256) without writing a file
 * (LISTED): listHashed.
 */
export function listFile(root: string, update: UpdateTarget | undefined, dirs: Set<string>, rel: string, data: Uint8Array, rows: ManifestRows, at: { path: string }): number {
  return listHashed(root, update, dirs, rel, [sha256(data), data.length], rows, at);
}

/**
 * Lists the file at `rel`, of this sha256 and size, in the manifest rows without writing it; in
 * update mode a file there (the published tree's, linked into the staging tree, or the spare's
 * stale copy) is removed, so the tree holds no file its manifest contradicts. Counted as
 * written: the path is in the build's changes.
 */
export function listHashed(root: string, update: UpdateTarget | undefined, dirs: Set<string>, rel: string, [digest, size]: [Uint8Array, number], rows: ManifestRows, at: { path: string }): number {
  const path = (at.path = join(root, rel));
  if (update) {
    update.stale.delete(rel);
    if (ensureDir(root, dirname(path), dirs, false)) rmSync(path, { force: true });
  }
  rows.written(rel, size, digest, 0);
  return WRITTEN;
}

/** Writes one batch below `root`; throws with `path` set to the file being written. */
export function writeBatch(root: string, update: UpdateTarget | undefined, dirs: Set<string>, rows: ManifestRows, { paths, ends, data, flags }: WriteBatch, at: { path: string }): WorkerReply {
  // One transferred buffer per batch (no per-file copies between threads).
  const all = Buffer.from(data);
  const status = new Uint8Array(paths.length);
  let bytes = 0;
  let start = 0;
  paths.forEach((rel, i) => {
    let bytesOf: Buffer | null = null;
    if (ends[i]! >= 0) {
      bytesOf = all.subarray(start, ends[i]);
      start = ends[i]!;
      bytes += bytesOf.length;
      if (flags && flags[i]! & HEX) bytesOf = Buffer.from(bytesOf.toString('hex'), 'latin1');
    }
    if (bytesOf && flags && flags[i]! & LISTED) status[i] = listFile(root, update, dirs, rel, bytesOf, rows, at);
    else status[i] = writeFile(root, update, dirs, rel, bytesOf, rows, at, flags && flags[i]! & CHANGED ? null : undefined);
  });
  return { status, bytes };
}

if (parentPort && (workerData as WriterWorkerData | undefined)?.kind === 'snapshot-writer') {
  const port = parentPort;
  const { root, update: of, rowsDir, rowsName } = workerData as WriterWorkerData;
  const update = updateTarget(of);
  const dirs = new Set<string>();
  const rows = new ManifestRows(rowsDir, rowsName);
  port.on('message', (batch: WriteBatch | 'seal') => {
    const at = { path: root };
    try {
      if (batch === 'seal') return port.postMessage({ sealed: rows.seal() } satisfies WorkerReply);
      const reply = writeBatch(root, update, dirs, rows, batch, at);
      port.postMessage(reply, [reply.status!.buffer as ArrayBuffer]);
    } catch (e) {
      const err = e as NodeJS.ErrnoException | undefined;
      port.postMessage({ error: String(err?.message ?? e), code: err?.code, path: at.path } satisfies WorkerReply);
    }
  });
}
