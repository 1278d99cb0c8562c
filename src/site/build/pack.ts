/**
 * `--format pack`: the tree is built and published as for `--format tree`, into a private output
 * the tool owns inside the state dir (`<state>/tree`, its index in `<state>/tree.state`), so
 * incremental builds, reorgs, locks and kills work as for a tree; then this phase packs that
 * published tree into `--out`, appending a generation to the pack there (docs/pack-format.md).
 *
 * `--out` holds only what the tool wrote (src/pack/dir.ts); the writer's new entries are named in
 * `<state>/pack.journal` before they are created; `pack.json`, replaced last, is the only file
 * that changes, so a kill leaves `--out` answering the previous pack. After the swap, files that
 * neither the new index nor the previous one needs are removed (a reader that opened the previous
 * pack keeps working for one generation). `<state>/pack-state.json` records which published tree
 * the current pack was made from: when it is the tree this build started from, the paths the
 * build did not change are kept from the pack without reading them.
 *
 * Appending never reclaims the bytes of answers that changed (a hub address's recipe, rewritten
 * each block; a name document's delta), so the record also keeps the size of the parts when the
 * pack was last written whole; once its parts have grown past REPACK_GROWTH times that, or number
 * more than REPACK_PARTS, the build writes the pack whole again, into new parts, and the old ones
 * go with the usual clean-up.
 */
