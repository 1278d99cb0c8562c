/**
 * `snapshot build --shard i/N --state S`: one shard of a snapshot from an index that
 * `snapshot index` built in S (docs/operations.md, "Stages and shards"). S is opened read-only
 * (LMDB readers: many shards read one index at once; nothing is created or written in S). The
 * documents are rendered as by a full build, the raw `.bin`/`.hex` files from the index's block
 * spill (there is no scan), and only the files of the shard are written (contract/shard.ts
 * shardKeeps), with `_shard.json` naming the shard. The output is published as a tree, or packed
 * afresh (never appended: a re-run gives the same bytes); its own state is `<out>.state`.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SHARD_FORMAT_NAME, SHARD_INFO_PATH, encodeShardInfo, type ShardInfo, type ShardSpec } from '../../contract/shard.js';
import { isNamecoin } from '../../chain/networks.js';
import { BlocksSpill } from '../../index/blocks-spill.js';
import { BLOCKS_SPILL_FILE, LMDB_DIR } from '../../index/files.js';
import { ChainIndex } from '../../index/query.js';
import { readMeta, type IndexMeta } from '../../index/state.js';
import { openStore, STORE_FORMAT } from '../../index/store.js';
import { acquireLock, checkTargets, prepareStateDir, publish, recoverInterrupted, type Lock, type Targets } from '../../publish/publish.js';
import { refuse } from '../../publish/releases.js';
import { Progress } from '../../runtime/progress.js';
import { validatedSource } from '../../source/block-validation.js';
import { HOSTS } from '../../hosts/index.js';
import type { Opened } from './open-index.js';
import type { BuildHooks, BuildOptions, OpenedOptions } from './options.js';
import { packHosts, packPhase, releaseForPack, packTargets, packedTreeBefore, refusePackAsTree, type PackReport } from './pack.js';
import { renderPhase } from './render.js';
import { sealPhase } from './seal.js';
import { stagePhase } from './stage.js';
import type { Synced } from './sync.js';
import { Teardown } from './teardown.js';

export interface ShardOptions extends Omit<BuildOptions, 'full' | 'skipInvalid' | 'stateDir'> {
  /** The index `snapshot index` built (read only). */
  indexDir: string;
  shard: ShardSpec;
}

export interface ShardReport {
  shard: ShardSpec;
  out: string;
  network: string;
  height: number;
  tip: string;
  /** Files of this shard (its `_shard.json` and `_manifest.json` included) and their bytes. */
  files: number;
  bytes: number;
  pack?: PackReport;
  stageSeconds: [string, number][];
}

/** The index in S at exactly `height` (its tip when undefined), else a one-line error saying to run `snapshot index`. */
function checkIndex(indexDir: string, meta: IndexMeta | undefined, format: number | undefined, network: string, height: number | undefined): number {
  const again = `run snapshot index --state ${indexDir}${height !== undefined ? ` --height ${height}` : ''} first`;
  if (format === undefined) refuse(`--state ${indexDir} holds no index; ${again}`);
  if (meta === undefined) refuse(`--state ${indexDir} holds an index of format ${format}, this version reads ${STORE_FORMAT}; ${again}`);
  if (meta.network !== network) refuse(`--state ${indexDir} holds a ${meta.network} index, not ${network}; ${again}`);
  if (meta.tip < 0) refuse(`--state ${indexDir} holds an unfinished index (no height); ${again}`);
  if (height !== undefined && meta.tip !== height) refuse(`--state ${indexDir} holds an index at height ${meta.tip}, not ${height}; ${again}`);
  return meta.tip;
}

/** Builds shard `opts.shard` into `opts.outDir` (a tree, or a pack with `format: 'pack'`). */
export async function buildShard(opts: ShardOptions, hooks: BuildHooks = {}): Promise<ShardReport> {
  const indexDir = resolve(opts.indexDir);
  if (!existsSync(join(indexDir, LMDB_DIR, 'data.mdb'))) refuse(`--state ${indexDir} holds no index; run snapshot index --state ${indexDir} first`);
  const locks: Lock[] = [];
  try {
    let targets: Targets;
    let pack: ReturnType<typeof packTargets> | undefined;
    if (opts.format === 'pack') {
      pack = packTargets({ ...opts, stateDir: undefined });
      if (pack.packDir === indexDir || pack.stateDir === indexDir) refuse(`--out ${opts.outDir} and its state must not be the index --state ${indexDir}`);
      prepareStateDir(pack.stateDir);
      locks.push(acquireLock(pack.packDir, pack.stateDir));
      targets = checkTargets(pack.treeDir, undefined);
    } else {
      refusePackAsTree(opts.outDir);
      targets = checkTargets(opts.outDir, undefined, opts.force);
    }
    if (targets.stateDir === indexDir || targets.outDir === indexDir) refuse(`--out ${opts.outDir} and its state must not be the index --state ${indexDir}`);
    locks.push(acquireLock(targets.outDir, targets.stateDir));
    recoverInterrupted(targets.outDir);
    prepareStateDir(targets.stateDir);
    const source = typeof opts.source === 'function' ? await opts.source() : opts.source;
    try {
      return await shardPhases({ ...opts, source, hosts: pack ? packHosts(opts.hosts) : opts.hosts }, indexDir, targets, pack, hooks);
    } finally {
      if (typeof opts.source === 'function') await source.close();
    }
  } finally {
    for (const l of locks.reverse()) l.release();
  }
}

