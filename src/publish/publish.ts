/**
 * Where a build may write, and how it publishes (see README "Safety rules").
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
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  rmdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
  type Dirent,
  type Stats,
} from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { MANIFEST_PATH } from '../contract/layout.js';
import { ManifestPaths, safePath } from '../contract/manifest.js';

/** The marker file in the releases dir and in the state dir. */
export const MARKER_FILE = '.chain-snapshot';
/** Layout version written into the marker. */
export const MARKER_FORMAT = 1;
/** What an index (state) directory holds besides the marker; a full build replaces only these. */
export const STATE_ENTRIES = ['lmdb', 'blocks.spill'] as const;

/**
 * A release (or a dead build's staging dir), its symlink being renamed onto `out`, an older `out`
 * moved aside, or the record that makes a release the spare (see {@link takeSpare}).
 */
const ENTRY_RE = /^(\d+)-([A-Za-z0-9]{6})(\.link|\.prev|\.spare)?$/;
const SPARE = '.spare';

export type PublishStep = 'linked' | 'moved-aside' | 'swapped' | 'removed-old';

function refuse(msg: string): never {
  throw new Error(msg);
}

function pidAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export const releasesDir = (outDir: string): string => `${outDir}.releases`;
export const lockPath = (outDir: string): string => `${outDir}.lock`;
/** The state dir's lock (the holder's pid): inside it, so every spelling of the path takes the same one. */
export const STATE_LOCK = '.lock';

function markerText(kind: 'releases' | 'state'): string {
  return JSON.stringify({ tool: 'chain-snapshot', kind, format: MARKER_FORMAT }) + '\n';
}

/** True when `dir` is a real directory (not a symlink) holding our marker. */
function isMarked(dir: string): boolean {
  const st = lstatOrUndefined(dir);
  return st !== undefined && st.isDirectory() && lstatOrUndefined(join(dir, MARKER_FILE))?.isFile() === true;
}

/** The release `out` points at when it is our symlink (`<base>.releases/<name>`), else undefined. */
export function currentRelease(outDir: string): string | undefined {
  let target: string;
  try {
    target = readlinkSync(outDir);
  } catch {
    return undefined;
  }
  const prefix = `${basename(outDir)}.releases/`;
  if (!target.startsWith(prefix)) return undefined;
  const name = target.slice(prefix.length);
  return ENTRY_RE.test(name) && !name.includes('.') && isMarked(releasesDir(outDir)) ? name : undefined;
}

/** The directory holding the published tree (for hard-linked staging), if there is one. */
export function publishedDir(outDir: string): string | undefined {
  const st = lstatOrUndefined(outDir);
  if (!st) return undefined;
  const name = currentRelease(outDir);
  if (name !== undefined) return join(releasesDir(outDir), name);
  return st.isDirectory() ? outDir : undefined;
}

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
    const order = keys.map((_, i) => i);
    // UTF-8 byte order: JS strings sort the same unless they hold code units from U+D800 up.
    if (keys.some((k) => WIDE.test(k))) {
      const bytes = keys.map((k) => Buffer.from(k));
      order.sort((a, b) => Buffer.compare(bytes[a]!, bytes[b]!));
    } else order.sort((a, b) => (keys[a]! < keys[b]! ? -1 : 1));
    for (const i of order) {
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

const WIDE = /[\ud800-\uffff]/;

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
      if (holder !== undefined && pidAlive(holder)) refuse(held(holder, path));
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
    return refuse(`could not take the lock ${path}`);
  } finally {
    rmSync(mine, { force: true });
  }
}

/**
 * Clears what killed builds left in `<out>.releases`: only entries named `<pid>-<random>` of dead
 * processes (or this one; the caller holds the lock), and only in a directory with our marker.
 * A publish killed while `out` was briefly absent (an older version's real directory being
 * replaced) is completed, or the old directory put back.
 */
export function recoverInterrupted(outDir: string): void {
  const rel = releasesDir(outDir);
  if (!isMarked(rel)) return;
  const entries = readdirSync(rel)
    .map((name) => ({ name, m: ENTRY_RE.exec(name) }))
    .filter(({ m }) => m !== null && (Number(m[1]) === process.pid || !pidAlive(Number(m[1]))));
  const outAbsent = () => lstatOrUndefined(outDir) === undefined;
  for (const { name, m } of entries) {
    if (m![3] !== '.link') continue;
    const target = join(rel, name.slice(0, -'.link'.length));
    if (outAbsent() && existsSync(join(target, MANIFEST_PATH))) renameSync(join(rel, name), outDir);
    else rmSync(join(rel, name), { force: true });
  }
  for (const { name, m } of entries) {
    if (m![3] !== '.prev') continue;
    if (outAbsent()) renameSync(join(rel, name), outDir);
    else rmSync(join(rel, name), { recursive: true, force: true });
  }
  const current = currentRelease(outDir);
  const spare = validSpare(outDir);
  for (const { name, m } of entries) {
    if (m![3] === SPARE && name !== spare?.name + SPARE) rmSync(join(rel, name), { force: true });
  }
  for (const { name, m } of entries) {
    if (m![3] === undefined && name !== current && name !== spare?.name) rmSync(join(rel, name), { recursive: true, force: true });
  }
}

