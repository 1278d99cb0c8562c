import { decodeAddress } from '../chain/address.js';
import { renderAddress, renderAddressCapped } from '../render/address.js';
import type { JsonValue } from '../render/json.js';
import { addressPath } from '../contract/layout.js';
import type { StageContext } from './context.js';

/** One address document, assembled from the index's outputs of the address and the rendered /tx documents. */
function addressDocument(ctx: StageContext, address: string): string {
  const decoded = decodeAddress(address, ctx.index.net);
  if (!decoded) throw new Error(`internal: output address ${address} does not decode on ${ctx.index.net.name}`);
  const texts = new Map<string, string>();
  const txText = (txid: string) => {
    let t = texts.get(txid);
    if (t === undefined) texts.set(txid, (t = ctx.texts.get(txid)));
    return t;
  };
  const receivers = new Set<string>();
  const spenders = new Set<string>();
  let coinIn = 0n;
  let coinOut = 0n;
  const unspent: JsonValue[] = [];
  for (const out of ctx.index.addressOutputs(address)) {
    txText(out.txid);
    receivers.add(out.txid);
    coinIn += out.value;
    if (out.spender) {
      spenders.add(out.spender.hash);
      coinOut += out.value;
      txText(out.spender.hash);
    } else {
      const o = (JSON.parse(txText(out.txid)) as { out: Record<string, JsonValue>[] }).out[out.vout]!;
      unspent.push({ tx: { hash: out.txid, n: out.vout }, ...o });
    }
  }
  return renderAddress(
    { address, hash160: decoded.hash160, txInCount: receivers.size, txOutCount: spenders.size, coinIn, coinOut, unspent, transactions: texts },
    ctx.pretty,
  );
}

/** Writes (or deletes) address documents; returns the sorted list of capped addresses. */
export async function writeAddresses(ctx: StageContext): Promise<string[]> {
  const { index, writer, changes } = ctx;
  ctx.progress.begin('addresses');
  const capped = new Set(changes ? ctx.meta.capped : []);
  const addresses: Iterable<string> = changes ? [...changes.addresses].sort() : index.addresses();
  // Work: an address document costs about its outputs (+1 for the address itself).
  let total = 0;
  if (changes) for (const a of changes.addresses) total += index.addressOutputCount(a) + 1;
  else total = index.addressOutputsTotal() + index.addressCount();
  let done = 0;
  let n = 0;
  for (const address of addresses) {
    const count = index.addressOutputCount(address);
    capped.delete(address);
    if (count === 0) writer.delete(addressPath(address));
    else if (ctx.cap > 0 && count > ctx.cap) {
      capped.add(address);
      writer.write(addressPath(address), renderAddressCapped(count, ctx.pretty));
    } else writer.write(addressPath(address), addressDocument(ctx, address));
    done += count + 1;
    ctx.progress.update(done, total, 'outputs');
    if (++n % 64 === 0) await writer.backpressure();
  }
  return [...capped].sort();
}
