/**
 * The file primitives of the tree writers (site-writer-worker.ts): a file written and hashed in
 * one pass, never through a symlink, and a previous version read.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readFileSync } from 'node:fs';
import { sha256 } from '../chain/hash.js';
import { writeAll } from '../runtime/io-error.js';

/** The errno code of a thrown error (undefined for another error). */
export function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** Bytes hashed and then written at a time: small enough to stay in the cache between the two. */
const CHUNK = 256 * 1024;

/** Parts up to this size are copied into the thread's staging buffer and go out with their neighbours. */
const SMALL = 16 * 1024;
/** The staging buffer (one per thread: writeHashed is not reentrant). */
const staged = Buffer.allocUnsafe(CHUNK);

/**
 * Writes `parts` at `fd`'s position and returns their sha256 and size. `parts` may be a
 * generator: they are taken one by one, so a document made part by part as it is written (an
 * address document, render/address.ts) is never whole in memory. Small parts (a tx's key, a
 * comma, a tx document of a few kB) are gathered into a CHUNK-sized staging buffer, then hashed
 * and written at once, while it is still in the CPU cache: one hash update and one write per
 * CHUNK bytes rather than per part (a document of 100k txs has 200k parts). A large part is
 * hashed and written slice by slice in place, never copied.
 */
function writeHashed(fd: number | undefined, parts: Iterable<Uint8Array>): [digest: Buffer, size: number] {
  if (Array.isArray(parts) && parts.length === 1 && (parts[0] as Uint8Array).length <= CHUNK) {
    const only = parts[0] as Uint8Array;
    if (fd !== undefined) writeAll(fd, only);
    return [sha256(only), only.length];
  }
  const h = createHash('sha256');
  let size = 0;
  let fill = 0;
  const out = (slice: Uint8Array) => {
    h.update(slice);
    if (fd !== undefined) writeAll(fd, slice);
  };
  const flush = () => {
    if (fill > 0) out(staged.subarray(0, fill));
    fill = 0;
  };
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
  return [h.digest(), size];
}

/** The sha256 and size of `parts`, taken one by one as writeHashed takes them, written nowhere (a file the manifest lists without holding it). */
export function hashParts(parts: Iterable<Uint8Array>): [digest: Buffer, size: number] {
  return writeHashed(undefined, parts);
}

const { O_RDONLY, O_WRONLY, O_CREAT, O_TRUNC, O_EXCL, O_NOFOLLOW } = constants;

/** The error for a symlink met in the tree: never written (or read) through. */
export function symlinkError(path: string, what: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`${path} is a symbolic link: refusing to ${what} through it`);
  err.code = 'ELOOP';
  return err;
}

/** open(2) with O_NOFOLLOW: a symlink at `path` is an error naming it. */
export function openNoFollow(path: string, flags: number, what: string): number {
  try {
    return openSync(path, flags | O_NOFOLLOW, 0o666);
  } catch (e) {
    throw errCode(e) === 'ELOOP' ? symlinkError(path, what) : e;
  }
}

/** Writes `parts` to a new (or emptied; `wx`: new, else EEXIST) file `path`: writeHashed. Never through a symlink. */
export function createHashed(path: string, parts: Iterable<Uint8Array>, flags: 'w' | 'wx' = 'w'): [digest: Buffer, size: number] {
  const fd = openNoFollow(path, O_WRONLY | O_CREAT | (flags === 'wx' ? O_EXCL : O_TRUNC), 'write');
  try {
    return writeHashed(fd, parts);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `parts` over the file at `path` in place (then cut to their size) when it exists and
 * has no other link: writeHashed; undefined (nothing done) otherwise.
 */
export function overwriteHashed(path: string, parts: Iterable<Uint8Array>): [digest: Buffer, size: number] | undefined {
  let fd: number;
  try {
    fd = openNoFollow(path, O_WRONLY, 'write');
  } catch (e) {
    if (errCode(e) === 'ENOENT') return undefined;
    throw e;
  }
  try {
    if (fstatSync(fd).nlink !== 1) return undefined; // somebody else's link: never written through
    const written = writeHashed(fd, parts);
    ftruncateSync(fd, written[1]);
    return written;
  } finally {
    closeSync(fd);
  }
}

/** The bytes of the file at `path`, undefined when there is none (a previous version, in update mode). */
export function readIfAny(path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openNoFollow(path, O_RDONLY, 'read');
  } catch (e) {
    if (errCode(e) !== 'ENOENT') throw e;
    return undefined;
  }
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
