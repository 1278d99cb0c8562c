/**
 * A pack directory as a build owns it (docs/operations.md, "Pack format"): which of its entries
 * the tool wrote, and which are garbage once a new generation is in place.
 *
 * Ours: `pack.json` when it reads as a pack pointer; every `<32 hex>.idx` that reads as a pack
 * index, and the parts it lists (so the current and older generations); and the names of the
 * journal, a list the build keeps outside the directory of every entry a writer is about to
 * create there (a killed run's parts, index or temp dir that no index lists yet). Besides the
 * pack, the host glue the build wrote (`glue`: the paths it recorded before writing them).
 */
import { closeSync, openSync, readSync, readdirSync, readFileSync, rmSync, appendFileSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { HEADER_SIZE, PACK_POINTER, ROOT_READ, decodeHeader, decodePartTable, decodePointer, type PartInfo } from '../contract/pack-format.js';

const PACK_FILE = /^[0-9a-f]{32}\.(?:idx|part)$/;
const WRITER_TMP = /^\.tmp-\d+-[0-9a-z]+$/;

function readAt(file: string, offset: number, length: number): Uint8Array {
  const fd = openSync(file, 'r');
  try {
    const b = new Uint8Array(length);
    const n = readSync(fd, b, 0, length, offset);
    return b.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** The part names the index file lists; undefined when it does not read as a pack index. */
export function indexParts(file: string): string[] | undefined {
  return indexPartTable(file)?.map((p) => p.name);
}

/** The parts (name, size, sha256) the index file lists; undefined when it does not read as a pack index. */
export function indexPartTable(file: string): PartInfo[] | undefined {
  try {
    const root = readAt(file, 0, ROOT_READ);
    const h = decodeHeader(root, file);
    const end = h.partTableOffset + h.partTableLength;
    if (h.partTableOffset < HEADER_SIZE) return undefined;
    const table = end <= root.length ? root.subarray(h.partTableOffset, end) : readAt(file, h.partTableOffset, h.partTableLength);
    return decodePartTable(table, h.partCount, file, h.partTableOffset);
  } catch {
    return undefined;
  }
}

/** The index `pack.json` names; undefined without a pack.json; throws when it is not a pack pointer. */
export function currentIndex(dir: string): string | undefined {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(join(dir, PACK_POINTER));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  return decodePointer(bytes, join(dir, PACK_POINTER)).index;
}

/** The journal of entries created in a pack directory: one name a line, appended before each is created. */
export class PackJournal {
  constructor(readonly path: string) {}

  names(): Set<string> {
    try {
      return new Set(readFileSync(this.path, 'utf8').split('\n').filter((n) => PACK_FILE.test(n) || WRITER_TMP.test(n)));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new Set();
      throw e;
    }
  }

  add(name: string): void {
    appendFileSync(this.path, name + '\n');
  }

  clear(): void {
    rmSync(this.path, { force: true });
  }
}

function sortedEntries(dir: string): Dirent[] {
  return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Every entry of the directory the tool owns (see the module comment), with what each index lists. */
function owned(dir: string, journal: ReadonlySet<string>): { names: Set<string>; indexes: Map<string, string[]> } {
  const names = new Set(journal);
  const indexes = new Map<string, string[]>();
  for (const e of sortedEntries(dir)) {
    if (!e.isFile() || !e.name.endsWith('.idx') || !PACK_FILE.test(e.name)) continue;
    const parts = indexParts(join(dir, e.name));
    if (parts === undefined) continue;
    indexes.set(e.name, parts);
    names.add(e.name);
    for (const p of parts) names.add(p);
  }
  return { names, indexes };
}

/**
 * Undefined when `rel` (an entry of the pack directory or below) is host glue the tool wrote: a
 * regular file it recorded, or a directory holding only such; else the first path that is not.
 */
function foreignGlue(dir: string, e: Dirent, rel: string, glue: ReadonlySet<string>): string | undefined {
  if (e.isFile()) return glue.has(rel) ? undefined : rel;
  if (!e.isDirectory() || ![...glue].some((g) => g.startsWith(rel + '/'))) return rel;
  for (const c of sortedEntries(join(dir, rel))) {
    const bad = foreignGlue(dir, c, `${rel}/${c.name}`, glue);
    if (bad !== undefined) return bad;
  }
  return undefined;
}

/** The first entry of `dir` (in name order) the tool did not write, and why (a clause); undefined: all of it is ours. */
export function foreignPackEntry(dir: string, journal: ReadonlySet<string>, glue: ReadonlySet<string> = new Set()): { path: string; reason: string } | undefined {
  const entries = sortedEntries(dir);
  if (entries.length === 0) return undefined;
  const pointer = entries.find((e) => e.name === PACK_POINTER);
  if (pointer === undefined && journal.size === 0) {
    return { path: entries[0]!.name, reason: `it is not empty and holds no pack made by chain snapshot (found "${entries[0]!.name}")` };
  }
  if (pointer !== undefined) {
    if (!pointer.isFile()) return { path: PACK_POINTER, reason: `"${PACK_POINTER}" is not a regular file: not made by chain snapshot` };
    try {
      currentIndex(dir);
    } catch (e) {
      return { path: PACK_POINTER, reason: `its ${PACK_POINTER} is not a pack pointer made by chain snapshot (${(e as Error).message})` };
    }
  }
  const { names } = owned(dir, journal);
  for (const e of entries) {
    if (e.name === PACK_POINTER) continue;
    const notGlue = foreignGlue(dir, e, e.name, glue);
    if (notGlue === undefined) continue;
    if (notGlue !== e.name) return { path: notGlue, reason: `"${notGlue}" is not a file of its host glue: not made by chain snapshot` };
    const kind = e.isFile() && PACK_FILE.test(e.name) ? 'file' : e.isDirectory() && WRITER_TMP.test(e.name) ? 'tmp' : undefined;
    if (kind === undefined || !names.has(e.name)) {
      const what = e.isSymbolicLink() ? 'is a symbolic link' : 'is not a file of its pack';
      return { path: e.name, reason: `"${e.name}" ${what}: not made by chain snapshot` };
    }
  }
  return undefined;
}

/**
 * Removes what the tool wrote in `dir` that none of the indexes `keep` needs: indexes and parts
 * of older generations, and a killed run's leftovers named by the journal. Returns the names removed.
 */
export function collectGarbage(dir: string, keep: readonly string[], journal: ReadonlySet<string>): string[] {
  const { names, indexes } = owned(dir, journal);
  const kept = new Set<string>([PACK_POINTER]);
  for (const idx of keep) {
    kept.add(idx);
    for (const p of indexes.get(idx) ?? indexParts(join(dir, idx)) ?? []) kept.add(p);
  }
  const removed: string[] = [];
  for (const e of sortedEntries(dir)) {
    if (kept.has(e.name) || !names.has(e.name)) continue;
    if (!((e.isFile() && PACK_FILE.test(e.name)) || (e.isDirectory() && WRITER_TMP.test(e.name)))) continue;
    rmSync(join(dir, e.name), { recursive: true, force: true });
    removed.push(e.name);
  }
  return removed;
}
