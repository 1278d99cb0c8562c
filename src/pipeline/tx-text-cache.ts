import { crc32 } from 'node:zlib';
import { fromDisplayHex } from '../chain/hash.js';
import type { ChainIndex } from '../index/query.js';
import { renderTx } from '../render/tx.js';
import { TwoGenerationCache } from '../chain/two-gen-cache.js';
import type { EmbeddedTx } from '../pack/hints.js';
import type { TxTextReader } from './tx-text-store.js';

/**
 * The /tx documents' bytes for the address documents that embed them (a transaction usually
 * appears in several: its payer's and its payees'), in a render thread: from its cache, else
 * from the texts the txs stage stored (tx-text-store.ts), else rendered again from the block
 * spill through the index — the same bytes as its /tx file, since the index is final when the
 * stages run — so no file written by this run is read back and no flush is needed before the
 * address stage. Memory bound: `maxBytes` of JSON (40 MiB by default) in two generations (the
 * least recently used go first): large enough that the address stage rarely misses, small
 * enough to keep a build's peak memory near 1 GiB (docs/benchmarks.md).
 */
export class TxTexts {
  private readonly texts: TwoGenerationCache<string, Buffer>;
  /** With `marked` (a pack build's hints), the txid of each text get() returned (and, once asked, its CRC-32), by the very buffer. */
  private readonly ids: WeakMap<Uint8Array, { txid: string; crc?: number }> | undefined;

  constructor(
    private readonly index: ChainIndex,
    private readonly pretty: boolean,
    private readonly stored: TxTextReader | undefined,
    marked = false,
    maxBytes = 40 << 20,
  ) {
    this.texts = new TwoGenerationCache(maxBytes / 2, (text) => text.length);
    this.ids = marked ? new WeakMap() : undefined;
  }

  get(txid: string): Buffer {
    const cached = this.texts.get(txid);
    if (cached) return cached;
    let text = this.stored?.find(txid);
    if (text === undefined) {
      const hash = fromDisplayHex(txid);
      const found = this.index.findTx(hash);
      if (!found) throw new Error(`index: transaction ${txid} is not in the main chain`);
      const placement = { block: found.block.hash, height: found.loc.height, time: found.block.time };
      text = Buffer.from(renderTx(found.tx, this.index.net, this.index.spendersOf(hash, found.tx.outputs.length), placement, this.pretty));
    }
    this.texts.set(txid, text);
    this.ids?.set(text, { txid });
    return text;
  }

  /** The tx whose document `part` is, when it is a buffer get() returned (and texts are `marked`): for the pack's recipe hints (src/pack/hints.ts). */
  txOf(part: Uint8Array): EmbeddedTx | undefined {
    const id = this.ids?.get(part);
    if (id) id.crc ??= crc32(part);
    return id as EmbeddedTx | undefined;
  }
}
