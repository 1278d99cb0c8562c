import { copyFileSync, existsSync, linkSync, readSync, statfsSync, writeSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname } from 'node:path';

/** A failed read or write, as one line: what, the path, the errno, and the space left on its filesystem. */
export class IoError extends Error {
  /** liblmdb may have printed its own diagnostic, without a newline, to stderr before this error. */
  nativeDiagnostic = false;

  constructor(
    message: string,
    readonly path: string,
    readonly code: string | undefined,
    cause: unknown,
  ) {
    super(message, { cause });
    this.name = 'IoError';
  }
}

/** `ENOSPC` for 28 (LMDB reports errno numbers). */
function errnoName(code: unknown): string | undefined {
  if (typeof code === 'string') return code;
  if (typeof code !== 'number') return undefined;
  return Object.entries(constants.errno).find(([, n]) => n === code)?.[0];
}

function freeBytes(path: string): number | undefined {
  try {
    while (!existsSync(path) && path !== dirname(path)) path = dirname(path);
    const s = statfsSync(path);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/**
 * Wraps an error of a file operation on `path` (`what`: e.g. "writing", "index") in an
 * {@link IoError} with one line naming both; an IoError passes through unchanged.
 */
export function ioError(e: unknown, path: string, what: string): IoError {
  if (e instanceof IoError) return e;
  const err = e as { message?: unknown; code?: unknown };
  const code = errnoName(err?.code);
  let text = String(err?.message ?? e).split('\n')[0]!;
  if (code && !text.includes(code)) text += ` (${code})`;
  const free = freeBytes(path);
  if (free !== undefined && free < 16 << 20) text += `; ${free} bytes free on that filesystem`;
  return new IoError(`${what} ${path}: ${text}`, path, code, e);
}

/** Runs `f`, turning a thrown error into an {@link IoError} about `path`. */
export function onPath<T>(path: string, what: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw ioError(e, path, what);
  }
}

/** Writes all of `bytes` at fd's position (writeSync may write less than asked). */
export function writeAll(fd: number, bytes: Uint8Array): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
}

/**
 * Reads `length` bytes at `position` of fd into `into` (readSync may read less than asked); a
 * file that ends first is an error naming `what` (e.g. "block spill"), `path` and the offset.
 */
export function readAll(fd: number, into: Uint8Array, length: number, position: number, path: string, what: string): void {
  for (let done = 0; done < length; ) {
    const n = onPath(path, what, () => readSync(fd, into, done, length - done, position + done));
    if (n === 0) throw new Error(`${what} ${path} ends early at offset ${position + done}`);
    done += n;
  }
}

/** Hard-links `src` at `dst` (copies it across file systems); an error names `dst`. */
export function linkOrCopy(src: string, dst: string): void {
  onPath(dst, 'linking', () => {
    try {
      linkSync(src, dst);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
      copyFileSync(src, dst);
    }
  });
}
