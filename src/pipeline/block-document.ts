import type { Tx } from '../chain/tx.js';
import { arrayElementRanges } from '../render/json-scan.js';
import { formatTxTime, type TxPlacement } from '../render/tx.js';

/**
 * A compact block document assembled from parts instead of rendered whole: the frame (header
 * fields, mrkl_tree, aux_pow, next_block: render/block.ts blockFrame) around the `tx` array,
 * whose elements are either the /tx documents rendered this run without their placement fields
 * or, for the txs of an older block whose `next_in` did not change, the bytes of the same
 * element in the block's previous document.
 */

const CLOSE = Buffer.from('}');
const COMMA = Buffer.from(',');

/**
 * The block document's element for a tx whose compact /tx document is `text`: the same object
 * without the trailing `block`, `blocknumber` and `time` (txObject adds them last), as parts.
 */
export function txElement(text: Buffer, placement: TxPlacement): Buffer[] {
  const suffix = `,"block":${JSON.stringify(placement.block)},"blocknumber":${placement.height},"time":${JSON.stringify(formatTxTime(placement.time))}}`;
  const at = text.length - suffix.length;
  if (at <= 0 || text.toString('latin1', at) !== suffix) throw new Error(`internal: the tx document at height ${placement.height} does not end with its placement`);
  return [text.subarray(0, at), CLOSE];
}

/**
 * The elements of the previous document `doc` of a block, for reuse: their [start, end) ranges,
 * or undefined when `doc` is missing or is not this block's compact document — it must start
 * with this run's frame head (the same header, tx count and size) and hold one element per tx,
 * each beginning with that tx's `"hash"`.
 */
export function previousElements(doc: Buffer | undefined, head: string, txs: readonly Tx[]): number[] | undefined {
  if (!doc || doc.length <= head.length || doc.toString('latin1', 0, head.length) !== head) return undefined;
  const ranges = arrayElementRanges(doc, head.length);
  if (!ranges || ranges.length !== txs.length * 2) return undefined;
  for (let i = 0; i < txs.length; i++) {
    const start = ranges[2 * i]!;
    const expect = `{"hash":"${txs[i]!.txid}",`;
    if (doc.toString('latin1', start, start + expect.length) !== expect) return undefined;
  }
  return ranges;
}

/** The document's parts, in order: `head`, the elements joined by commas, `tail`. */
export function blockDocumentParts(head: string, elements: readonly Buffer[][], tail: string): Buffer[] {
  const parts: Buffer[] = [Buffer.from(head, 'utf8')];
  elements.forEach((el, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(...el);
  });
  parts.push(Buffer.from(tail, 'utf8'));
  return parts;
}
