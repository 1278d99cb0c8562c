import { renderAddressCapped } from '../render/address.js';
import { addressPath } from '../contract/layout.js';
import type { StageContext } from './context.js';

/** Addresses per render task, and the outputs after which a task is closed early. */
const TASK_ADDRESSES = 256;
const TASK_OUTPUTS = 4096;

/**
 * Writes (or deletes) address documents; returns the sorted list of capped addresses and how
 * many addresses have outputs among those it went through (in a full build, every address: the
 * index's address count, which a full build's scan does not keep). The documents are rendered
 * and written on the render threads (render-pool.ts); deletions and capped answers go through
 * the writer.
 */
export async function writeAddresses(ctx: StageContext): Promise<{ capped: string[]; paid: number }> {
  const { index, writer, changes } = ctx;
  ctx.progress.begin('addresses');
  const capped = new Set(changes ? ctx.meta.capped : []);
  // Full: every address with its outputs, in one pass over the index; incremental: the changed ones.
  const addresses: Iterable<[string, number]> = changes ? [...changes.addresses].sort().map((a): [string, number] => [a, index.addressOutputCount(a)]) : index.addressesWithOutputs();
  // Incremental: the documents reuse the bytes of their previous version for the txs that did not change.
  if (changes) {
    const touched = [...changes.touched].map(([h, txs]): [number, number[]] => [h, [...txs]]);
    ctx.pool.changedTxs = { heights: [...changes.heights], touched, duplicates: ctx.meta.duplicates.map((d) => d.txid) };
  }
  // Progress in outputs: an address document costs about its outputs.
  let total = 0;
  if (changes) for (const [, count] of addresses) total += count;
  else total = index.addressOutputsTotal();
  ctx.pool.plan(total);
  let done = 0;
  const progress = (outputs: number) => ctx.progress.update((done += outputs), total, 'outputs');
  let paid = 0;
  let task: string[] = [];
  let taskWork = 0;
  let taskOutputs = 0;
  const submit = async () => {
    const outputs = taskOutputs;
    await ctx.pool.submit({ kind: 'addresses', addresses: task }, () => progress(outputs));
    task = [];
    taskWork = 0;
    taskOutputs = 0;
  };
  for (const [address, count] of addresses) {
    capped.delete(address);
    if (count > 0) paid++;
    // A shard build counts every address (stats.json, the capped list) but renders only its own.
    if (!writer.keeps(addressPath(address))) {
      if (ctx.cap > 0 && count > ctx.cap) capped.add(address);
      progress(count);
      continue;
    }
    if (count === 0) writer.delete(addressPath(address));
    else if (ctx.cap > 0 && count > ctx.cap) {
      capped.add(address);
      writer.write(addressPath(address), renderAddressCapped(count, ctx.pretty));
    } else {
      task.push(address);
      taskWork += count + 1; // +1: the address itself
      taskOutputs += count;
      if (task.length >= TASK_ADDRESSES || taskWork >= TASK_OUTPUTS) await submit();
      continue;
    }
    progress(count);
    await writer.backpressure();
  }
  if (task.length > 0) await submit();
  await ctx.pool.drain();
  return { capped: [...capped].sort(), paid };
}
