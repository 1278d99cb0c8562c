import { fromDisplayHex } from '../chain/hash.js';
import { parseBlock } from '../chain/block.js';
import { renderBlock } from '../render/block.js';
import { renderTx } from '../render/tx.js';
import { blockPath, txPath } from '../contract/layout.js';
import type { SiteWriter } from '../publish/writer.js';
import type { StageContext } from './context.js';

function deleteBlockFiles(writer: SiteWriter, hash: string): void {
  for (const ext of ['json', 'bin', 'hex'] as const) writer.delete(blockPath(hash, ext));
}

function writeBlockFiles(writer: SiteWriter, hash: string, json: string, raw: Buffer): void {
  writer.write(blockPath(hash, 'json'), json);
  writer.write(blockPath(hash, 'bin'), raw);
  writer.write(blockPath(hash, 'hex'), raw.toString('hex'));
}

/** A main-chain block and its transactions (only those in `onlyTxs` when given); returns the block's tx count. */
function writeHeight(ctx: StageContext, height: number, onlyTxs?: ReadonlySet<number>): number {
  const { index, writer, pretty } = ctx;
  const { block, hash, time } = index.blockAt(height);
  const placement = { block: hash, height, time };
  const spenders = index.spendersInBlock(height, block.txs);
  block.txs.forEach((tx, ti) => {
    if (onlyTxs && !onlyTxs.has(ti)) return;
    const text = renderTx(tx, index.net, spenders[ti]!, placement, pretty);
    ctx.texts.put(tx.txid, text);
    writer.write(txPath(tx.txid, 'json'), text);
    writer.write(txPath(tx.txid, 'bin'), tx.raw);
    writer.write(txPath(tx.txid, 'hex'), tx.raw.toString('hex'));
  });
  const next = height < ctx.height ? index.hashAt(height + 1) : undefined;
  writeBlockFiles(writer, hash, renderBlock(block, index.net, spenders, next, pretty), block.raw);
  return block.txs.length;
}

/**
 * Renders the main-chain blocks and their transactions: all of them in a full build; the new
 * and touched ones in an incremental build (a block document embeds every tx of its block, so
 * a touched block costs its whole tx count), deleting the documents of txs rolled back.
 */
export async function writeTxsAndBlocks(ctx: StageContext): Promise<void> {
  const { index, changes } = ctx;
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
  let done = 0;
  for (const h of heights) {
    done += writeHeight(ctx, h, changes?.touched.get(h));
    ctx.progress.update(done, txs, 'txs');
    await ctx.writer.backpressure();
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
  for (const { hash, rec } of index.offChainBlocks()) {
    const block = parseBlock(rec.raw, { auxpow: index.net.auxpow });
    const spenders = block.txs.map((tx) => index.spendersOf(tx.hash, tx.outputs.length));
    writeBlockFiles(writer, hash, renderBlock(block, index.net, spenders, undefined, pretty), block.raw);
    current.push(hash);
  }
  const now = new Set(current);
  const gone = new Set([...ctx.meta.offchain, ...(changes?.removedBlocks ?? [])]);
  for (const hash of gone) if (!now.has(hash) && !changes?.appliedBlocks.has(hash)) deleteBlockFiles(writer, hash);
  return current;
}
