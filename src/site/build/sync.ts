import type { Block } from '../../chain/block.js';
import { isNamecoin } from '../../chain/networks.js';
import { findFork, syncIndex, type Changes } from '../../index/sync.js';
import { writeRawFiles } from '../../pipeline/blocks.js';
import type { SiteWriter } from '../../publish/site-writer.js';
import type { Opened } from './open-index.js';

/** The index at the snapshot: its height and off-chain blocks, and what changed since the published one. */
export interface Synced {
  /** The snapshot height (below the one asked for when skipInvalid stopped the chain). */
  height: number;
  side: number;
  orphan: number;
  /** undefined for a full build (every document is rendered). */
  changes: Changes | undefined;
  /** The height the published snapshot was rolled back to (a reorg, a lower height), if any. */
  rolledBackTo: number | undefined;
}

/**
 * Source → index: the fork with the source, undo above it, apply the new blocks. `rawInto`
 * (a full build's new tree) receives each applied block's `.bin` and `.hex` files.
 */
export async function syncPhase({ source, index, meta, progress, asked, full, format }: Opened, rawInto: SiteWriter | undefined): Promise<Synced> {
  const fork = await findFork(source, index, meta, asked.height);
  const rolledBackTo = fork < meta.tip ? fork : undefined;
  const rollback = rolledBackTo !== undefined ? ['rollback'] : [];
  const names = isNamecoin(index.net) ? ['names'] : [];
  progress.stages([...rollback, 'scan', 'staging', 'txs and blocks', 'addresses', ...names, 'site files', ...(full ? [] : ['links']), 'manifest', ...(format === 'pack' ? ['pack'] : [])], () => meta.totals);
  const onBlock = rawInto && ((block: Block, hash: string) => writeRawFiles(rawInto, block, hash));
  const { height, side, orphan, changes } = await syncIndex({ source, index, meta, fork, height: asked.height, full, progress, onBlock });
  return { height, side, orphan, changes, rolledBackTo };
}
