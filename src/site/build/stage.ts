import { rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { shardKeeps } from '../../contract/shard.js';
import { resetRowsDir } from '../../publish/manifest-rows.js';
import { currentRelease, publishedDir } from '../../publish/publish.js';
import { prepareStaging } from '../../publish/staging.js';
import { SiteWriter } from '../../publish/site-writer.js';
import type { Opened } from './open-index.js';
import type { Teardown } from './teardown.js';

/** The release tree the build writes, and the writer for it. */
export interface Staged {
  writer: SiteWriter;
  /** Where the manifest rows of the files written go (merged by the seal phase). */
  rowsDir: string;
}

/**
 * The release dir this build writes into: a full build's is empty; an incremental one's is the
 * spare release (one run behind: its stale paths are handled as they are written, then linked),
 * else the published tree hard-linked. Removed at the end unless it was published.
 */
export function stagePhase({ targets: { outDir, stateDir }, full, shard, format }: Opened, teardown: Teardown): Staged {
  const rowsDir = join(stateDir, 'manifest-rows.tmp');
  const staged = prepareStaging(outDir, full);
  teardown.add(() => currentRelease(outDir) !== basename(staged.dir) && rmSync(staged.dir, { recursive: true, force: true }));
  teardown.add(() => rmSync(rowsDir, { recursive: true, force: true }));
  resetRowsDir(rowsDir);
  const writer = new SiteWriter(staged.dir, rowsDir, full ? undefined : { published: publishedDir(outDir)!, stale: staged.stale }, {
    keep: shard && shardKeeps(shard),
    listTxRaw: listsTxRaw({ format, shard }),
  });
  teardown.add(() => writer.close(), 'threads');
  return { writer, rowsDir };
}

/**
 * Whether the build lists its txs' `.bin` and `.hex` files in the manifest without writing them
 * (site-writer-worker.ts LISTED): a pack build's private tree, whose pack slices each from its
 * block's `.bin`. Not a shard's: a shard's tree may hold a tx's files without its block's.
 */
function listsTxRaw({ format, shard }: Pick<Opened, 'format' | 'shard'>): boolean {
  return format === 'pack' && shard === undefined;
}
