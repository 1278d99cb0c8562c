/**
 * The file-writing thread of SiteWriter (writer.ts). In `fresh` mode it writes every file; in
 * `update` mode (a staging tree hard-linked to the published one) it leaves files whose bytes
 * are unchanged alone — so they keep their mtime — and replaces the others by write-to-temp +
 * rename, which never touches the published copy. A deletion (end -1) removes the file. It
 * answers each batch with the sha256 of the files it wrote.
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync, writevSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { sha256 } from '../chain/hash.js';

export type WriteMode = 'fresh' | 'update';

export interface WriterWorkerData {
  /** Marks a writer thread (this module is also imported by writer.ts, which may itself run in a worker). */
  kind: 'snapshot-writer';
  root: string;
  mode: WriteMode;
}

/** One batch: the paths, where each file's bytes end in `data` (-1: delete), the bytes. */
export interface WriteBatch {
  paths: string[];
  ends: Int32Array;
  data: ArrayBuffer;
}

/** Per file: 0 written, 1 unchanged, 2 deleted, 3 absent (nothing to delete). */
export const WRITTEN = 0;
export const UNCHANGED = 1;
export const DELETED = 2;
export const ABSENT = 3;

export interface WorkerReply {
  digests?: Uint8Array;
  status?: Uint8Array;
  bytes?: number;
  error?: string;
  code?: string;
  path?: string;
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

/** Writes `parts` to a new file `path` with gathered writes (no copy into one buffer). */
function writeParts(path: string, parts: readonly Uint8Array[]): void {
  const fd = openSync(path, 'w');
  try {
    for (let i = 0; i < parts.length; ) {
      const batch = parts.slice(i, i + 512);
      let written = writevSync(fd, batch);
      i += batch.length;
      // A short write: the rest of the batch one part at a time.
      for (const p of batch) {
        if (written >= p.length) {
          written -= p.length;
          continue;
        }
        for (let done = written; done < p.length; ) done += writeSync(fd, p, done, p.length - done);
        written = 0;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes (bytes, or a list of byte parts) or deletes (null) one file below `root`; returns its
 * status and, for a written file, puts its sha256 at `digests[at32]`. Throws with `at.path`
 * set to the file.
 */
export function writeFile(
  root: string,
  update: boolean,
  dirs: Set<string>,
  rel: string,
  data: Uint8Array | readonly Uint8Array[] | null,
  digests: Buffer,
  at32: number,
  at: { path: string },
): number {
  const path = (at.path = join(root, rel));
  if (data === null) {
    try {
      rmSync(path);
    } catch (e) {
      if (errCode(e) !== 'ENOENT') throw e;
      return ABSENT;
    }
    return DELETED;
  }
  const parts = data instanceof Uint8Array ? [data] : data;
  const dir = dirname(path);
  if (!dirs.has(dir)) {
    mkdirSync(dir, { recursive: true });
    dirs.add(dir);
  }
  const write = (to: string) => (parts.length === 1 ? writeFileSync(to, parts[0]!) : writeParts(to, parts));
  if (update) {
    let old: Buffer | undefined;
    try {
      old = readFileSync(path);
    } catch (e) {
      if (errCode(e) !== 'ENOENT') throw e;
    }
    if (old && sameBytes(old, parts)) return UNCHANGED;
    const tmp = path + '.tmp-write';
    write(tmp);
    renameSync(tmp, path);
  } else {
    write(path);
  }
  if (parts.length === 1) sha256(parts[0]!).copy(digests, at32);
  else {
    const h = createHash('sha256');
    for (const p of parts) h.update(p);
    h.digest().copy(digests, at32);
  }
  return WRITTEN;
}

/** Writes one batch below `root`; throws with `path` set to the file being written. */
export function writeBatch(root: string, update: boolean, dirs: Set<string>, { paths, ends, data }: WriteBatch, at: { path: string }): WorkerReply {
  // One transferred buffer per batch (no per-file copies between threads).
  const all = Buffer.from(data);
  const digests = Buffer.alloc(paths.length * 32);
  const status = new Uint8Array(paths.length);
  let bytes = 0;
  let start = 0;
  paths.forEach((rel, i) => {
    let bytesOf: Buffer | null = null;
    if (ends[i]! >= 0) {
      bytesOf = all.subarray(start, ends[i]);
      start = ends[i]!;
      bytes += bytesOf.length;
    }
    status[i] = writeFile(root, update, dirs, rel, bytesOf, digests, i * 32, at);
  });
  return { digests, status, bytes };
}

if (parentPort && (workerData as WriterWorkerData | undefined)?.kind === 'snapshot-writer') {
  const port = parentPort;
  const { root, mode } = workerData as WriterWorkerData;
  const dirs = new Set<string>();
  port.on('message', (batch: WriteBatch) => {
    const at = { path: root };
    try {
      const reply = writeBatch(root, mode === 'update', dirs, batch, at);
      port.postMessage(reply, [reply.digests!.buffer as ArrayBuffer, reply.status!.buffer as ArrayBuffer]);
    } catch (e) {
      const err = e as NodeJS.ErrnoException | undefined;
      port.postMessage({ error: String(err?.message ?? e), code: err?.code, path: at.path } satisfies WorkerReply);
    }
  });
}
