/**
 * What packFromTree (from-tree.ts) looks up in the pack it appends to: an unchanged answer to
 * keep, the blobs of the tx documents it keeps unread, the placement fields a block document
 * leaves out, and a recipe's previous segments.
 */
import { sha256 } from '../chain/hash.js';
import { blobOf, Encoding, Kind, type RecipeSegment } from '../contract/pack-format.js';
import type { PackRecord } from '../contract/pack-index.js';
import { headTxids, placementPrefix } from './embedded.js';
import { answerBytes, type PackReader } from './reader.js';
import { CRC_UNKNOWN, PREFIX_UNKNOWN, type TxBlobs } from './tx-blobs.js';

/** `path`'s record in `base` when its answer is `bytes` (read and compared; a changed size costs no read). */
export async function sameAnswer(base: PackReader, path: string, bytes: Uint8Array): Promise<PackRecord | undefined> {
  const old = await base.lookup(path);
  if (!old || old.size !== bytes.length) return undefined;
  const answer = await base.get(path);
  return answer && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).equals(await answerBytes(answer)) ? old : undefined;
}

/** `path`'s record in `base` when its answer is `size` bytes of sha256 `sha` (hex). */
export async function answerWithSha(base: PackReader, path: string, size: number, sha: string): Promise<PackRecord | undefined> {
  const old = await base.lookup(path);
  const answer = old && old.size === size ? await base.get(path) : undefined;
  const bytes = answer && (await answerBytes(answer));
  return old && bytes && sha256(bytes).toString('hex') === sha ? old : undefined;
}

/**
 * A block document embeds its txs' documents without their placement fields, which are the
 * same for every tx of the block: for the documents kept unread from `base`, they are learnt by
 * reading the last such document from it (not a coinbase, whose txid may repeat one of another
 * block, BIP 30, and whose document is then placed there).
 */
export async function placementOf(base: PackReader, txs: TxBlobs, doc: Buffer): Promise<Buffer | undefined> {
  const txid = headTxids(doc).findLast((id) => txs.doc(id)?.prefix === PREFIX_UNKNOWN);
  const answer = txid && (await base.get(`tx/${txid}.json`));
  if (!answer) return undefined;
  const bytes = Buffer.from(await answerBytes(answer));
  const prefix = placementPrefix(bytes);
  return prefix ? bytes.subarray(prefix) : undefined;
}

/**
 * The blobs of the pending tx documents among `txids` (TxBlobs.setPending), from `base`'s index:
 * a record of the size the manifest line gave is taken (the CRC-32 of its bytes: an identity
 * blob's own, a gzip one's from its trailer, else only the line's sha256 checks spans);
 * otherwise no recipe names that document.
 */
export async function resolveDocs(base: PackReader, txs: TxBlobs, txids: readonly string[]): Promise<void> {
  for (const txid of txids) {
    const p = txs.pending(txid);
    if (!p) continue;
    const old = await base.lookup(`tx/${txid}.json`);
    if (!old || old.kind !== Kind.STORED || old.size !== p.size) {
      txs.forget(txid);
      continue;
    }
    const crc = old.encoding === Encoding.IDENTITY ? old.crc : ((await base.gzipCrc(old, old.size)) ?? CRC_UNKNOWN);
    txs.setDoc(txid, { blob: blobOf(old), size: old.size, sha: p.sha, crc, prefix: PREFIX_UNKNOWN, prefixCrc: 0, early: false });
  }
}

/** The segments of `path`'s answer in `base` when it is a recipe of `size` bytes (which a hint's bytes of the previous version are clipped from). */
export async function previousRecipe(base: PackReader, path: string, size: number): Promise<RecipeSegment[] | undefined> {
  const old = await base.lookup(path);
  return old?.kind === Kind.RECIPE && old.size === size ? base.recipe(path, old).catch(() => undefined) : undefined;
}
