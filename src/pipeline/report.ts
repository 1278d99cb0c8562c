import type { InvalidBlock } from '../source/block-validation.js';
import type { BlockDocumentCounts } from './block-files.js';
import type { AddressReuseCounts } from './address-document.js';

/** What a build did (the CLI prints it). */
export interface BuildReport {
  network: string;
  height: number;
  tip: string;
  /** 'incremental' when the previous snapshot was extended; otherwise why everything was built. */
  mode: 'full' | 'incremental';
  /** An incremental build that found nothing new (same height and tip): it wrote nothing and left the published tree as it was. */
  upToDate?: boolean;
  fullReason: string | undefined;
  /** Height the previous snapshot was rolled back to (a reorg), if any. */
  rolledBackTo: number | undefined;
  blocks: { main: number; side: number; orphan: number };
  txs: number;
  files: number;
  bytes: number;
  written: number;
  unchanged: number;
  deleted: number;
  names: number;
  addresses: number;
  cappedAddresses: number;
  nonUtf8Names: number;
  duplicateTxids: string[];
  /** Invalid blocks skipped (skipInvalid); each also has a warning. */
  skippedInvalid: InvalidBlock[];
  /** The height asked for when an invalid main-chain block made the snapshot stop below it. */
  requestedHeight: number | undefined;
  warnings: string[];
  stageSeconds: [string, number][];
  /** How the main-chain block documents written were made (an older block gaining spends is spliced, not rendered). */
  blockDocuments: BlockDocumentCounts;
  /** Incremental builds: address documents made from their previous version (see pipeline/address-document.ts). */
  addressReuse: AddressReuseCounts;
  /** Render threads started (0: the render stages ran on the main thread, a small build). */
  renderThreads: number;
  /** Threads that parsed, hashed and validated the scanned blocks (0: the main thread did). */
  scanThreads: number;
}
