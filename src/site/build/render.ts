import { join } from 'node:path';
import { isNamecoin } from '../../chain/networks.js';
import { writeAddresses } from '../../pipeline/addresses.js';
import { writeOffChain, writeTxsAndBlocks } from '../../pipeline/blocks.js';
import type { StageContext } from '../../pipeline/context.js';
import { writeNames } from '../../pipeline/name-files.js';
import { RenderPool, type PackRender } from '../../pipeline/render-pool.js';
import { removeHints } from '../../pack/hints.js';
import { writeSiteFiles } from '../../pipeline/site-files.js';
import type { Opened } from './open-index.js';
import type { Staged } from './stage.js';
import type { Synced } from './sync.js';
import type { BuildHooks } from './options.js';
import type { Teardown } from './teardown.js';

/** The documents written (the writer and the render threads still hold their last manifest rows). */
export interface Rendered {
  pool: RenderPool;
  /** The snapshot's tip hash. */
  tipHash: string;
  names: number;
  nonUtf8Names: number;
}

/**
 * Index → documents: txs and blocks, addresses (from the rendered txs), names, stats and the
 * site files. The meta row gets the figures a full build's scan does not count. `pack`: what a
 * pack build's render threads do with its address documents (RenderWorkerData.listAddresses, previousPack).
 */
export async function renderPhase(opened: Opened, synced: Synced, { writer }: Staged, hooks: BuildHooks, teardown: Teardown, pack?: PackRender): Promise<Rendered> {
  const { index, meta, pretty, cap, progress, hosts, nginxUpstream, full, targets } = opened;
  const { height, changes, side, orphan } = synced;
  await index.store.root.flushed; // the render threads read the index
  const rawWritten = full && opened.shard === undefined; // by the scan (sync phase); a shard build has none: its raw files come from the block spill
  // A pack build's compact address documents become recipes from hints kept as they are written (src/pack/hints.ts).
  const hints = opened.format === 'pack' && !pretty ? join(targets.stateDir, 'recipe-hints.tmp') : undefined;
  const pool = new RenderPool(index, writer, {
    pretty,
    textsBase: join(targets.stateDir, 'tx-texts.tmp'),
    duplicates: meta.duplicates.map((d) => d.txid),
    rawWritten,
    threadsAbove: hooks.renderThreadsAbove,
    shard: opened.shard,
    hintsBase: hints,
    pack,
  });
  teardown.add(() => pool.close(), 'threads');
  teardown.add(() => removeHints(pool.hintFiles));
  const ctx: StageContext = { index, writer, pool, height, pretty, cap, progress, meta, changes };

  await writeTxsAndBlocks(ctx);
  meta.offchain = writeOffChain(ctx);
  const addressed = await writeAddresses(ctx);
  meta.capped = addressed.capped;
  if (full) meta.addresses = addressed.paid; // a full build's scan does not count addresses (BlockEffects.addressesChange)
  const [names, nonUtf8Names] = isNamecoin(index.net) ? await writeNames(ctx) : [0, 0];
  const tipHash = await writeSiteFiles(ctx, targets.outDir, { hosts, nginxUpstream }, side, orphan);
  return { pool, tipHash, names, nonUtf8Names };
}
