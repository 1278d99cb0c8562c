import { linkSync, lstatSync, mkdirSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MANIFEST_PATH } from '../contract/layout.js';
import { onPath } from '../runtime/io-error.js';
import { createStaging, dropSpare, publishedDir, takeSpare } from './releases.js';
import { ensureDir, pruneEmpty } from './site-writer-worker.js';

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
 * Brings the paths `changed` of `dst` (the staging tree's stale paths this run did not write,
 * Staged.stale) up to date with `src` (the published tree): each is unlinked in `dst` and
 * hard-linked again from `src` when `src` has it. Returns the links and unlinks made.
 */
export function refreshTree(src: string, dst: string, changed: readonly string[], onProgress?: (done: number) => void): { linked: number; unlinked: number } {
  let linked = 0;
  let unlinked = 0;
  const dirs = new Set<string>();
  changed.forEach((rel, i) => {
    onProgress?.(i);
    const to = join(dst, rel);
    // Nothing through a symlinked directory of the spare (site-writer-worker.ts ensureDir).
    const there = ensureDir(dst, dirname(to), dirs, false);
    if (there) {
      try {
        unlinkSync(to);
        unlinked++;
      } catch (e) {
        if (code(e) !== 'ENOENT') throw e;
      }
    }
    if (!lstatSync(join(src, rel), { throwIfNoEntry: false })) {
      if (there) pruneEmpty(dst, dirname(to), dirs); // deleted in `src`
      return;
    }
    ensureDir(dst, dirname(to), dirs);
    linkSync(join(src, rel), to);
    linked++;
  });
  onProgress?.(changed.length);
  return { linked, unlinked };
}

export interface Staged {
  dir: string;
  /** How the staging dir was made: empty (a full build), a hard-linked copy of the published tree, or the spare. */
  how: 'empty' | 'linked' | 'spare';
  /** Hard links made to make it. */
  linked: number;
  /**
   * The spare's paths that the last run changed (site-writer-worker.ts UpdateOf): there the spare
   * still holds its older copy. They are left as they are: this run's writes handle the ones it
   * writes or deletes (a copy it rewrites is overwritten in place), and refreshTree links the
   * rest once the documents are written.
   */
  stale: string[];
}

/**
 * The release dir a build writes into: empty for a full build (the spare is dropped); else the
 * spare, which differs from the published tree only at the paths the last run changed (O(1)
 * here: see Staged.stale), or, without a valid spare, a hard-linked copy of the published tree
 * (O(files)).
 */
export function prepareStaging(outDir: string, full: boolean): Staged {
  if (full) {
    dropSpare(outDir);
    return { dir: createStaging(outDir), how: 'empty', linked: 0, stale: [] };
  }
  const published = publishedDir(outDir)!;
  const spare = takeSpare(outDir);
  const dir = spare?.staging ?? createStaging(outDir);
  try {
    return onPath(dir, 'staging', () => {
      if (!spare) return { dir, how: 'linked', linked: linkTree(published, dir, new Set([MANIFEST_PATH])), stale: [] };
      rmSync(join(dir, MANIFEST_PATH), { force: true }); // the build writes a new one
      return { dir, how: 'spare', linked: 0, stale: spare.changed };
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
