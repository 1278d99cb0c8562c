/**
 * The file-writing thread of SiteWriter (writer.ts). In `fresh` mode it writes every file; in
 * `update` mode (a staging tree hard-linked to the published one) it leaves files whose bytes
 * are unchanged alone — so they keep their mtime — and replaces the others by write-to-temp +
 * rename, which never touches the published copy. A deletion (end -1) removes the file. It
 * keeps the manifest rows of its files itself (manifest-rows.ts) and answers each batch with
 * their status; 'seal' writes out its last rows.
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { sha256 } from '../chain/hash.js';
import { writeAll } from '../index/io-error.js';
import { ManifestRows } from './manifest-rows.js';

export type WriteMode = 'fresh' | 'update';

export interface WriterWorkerData {
  /** Marks a writer thread (this module is also imported by writer.ts, which may itself run in a worker). */
  kind: 'snapshot-writer';
  root: string;
  mode: WriteMode;
  /** Where its manifest rows go, and the name of its runs. */
  rowsDir: string;
  rowsName: string;
}

/** One batch: the paths, where each file's bytes end in `data` (-1: delete), the bytes; `hex[i]` 1: the file is those bytes in hex. */
export interface WriteBatch {
  paths: string[];
  ends: Int32Array;
  data: ArrayBuffer;
  hex?: Uint8Array;
}

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

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

function sameBytes(old: Buffer, parts: readonly Uint8Array[]): boolean {
  let at = 0;
  for (const p of parts) {
    if (at + p.length > old.length || Buffer.compare(old.subarray(at, at + p.length), p) !== 0) return false;
    at += p.length;
  }
  return at === old.length;
}

/** Bytes hashed and then written at a time: small enough to stay in the cache between the two. */
const CHUNK = 256 * 1024;

/** Parts up to this size are copied into the thread's staging buffer and go out with their neighbours. */
const SMALL = 16 * 1024;
/** The staging buffer (one per thread: writeHashed is not reentrant). */
const staged = Buffer.allocUnsafe(CHUNK);

/**
 * Writes `parts` to a new file `path` and returns their sha256 and size. `parts` may be a
 * generator: they are taken one by one, so a document made part by part as it is written (an
 * address document, render/address.ts) is never whole in memory. Small parts (a tx's key, a
 * comma, a tx document of a few kB) are gathered into a CHUNK-sized staging buffer, then hashed
 * and written at once, while it is still in the CPU cache: one hash update and one write per
 * CHUNK bytes rather than per part (a document of 100k txs has 200k parts). A large part is
 * hashed and written slice by slice in place, never copied.
 */
function writeHashed(path: string, parts: Iterable<Uint8Array>): [digest: Buffer, size: number] {
  if (Array.isArray(parts) && parts.length === 1 && (parts[0] as Uint8Array).length <= CHUNK) {
    const only = parts[0] as Uint8Array;
    const digest = sha256(only);
    writeFileSync(path, only);
    return [digest, only.length];
  }
  const h = createHash('sha256');
  const fd = openSync(path, 'w');
  let size = 0;
  let fill = 0;
  const out = (slice: Uint8Array) => {
    h.update(slice);
    writeAll(fd, slice);
  };
  const flush = () => {
    if (fill > 0) out(staged.subarray(0, fill));
    fill = 0;
  };
  try {
    for (const p of parts) {
      size += p.length;
      if (p.length <= SMALL) {
        if (fill + p.length > CHUNK) flush();
        staged.set(p, fill);
        fill += p.length;
        continue;
      }
      flush();
      for (let at = 0; at < p.length; at += CHUNK) out(p.length <= CHUNK ? p : p.subarray(at, at + CHUNK));
    }
    flush();
  } finally {
    closeSync(fd);
  }
  return [h.digest(), size];
}

/**
 * Writes (bytes, or a list of byte parts) or deletes (null) one file below `root`; returns its
 * status and records its manifest row in `rows` (a written file's sha256, a deleted path).
 * Throws with `at.path` set to the file.
 */
export function writeFile(
  root: string,
  update: boolean,
  dirs: Set<string>,
  rel: string,
  /** A list or sequence of parts (taken once, as they are written, except in update mode). */
  data: Uint8Array | Iterable<Uint8Array> | null,
  rows: ManifestRows,
  at: { path: string },
  /** update mode: the file's current bytes when the caller already read them (null: no file). */
  known?: Buffer | null,
): number {
  const path = (at.path = join(root, rel));
  if (data === null) {
    rows.deleted(rel);
    try {
      rmSync(path);
    } catch (e) {
      if (errCode(e) !== 'ENOENT') throw e;
      return ABSENT;
    }
    return DELETED;
  }
  const parts: Iterable<Uint8Array> = data instanceof Uint8Array ? [data] : data;
  const dir = dirname(path);
  if (!dirs.has(dir)) {
    mkdirSync(dir, { recursive: true });
    dirs.add(dir);
  }
  let written: [digest: Buffer, size: number];
  if (update) {
    let old = known ?? undefined;
    if (known === undefined) {
      try {
        old = readFileSync(path);
      } catch (e) {
        if (errCode(e) !== 'ENOENT') throw e;
      }
    }
    // Compared with the old bytes before writing: the parts are needed twice, so taken as a list.
    const list = Array.isArray(parts) ? (parts as readonly Uint8Array[]) : [...parts];
    if (old && sameBytes(old, list)) return UNCHANGED;
    const tmp = path + '.tmp-write';
    written = writeHashed(tmp, list);
    renameSync(tmp, path);
  } else {
    written = writeHashed(path, parts);
  }
  rows.written(rel, written[1], written[0], 0);
  return WRITTEN;
}

/** Writes one batch below `root`; throws with `path` set to the file being written. */
export function writeBatch(root: string, update: boolean, dirs: Set<string>, rows: ManifestRows, { paths, ends, data, hex }: WriteBatch, at: { path: string }): WorkerReply {
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
      if (hex?.[i]) bytesOf = Buffer.from(bytesOf.toString('hex'), 'latin1');
    }
    status[i] = writeFile(root, update, dirs, rel, bytesOf, rows, at);
  });
  return { status, bytes };
}

if (parentPort && (workerData as WriterWorkerData | undefined)?.kind === 'snapshot-writer') {
  const port = parentPort;
  const { root, mode, rowsDir, rowsName } = workerData as WriterWorkerData;
  const dirs = new Set<string>();
  const rows = new ManifestRows(rowsDir, rowsName);
  port.on('message', (batch: WriteBatch | 'seal') => {
    const at = { path: root };
    try {
      if (batch === 'seal') return port.postMessage({ sealed: rows.seal() } satisfies WorkerReply);
      const reply = writeBatch(root, mode === 'update', dirs, rows, batch, at);
      port.postMessage(reply, [reply.status!.buffer as ArrayBuffer]);
    } catch (e) {
      const err = e as NodeJS.ErrnoException | undefined;
      port.postMessage({ error: String(err?.message ?? e), code: err?.code, path: at.path } satisfies WorkerReply);
    }
  });
}
