/** File access below a snapshot tree: regular files only, never through a symlink, and the tree walk. */
import { closeSync, constants, createReadStream, fstatSync, lstatSync, openSync, opendirSync, readSync, type Dir, type Stats } from 'node:fs';
import { join } from 'node:path';

function isErrno(e: unknown, code: string): boolean {
  return typeof e === 'object' && e !== null && (e as NodeJS.ErrnoException).code === code;
}

/** What {@link readRegular} found instead of a regular file. */
export type NotRegular = 'missing' | 'symlink' | 'other' | Error;

/**
 * A regular file's bytes. A symlink is not followed (O_NOFOLLOW: the tree holds regular files
 * and directories only, as `serve` does) and a FIFO or device is not read (O_NONBLOCK, then
 * fstat), so a tree cannot make verify read outside it or block.
 */
export function readRegular(path: string): Buffer | NotRegular {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    if (isErrno(e, 'ENOENT') || isErrno(e, 'ENOTDIR')) return 'missing'; // ENOTDIR: a parent is a file
    // O_NOFOLLOW's error on a symlink is ELOOP (Linux) or EMLINK (BSDs): ask lstat.
    return lstatOrUndefined(path)?.isSymbolicLink() ? 'symlink' : (e as Error);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return st.isDirectory() ? new Error('EISDIR: is a directory') : 'other';
    const buf = Buffer.allocUnsafe(st.size);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, n);
      if (got === 0) break;
      n += got;
    }
    return n === buf.length ? buf : buf.subarray(0, n);
  } catch (e) {
    return e as Error;
  } finally {
    closeSync(fd);
  }
}

/** lstat, or undefined where there is nothing to stat (also ENOTDIR: a parent is a file). */
export function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

export const SYMLINK_PROBLEM = 'is a symbolic link (a snapshot tree holds regular files and directories only)';
export const OTHER_PROBLEM = 'is not a regular file or directory (a snapshot tree holds regular files and directories only)';

export function splitFirst(rel: string): [string, string] {
  const i = rel.indexOf('/');
  return i === -1 ? [rel, ''] : [rel.slice(0, i), rel.slice(i + 1)];
}

export async function countLines(path: string): Promise<number | undefined> {
  try {
    let n = 0;
    for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n++;
    }
    return n;
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return undefined;
    throw e;
  }
}

/** What a tree entry is, from its directory entry (lstat's view: a symlink is a symlink). */
export type EntryKind = 'file' | 'symlink' | 'other';

/** Every non-directory entry below `root`, as a '/'-separated relative path; directories are streamed, not listed whole. */
export function walk(root: string, rel: string, visit: (rel: string, kind: EntryKind) => void): void {
  let dir: Dir;
  try {
    dir = opendirSync(rel === '' ? root : join(root, rel), { bufferSize: 256 });
  } catch {
    return;
  }
  try {
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(root, child, visit);
      else visit(child, entry.isFile() ? 'file' : entry.isSymbolicLink() ? 'symlink' : 'other');
    }
  } finally {
    dir.closeSync();
  }
}
