/**
 * `<out>.lock` and `<state>/.lock`: the holder's pid, created whole by link(2); a dead holder's
 * lock is taken over.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const lockPath = (outDir: string): string => `${outDir}.lock`;
/** The state dir's lock (the holder's pid): inside it, so every spelling of the path takes the same one. */
export const STATE_LOCK = '.lock';

export function pidAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface Lock {
  path: string;
  release(): void;
}

function readPid(path: string): number | undefined {
  try {
    const n = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes `<out>.lock` and, given the state dir, `<state>/.lock` (each created whole with our pid
 * by link(2); a dead holder's lock is taken over): one build at a time writes an output, and one
 * at a time uses an index.
 */
export function acquireLock(outDir: string, stateDir?: string): Lock {
  const out = takeLock(lockPath(outDir), (pid, path) => `another build (pid ${pid}) is writing ${outDir} (lock ${path}); wait for it to finish`);
  if (stateDir === undefined) return out;
  let state: Lock;
  try {
    state = takeLock(join(stateDir, STATE_LOCK), (pid, path) => `--state ${stateDir} is in use by another build (pid ${pid}, lock ${path}); wait for it to finish, or give this build its own --state`);
  } catch (e) {
    out.release();
    throw e;
  }
  return {
    path: out.path,
    release: () => {
      state.release();
      out.release();
    },
  };
}

/** Takes `<state>/.lock` alone (`snapshot index`: a build that writes no output). */
export function acquireStateLock(stateDir: string): Lock {
  return takeLock(join(stateDir, STATE_LOCK), (pid, path) => `--state ${stateDir} is in use by another build (pid ${pid}, lock ${path}); wait for it to finish`);
}

function takeLock(path: string, held: (pid: number, path: string) => string): Lock {
  mkdirSync(dirname(path), { recursive: true });
  const mine = `${path}.${process.pid}-${randomBytes(4).toString('hex')}`;
  writeFileSync(mine, `${process.pid}\n`, { flag: 'wx' });
  try {
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        linkSync(mine, path);
        return {
          path,
          release: () => {
            if (readPid(path) === process.pid) rmSync(path, { force: true });
          },
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      const holder = readPid(path);
      if (holder !== undefined && pidAlive(holder)) throw new Error(held(holder, path));
      // A dead holder: move its lock aside atomically, and put it back if it turns out to be a live one.
      const aside = `${mine}.stale`;
      try {
        renameSync(path, aside);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw e;
      }
      const seen = readPid(aside);
      if (seen !== holder && seen !== undefined && pidAlive(seen)) {
        try {
          linkSync(aside, path);
        } catch {
          // someone else holds it now
        }
      }
      rmSync(aside, { force: true });
    }
    throw new Error(`could not take the lock ${path}`);
  } finally {
    rmSync(mine, { force: true });
  }
}

