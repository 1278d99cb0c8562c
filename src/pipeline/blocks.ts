import { fromDisplayHex } from '../chain/hash.js';
import { parseBlock, type Block } from '../chain/block.js';
import type { ChainIndex } from '../index/query.js';
import { blockFrame, renderBlock } from '../render/block.js';
import { renderTx } from '../render/tx.js';
import { blockPath, txPath } from '../contract/layout.js';
import type { SiteWriter } from '../publish/writer.js';
import type { StageContext } from './context.js';
import { assembleBlockDocument, previousElements, txElement } from './block-document.js';

function deleteBlockFiles(writer: SiteWriter, hash: string): void {
  for (const ext of ['json', 'bin', 'hex'] as const) writer.delete(blockPath(hash, ext));
}

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

/** Where the documents of a height go: its files, and each tx's document text. */
export interface HeightSink {
  file(rel: string, data: string | Uint8Array): void;
  /** A tx document; false: leave its files out (a duplicate txid, written by the main thread in chain order). */
  tx(txid: string, text: Buffer, txIndex: number): boolean;
  /** The published bytes of a document of the tree being updated (undefined: none). */
  previous(rel: string): Buffer | undefined;
  /** How the block document was made. */
  block(kind: BlockDocumentKind): void;
  /** False: the `.bin` and `.hex` files were written during the scan (writeRawFiles), only the documents are written here. */
  raw: boolean;
}

type FileSink = Pick<HeightSink, 'file' | 'raw'>;

function writerSink(writer: SiteWriter): FileSink {
  return { file: (rel, data) => writer.write(rel, data), raw: true };
}

function writeBlockFiles(sink: FileSink, hash: string, json: string | Uint8Array, raw: Buffer): void {
  sink.file(blockPath(hash, 'json'), json);
  if (!sink.raw) return;
  sink.file(blockPath(hash, 'bin'), raw);
  sink.file(blockPath(hash, 'hex'), raw.toString('hex'));
}

function txFiles(sink: FileSink, txid: string, text: Buffer, raw: Buffer): void {
  sink.file(txPath(txid, 'json'), text);
  if (!sink.raw) return;
  sink.file(txPath(txid, 'bin'), raw);
  sink.file(txPath(txid, 'hex'), raw.toString('hex'));
}

/**
 * The `.bin` and `.hex` files of a main-chain block and its txs, from its raw bytes: a full
 * build writes them during the scan, on the writer threads (idle then; they also encode the
 * hex and keep the manifest rows), so the render threads write only the documents.
 */
export async function writeRawFiles(writer: SiteWriter, block: Block, hash: string): Promise<void> {
  writer.write(blockPath(hash, 'bin'), block.raw);
  writer.writeHex(blockPath(hash, 'hex'), block.raw);
  for (const tx of block.txs) {
    writer.write(txPath(tx.txid, 'bin'), tx.raw);
    writer.writeHex(txPath(tx.txid, 'hex'), tx.raw);
  }
  await writer.backpressure();
}

/**
 * A main-chain block's documents and its transactions' (only those in `onlyTxs` when given),
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
  block.txs.forEach((tx, ti) => {
    if (only && !only.has(ti)) {
      if (previous) elements.push([doc!.subarray(previous[2 * ti]!, previous[2 * ti + 1]!)]);
      return;
    }
    const text = Buffer.from(renderTx(tx, index.net, spenders[ti]!, placement, pretty), 'utf8');
    if (!pretty) elements.push(txElement(text, placement));
    if (sink.tx(tx.txid, text, ti)) txFiles(sink, tx.txid, text, tx.raw);
  });
  const kind: BlockDocumentKind = !only ? 'rendered' : previous ? 'spliced' : 'fallback';
  sink.block(kind);
  const whole = pretty || (only && !previous);
  writeBlockFiles(sink, hash, whole ? renderBlock(block, index.net, spenders, next, pretty) : assembleBlockDocument(head, elements, tail), block.raw);
}

/** Heights per render task, and the txs after which a task is closed early. */
const TASK_HEIGHTS = 64;
const TASK_TXS = 2048;

