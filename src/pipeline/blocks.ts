import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fromDisplayHex } from '../chain/hash.js';
import { parseBlock, type Block } from '../chain/block.js';
import { renderBlock } from '../render/block.js';
import { renderBlockHeight } from '../render/block-height.js';
import { renderTx } from '../render/tx.js';
import { blockHeightPath, blockPath, txPath } from '../contract/layout.js';
import type { SiteWriter } from '../publish/site-writer.js';
import type { StageContext } from './context.js';
import { txFiles, writeBlockFiles, writerSink } from './block-files.js';

function deleteBlockFiles(writer: SiteWriter, hash: string): void {
  for (const ext of ['json', 'bin', 'hex'] as const) writer.delete(blockPath(hash, ext));
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
    txFiles(writerSink(ctx.writer), tx.txid, text, changes && !changes.heights.has(h) ? undefined : tx.raw);
  }
  // A lower snapshot height: the heights above it have no block any more (reorged heights below were rendered again).
  for (let h = ctx.height + 1; changes && h <= changes.fromHeight; h++) ctx.writer.delete(blockHeightPath(h));
  // A published tree made before height documents existed gets them all (the new heights were rendered above).
  const published = ctx.writer.update?.published;
  if (changes && published !== undefined && !existsSync(join(published, blockHeightPath(0)))) {
    for (let h = 0; h <= ctx.height; h++) if (!changes.heights.has(h)) ctx.writer.write(blockHeightPath(h), renderBlockHeight(h, index.hashAt(h)!, ctx.pretty));
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
