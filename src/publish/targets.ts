/**
 * Where a build may write: the checks of `--out`, `--state` and `<out>.releases` made before any
 * work (see publish.ts for the scheme), and the state dir's own files.
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { STATE_ENTRIES } from '../index/files.js';
import { STATE_LOCK, lockPath } from './lock.js';
import { foreignPath } from './ownership.js';
import { MARKER_FILE, SPARE, currentRelease, isMarked, lstatOrUndefined, markerText, refuse, releasesDir, validSpare } from './releases.js';

/** Follows a user's symlinks (not ours) to the path that is the real output. */
function followUserLinks(path: string, shown: string): string {
  for (let hops = 0; hops < 40; hops++) {
    const st = lstatOrUndefined(path);
    if (!st?.isSymbolicLink() || currentRelease(path) !== undefined) return path;
    path = resolve(dirname(path), readlinkSync(path));
  }
  return refuse(`--out ${shown}: too many levels of symbolic links`);
}

function isMountPoint(path: string, st: Stats): boolean {
  if (path === '/') return true;
  if (statSync(dirname(path)).dev !== st.dev) return true;
  try {
    // Bind mounts keep the device: look the path up in the mount table too.
    const real = realpathSync(path);
    const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    return readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .some((line) => line.split(' ')[4] !== undefined && unescape(line.split(' ')[4]!) === real);
  } catch {
    return false;
  }
}

/** Refuses when `dir` (or, when absent, its nearest existing ancestor) cannot be written. */
function checkWritable(dir: string, what: string): void {
  let at = dir;
  while (!existsSync(at)) at = dirname(at);
  if (!statSync(at).isDirectory()) refuse(`${what}: ${at} is not a directory`);
  try {
    accessSync(at, constants.W_OK);
  } catch (e) {
    refuse(`${what}: ${at} is not writable (${(e as NodeJS.ErrnoException).code})`);
  }
}


/** Refuses (unless forced) a tree that holds anything not made by this tool (foreignPath). */
function checkOwned(tree: string, outDir: string, force: boolean): void {
  if (force) return;
  const foreign = foreignPath(tree);
  if (foreign !== undefined) refuse(`refusing to replace ${outDir}: ${foreign.reason}; use --force to replace it`);
}

function checkOutput(outDir: string, shown: string, force: boolean): void {
  if (outDir === '/') refuse(`refusing to publish to / (--out ${shown}): name a directory for the snapshot`);
  const st = lstatOrUndefined(outDir);
  const rel = releasesDir(outDir);
  const relSt = lstatOrUndefined(rel);
  if (relSt && !(relSt.isDirectory() && (isMarked(rel) || readdirSync(rel).length === 0 || force))) {
    refuse(`refusing to use ${rel}: it exists and was not made by chain snapshot; remove it, or use --force`);
  }
  const lockSt = lstatOrUndefined(lockPath(outDir));
  if (lockSt && !lockSt.isFile()) refuse(`refusing to use the lock ${lockPath(outDir)}: it is not a regular file`);
  if (st === undefined || st.isSymbolicLink()) {
    // Absent (or, after following the user's links, our own symlink): only the parent is changed.
    checkWritable(dirname(outDir), `cannot publish ${outDir}`);
    // Our release is read, linked, kept as the spare or removed: all of it must be ours too.
    const current = currentRelease(outDir);
    if (current !== undefined) checkOwned(join(releasesDir(outDir), current), outDir, force);
    if (current !== undefined) checkSpare(outDir);
    return;
  }
  if (!st.isDirectory()) refuse(`--out ${outDir} is a file, not a directory: refusing to replace it`);
  if (isMountPoint(outDir, st)) {
    refuse(`refusing to publish to ${outDir}: it is a mount point, and the build replaces --out with a symlink to its release; use a directory inside it (e.g. --out ${join(outDir, 'site')})`);
  }
  checkWritable(dirname(outDir), `cannot publish ${outDir}`);
  checkOwned(outDir, outDir, force);
}

/** `path` with its symlinks resolved: the realpath of its nearest existing ancestor, the rest appended. */
function resolvedPath(path: string): string {
  const rest: string[] = [];
  for (let at = path; ; at = dirname(at)) {
    try {
      return join(realpathSync(at), ...rest.reverse());
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(at) === at) throw e;
      rest.push(basename(at));
    }
  }
}