/**
 * Renders the main-chain blocks and their transactions on the render threads: all of them in a
 * full build; the new and touched ones in an incremental build (of a touched block only the
 * txs whose `next_in` changed are rendered, the rest of its document is spliced: renderHeight;
 * progress still counts its whole tx count), deleting the documents of txs rolled back. The files of a txid that occurs twice in the chain (meta.duplicates) are
 * written here, in chain order, so the later one wins as before.
 */
export async function writeTxsAndBlocks(ctx: StageContext): Promise<void> {
  const { index, changes, pool } = ctx;
  let heights: number[];
  let txs: number;
  if (changes) {
    heights = [...new Set([...changes.heights, ...changes.touched.keys()])].filter((h) => h <= ctx.height).sort((a, b) => a - b);
    txs = heights.reduce((n, h) => n + index.heightRecord(h)!.delta.txs, 0);
  } else {
    heights = Array.from({ length: ctx.height + 1 }, (_, h) => h);
    txs = ctx.meta.totals.txs;
  }
  ctx.progress.begin('txs and blocks');
  pool.plan(txs);
  let done = 0;
  const submit = (task: number[], only: (number[] | null)[], work: number) =>
    pool.submit({ kind: 'heights', heights: task, only, tip: ctx.height }, () => ctx.progress.update((done += work), txs, 'txs'));
  let task: number[] = [];
  let only: (number[] | null)[] = [];
  let taskTxs = 0;
  for (const h of heights) {
    const touched = changes?.touched.get(h);
    task.push(h);
    only.push(touched && !changes!.heights.has(h) ? [...touched] : null);
    taskTxs += index.heightRecord(h)!.delta.txs;
    if (task.length >= TASK_HEIGHTS || taskTxs >= TASK_TXS) {
      await submit(task, only, taskTxs);
      task = [];
      only = [];
      taskTxs = 0;
    }
  }
  if (task.length > 0) await submit(task, only, taskTxs);
  await pool.drain();
  // Duplicate txids, in chain order: their files, and the first one's text for the addresses.
  for (const [h, ti] of pool.takeSkipped()) {
    const { block, hash, time } = index.blockAt(h);
    const tx = block.txs[ti]!;
    const text = Buffer.from(renderTx(tx, index.net, index.spendersOf(tx.hash, tx.outputs.length), { block: hash, height: h, time }, ctx.pretty), 'utf8');
    pool.texts.add(tx.txid, text);
    txFiles(writerSink(ctx.writer), tx.txid, text, tx.raw);
  }
  for (const txid of changes?.removedTxs ?? []) {
    if (index.txLocation(fromDisplayHex(txid))) continue;
    for (const ext of ['json', 'bin', 'hex'] as const) ctx.writer.delete(txPath(txid, ext));
  }
}

/** Side and orphan blocks: rendered every run (there are few); the ones gone since last time are deleted. Returns their hashes. */
export function writeOffChain(ctx: StageContext): string[] {
  const { index, writer, pretty, changes } = ctx;
  const current: string[] = [];
  const sink = writerSink(writer);
  for (const { hash, rec } of index.offChainBlocks()) {
    const block = parseBlock(rec.raw, { auxpow: index.net.auxpow });
    const spenders = block.txs.map((tx) => index.spendersOf(tx.hash, tx.outputs.length));
    writeBlockFiles(sink, hash, renderBlock(block, index.net, spenders, undefined, pretty), block.raw);
    current.push(hash);
  }
  const now = new Set(current);
  const gone = new Set([...ctx.meta.offchain, ...(changes?.removedBlocks ?? [])]);
  for (const hash of gone) if (!now.has(hash) && !changes?.appliedBlocks.has(hash)) deleteBlockFiles(writer, hash);
  return current;
}
