/**
 * The releases directory `<out>.releases` (see publish.ts for the whole scheme): our marker, the
 * release `out` points at, staging dirs, the spare of double buffering, and the recovery of what
 * killed builds left there.
 */
import { closeSync, existsSync, chmodSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, realpathSync, renameSync, rmSync, writeSync, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { MANIFEST_PATH } from '../contract/layout.js';
import { safePath } from '../contract/manifest.js';
import { pidAlive } from './lock.js';

/** The marker file in the releases dir and in the state dir. */
export const MARKER_FILE = '.chain-snapshot';
/** Layout version written into the marker. */
export const MARKER_FORMAT = 1;
/** What an index (state) directory holds besides the marker; a full build replaces only these. */

/**
 * A release (or a dead build's staging dir), its symlink being renamed onto `out`, an older `out`
 * moved aside, or the record that makes a release the spare (see {@link takeSpare}).
 */
export const ENTRY_RE = /^(\d+)-([A-Za-z0-9]{6})(\.link|\.prev|\.spare)?$/;
export const SPARE = '.spare';

export function refuse(msg: string): never {
  throw new Error(msg);
}

export function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export const releasesDir = (outDir: string): string => `${outDir}.releases`;

export function markerText(kind: 'releases' | 'state'): string {
  return JSON.stringify({ tool: 'chain-snapshot', kind, format: MARKER_FORMAT }) + '\n';
}

/** True when `dir` is a real directory (not a symlink) holding our marker. */
export function isMarked(dir: string): boolean {
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
export interface SpareRecord {
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
export function validSpare(outDir: string): SpareRecord | undefined {
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

export function writeSpare(rel: string, name: string, current: string, changed: Iterable<string>): void {
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

