import { join, sep } from 'node:path';
import { LMDB_DIR } from '../index/files.js';
import { isStoreError } from '../index/store.js';
import type { BuildReport } from '../pipeline/report.js';
import { acquireLock, checkTargets, prepareStateDir, recoverInterrupted, type Targets } from '../publish/publish.js';
import { boundHeapGrowth } from '../runtime/heap.js';
import { IoError, ioError } from '../runtime/io-error.js';
import { openIndexPhase } from './build/open-index.js';
import type { BuildHooks, BuildOptions, OpenedOptions } from './build/options.js';
import { fullBecause, listsAddresses, noteListedAddresses, packIsCurrent, packPhase, releaseForPack, packTargets, packedTreeBefore, refusePackAsTree, type PackReport, type PackTargets } from './build/pack.js';
import { publishPhase } from './build/publish.js';
import { renderPhase } from './build/render.js';
import { buildReport } from './build/report.js';
import { packHosts } from './build/pack.js';
import { sealPhase } from './build/seal.js';
import { stagePhase } from './build/stage.js';
import { syncPhase } from './build/sync.js';
import { Teardown } from './build/teardown.js';
import { nothingChanged, unchangedReport } from './build/unchanged.js';

export type { BuildHooks, BuildOptions, OpenedOptions } from './build/options.js';
export type { BuildReport } from '../pipeline/report.js';
export type { PackReport } from './build/pack.js';

/** What a build did; `pack` with `--format pack`. */
export type SiteBuildReport = BuildReport & { pack?: PackReport };

/** A `--format pack` build: where it packs, and the private tree it builds (site/build/pack.ts). */
interface PackRun {
  targets: PackTargets;
  /** The sha256 of the private tree's manifest before this build. */
  treeBefore: string | undefined;
  /** `--out` holds the pack made from that tree (packIsCurrent): nothing else writes it while the build holds its lock. */
  current: boolean;
}

/** Where the build may write, settled before any work (docs/operations.md, "Safety rules"); the CLI's refusals come from here. */
function resolveTargets(opts: BuildOptions): Targets {
  refusePackAsTree(opts.outDir);
  return checkTargets(opts.outDir, opts.stateDir, opts.force);
}

/**
 * Builds the site for `source` at `height`. When `<out>` holds a snapshot that the persistent
 * index describes, only the difference is done (rolling back a reorg first); otherwise
 * everything is built. The tree is prepared beside `outDir` (hard links to unchanged files) and
 * swapped in at the end: a failure or kill leaves `outDir` as it was, and the next run recovers.
 * The phases, in order: targets → index (open, sync) → stage → render → seal → publish (→ pack,
 * with `--format pack`: the tree is then private, in the state dir, and packed into `outDir`).
 */
export async function buildSnapshot(opts: BuildOptions, hooks: BuildHooks = {}): Promise<SiteBuildReport> {
  boundHeapGrowth();
  if (opts.format === 'pack') return buildPack(opts, hooks);
  return buildTree(opts, hooks);
}

/** `--format pack`: the tree built into `<state>/tree` as usual, then packed into `--out` under its own lock. */
async function buildPack(opts: BuildOptions, hooks: BuildHooks): Promise<SiteBuildReport> {
  const hosts = packHosts(opts.hosts);
  const pack = packTargets(opts);
  prepareStateDir(pack.stateDir);
  const lock = acquireLock(pack.packDir, pack.stateDir);
  try {
    return await buildTree({ ...opts, outDir: pack.treeDir, stateDir: undefined, force: false, hosts }, hooks, pack);
  } finally {
    lock.release();
  }
}

async function buildTree(opts: BuildOptions, hooks: BuildHooks, pack?: PackTargets): Promise<SiteBuildReport> {
  const targets = resolveTargets(opts);
  const lock = acquireLock(targets.outDir, targets.stateDir);
  try {
    recoverInterrupted(targets.outDir);
    prepareStateDir(targets.stateDir);
    const treeBefore = pack && packedTreeBefore(pack);
    const packRun = pack && { targets: pack, treeBefore, current: packIsCurrent(pack, treeBefore) };
    const because = packRun && fullBecause(packRun.targets, packRun.current);
    if (typeof opts.source !== 'function') return await runPhases({ ...opts, source: opts.source, fullBecause: because }, hooks, targets, packRun);
    const source = await opts.source();
    try {
      return await runPhases({ ...opts, source, fullBecause: because }, hooks, targets, packRun);
    } finally {
      await source.close();
    }
  } catch (e) {
    // A failed write in the state dir (the spill, say) can race the index write thread's failing
    // commit on the same full disk, whose liblmdb diagnostic then precedes ours on stderr.
    if (e instanceof IoError && e.path.startsWith(targets.stateDir + sep)) e.nativeDiagnostic = true;
    if (!isStoreError(e)) throw e;
    const err = ioError(e, join(targets.stateDir, LMDB_DIR), 'index');
    err.nativeDiagnostic = true;
    throw err;
  } finally {
    lock.release();
  }
}

async function runPhases(opts: OpenedOptions, hooks: BuildHooks, targets: Targets, pack: PackRun | undefined): Promise<SiteBuildReport> {
  const teardown = new Teardown(); // each phase adds what it opened; undone at the end, whatever happened
  let failed = false;
  try {
    const opened = await openIndexPhase(opts, targets, teardown, hooks);
    const listed = pack !== undefined && listsAddresses(opened, pack.targets);
    if (listed) noteListedAddresses(pack.targets, true);
    // A full build makes its (empty) tree before the scan, which writes the raw files into it
    // while each block's bytes are in hand; an incremental one takes the spare once the index is synced.
    const early = opened.full ? stagePhase(opened, teardown) : undefined;
    const synced = await syncPhase(opened, early?.writer);
    if (nothingChanged(opened, synced) && (pack === undefined || pack.current)) return await unchangedReport(opened, synced);
    opened.progress.begin('staging');
    const staged = early ?? stagePhase(opened, teardown);
    // The pack made from the published private tree holds the address documents that tree lists without holding them.
    const previousPack = pack && !opened.full && pack.current ? pack.targets.packDir : undefined;
    const rendered = await renderPhase(opened, synced, staged, hooks, teardown, { listAddresses: listed, previousPack });
    const sealed = await sealPhase(opened, synced, staged, rendered);
    await publishPhase(opts, hooks, opened, sealed);
    if (pack && opened.full && !listed) noteListedAddresses(pack.targets, false); // every document is in the tree
    if (pack) await releaseForPack(teardown);
    const packed = pack && (await packPhase(pack.targets, sealed, pack.treeBefore, hooks, opened.progress, opened.hosts));
    return { ...buildReport({ opened, synced, staged, rendered, sealed }), ...(packed && { pack: packed }) };
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    await teardown.run(failed);
  }
}
