import type { BuildReport } from '../../pipeline/report.js';
import type { Opened } from './open-index.js';
import type { Rendered } from './render.js';
import type { Sealed } from './seal.js';
import type { Staged } from './stage.js';
import type { Synced } from './sync.js';

/** What the phases did, for the CLI to print. */
export function buildReport({ opened, synced, staged, rendered, sealed }: { opened: Opened; synced: Synced; staged: Staged; rendered: Rendered; sealed: Sealed }): BuildReport {
  const { source, meta, asked, progress } = opened;
  const { height, side, orphan } = synced;
  const { pool } = rendered;
  return {
    network: source.network.name,
    height,
    tip: sealed.tipHash,
    mode: opened.full ? 'full' : 'incremental',
    fullReason: opened.fullReason,
    rolledBackTo: synced.rolledBackTo,
    blocks: { main: height + 1, side, orphan },
    txs: meta.totals.txs,
    files: sealed.manifest.files,
    bytes: sealed.manifest.bytes,
    ...staged.writer.counts,
    names: rendered.names,
    addresses: meta.addresses,
    cappedAddresses: meta.capped.length,
    nonUtf8Names: rendered.nonUtf8Names,
    duplicateTxids: meta.duplicates.map((d) => d.txid),
    skippedInvalid: [...source.skipped],
    requestedHeight: height !== asked.requested ? asked.requested : undefined,
    warnings: [...source.warnings],
    stageSeconds: progress.stageTimes,
    renderThreads: pool.threadCount,
    scanThreads: source.scanThreads,
    blockDocuments: pool.blockDocuments,
    addressReuse: pool.addressReuse,
  };
}