async function shardPhases(opts: Omit<ShardOptions, 'source'> & OpenedOptions, indexDir: string, targets: Targets, pack: ReturnType<typeof packTargets> | undefined, hooks: BuildHooks): Promise<ShardReport> {
  const teardown = new Teardown();
  let failed = false;
  try {
    const source = validatedSource(opts.source, { skipInvalid: false });
    const net = source.network;
    const store = openStore(indexDir, { readOnly: true });
    teardown.add(() => store.close(), 'index');
    const stored = readMeta(store);
    const height = checkIndex(indexDir, stored?.meta, stored?.format, net.name, opts.height);
    const meta: IndexMeta = { ...stored!.meta!, capped: [], offchain: [] }; // a fresh tree: nothing published to compare with
    const index = new ChainIndex(store, new BlocksSpill(join(indexDir, BLOCKS_SPILL_FILE), true), net);
    teardown.add(() => index.spill.close(), 'index');
    const tip = index.hashAt(height)!;
    const theirs = await source.hashAt(height);
    if (theirs !== tip) refuse(`--state ${indexDir} holds block ${tip} at height ${height}, but ${source.description} has ${theirs}: not an index of this chain; run snapshot index first`);

    const progress = opts.progress ?? new Progress(null);
    const hosts = opts.hosts ?? HOSTS;
    const pretty = opts.pretty ?? false;
    const cap = opts.maxAddressTxouts ?? 10000;
    const names = isNamecoin(net) ? ['names'] : [];
    progress.stages(['staging', 'txs and blocks', 'addresses', ...names, 'site files', 'manifest', ...(pack ? ['pack'] : [])], () => meta.totals);
    const asked = { requested: height, height };
    const opened: Opened = { targets, source, progress, pretty, cap, hosts, nginxUpstream: opts.nginxUpstream, format: 'tree', asked, index, meta, fullReason: 'a shard', full: true, shard: opts.shard };
    let side = 0;
    let orphan = 0;
    for (const { rec } of index.offChainBlocks()) {
      if (rec.kind === 'side') side++;
      else orphan++;
    }
    const synced: Synced = { height, side, orphan, changes: undefined, rolledBackTo: undefined };

    progress.begin('staging');
    const staged = stagePhase(opened, teardown);
    const rendered = await renderPhase(opened, synced, staged, hooks, teardown);
    const info: ShardInfo = {
      format: SHARD_FORMAT_NAME,
      version: 1,
      shard: opts.shard.index,
      shards: opts.shard.count,
      output: pack ? 'pack' : 'tree',
      network: net.name,
      height,
      tip,
      options: { pretty, cap, hosts: [...hosts].sort(), ...(opts.nginxUpstream !== undefined && { nginxUpstream: opts.nginxUpstream }) },
    };
    staged.writer.write(SHARD_INFO_PATH, encodeShardInfo(info));
    const sealed = await sealPhase(opened, synced, staged, rendered);
    // Read again: an index that `snapshot index` moved while the shard read it gives a mixed shard.
    const now = readMeta(store)?.meta;
    if (now?.tip !== height || index.hashAt(height) !== tip) refuse(`--state ${indexDir} changed during the build (height ${height} → ${now?.tip ?? 'none'}); run the shard again`);
    await hooks.beforePublish?.();
    checkTargets(targets.outDir, targets.stateDir);
    const treeBefore = pack && packedTreeBefore(pack);
    await publish(sealed.root, targets.outDir, hooks.onPublishStep);
    if (pack) await releaseForPack(teardown);
    const packed = pack && (await packPhase(pack, sealed, treeBefore, hooks, progress, hosts, true));
    return {
      shard: opts.shard,
      out: pack ? pack.packDir : targets.outDir,
      network: net.name,
      height,
      tip,
      files: sealed.manifest.files,
      bytes: sealed.manifest.bytes,
      ...(packed && { pack: packed }),
      stageSeconds: progress.stageTimes,
    };
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    await teardown.run(failed);
  }
}
