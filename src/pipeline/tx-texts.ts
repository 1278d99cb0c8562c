import { fromDisplayHex } from '../chain/hash.js';
import type { ChainIndex } from '../index/query.js';
import { renderTx } from '../render/tx.js';
import { TwoGenerationCache } from '../chain/two-gen-cache.js';

/**
 * The /tx documents this run rendered, for the address documents that embed them (a
 * transaction usually appears in several: its payer's and its payees'). Memory bound: at
 * most `maxChars` characters of JSON (64 Mi by default, one byte each for these ASCII
 * strings) plus the maps' entries, in two generations (the least recently used go first). A miss renders the
 * transaction again from the block spill through the index — the same bytes as its /tx
 * file, since the index is final when the stages run — so no file written by this run is
 * read back and no flush is needed before the address stage.
 */
export class TxTexts {
  private readonly texts: TwoGenerationCache<string, string>;

  constructor(
    private readonly index: ChainIndex,
    private readonly pretty: boolean,
    maxChars = 64 << 20,
  ) {
    this.texts = new TwoGenerationCache(maxChars / 2, (text) => text.length);
  }

  put(txid: string, text: string): void {
    this.texts.set(txid, text);
  }

  get(txid: string): string {
    const hit = this.texts.get(txid);
    if (hit !== undefined) return hit;
    const hash = fromDisplayHex(txid);
    const found = this.index.findTx(hash);
    if (!found) throw new Error(`index: transaction ${txid} is not in the main chain`);
    const placement = { block: found.block.hash, height: found.loc.height, time: found.block.time };
    const text = renderTx(found.tx, this.index.net, this.index.spendersOf(hash, found.tx.outputs.length), placement, this.pretty);
    this.put(txid, text);
    return text;
  }
}
