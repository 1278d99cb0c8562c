import { rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { isNamecoin } from '../chain/networks.js';
import { BlocksSpill } from '../index/blocks-spill.js';
import { ioError } from '../runtime/io-error.js';
import { ChainIndex } from '../index/query.js';
import { markPublished, openIndex, savePending } from '../index/state.js';
import { isStoreError } from '../index/store.js';
import { findFork, restorePublished, snapshotHeight, syncIndex } from '../index/sync.js';
import { writeAddresses } from '../pipeline/addresses.js';
import { writeOffChain, writeRawFiles, writeTxsAndBlocks } from '../pipeline/blocks.js';
import type { StageContext } from '../pipeline/context.js';
import { writeNames } from '../pipeline/names.js';
import { writeSiteFiles } from '../pipeline/site-files.js';
import { RenderPool } from '../pipeline/render-pool.js';
import type { BuildReport } from '../pipeline/report.js';
import type { ChainSource } from '../source/types.js';
import { validatedSource } from '../source/validated.js';
import { HOSTS, type HostName } from '../hosts/index.js';
import { MANIFEST_PATH } from '../contract/layout.js';
import { Progress } from '../runtime/progress.js';
import { acquireLock, checkTargets, clearStateDir, currentRelease, prepareStateDir, publish, publishedDir, recoverInterrupted, type PublishStep, type Targets } from '../publish/publish.js';
import { prepareStaging, refreshTree } from '../publish/staging.js';
import { writeManifest } from '../publish/manifest.js';
import { resetRowsDir } from '../publish/manifest-rows.js';
import { SiteWriter } from '../publish/writer.js';

export interface BuildOptions {
  source: ChainSource;
  /** Snapshot height; the source's tip when undefined. */
  height?: number;
  outDir: string;
  /** The persistent index (default `<out>.state` beside the output). */
  stateDir?: string;
  pretty?: boolean;
  /** Addresses with more relevant outputs get the original's error document (0 = no cap). */
  maxAddressTxouts?: number;
  /** Hosts whose glue files the build writes (default: all). */
  hosts?: readonly HostName[];
  /** Ignore the index and build everything. */
  full?: boolean;
  /**
   * Skip invalid blocks with a warning instead of failing: an invalid off-chain block is left
   * out; an invalid main-chain block ends the snapshot at the height below it.
   */
  skipInvalid?: boolean;
  progress?: Progress;
  /** Replace a foreign `--out` directory, use a foreign `--state` directory (see README "Safety rules"). */
  force?: boolean;
  /** Called after the tree is written and before it is published (tests use it to kill a build). */
  beforePublish?: () => void | Promise<void>;
  /** Called between the steps of the publish (tests pause and kill there). */
  onPublishStep?: (step: PublishStep) => void | Promise<void>;
  /** Render on threads when a stage has more txs or address outputs than this (default 4096; tests use 0). */
  renderThreadsAbove?: number;
}

export type { BuildReport } from '../pipeline/report.js';

/**
 * Builds the site for `source` at `height`. When `<out>` holds a snapshot that
 * the persistent index describes, only the difference is done (rolling back a
 * reorg first); otherwise everything is built. The tree is prepared beside
 * `outDir` (hard links to unchanged files) and swapped in at the end: a
 * failure or kill leaves `outDir` as it was, and the next run recovers.
 */
export async function buildSnapshot(opts: BuildOptions): Promise<BuildReport> {
  // Where the build may write is settled before any work (README "Safety rules").
  const targets = checkTargets(opts.outDir, opts.stateDir, opts.force);
  const lock = acquireLock(targets.outDir, targets.stateDir);
  try {
    recoverInterrupted(targets.outDir);
    prepareStateDir(targets.stateDir);
    return await buildLocked(opts, targets);
  } catch (e) {
    if (!isStoreError(e)) throw e;
    const err = ioError(e, join(targets.stateDir, 'lmdb'), 'index');
    err.nativeDiagnostic = true;
    throw err;
  } finally {
    lock.release();
  }
}

async function buildLocked(opts: BuildOptions, { outDir, stateDir }: Targets): Promise<BuildReport> {
  // Every block of every source is validated on its way in (src/source/validated.ts).
  const source = validatedSource(opts.source, { skipInvalid: opts.skipInvalid });
  const net = source.network;
  const namecoin = isNamecoin(net);
  const progress = opts.progress ?? new Progress(null);

  const asked = await snapshotHeight(source, opts.height);
  let height = asked.height;
  const cap = opts.maxAddressTxouts ?? 10000;
  const hosts = opts.hosts ?? HOSTS;
  const pretty = opts.pretty ?? false;
  const options = JSON.stringify({ pretty, cap, hosts: [...hosts].sort(), out: outDir });
  const { store, meta, fullReason } = await openIndex(stateDir, net, options, {
    full: opts.full ?? false,
    manifestPath: join(outDir, MANIFEST_PATH),
    genesisOfSource: () => source.hashAt(0),
    clear: () => clearStateDir(stateDir),
    note: (line) => progress.note(line),
    // A build killed after changing the index: back to the published snapshot, from where this one goes on.
    restore: (store, meta) => {
      const spill = new BlocksSpill(join(stateDir, 'blocks.spill'));
      try {
        const { undone, applied } = restorePublished(new ChainIndex(store, spill, net), meta);
        if (undone + applied > 0) progress.note(`resuming from the published snapshot (height ${meta.tip}): ${undone} blocks of an unfinished build undone, ${applied} applied again`);
      } finally {
        spill.close();
      }
    },
  });
  const full = fullReason !== undefined;

  const index = new ChainIndex(store, new BlocksSpill(join(stateDir, 'blocks.spill')), net);
  const rowsDir = join(stateDir, 'manifest-rows.tmp');
  let writer: SiteWriter | undefined;
  let pool: RenderPool | undefined;
  let staging: string | undefined;
  let failed = false;
  try {
    // Source → index: the fork with the source, undo above it, apply the new blocks.
    const fork = await findFork(source, index, meta, height);
    const rolledBackTo = fork < meta.tip ? fork : undefined;
    const rollback = rolledBackTo !== undefined ? ['rollback'] : [];
    progress.stages([...rollback, 'scan', 'staging', 'txs and blocks', 'addresses', ...(namecoin ? ['names'] : []), 'site files', ...(full ? [] : ['links']), 'manifest']);
    // Full: an empty release before the scan (which writes the raw files). Incremental: the spare release (one run behind; its stale paths are handled as they are written, then linked), else the published tree hard-linked.
    const stage = () => {
      const staged = prepareStaging(outDir, full);
      staging = staged.dir;
      resetRowsDir(rowsDir);
      return (writer = new SiteWriter(staging, rowsDir, full ? undefined : { published: publishedDir(outDir)!, stale: staged.stale }));
    };
    const scanWriter = full ? stage() : undefined;
    const synced = await syncIndex(source, index, meta, fork, height, full, progress, scanWriter && ((block, hash) => writeRawFiles(scanWriter, block, hash)));
    height = synced.height;
    const { side, orphan, changes } = synced;
    progress.begin('staging');
    writer = scanWriter ?? stage();
    await store.root.flushed; // the render threads read the index
    pool = new RenderPool(index, writer, pretty, join(stateDir, 'tx-texts.tmp'), meta.duplicates.map((d) => d.txid), opts.renderThreadsAbove);
    pool.rawWritten = full;
    const ctx: StageContext = { index, writer, pool, height, pretty, cap, progress, meta, changes };

    // Index → documents: txs and blocks, addresses (from the rendered txs), names, stats.
    await writeTxsAndBlocks(ctx);
    meta.offchain = writeOffChain(ctx);
    const addressed = await writeAddresses(ctx);
    meta.capped = addressed.capped;
    if (full) meta.addresses = addressed.paid; // a full build's scan does not count addresses (BlockEffects.addressesChange)
    const [names, nonUtf8Names] = namecoin ? await writeNames(ctx) : [0, 0];
    const tipHash = await writeSiteFiles(ctx, outDir, hosts, side, orphan);

    // Documents → published tree: the manifest (the threads' sorted runs of rows merged, with the published one if incremental), then the swap.
    await pool.seal();
    await writer.seal();
    if (!full) {
      // The spare's older copies that no document of this run went to: linked to the published files.
      progress.begin('links');
      const left = writer.staleLeft();
      refreshTree(writer.update!.published, writer.root, left, (done) => progress.update(done, left.length, 'files'));
    }
    progress.begin('manifest');
    const [manifestPath, changed] = [join(writer.root, MANIFEST_PATH), full ? undefined : writer.changed];
    const previous = changed && join(publishedDir(outDir)!, MANIFEST_PATH);
    const manifest = writeManifest(rowsDir, previous, manifestPath, pool.sealedRows + writer.sealedRows, (done, total) => progress.update(done, total, 'files'));
    progress.end();

    await opts.beforePublish?.();
    checkTargets(opts.outDir, opts.stateDir, opts.force); // nothing foreign appeared meanwhile
    // Recorded before the swap: a kill after it leaves the index to adopt this snapshot, one before it to go back to the published one.
    savePending(store, meta, { generation: manifest.sha256, height, hash: tipHash, capped: meta.capped, offchain: meta.offchain });
    await publish(writer.root, outDir, opts.onPublishStep, changed); // keeps the replaced release as the spare
    markPublished(store, meta);
    return {
      network: net.name,
      height,
      tip: tipHash,
      mode: full ? 'full' : 'incremental',
      fullReason,
      rolledBackTo,
      blocks: { main: height + 1, side, orphan },
      txs: meta.totals.txs,
      files: manifest.files,
      bytes: manifest.bytes,
      ...writer.counts,
      names,
      addresses: meta.addresses,
      cappedAddresses: meta.capped.length,
      nonUtf8Names,
      duplicateTxids: meta.duplicates.map((d) => d.txid),
      skippedInvalid: [...source.skipped],
      requestedHeight: height !== asked.requested ? asked.requested : undefined,
      warnings: [...source.warnings],
      stageSeconds: progress.stageTimes,
      renderThreads: pool.threadCount,
      blockDocuments: pool.blockDocuments, addressReuse: pool.addressReuse,
    };
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    // After a failure, cleaning up must not hide it (a full disk can fail these too).
    const step = async (f: () => unknown) => {
      try {
        await f();
      } catch (e) {
        if (!failed) throw e;
      }
    };
    await step(() => writer?.close());
    await step(() => pool?.close());
    await step(() => index.spill.close());
    await step(() => store.close());
    await step(() => rmSync(rowsDir, { recursive: true, force: true }));
    await step(() => staging !== undefined && currentRelease(outDir) !== basename(staging) && rmSync(staging, { recursive: true, force: true }));
  }
}
