import { renderAddressCapped } from '../render/address.js';
import { addressPath } from '../contract/layout.js';
import type { StageContext } from './context.js';

/** Addresses per render task, and the outputs after which a task is closed early. */
const TASK_ADDRESSES = 256;
const TASK_OUTPUTS = 4096;

/**
 * Writes (or deletes) address documents; returns the sorted list of capped addresses. The
 * documents are rendered and written on the render threads (render-pool.ts); deletions and
 * capped answers go through the writer.
 */
export async function writeAddresses(ctx: StageContext): Promise<string[]> {
  const { index, writer, changes } = ctx;
  ctx.progress.begin('addresses');
  const capped = new Set(changes ? ctx.meta.capped : []);
  const addresses: Iterable<string> = changes ? [...changes.addresses].sort() : index.addresses();
  // Incremental: the documents reuse the bytes of their previous version for the txs that did not change.
  if (changes) {
    const touched = [...changes.touched].map(([h, txs]): [number, number[]] => [h, [...txs]]);
    ctx.pool.changedTxs = { heights: [...changes.heights], touched, duplicates: ctx.meta.duplicates.map((d) => d.txid) };
  }
  // Work: an address document costs about its outputs (+1 for the address itself).
  let total = 0;
  if (changes) for (const a of changes.addresses) total += index.addressOutputCount(a) + 1;
  else total = index.addressOutputsTotal() + index.addressCount();
  ctx.pool.plan(total);
  let done = 0;
  const progress = (work: number) => ctx.progress.update((done += work), total, 'outputs');
  let task: string[] = [];
  let taskWork = 0;
  for (const address of addresses) {
    const count = index.addressOutputCount(address);
    capped.delete(address);
    if (count === 0) writer.delete(addressPath(address));
    else if (ctx.cap > 0 && count > ctx.cap) {
      capped.add(address);
      writer.write(addressPath(address), renderAddressCapped(count, ctx.pretty));
    } else {
      task.push(address);
      taskWork += count + 1;
      if (task.length >= TASK_ADDRESSES || taskWork >= TASK_OUTPUTS) {
        const work = taskWork;
        await ctx.pool.submit({ kind: 'addresses', addresses: task }, () => progress(work));
        task = [];
        taskWork = 0;
      }
      continue;
    }
    progress(count + 1);
    await writer.backpressure();
  }
  if (task.length > 0) await ctx.pool.submit({ kind: 'addresses', addresses: task }, () => progress(taskWork));
  await ctx.pool.drain();
  return [...capped].sort();
}
