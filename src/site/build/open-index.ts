import { join } from 'node:path';
import { MANIFEST_PATH } from '../../contract/layout.js';
import type { ShardSpec } from '../../contract/shard.js';
import { HOSTS, type HostName } from '../../hosts/index.js';
import { BlocksSpill } from '../../index/blocks-spill.js';
import { BLOCKS_SPILL_FILE } from '../../index/files.js';
import { ChainIndex } from '../../index/query.js';
import { openIndex, type IndexMeta } from '../../index/state.js';
import { restorePublished, snapshotHeight } from '../../index/sync.js';
import { clearStateDir, type Targets } from '../../publish/publish.js';
import { Progress } from '../../runtime/progress.js';
import { validatedSource, type ValidatedSource } from '../../source/block-validation.js';
import { defaultScanThreads, type ScanThreadOptions } from '../../source/scan-pool.js';
import type { BuildHooks, OpenedOptions } from './options.js';
import type { Teardown } from './teardown.js';

/** Bytes of blocks parsed on the main thread before the scan threads start: a small chain is done sooner without them. */
const SCAN_THREADS_ABOVE = 4 << 20;

/** The scan threads of a build or `snapshot index`: threads once that many bytes of blocks were parsed. */
export function scanOptions(threads: number | undefined, hooks: BuildHooks = {}): ScanThreadOptions {
  return { threads: threads ?? defaultScanThreads(), above: hooks.scanThreadsAbove ?? SCAN_THREADS_ABOVE, fault: hooks.scanThreadFault };
}

/** The build's settings and its index, opened: whether it extends the published snapshot or builds everything. */
export interface Opened {
  targets: Targets;
  source: ValidatedSource;
  progress: Progress;
  pretty: boolean;
  /** Addresses with more outputs get the capped document (0 = no cap). */
  cap: number;
  hosts: readonly HostName[];
  nginxUpstream: string | undefined;
  /** `pack`: a pack phase follows the publish (site/build/pack.ts). */
  format: 'tree' | 'pack';
  /** The height asked for (else the source's tip) and the one to build. */
  asked: { requested: number; height: number };
  index: ChainIndex;
  meta: IndexMeta;
  /** Why everything is built; undefined: the build extends the published snapshot. */
  fullReason: string | undefined;
  full: boolean;
  /** A shard build (site/build/shard.ts): the index is read-only, and only the shard's files are written. */
  shard?: ShardSpec;
}

/**
 * Opens the index in the state dir (see index/state.ts openIndex): brought back to the published
 * snapshot when a killed build left it elsewhere, or emptied when it cannot extend it.
 */
export async function openIndexPhase(opts: OpenedOptions, targets: Targets, teardown: Teardown, hooks: BuildHooks = {}): Promise<Opened> {
  const { outDir, stateDir } = targets;
  // Every block of every source is validated on its way in (src/source/block-validation.ts).
  const source = validatedSource(opts.source, { skipInvalid: opts.skipInvalid, scan: scanOptions(opts.scanThreads, hooks) });
  const net = source.network;
  const progress = opts.progress ?? new Progress(null);
  const asked = await snapshotHeight(source, opts.height);
  const cap = opts.maxAddressTxouts ?? 10000;
  const hosts = opts.hosts ?? HOSTS;
  const pretty = opts.pretty ?? false;
  // A change of these makes the index unfit for the published tree: a full build.
  const options = JSON.stringify({ pretty, cap, hosts: [...hosts].sort(), out: outDir, ...(opts.nginxUpstream !== undefined && { nginxUpstream: opts.nginxUpstream }) });
  const spillPath = join(stateDir, BLOCKS_SPILL_FILE);
  const { store, meta, fullReason } = await openIndex(stateDir, net, options, {
    full: opts.fullBecause ?? opts.full ?? false,
    manifestPath: join(outDir, MANIFEST_PATH),
    genesisOfSource: () => source.hashAt(0),
    clear: () => clearStateDir(stateDir),
    note: (line) => progress.note(line),
    // A build killed after changing the index: back to the published snapshot, from where this one goes on.
    restore: (store, meta) => {
      const spill = new BlocksSpill(spillPath);
      try {
        const { undone, applied } = restorePublished(new ChainIndex(store, spill, net), meta);
        if (undone + applied > 0) progress.note(`resuming from the published snapshot (height ${meta.tip}): ${undone} blocks of an unfinished build undone, ${applied} applied again`);
      } finally {
        spill.close();
      }
    },
  });
  teardown.add(() => store.close(), 'index');
  const index = new ChainIndex(store, new BlocksSpill(spillPath), net);
  teardown.add(() => index.spill.close(), 'index');
  return { targets, source, progress, pretty, cap, hosts, nginxUpstream: opts.nginxUpstream, format: opts.format ?? 'tree', asked, index, meta, fullReason, full: fullReason !== undefined };
}
