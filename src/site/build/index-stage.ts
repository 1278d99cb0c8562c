/**
 * `snapshot index`: the index phases alone (open, sync), into a state dir of their own that
 * shard builds then read (site/build/shard.ts). The first run (or `--full`, or an index of another
 * chain, network or format) scans the whole chain, its rows committed on the write thread and its
 * meta row last, so a run killed during the scan leaves an index with no height that the next run
 * builds again; later runs bring the index to the new height in place (reorgs undone), the meta
 * row committed with each batch, as an incremental build does.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BlocksSpill } from '../../index/blocks-spill.js';
import { BLOCKS_SPILL_FILE } from '../../index/files.js';
import { ChainIndex } from '../../index/query.js';
import { emptyMeta, readMeta, saveMeta, type IndexMeta } from '../../index/state.js';
import { heightRecordAt, openStore, STORE_FORMAT, type Store } from '../../index/store.js';
import { findFork, snapshotHeight, syncIndex } from '../../index/sync.js';
import { acquireStateLock, clearStateDir, prepareStateDir } from '../../publish/publish.js';
import { isMarked, lstatOrUndefined, refuse } from '../../publish/releases.js';
import { Progress } from '../../runtime/progress.js';
import { validatedSource } from '../../source/block-validation.js';
import type { ChainSource } from '../../source/types.js';
import { scanOptions } from './open-index.js';

/** The meta row's options of an index built by `snapshot index` (a build's hold its output and settings). */
export const STAGES_OPTIONS = 'stages';

export interface IndexStageOptions {
  source: ChainSource | (() => Promise<ChainSource>);
  height?: number;
  stateDir: string;
  full?: boolean;
  skipInvalid?: boolean;
  /** Threads that parse, hash and validate blocks (default: the cores less one). */
  scanThreads?: number;
  progress?: Progress;
}

export interface IndexStageReport {
  stateDir: string;
  network: string;
  height: number;
  tip: string;
  mode: 'full' | 'incremental';
  fullReason: string | undefined;
  rolledBackTo: number | undefined;
  side: number;
  orphan: number;
  txs: number;
  warnings: string[];
  skippedInvalid: number;
  stageSeconds: [string, number][];
}

export async function indexStage(opts: IndexStageOptions): Promise<IndexStageReport> {
  const stateDir = resolve(opts.stateDir);
  const st = lstatOrUndefined(stateDir);
  if (st && !st.isDirectory()) refuse(`--state ${stateDir} is not a directory`);
  if (st && !isMarked(stateDir) && readdirSync(stateDir).length > 0) refuse(`refusing to use --state ${stateDir}: it holds files not made by chain snapshot`);
  prepareStateDir(stateDir);
  const lock = acquireStateLock(stateDir);
  try {
    const source = typeof opts.source === 'function' ? await opts.source() : opts.source;
    try {
      return await run(opts, stateDir, source);
    } finally {
      if (typeof opts.source === 'function') await source.close();
    }
  } finally {
    lock.release();
  }
}

/** Why the index cannot be brought forward in place (undefined: it can). */
async function fullReason(store: Store, net: ReturnType<typeof validatedSource>['network'], genesisOfSource: () => Promise<string>, stateDir: string): Promise<string | undefined> {
  const stored = readMeta(store);
  if (!stored) return 'no index yet';
  const meta = stored.meta;
  if (!meta) return `index format ${stored.format}, this version uses ${STORE_FORMAT}`;
  if (meta.options !== STAGES_OPTIONS || meta.published !== null || meta.pending !== null) {
    refuse(`--state ${stateDir} holds the index of a snapshot build (its --state); give snapshot index a --state of its own`);
  }
  if (meta.network !== net.name || meta.genesis !== net.genesis) return `index is for ${meta.network}, not ${net.name}`;
  if (meta.tip < 0) return 'the index has no height (a scan did not finish)';
  if ((await genesisOfSource()) !== heightRecordAt(store, 0)?.hash) return 'the source is another chain';
  return undefined;
}

async function run(opts: IndexStageOptions, stateDir: string, raw: ChainSource): Promise<IndexStageReport> {
  const source = validatedSource(raw, { skipInvalid: opts.skipInvalid ?? false, scan: scanOptions(opts.scanThreads) });
  const net = source.network;
  const progress = opts.progress ?? new Progress(null);
  const asked = await snapshotHeight(source, opts.height);
  let store = openStore(stateDir);
  let spill: BlocksSpill | undefined;
  try {
    const reason = opts.full ? 'asked for a full build' : await fullReason(store, net, () => source.hashAt(0), stateDir);
    let meta: IndexMeta;
    if (reason !== undefined) {
      await store.close();
      clearStateDir(stateDir);
      store = openStore(stateDir);
      meta = emptyMeta(net, STAGES_OPTIONS);
      saveMeta(store, meta);
    } else meta = readMeta(store)!.meta!;
    const full = reason !== undefined;
    spill = new BlocksSpill(join(stateDir, BLOCKS_SPILL_FILE));
    const index = new ChainIndex(store, spill, net);
    const fork = await findFork(source, index, meta, asked.height);
    const rolledBackTo = fork < meta.tip ? fork : undefined;
    progress.stages([...(rolledBackTo !== undefined ? ['rollback'] : []), 'scan'], () => meta.totals);
    const synced = await syncIndex({ source, index, meta, fork, height: asked.height, full, progress });
    if (full) {
      // A full scan does not count addresses (BlockEffects.addressesChange; a full build's address stage does): one pass over them.
      let addresses = 0;
      for (const _ of index.addressesWithOutputs()) addresses++;
      meta.addresses = addresses;
      // Its meta row was kept in memory (the rows are committed on the write thread): stored once they all are.
      store.root.transactionSync(() => saveMeta(store, meta));
    }
    await store.root.flushed;
    progress.end();
    return {
      stateDir,
      network: net.name,
      height: synced.height,
      tip: index.hashAt(synced.height)!,
      mode: full ? 'full' : 'incremental',
      fullReason: reason,
      rolledBackTo,
      side: synced.side,
      orphan: synced.orphan,
      txs: meta.totals.txs,
      warnings: [...source.warnings],
      skippedInvalid: source.skipped.length,
      stageSeconds: progress.stageTimes,
    };
  } finally {
    spill?.close();
    await store.close();
  }
}
