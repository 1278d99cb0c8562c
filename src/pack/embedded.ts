/**
 * Finds the tx documents a compact document embeds verbatim (render/address.ts puts each whole
 * /tx document in an address document's `transactions`; render/block.ts and
 * pipeline/block-document.ts put it in a block document's `tx` without its placement fields) and
 * turns the document into recipe segments: literal bytes, and ranges of the tx documents' blobs.
 *
 * Every compact tx document starts with `{"hash":"<txid>","ver":`: each such head is a candidate,
 * taken only when the bytes from it are exactly the tx document (or its prefix followed by `}`),
 * checked by length and CRC-32 against what was recorded when the tx document was packed (by
 * sha256 for a document kept from a previous pack whose CRC-32 is not known). A pretty document
 * holds no compact tx document and gives no segments.
 */
import { createHash, hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { RecipeSegment } from '../contract/pack-format.js';
import { CRC_UNKNOWN, PREFIX_UNKNOWN, shaKey, type TxBlobs, type TxDocBlob } from './tx-blobs.js';

const HEAD = Buffer.from('{"hash":"');
const AFTER_TXID = Buffer.from('","ver":');
const TXID_HEX = 64;
const CLOSE = 0x7d;
/** A range segment costs about 20 bytes of recipe: shorter matches stay literal. */
export const MIN_REFERENCE = 64;

/** The first 48 bits of the sha256 of `b` followed by `more` (as TxBlobs keeps them). */
export function sha48(b: Uint8Array, more?: Uint8Array): number {
  // The one-shot hash() when it can: it skips a Hash object a call (millions of calls a pack).
  const digest = more ? createHash('sha256').update(b).update(more).digest() : hash('sha256', b, 'buffer');
  return digest.readUIntBE(0, 6);
}

/** What a block document's element for a tx ends before: its placement fields (txObject adds them last). */
const PLACEMENT = Buffer.from(',"block":"');

/** The length of a compact tx document without its placement fields, or 0 when it has none. */
export function placementPrefix(doc: Buffer): number {
  const at = doc.lastIndexOf(PLACEMENT);
  return at > 0 && doc[doc.length - 1] === CLOSE ? at : 0;
}

/** What identifies a tx document's bytes (`sha`: their sha256, hex), for recipes over it. */
export function docMarks(bytes: Buffer, sha: string): Pick<TxDocBlob, 'size' | 'sha' | 'crc' | 'prefix' | 'prefixCrc'> {
  const prefix = placementPrefix(bytes);
  return { size: bytes.length, sha: shaKey(sha), crc: crc32(bytes), prefix, prefixCrc: prefix ? crc32(bytes.subarray(0, prefix)) : 0 };
}

/** The txid of the compact tx document head at `p` (`{"hash":"<txid>","ver":`), or undefined. */
function headTxid(doc: Buffer, p: number): string | undefined {
  const afterTxid = p + HEAD.length + TXID_HEX;
  if (afterTxid + AFTER_TXID.length > doc.length || doc.compare(AFTER_TXID, 0, AFTER_TXID.length, afterTxid, afterTxid + AFTER_TXID.length) !== 0) return undefined;
  return doc.toString('latin1', p + HEAD.length, afterTxid);
}

/**
 * Whether `span` followed by `more` is tx document `t`'s bytes (their length is the caller's
 * check): by CRC-32, a third of sha256's cost on these spans, which is where most of a pack's
 * second pass went; by the first 48 bits of the sha256 where the CRC-32 is not known.
 */
function isDoc(t: TxDocBlob, span: Uint8Array, more?: Uint8Array): boolean {
  if (t.crc === CRC_UNKNOWN) return sha48(span, more) === t.sha;
  const c = crc32(span);
  return (more ? crc32(more, c) : c) === t.crc;
}

/** The txids of the compact tx document heads in `doc`, in order (each a candidate for embeddedTxSegments). */
export function headTxids(doc: Buffer): string[] {
  const out: string[] = [];
  for (let p = doc.indexOf(HEAD); p >= 0; p = doc.indexOf(HEAD, p + 1)) {
    const txid = headTxid(doc, p);
    if (txid) out.push(txid);
  }
  return out;
}

/**
 * The segments of `doc` with each embedded tx document as a range of its blob; undefined when
 * none is found. Adjacent literal bytes are one segment. `placement`, for a block document: the
 * placement fields its txs' documents end with (the same for every tx of a block), which tells
 * the embedded length of a document whose prefix is PREFIX_UNKNOWN, checked by the embedded bytes
 * followed by them being the document.
 */
export function embeddedTxSegments(doc: Buffer, txs: TxBlobs, placement?: Buffer): RecipeSegment[] | undefined {
  const segs: RecipeSegment[] = [];
  let literalFrom = 0;
  let refs = 0;
  let p = doc.indexOf(HEAD);
  while (p >= 0) {
    const txid = headTxid(doc, p);
    let taken = 0;
    if (txid) {
      const t = txs.doc(txid);
      if (t) {
        const end = p + t.size;
        if (t.size >= MIN_REFERENCE && end <= doc.length && doc[end - 1] === CLOSE && isDoc(t, doc.subarray(p, end))) taken = t.size;
        else if (t.prefix === PREFIX_UNKNOWN) {
          const prefix = placement ? t.size - placement.length : 0;
          if (prefix >= MIN_REFERENCE && p + prefix < doc.length && doc[p + prefix] === CLOSE && isDoc(t, doc.subarray(p, p + prefix), placement)) taken = prefix;
        } else if (t.prefix >= MIN_REFERENCE && p + t.prefix < doc.length && doc[p + t.prefix] === CLOSE && crc32(doc.subarray(p, p + t.prefix)) === t.prefixCrc) taken = t.prefix;
        if (taken) {
          if (p > literalFrom) segs.push({ type: 'literal', bytes: doc.subarray(literalFrom, p) });
          segs.push({ type: 'range', blob: t.blob, start: 0, length: taken });
          literalFrom = p + taken;
          refs++;
        }
      }
    }
    p = doc.indexOf(HEAD, taken ? p + taken : p + 1);
  }
  if (refs === 0) return undefined;
  if (literalFrom < doc.length) segs.push({ type: 'literal', bytes: doc.subarray(literalFrom) });
  return segs;
}
