import { markPublished, savePending } from '../../index/state.js';
import { checkTargets, publish } from '../../publish/publish.js';
import type { Opened } from './open-index.js';
import type { BuildHooks, BuildOptions } from './options.js';
import type { Sealed } from './seal.js';

/**
 * The targets checked again right before the swap, as at the start: nothing foreign appeared in
 * `--out` or `--state` while the build ran (a user's file there is refused, not replaced).
 */
function checkNothingForeignAppeared(opts: BuildOptions): void {
  checkTargets(opts.outDir, opts.stateDir, opts.force);
}

/**
 * Sealed tree → published: the index records the snapshot as pending, the tree is swapped in
 * (the replaced release kept as the spare), and the index records it as published.
 */
export async function publishPhase(opts: BuildOptions, hooks: BuildHooks, { targets, index, meta }: Opened, { root, height, tipHash, manifest, changed }: Sealed): Promise<void> {
  await hooks.beforePublish?.();
  checkNothingForeignAppeared(opts);
  // Recorded before the swap: a kill after it leaves the index to adopt this snapshot, one before it to go back to the published one.
  savePending(index.store, meta, { generation: manifest.sha256, height, hash: tipHash, capped: meta.capped, offchain: meta.offchain });
  await publish(root, targets.outDir, hooks.onPublishStep, changed);
  markPublished(index.store, meta);
}
