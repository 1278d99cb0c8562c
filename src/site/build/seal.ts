import { join } from 'node:path';
import { MANIFEST_PATH } from '../../contract/layout.js';
import { writeManifest, type ManifestSummary } from '../../publish/manifest.js';
import { publishedDir } from '../../publish/publish.js';
import { refreshTree } from '../../publish/staging.js';
import type { Opened } from './open-index.js';
import type { Rendered } from './render.js';
import type { Staged } from './stage.js';
import type { Synced } from './sync.js';

/** The tree complete with its manifest, ready to publish. */
export interface Sealed {
  /** The release dir holding it. */
  root: string;
  /** The snapshot it is: height and tip hash. */
  height: number;
  tipHash: string;
  manifest: ManifestSummary;
  /** The paths this run changed (incremental builds; undefined: a full build). */
  changed: ReadonlySet<string> | undefined;
  /** A pack build: the recipe hints of the address documents this run wrote (src/pack/hints.ts), for its pack phase. */
  recipeHints: string[];
}

/**
 * Documents → sealed tree: the writers' last rows out; an incremental build's spare gets its
 * stale paths linked to the published files; then the manifest (the threads' sorted runs of
 * rows merged, with the published one if incremental).
 */
export async function sealPhase({ targets, full, progress }: Opened, { height }: Synced, { writer, rowsDir }: Staged, { pool, tipHash }: Rendered): Promise<Sealed> {
  await pool.seal();
  await writer.seal();
  if (!full) {
    // The spare's older copies that no document of this run went to: linked to the published files.
    progress.begin('links');
    const left = writer.staleLeft();
    refreshTree(writer.update!.published, writer.root, left, (done) => progress.update(done, left.length, 'files'));
  }
  progress.begin('manifest');
  const changed = full ? undefined : writer.changed;
  const previous = changed && join(publishedDir(targets.outDir)!, MANIFEST_PATH);
  const manifest = writeManifest(rowsDir, previous, join(writer.root, MANIFEST_PATH), pool.sealedRows + writer.sealedRows, (done, total) => progress.update(done, total, 'files'));
  progress.end();
  return { root: writer.root, height, tipHash, manifest, changed, recipeHints: pool.hintFiles };
}
