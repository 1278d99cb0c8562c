import { linkSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

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
