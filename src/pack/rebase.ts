/**
 * A pack written whole again (a build's REPACK_GROWTH rewrite, src/site/build/pack.ts) takes the
 * recipes of the address and block documents that did not change from the pack it replaces,
 * instead of reading and scanning those files again (9.7 GB of them on the 200k-tx real-profile
 * chain). Each range segment of such a recipe names the blob of a tx document in the old pack; a
 * tx document that did not change either is the same bytes in the new pack, so the segment is
 * moved onto its new blob. "Did not change" is the build's word (`changed`, the paths its tree
 * changed since the tree the old pack was made from), as for the records an append keeps unread.
 * Each move is checked: the new blob's stored bytes have the old one's length, encoding and
 * CRC-32 (the same document gzipped at the same level is the same bytes). A recipe with a segment
 * over any other blob, a check that fails, or sizes that do not add up to the manifest line's
 * gives no segments: the file is then read and scanned. The segments are the old recipe's: what
 * the scan of the same bytes over the same tx documents gave, so the new pack is the one a fresh
 * pack of the tree is (test/pack-build.test.ts checks the index name).
 */
import { txPath } from '../contract/layout.js';
import { Kind, type PackRecord, type RecipeSegment } from '../contract/pack-format.js';
import type { PackReader } from './reader.js';
import type { TxBlobs } from './tx-blobs.js';

/** A blob's place in the old pack as one number (parts are numbered below 2^16), or undefined past 4 GiB into a part. */
const placeKey = (part: number, offset: number): number | undefined => (offset < 2 ** 32 ? part * 2 ** 32 + offset : undefined);

export class RecipeRebase {
  /** The old blob of each unchanged tx document → its row in the new pack's TxBlobs (about 40 bytes a tx). */
  private readonly rows = new Map<number, number>();

  constructor(
    private readonly old: PackReader,
    private readonly changed: ReadonlySet<string>,
  ) {}

  /** Whether `path` is as it was when the old pack was made (its recipe may come from there). */
  unchanged(path: string): boolean {
    return !this.changed.has(path);
  }

  /** Once `txid`'s document is stored in the new pack (txs knows its blob): where it was in the old one, when it did not change. */
  async note(txid: string, txs: TxBlobs): Promise<void> {
    const path = txPath(txid, 'json');
    const row = txs.rowOf(txid);
    if (row === undefined || this.changed.has(path)) return;
    const rec = await this.old.lookup(path).catch(() => undefined); // a damaged old index: no move onto it
    const key = rec?.kind === Kind.STORED ? placeKey(rec.part, rec.offset) : undefined;
    if (key !== undefined) this.rows.set(key, row);
  }

  close(): Promise<void> {
    return this.old.close();
  }

  /** The old record of `path` and its recipe's segments; undefined for another kind, or when they cannot be read (a damaged old pack: the file is read instead). */
  private async oldRecipe(path: string): Promise<[PackRecord, RecipeSegment[]] | undefined> {
    try {
      const rec = await this.old.lookup(path);
      return rec?.kind === Kind.RECIPE ? [rec, await this.old.recipe(path, rec)] : undefined;
    } catch {
      return undefined;
    }
  }

  /** The unchanged document at `path` (`size` bytes, the manifest's) as a recipe over the new pack's tx blobs, or undefined. */
  async segments(path: string, size: number, txs: TxBlobs): Promise<RecipeSegment[] | undefined> {
    const old = await this.oldRecipe(path);
    if (old === undefined || old[0].size !== size) return undefined;
    const out: RecipeSegment[] = [];
    let total = 0;
    for (const s of old[1]) {
      if (s.type === 'literal') {
        out.push(s);
        total += s.bytes.length;
        continue;
      }
      const key = placeKey(s.blob.part, s.blob.offset);
      const row = key === undefined ? undefined : this.rows.get(key);
      if (row === undefined) return undefined;
      // The same stored bytes (length, encoding and CRC-32 of what each pack stores): the same document.
      const doc = txs.docAt(row);
      const b = doc.blob;
      if (b.stored !== s.blob.stored || b.encoding !== s.blob.encoding || b.crc !== s.blob.crc || s.start + s.length > doc.size) return undefined;
      out.push({ type: 'range', blob: doc.blob, start: s.start, length: s.length });
      total += s.length;
    }
    return total === size ? out : undefined;
  }
}