/**
 * The spare's stale paths (the ones an incremental build overwrites in place, see takeSpare)
 * are regular files or absent, below real directories: anything else there is not ours, and
 * the build is refused before any work (even forced; the spare can be dropped instead).
 */
function checkSpare(outDir: string): void {
  const spare = validSpare(outDir);
  if (spare === undefined) return;
  const dir = join(releasesDir(outDir), spare.name);
  const real = new Set<string>([dir]);
  const isRealDir = (d: string): boolean => {
    if (real.has(d)) return true;
    if (!isRealDir(dirname(d))) return false;
    const st = lstatOrUndefined(d);
    if (st === undefined) return false;
    if (!st.isDirectory()) {
      refuse(`refusing to use the spare release ${dir}: "${d.slice(dir.length + 1)}" is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a directory'}: not made by chain snapshot; remove ${join(releasesDir(outDir), spare.name + SPARE)} to build without it`);
    }
    real.add(d);
    return true;
  };
  for (const rel of spare.changed) {
    const path = join(dir, rel);
    if (!isRealDir(dirname(path))) continue;
    const st = lstatOrUndefined(path);
    if (st !== undefined && !st.isFile()) {
      refuse(`refusing to use the spare release ${dir}: "${rel}" is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}: not made by chain snapshot; remove ${join(releasesDir(outDir), spare.name + SPARE)} to build without it`);
    }
  }
}

function checkState(stateDir: string, outDir: string, force: boolean): void {
  const inside = (a: string, b: string) => a === b || a.startsWith(b + sep);
  // Compared where they really are: a symlink (or a symlinked parent) is no way around it. `out`
  // itself is our symlink: its parent is resolved, not the link.
  const state = resolvedPath(stateDir);
  const out = join(resolvedPath(dirname(outDir)), basename(outDir));
  const rel = resolvedPath(releasesDir(outDir));
  if (inside(state, out) || inside(out, state) || inside(state, rel) || inside(rel, state)) {
    refuse(`--state ${stateDir} and --out ${outDir} must not contain each other`);
  }
  if (stateDir === '/') refuse('refusing to use / as --state');
  let st: Stats | undefined;
  try {
    st = statSync(stateDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (st === undefined) return checkWritable(stateDir, `cannot create --state ${stateDir}`);
  if (!st.isDirectory()) refuse(`--state ${stateDir} is a file, not a directory: refusing to use it`);
  checkWritable(stateDir, `cannot use --state ${stateDir}`);
  const ours = new Set<string>([MARKER_FILE, STATE_LOCK, ...STATE_ENTRIES]);
  const foreign = readdirSync(stateDir)
    .sort()
    .find((e) => !ours.has(e) && !e.startsWith(`${STATE_LOCK}.`));
  if (foreign !== undefined && !force && !existsSync(join(stateDir, MARKER_FILE))) {
    refuse(`refusing to use --state ${stateDir}: it holds files not made by chain snapshot (found "${foreign}"); use --force to use it anyway (only its ${STATE_ENTRIES.join(' and ')} are ever replaced)`);
  }
}

export interface Targets {
  /** The output path (a user's symlinks followed): the path that becomes our symlink. */
  outDir: string;
  stateDir: string;
}

/**
 * Checks, before any work, that the build may publish to `out` and keep its index in `state`
 * (see the module comment); throws a one-line error naming the path otherwise.
 */
export function checkTargets(out: string, state: string | undefined, force = false): Targets {
  const outDir = followUserLinks(resolve(out), out);
  checkOutput(outDir, out, force);
  const stateDir = resolve(state ?? `${outDir}.state`);
  checkState(stateDir, outDir, force);
  return { outDir, stateDir };
}

/** Creates the state dir (when absent) and its marker. */
export function prepareStateDir(stateDir: string): void {
  mkdirSync(stateDir, { recursive: true });
  if (!existsSync(join(stateDir, MARKER_FILE))) writeFileSync(join(stateDir, MARKER_FILE), markerText('state'));
}

/** Removes the index's own files (a full build), nothing else in the state dir. */
export function clearStateDir(stateDir: string): void {
  for (const e of STATE_ENTRIES) rmSync(join(stateDir, e), { recursive: true, force: true });
}

