// What a render thread runs for a height (render-worker.ts, and the main thread for small
// builds): kept apart from the stage (blocks.ts), which works with the whole StageContext.
import { crc32 } from 'node:zlib';
import type { ChainIndex } from '../index/query.js';
import { blockFrame, renderBlock } from '../render/block.js';
import { renderBlockHeight } from '../render/block-height.js';
import { renderTx } from '../render/tx.js';
import { blockHeightPath, blockPath, txPath } from '../contract/layout.js';
import type { SiteWriter } from '../publish/site-writer.js';
import { blockDocumentParts, previousElements, txElement } from './block-document.js';

/** How a main-chain block document was made (BuildReport.blockDocuments). */
export interface BlockDocumentCounts {
  /** Rendered from all the block's txs: new blocks, a full build, pretty output, fallbacks. */
  rendered: number;
  /** An older block whose txs' `next_in` changed: the changed txs rendered, the others' bytes taken from its previous document. */
  spliced: number;
  /** Such an older block whose previous document was missing or not as expected (or pretty): rendered whole. */
  fallback: number;
}

export const BLOCK_DOCUMENT_KINDS = ['rendered', 'spliced', 'fallback'] as const;
export type BlockDocumentKind = (typeof BLOCK_DOCUMENT_KINDS)[number];

/**
 * What is known of an assembled document's parts (for a pack build's recipe hints, src/pack/hints.ts):
 * the tx whose document (or its prefix without placement fields) a part is, and the previous
 * version of the document, whose bytes the parts that are views of it are.
 */
export interface PartsHint {
  txOf(part: Uint8Array): { txid: string; crc: number } | undefined;
  previous?: Uint8Array;
}

/** Where the documents of a height go: its files, and each tx's document text. */
export interface HeightSink {
  file(rel: string, data: string | Uint8Array | readonly Uint8Array[], hint?: PartsHint): void;
  /** A tx document; false: leave its files out (a duplicate txid, written by the main thread in chain order). */
  tx(txid: string, text: Buffer, txIndex: number): boolean;
  /** The published bytes of a document of the tree being updated (undefined: none). */
  previous(rel: string): Buffer | undefined;
  /** How the block document was made. */
  block(kind: BlockDocumentKind): void;
  /** False: the `.bin` and `.hex` files were written during the scan (writeRawFiles), only the documents are written here. */
  raw: boolean;
}

export type FileSink = Pick<HeightSink, 'file' | 'raw'>;

export function writerSink(writer: SiteWriter): FileSink {
  return { file: (rel, data) => writer.write(rel, typeof data === 'string' || data instanceof Uint8Array ? data : Buffer.concat(data)), raw: true };
}

export function writeBlockFiles(sink: FileSink, hash: string, json: string | Uint8Array | readonly Uint8Array[], raw: Buffer, hint?: PartsHint): void {
  sink.file(blockPath(hash, 'json'), json, hint);
  if (!sink.raw) return;
  sink.file(blockPath(hash, 'bin'), raw);
  sink.file(blockPath(hash, 'hex'), raw.toString('hex'));
}

/** A tx's document, and its `.bin` and `.hex` unless the sink leaves them out or `raw` is undefined (not changed: the tx is in a block already published). */
export function txFiles(sink: FileSink, txid: string, text: Buffer, raw: Buffer | undefined): void {
  sink.file(txPath(txid, 'json'), text);
  if (!sink.raw || raw === undefined) return;
  sink.file(txPath(txid, 'bin'), raw);
  sink.file(txPath(txid, 'hex'), raw.toString('hex'));
}

/**
 * A main-chain block's documents (its height's `block-height` document included) and its transactions' (only those in `onlyTxs` when given),
 * at snapshot height `tip`. Runs on the render threads. A compact block document is assembled
 * from the tx documents rendered here (block-document.ts); with `onlyTxs` (an older block
 * whose other txs did not change), the other txs' elements are the bytes of the block's
 * previous document, when it is this block's and holds those txs, else the block is rendered whole.
 */
export function renderHeight(index: ChainIndex, height: number, tip: number, pretty: boolean, onlyTxs: readonly number[] | undefined, sink: HeightSink): void {
  const { block, hash, time } = index.blockAt(height);
  const placement = { block: hash, height, time };
  const spenders = index.spendersInBlock(height, block.txs);
  const next = height < tip ? index.hashAt(height + 1) : undefined;
  const only = onlyTxs && new Set(onlyTxs);
  const [head, tail] = pretty ? ['', ''] : blockFrame(block, index.net, next);
  const doc = only && !pretty ? sink.previous(blockPath(hash, 'json')) : undefined;
  const previous = doc && previousElements(doc, head, block.txs);
  const elements: Buffer[][] = [];
  const prefixes = new Map<Uint8Array, string>(); // each element's tx document prefix: its txid
  block.txs.forEach((tx, ti) => {
    if (only && !only.has(ti)) {
      if (previous) elements.push([doc!.subarray(previous[2 * ti]!, previous[2 * ti + 1]!)]);
      return;
    }
    const text = Buffer.from(renderTx(tx, index.net, spenders[ti]!, placement, pretty), 'utf8');
    if (!pretty) {
      const element = txElement(text, placement);
      prefixes.set(element[0]!, tx.txid);
      elements.push(element);
    }
    // Of an older block's tx only the document changes (its raw bytes are the block's, unchanged).
    if (sink.tx(tx.txid, text, ti)) txFiles(sink, tx.txid, text, only ? undefined : tx.raw);
  });
  const kind: BlockDocumentKind = !only ? 'rendered' : previous ? 'spliced' : 'fallback';
  sink.block(kind);
  if (pretty || (only && !previous)) writeBlockFiles(sink, hash, renderBlock(block, index.net, spenders, next, pretty), block.raw);
  else {
    const txOf = (part: Uint8Array) => {
      const txid = prefixes.get(part);
      return txid === undefined ? undefined : { txid, crc: crc32(part) };
    };
    writeBlockFiles(sink, hash, blockDocumentParts(head, elements, tail), block.raw, { txOf, previous: previous && doc });
  }
  // A block new at this height (every height of a full build): the height's document changes with it.
  if (!only) sink.file(blockHeightPath(height), renderBlockHeight(height, hash, pretty));
}