/** The spare's record: the release it was published after, and the paths that differ from it. */
interface SpareRecord {
  name: string;
  current: string;
  changed: string[];
}


/** Reads `<name>.spare`: a header line, one changed path a line, a trailer with their count. */
function readSpare(rel: string, name: string): SpareRecord | undefined {
  try {
    const lines = readFileSync(join(rel, name + SPARE), 'utf8').split('\n');
    const head = JSON.parse(lines[0]!) as { tool?: string; kind?: string; current?: unknown };
    const changed = lines.slice(1, -2);
    const complete = lines.at(-1) === '' && lines.at(-2) === `end ${changed.length}`;
    if (head.tool !== 'chain-snapshot' || head.kind !== 'spare' || typeof head.current !== 'string' || !complete || !changed.every(safePath)) return undefined;
    return { name, current: head.current, changed };
  } catch {
    return undefined;
  }
}

/** The spare whose record names the published release as the one it is one generation behind. */
function validSpare(outDir: string): SpareRecord | undefined {
  const rel = releasesDir(outDir);
  const current = currentRelease(outDir);
  if (current === undefined) return undefined;
  for (const entry of readdirSync(rel)) {
    const m = ENTRY_RE.exec(entry);
    if (m?.[3] !== SPARE) continue;
    const name = entry.slice(0, -SPARE.length);
    const record: SpareRecord | undefined = name !== current && lstatOrUndefined(join(rel, name))?.isDirectory() ? readSpare(rel, name) : undefined;
    if (record?.current === current) return record;
  }
  return undefined;
}

/**
 * Takes the spare release for staging (double buffering): its record is removed first — from then
 * on a kill leaves a dir that the next run's recovery deletes (and that run links the whole tree
 * again) — and the dir is renamed onto a fresh mkdtemp name of this process. Returns the staging
 * dir and the paths in which it differs from the published release, or undefined (no valid spare).
 */
export function takeSpare(outDir: string): { staging: string; changed: string[] } | undefined {
  const spare = validSpare(outDir);
  if (spare === undefined) return undefined;
  const rel = releasesDir(outDir);
  rmSync(join(rel, spare.name + SPARE));
  const staging = createStaging(outDir);
  renameSync(join(rel, spare.name), staging); // over the new empty dir
  return { staging, changed: spare.changed };
}

/** Removes the spare release (a full build stages from scratch). */
export function dropSpare(outDir: string): void {
  const spare = validSpare(outDir);
  if (spare === undefined) return;
  rmSync(join(releasesDir(outDir), spare.name + SPARE));
  rmSync(join(releasesDir(outDir), spare.name), { recursive: true, force: true });
}

function writeSpare(rel: string, name: string, current: string, changed: Iterable<string>): void {
  const fd = openSync(join(rel, name + SPARE), 'w');
  try {
    writeSync(fd, JSON.stringify({ tool: 'chain-snapshot', kind: 'spare', current }) + '\n');
    let count = 0;
    let chunk: string[] = [];
    for (const p of changed) {
      chunk.push(p);
      if (++count % 4096 !== 0) continue;
      writeSync(fd, chunk.join('\n') + '\n');
      chunk = [];
    }
    writeSync(fd, (chunk.length ? chunk.join('\n') + '\n' : '') + `end ${count}\n`);
  } finally {
    closeSync(fd);
  }
}

/**
 * A new, empty release directory to stage into: `<out>.releases/<pid>-<random>` made by
 * mkdtemp, in a releases dir that is a real directory with our marker.
 */
export function createStaging(outDir: string): string {
  const rel = releasesDir(outDir);
  mkdirSync(dirname(outDir), { recursive: true });
  try {
    mkdirSync(rel);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const st = lstatSync(rel);
  if (!st.isDirectory()) refuse(`refusing to stage in ${rel}: it is not a directory`);
  if (!existsSync(join(rel, MARKER_FILE))) {
    const fd = openSync(join(rel, MARKER_FILE), 'wx');
    try {
      writeSync(fd, markerText('releases'));
    } finally {
      closeSync(fd);
    }
  }
  const staging = mkdtempSync(join(rel, `${process.pid}-`));
  // mkdtemp makes it 0700; a published tree is readable like any directory the user makes (web
  // servers run as other users): the releases dir's mode, which mkdir gave it under the umask.
  chmodSync(staging, st.mode & 0o777);
  const expected = join(realpathSync(dirname(outDir)), basename(rel), basename(staging));
  if (realpathSync(staging) !== expected) refuse(`staging dir ${staging} resolves to ${realpathSync(staging)}, not ${expected}: refusing to write there`);
  return staging;
}

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
