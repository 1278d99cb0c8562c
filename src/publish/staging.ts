import { linkSync, lstatSync, mkdirSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MANIFEST_PATH } from '../contract/layout.js';
import { onPath } from '../index/io-error.js';
import { createStaging, dropSpare, publishedDir, takeSpare } from './publish.js';

/**
 * Makes `dst` a copy of the tree `src` made of hard links: no file data is
 * copied, every file keeps its inode and mtime, and a writer that replaces
 * files by rename leaves `src` untouched. Returns the number of files linked.
 */
export function linkTree(src: string, dst: string, skip: ReadonlySet<string> = new Set()): number {
  let count = 0;
  const walk = (rel: string) => {
    mkdirSync(join(dst, rel), { recursive: true });
    for (const entry of readdirSync(join(src, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (skip.has(child)) continue;
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) {
        linkSync(join(src, child), join(dst, child));
        count++;
      }
    }
  };
  walk('');
  return count;
}

const code = (e: unknown) => (e as NodeJS.ErrnoException).code;

/**
 * Brings `dst` (a tree that differs from `src` only in the paths `changed`) up to date with
 * `src`: each of those paths is unlinked in `dst` and hard-linked again from `src` when `src`
 * has it. The manifest is removed (the build writes a new one). Returns the links and unlinks made.
 */
export function refreshTree(src: string, dst: string, changed: readonly string[], onProgress?: (done: number) => void): { linked: number; unlinked: number } {
  let linked = 0;
  let unlinked = 0;
  rmSync(join(dst, MANIFEST_PATH), { force: true });
  changed.forEach((rel, i) => {
    onProgress?.(i);
    const to = join(dst, rel);
    try {
      unlinkSync(to);
      unlinked++;
    } catch (e) {
      if (code(e) !== 'ENOENT') throw e;
    }
    try {
      linkSync(join(src, rel), to);
      linked++;
    } catch (e) {
      if (code(e) !== 'ENOENT') throw e;
      if (!lstatSync(join(src, rel), { throwIfNoEntry: false })) return; // deleted in `src`
      mkdirSync(dirname(to), { recursive: true });
      linkSync(join(src, rel), to);
      linked++;
    }
  });
  onProgress?.(changed.length);
  return { linked, unlinked };
}

export interface Staged {
  dir: string;
  /** How the staging dir was made: empty (a full build), a hard-linked copy of the published tree, or the refreshed spare. */
  how: 'empty' | 'linked' | 'spare';
  /** Hard links made and files unlinked to make it. */
  linked: number;
  unlinked: number;
}

/**
 * The release dir a build writes into: empty for a full build (the spare is dropped); else the
 * spare brought up to date with the published tree (O(paths changed by the last run)), or,
 * without a valid spare, a hard-linked copy of the published tree (O(files)).
 */
export function prepareStaging(outDir: string, full: boolean, onProgress?: (done: number, total: number) => void): Staged {
  if (full) {
    dropSpare(outDir);
    return { dir: createStaging(outDir), how: 'empty', linked: 0, unlinked: 0 };
  }
  const published = publishedDir(outDir)!;
  const spare = takeSpare(outDir);
  const dir = spare?.staging ?? createStaging(outDir);
  try {
    return onPath(dir, 'staging', () => {
      if (!spare) return { dir, how: 'linked', linked: linkTree(published, dir, new Set([MANIFEST_PATH])), unlinked: 0 };
      return { dir, how: 'spare', ...refreshTree(published, dir, spare.changed, (done) => onProgress?.(done, spare.changed.length)) };
    });
  } catch (e) {
    try {
      rmSync(dir, { recursive: true, force: true }); // a failed staging dir is not left behind (a full disk)
    } catch {
      // the next run's recovery removes it
    }
    throw e;
  }
}
