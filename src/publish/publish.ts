/**
 * Where a build may write, and how it publishes (see docs/operations.md, "Safety rules").
 *
 * - `out` is a symlink to a release directory `<out>.releases/<pid>-<random>`; a build stages
 *   into a new release made with mkdtemp (exclusive, random: a planted path is never followed),
 *   then swaps `out` with one rename(2) of a new symlink over it, and removes the previous
 *   release after. Readers see the old tree or the new one, never a missing or mixed one.
 * - `<out>.releases/.chain-snapshot` (the marker) proves that the directory and the entries
 *   named `<pid>-<random>` in it are ours; nothing else is ever removed.
 * - The build only replaces an `out` that is absent, empty, our symlink, or a real directory
 *   holding a snapshot of an older version; a tree (that directory, or the release our symlink
 *   names) is ours only if its manifest reads strictly as one and every entry below it is a
 *   regular file the manifest lists or a directory holding some (see {@link foreignPath}).
 *   Anything else is refused before any work starts, unless forced. A user's symlink as `out`
 *   is followed: its target is the output (so the user's link stays a link).
 * - `<out>.lock` (the holder's pid) keeps two builds off the same output, `<state>/.lock` two
 *   builds off the same index; a dead holder's lock is taken over. `--out`, `--state` and
 *   `<out>.releases` are compared with their symlinks resolved.
 * - Double buffering: an incremental build keeps the release it replaced as the spare, with a
 *   record `<spare>.spare` of the paths that differ from the published one; the next build brings
 *   the spare up to date at the cost of those paths and stages into it (see {@link takeSpare}).
 */
import { readdirSync, renameSync, rmSync, rmdirSync, symlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ENTRY_RE, currentRelease, lstatOrUndefined, refuse, releasesDir, writeSpare } from './releases.js';

// The parts of the scheme, for the build's call sites.
export { STATE_ENTRIES } from '../index/files.js';
export { STATE_LOCK, acquireLock, acquireStateLock, lockPath, type Lock } from './lock.js';
export { foreignPath, type Foreign } from './ownership.js';
export { MARKER_FILE, MARKER_FORMAT, createStaging, currentRelease, dropSpare, publishedDir, recoverInterrupted, releasesDir, takeSpare } from './releases.js';
export { checkTargets, clearStateDir, prepareStateDir, type Targets } from './targets.js';

export type PublishStep = 'linked' | 'moved-aside' | 'swapped' | 'removed-old';

/**
 * Publishes the finished release `staging` as `out`: a new symlink renamed over `out` (one
 * atomic rename(2)); the previous release is removed after, or, when `changed` (the paths in
 * which `staging` differs from it) is given, kept as the spare, its record written before the swap. An older version's real directory
 * `out` is first moved into the releases dir (the one moment `out` is absent; a kill there is
 * repaired by {@link recoverInterrupted}); an empty directory is removed.
 */
export async function publish(staging: string, outDir: string, onStep?: (step: PublishStep) => void | Promise<void>, changed?: Iterable<string>): Promise<void> {
  const rel = releasesDir(outDir);
  const name = basename(staging);
  if (dirname(staging) !== rel || !ENTRY_RE.test(name)) refuse(`internal: ${staging} is not a release of ${outDir}`);
  const link = join(rel, `${name}.link`);
  symlinkSync(`${basename(outDir)}.releases/${name}`, link);
  await onStep?.('linked');
  const st = lstatOrUndefined(outDir);
  let previous: string | undefined;
  if (st?.isSymbolicLink()) {
    previous = currentRelease(outDir);
    if (previous === undefined) refuse(`refusing to replace ${outDir}: it became a symlink not made by chain snapshot during the build`);
    if (changed !== undefined) writeSpare(rel, previous, name, changed);
  } else if (st?.isDirectory()) {
    if (readdirSync(outDir).length === 0) rmdirSync(outDir);
    else renameSync(outDir, join(rel, (previous = `${name}.prev`)));
    await onStep?.('moved-aside');
  } else if (st) refuse(`refusing to replace ${outDir}: it became a file during the build`);
  try {
    renameSync(link, outDir);
  } catch (e) {
    // Put an older version's directory back at once rather than leave `out` absent until the next run.
    if (previous?.endsWith('.prev') && lstatOrUndefined(outDir) === undefined) renameSync(join(rel, previous), outDir);
    rmSync(link, { force: true });
    throw e;
  }
  await onStep?.('swapped');
  if (previous !== undefined && (changed === undefined || previous.endsWith('.prev'))) rmSync(join(rel, previous), { recursive: true, force: true });
  await onStep?.('removed-old');
}

