/** The ownership check of a tree: is everything in it made by this tool (see publish.ts)? */
import { lstatSync, readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { MANIFEST_PATH } from '../contract/layout.js';
import { ManifestPaths, manifestOrder } from '../contract/manifest.js';

/** Why a tree is not ours: its first path (in the manifest's order) that is not, and why (a clause). */
export interface Foreign {
  path: string;
  reason: string;
}

/**
 * The first path below `dir` that is not part of a snapshot made by this tool, if any: a tree is
 * ours only if its `_manifest.json` reads strictly as one (manifest.ts ManifestPaths) and every
 * entry on disk is a regular file it lists, or a directory holding such files. One pass: each
 * directory read once, its entries sorted the way the manifest is (a directory as `name/`), and
 * compared with the manifest's sorted paths as they stream by. A symlink is never followed.
 */
export function foreignPath(dir: string): Foreign | undefined {
  const memo = walked.get(dir);
  if (memo !== undefined && memo.every(([path, was]) => stampOf(path)?.key === was)) return undefined;
  walked.delete(dir);
  const stamps: [string, Stamp | undefined][] = [];
  const read = (path: string) => {
    stamps.push([path, stampOf(path)]); // before it is read: a change after that moves the stamp
    return readdirSync(path, { withFileTypes: true });
  };
  const top = read(dir);
  if (top.length === 0) return undefined;
  const manifest = top.find((e) => e.name === MANIFEST_PATH);
  if (!manifest?.isFile()) {
    const first = top.map((e) => e.name).sort()[0]!;
    return { path: first, reason: `it is not empty and holds no snapshot made by chain snapshot (found "${first}")` };
  }
  let paths: ManifestPaths;
  try {
    stamps.push([join(dir, MANIFEST_PATH), stampOf(join(dir, MANIFEST_PATH))]);
    paths = new ManifestPaths(join(dir, MANIFEST_PATH));
  } catch (e) {
    return { path: MANIFEST_PATH, reason: `its ${MANIFEST_PATH} is not a manifest made by chain snapshot (${(e as Error).message})` };
  }
  const foreign = (path: string, what: string): Foreign => ({ path, reason: `"${path}" ${what}: not made by chain snapshot` });
  const visit = (rel: string, entries: Dirent[]): Foreign | undefined => {
    const prefix = Buffer.from(rel);
    // A directory sorts as `name/`, as the paths below it do in the manifest.
    const keys = entries.map((e) => (e.isDirectory() ? e.name + '/' : e.name));
    for (const i of manifestOrder(keys)) {
      const e = entries[i]!;
      if (rel === '' && e.name === MANIFEST_PATH) continue;
      const isDir = e.isDirectory();
      let cmp = paths.done ? 1 : paths.compare(prefix, e.name, isDir);
      while (cmp < 0 && paths.next()) cmp = paths.compare(prefix, e.name, isDir);
      if (paths.done) cmp = 1;
      const shown = rel + e.name;
      if (e.isSymbolicLink()) return foreign(shown, 'is a symbolic link');
      if (isDir) {
        if (cmp !== 2) return foreign(shown, `is a directory that holds nothing its ${MANIFEST_PATH} lists`);
        const found = visit(`${shown}/`, read(join(dir, shown)));
        if (found) return found;
        continue;
      }
      if (cmp !== 0) return foreign(shown, `is not listed in its ${MANIFEST_PATH}`);
      if (!e.isFile()) return foreign(shown, 'is not a regular file');
      paths.next();
    }
    return undefined;
  };
  let found: Foreign | undefined;
  try {
    found = visit('', top);
  } finally {
    paths.close();
  }
  // A stamp of the last seconds is not trusted: a change within the same clock tick keeps it.
  const settled = BigInt(Date.now() - 2000) * 1_000_000n;
  if (found === undefined && stamps.every(([, st]) => st !== undefined && st.ctime < settled)) walked.set(dir, stamps.map(([path, st]) => [path, st!.key]));
  return found;
}

/**
 * The trees {@link foreignPath} found ours in this process, each directory (and the manifest)
 * with its ctime when it was read: the check again before the publish reads no directory whose
 * ctime has not moved (an entry created, removed, renamed or replaced in a directory moves it;
 * a ctime cannot be set back).
 */
const walked = new Map<string, [path: string, key: string][]>();

interface Stamp {
  key: string;
  ctime: bigint;
}

/** The inode and ctime (ns) of `path`, undefined when absent. */
function stampOf(path: string): Stamp | undefined {
  const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  return st && { key: `${st.dev}:${st.ino}:${st.ctimeNs}`, ctime: st.ctimeNs };
}