import { existsSync, lstatSync, readFileSync, readdirSync, realpathSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { MANIFEST_PATH, SITE_INFO_PATH, type SiteInfo } from '../../contract/layout.js';
import { PACK_POINTER } from '../../contract/pack-format.js';
import { HOSTS, writeChangedFiles, type HostName } from '../../hosts/index.js';
import { packGlueFiles } from '../../hosts/pack-glue.js';
import { manifestHash } from '../../index/state.js';
import { collectGarbage, currentIndex, foreignPackEntry, indexPartTable, PackJournal } from '../../pack/dir.js';
import { packFromTree, type FromTreeSummary } from '../../pack/from-tree.js';
import { packUiFiles } from '../../pipeline/ui-files.js';
import { currentRelease, publishedDir, releasesDir } from '../../publish/publish.js';
import { isMarked, refuse } from '../../publish/releases.js';
import type { Progress } from '../../runtime/progress.js';
import type { BuildHooks, BuildOptions } from './options.js';
import type { Sealed } from './seal.js';
import type { Opened } from './open-index.js';
import type { Teardown } from './teardown.js';

export interface PackTargets {
  /** `--out`: the pack directory. */
  packDir: string;
  /** `--state` (default `<out>.state`). */
  stateDir: string;
  /** The private tree's output inside the state dir. */
  treeDir: string;
  force: boolean;
}

/** What the pack phase did, for the report. */
export interface PackReport {
  dir: string;
  index: string;
  entries: number;
  /** Entries kept from the previous pack (their bytes not written again), and of those the ones not even read. */
  reused: number;
  carried: number;
  /** Address documents made into recipes from the hints the build kept as it wrote them, not read back. */
  hinted: number;
  /** Address and block documents written whole again with their recipes from the pack this one replaces, not read. */
  rebased: number;
  /** Changed documents appended as recipes over their previous answers (delta.ts), and the manifest's chunks kept from the previous pack. */
  deltas: number;
  manifestChunksKept: number;
  /** The pack was written whole (a first pack, or one past REPACK_GROWTH or REPACK_PARTS: nothing kept from the previous one). */
  whole: boolean;
  /** The size of all the parts the new index lists. */
  partBytes: number;
  /** Bytes of the new parts and index; parts written; files removed after the swap. */
  bytesWritten: number;
  newParts: number;
  removed: number;
}

const JOURNAL = 'pack.journal';
const RECORD = 'pack-state.json';
const GLUE_RECORD = 'pack-glue.json';
/** Present while the private tree may list address documents it does not hold (listsAddresses). */
const LISTS_ADDRESSES = 'tree-lists-addresses';

interface PackRecord {
  /** The index pack.json named after the last pack phase, and the sha256 of the tree's manifest it was made from. */
  index: string;
  tree: string;
  /** The size of the parts of the last pack written whole that this index appends to (absent in a record of an older version). */
  wholeBytes?: number;
}

/**
 * A pack whose parts have grown past this many times their size when it was last written whole
 * is written whole again: its bytes stay within about twice a fresh pack's, and the runs that
 * write it whole cost, in all, no more than the appends before them did (each append writes what
 * changed; the parts grow by at least the size of a fresh pack between two such runs).
 */
export const REPACK_GROWTH = 2;

/**
 * A pack whose index lists more parts than this is written whole again too, however little they
 * hold (runs that each change a few documents): the files in its directory stay a constant, and
 * so does the index's part table (a few KiB; up to about 200 parts it is within a reader's first read).
 */
export const REPACK_PARTS = 256;

const sizeOf = (parts: readonly { size: number }[]): number => parts.reduce((n, p) => n + p.size, 0);

/** Whether a run writes the pack whole again, given the parts its current index lists and their size when it was last written whole. */
export function repacks(parts: readonly { size: number }[], wholeBytes: number): boolean {
  return sizeOf(parts) > REPACK_GROWTH * wholeBytes || parts.length > REPACK_PARTS;
}

/** The total size of the parts `index` (in `dir`) lists; undefined when it does not read as an index. */
function partBytesOf(dir: string, index: string): number | undefined {
  const parts = indexPartTable(join(dir, index));
  return parts && sizeOf(parts);
}

const treeHint = (out: string) => `refusing to build a pack into ${out}: it holds a snapshot tree (${MANIFEST_PATH}); build it with --format tree, or choose another --out`;

/** The hosts whose glue a pack build writes: nginx serves a tree's files, so it has no part in a pack. */
export function packHosts(hosts: readonly HostName[] | undefined): readonly HostName[] {
  if (hosts?.includes('nginx')) refuse('--hosts nginx needs --format tree: nginx serves the files of a tree, not a pack');
  return (hosts ?? HOSTS).filter((h) => h !== 'nginx');
}

/** `--format tree`: refuses an `--out` that holds a pack (the formats are never switched silently). */
export function refusePackAsTree(out: string): void {
  if (existsSync(join(resolve(out), PACK_POINTER))) {
    refuse(`refusing to build a tree into ${resolve(out)}: it holds a pack (${PACK_POINTER}); build it with --format pack, or choose another --out (remove it first to switch formats)`);
  }
}

/** `--format pack`: where the build may write (docs/operations.md, "Safety rules"), checked before any work; throws a one-line error otherwise. */
export function packTargets(opts: Pick<BuildOptions, 'outDir' | 'stateDir' | 'force'>): PackTargets {
  let packDir = resolve(opts.outDir);
  const force = opts.force ?? false;
  const st = lstatSync(packDir, { throwIfNoEntry: false });
  if (st?.isSymbolicLink()) {
    if (currentRelease(packDir) !== undefined) refuse(treeHint(packDir));
    packDir = realpathSync(packDir);
  }
  if (packDir === '/') refuse(`refusing to build a pack into / (--out ${opts.outDir}): name a directory for the pack`);
  if (st !== undefined && !statSync(packDir).isDirectory()) refuse(`--out ${packDir} is a file, not a directory: refusing to replace it`);
  if (existsSync(join(packDir, MANIFEST_PATH)) || existsSync(releasesDir(packDir))) refuse(treeHint(packDir));
  const stateDir = resolve(opts.stateDir ?? `${packDir}.state`);
  const inside = (a: string, b: string) => a === b || a.startsWith(b + sep);
  if (inside(stateDir, packDir) || inside(packDir, stateDir)) refuse(`--state ${stateDir} and --out ${packDir} must not contain each other`);
  const stateSt = lstatSync(stateDir, { throwIfNoEntry: false });
  if (stateSt && !statSync(stateDir).isDirectory()) refuse(`--state ${stateDir} is a file, not a directory: refusing to use it`);
  if (stateSt && !force && !isMarked(stateDir) && !isEmpty(stateDir)) {
    refuse(`refusing to use --state ${stateDir}: it holds files not made by chain snapshot; use --force to use it anyway`);
  }
  checkPackDir(packDir, stateDir, force);
  return { packDir, stateDir, treeDir: join(stateDir, 'tree'), force };
}

function isEmpty(dir: string): boolean {
  return readdirSync(dir).length === 0;
}

/** The journal of the entries a writer creates in the pack directory (src/pack/dir.ts). */
export function packJournal(stateDir: string): PackJournal {
  return new PackJournal(join(stateDir, JOURNAL));
}

/** Refuses (unless forced) a pack directory holding anything the tool did not write. */
export function checkPackDir(packDir: string, stateDir: string, force: boolean): void {
  if (force || !existsSync(packDir)) return;
  const foreign = foreignPackEntry(packDir, new PackJournal(join(stateDir, JOURNAL)).names(), readGlue(stateDir));
  if (foreign !== undefined) refuse(`refusing to write a pack into ${packDir}: ${foreign.reason}; use --force to write into it anyway (only the pack's own files are ever replaced or removed)`);
}

/** The sha256 of the private tree's published manifest, before this build replaces it. */
export function packedTreeBefore(pack: PackTargets): string | undefined {
  const dir = publishedDir(pack.treeDir);
  return dir === undefined ? undefined : manifestHash(join(dir, MANIFEST_PATH));
}

/** Whether the pack in `--out` is the one made from the tree `treeBefore` (no pack run left unfinished). */
export function packIsCurrent(pack: PackTargets, treeBefore: string | undefined): boolean {
  if (treeBefore === undefined || !existsSync(pack.packDir)) return false;
  const record = readRecord(pack.stateDir);
  return record !== undefined && record.tree === treeBefore && record.index === currentIndex(pack.packDir) && new PackJournal(join(pack.stateDir, JOURNAL)).names().size === 0;
}

/**
 * Whether a pack build's private tree lists its compact address documents without holding them
 * (render-worker.ts listAddresses): a full build of a pack into a directory that holds none. Each
 * such document is then made by the pack phase from the recipe hint its render thread kept, so
 * the address documents, most of a tree's bytes (each a copy of tx documents), are not written;
 * an incremental build writes the ones it changes, as it splices them from their previous
 * version. Only the pack made from that tree holds the others: see fullBecause.
 */
export function listsAddresses(opened: Pick<Opened, 'format' | 'full' | 'shard' | 'pretty'>, pack: PackTargets): boolean {
  return opened.format === 'pack' && opened.full && opened.shard === undefined && !opened.pretty && !existsSync(join(pack.packDir, PACK_POINTER));
}

/** Notes, before any document is rendered, that the private tree lists address documents (`on`), or, once a full build that wrote them all is published, that it holds them. */
export function noteListedAddresses(pack: PackTargets, on: boolean): void {
  const marker = join(pack.stateDir, LISTS_ADDRESSES);
  if (on) writeFileSync(marker, '');
  else rmSync(marker, { force: true });
}

/**
 * Why a pack build must be a full one, if it must: its private tree lists address documents
 * that only the pack made from it holds (listsAddresses), and `--out` does not hold that pack (`current`, packIsCurrent, false: a
 * build ended or was killed between publishing the tree and publishing the pack). The tree
 * cannot be packed again without them, so every document is rendered again.
 */
export function fullBecause(pack: PackTargets, current: boolean): string | undefined {
  if (current || !existsSync(join(pack.stateDir, LISTS_ADDRESSES))) return undefined;
  return `the private tree (${pack.treeDir}) lists address documents that only the pack made from it holds, and ${pack.packDir} does not hold that pack`;
}

/** The host glue paths the pack builds wrote into the pack directory (recorded before writing them). */
function readGlue(stateDir: string): Set<string> {
  try {
    return new Set(JSON.parse(readFileSync(join(stateDir, GLUE_RECORD), 'utf8')) as string[]);
  } catch {
    return new Set();
  }
}

function writeGlueRecord(stateDir: string, glue: ReadonlySet<string>): void {
  const tmp = join(stateDir, `${GLUE_RECORD}.tmp`);
  writeFileSync(tmp, JSON.stringify([...glue].sort()) + '\n');
  renameSync(tmp, join(stateDir, GLUE_RECORD));
}

/** Removes a recorded glue file (a regular file only) and the directories it leaves empty below `dir`. */
function removeGlue(dir: string, rel: string): void {
  const abs = join(dir, rel);
  if (!lstatSync(abs, { throwIfNoEntry: false })?.isFile()) return;
  rmSync(abs);
  for (let d = dirname(abs); d !== dir && d.startsWith(dir + sep) && readdirSync(d).length === 0; d = dirname(d)) rmdirSync(d);
}

/**
 * The hosts' glue for the pack (docs/deploy.md, "Deploying a pack") and the browsing UI's static
 * files (index.html reading the pack, its script and stylesheet), written beside it. Each path is
 * recorded before it is written, so the next build owns it even after a kill; recorded files this
 * build no longer writes (another --hosts, an older UI) are removed. Returns the paths written.
 */
async function writePackGlue(pack: PackTargets, tree: string, hosts: readonly HostName[]): Promise<string[]> {
  return writePackGlueOf(pack, JSON.parse(readFileSync(join(tree, SITE_INFO_PATH), 'utf8')) as SiteInfo, hosts);
}

/** The hosts' glue for the pack of the snapshot `info` describes (also `snapshot merge`'s), recorded in the state dir before it is written. */
export async function writePackGlueOf(pack: PackTargets, info: SiteInfo, hosts: readonly HostName[]): Promise<string[]> {
  const files = await packGlueFiles(info, { hosts });
  for (const [p, c] of await packUiFiles()) files.set(p, c);
  const before = readGlue(pack.stateDir);
  writeGlueRecord(pack.stateDir, new Set([...before, ...files.keys()]));
  const written = await writeChangedFiles(pack.packDir, files);
  for (const p of before) if (!files.has(p)) removeGlue(pack.packDir, p);
  writeGlueRecord(pack.stateDir, new Set(files.keys()));
  return written;
}

function readRecord(stateDir: string): PackRecord | undefined {
  try {
    return JSON.parse(readFileSync(join(stateDir, RECORD), 'utf8')) as PackRecord;
  } catch {
    return undefined;
  }
}

function writeRecord(stateDir: string, r: PackRecord): void {
  const tmp = join(stateDir, `${RECORD}.tmp`);
  writeFileSync(tmp, JSON.stringify(r) + '\n');
  renameSync(tmp, join(stateDir, RECORD));
}

/** Before the pack phase: the render and writer threads and the index are done with, and their memory (the index's mapped pages) is given back. */
export async function releaseForPack(teardown: Teardown): Promise<void> {
  await teardown.release('threads');
  await teardown.release('index');
}

/**
 * Published tree → a new generation of the pack: appended to the current one (unchanged answers
 * keep pointing into its parts), `pack.json` replaced last, then the files no longer needed removed.
 */
export async function packPhase(pack: PackTargets, sealed: Sealed, treeBefore: string | undefined, hooks: BuildHooks, progress: Progress, hosts: readonly HostName[], shard = false): Promise<PackReport> {
  progress.begin('pack');
  checkPackDir(pack.packDir, pack.stateDir, pack.force); // nothing foreign appeared while the tree was built
  const journal = new PackJournal(join(pack.stateDir, JOURNAL));
  const previous = existsSync(pack.packDir) ? currentIndex(pack.packDir) : undefined;
  const record = readRecord(pack.stateDir);
  // The build's changed paths describe the pack only if it was made from the tree this build started from.
  const changed = sealed.changed;
  const carry = changed !== undefined && previous !== undefined && record?.index === previous && record.tree === treeBefore;
  // The size the pack had when last written whole: the record's when it describes this pack, else the pack as it is now.
  const parts = previous !== undefined ? indexPartTable(join(pack.packDir, previous)) : undefined;
  const before = parts && sizeOf(parts);
  const wholeBytes = record?.index === previous && record?.wholeBytes !== undefined ? record.wholeBytes : before;
  const whole = previous === undefined || shard || (parts !== undefined && wholeBytes !== undefined && repacks(parts, wholeBytes));
  const tree = publishedDir(pack.treeDir)!;
  const summary: FromTreeSummary = await packFromTree(tree, pack.packDir, {
    append: !whole, // a shard is packed afresh: the same tree always gives the same bytes
    withManifest: true,
    manifestSha256: sealed.manifest.sha256,
    changed: carry ? changed : undefined,
    rebase: whole && carry, // written whole again: the unchanged documents' recipes come from the pack it replaces
    hints: sealed.recipeHints,
    onCreate: (name) => {
      journal.add(name);
      hooks.onPackFile?.(name);
    },
    onProgress: (done) => progress.update(done, sealed.manifest.files, 'files'),
  });
  const partBytes = partBytesOf(pack.packDir, summary.index)!;
  writeRecord(pack.stateDir, { index: summary.index, tree: sealed.manifest.sha256, wholeBytes: whole ? partBytes : wholeBytes });
  await hooks.onPackStep?.('published');
  // A reader that opened the previous pack keeps working: its index and parts stay one generation.
  const removed = collectGarbage(pack.packDir, [summary.index, ...(previous !== undefined && previous !== summary.index ? [previous] : [])], journal.names());
  journal.clear();
  await hooks.onPackStep?.('collected');
  if (!shard) await writePackGlue(pack, tree, hosts); // a shard's glue is the merge's (its _site.json may be another shard's)
  progress.end();
  return {
    dir: pack.packDir,
    index: summary.index,
    entries: summary.entries,
    reused: summary.reused,
    carried: summary.carried,
    hinted: summary.hinted,
    rebased: summary.rebased,
    deltas: summary.deltas,
    manifestChunksKept: summary.manifestChunksKept,
    whole,
    partBytes,
    bytesWritten: summary.bytesWritten,
    newParts: summary.newParts.length,
    removed: removed.length,
  };
}
