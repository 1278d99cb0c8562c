/** Recipes: an answer assembled from literal bytes and ranges of other blobs' decoded bytes. */
import { Cursor, concatBytes, writeVarint } from './pack-bytes.js';
import { Encoding } from './pack-constants.js';
import type { BlobRef } from './pack-index.js';

export type RecipeSegment =
  | { type: 'literal'; bytes: Uint8Array }
  | { type: 'range'; blob: BlobRef; start: number; length: number };

const SEG_LITERAL = 0;
const SEG_RANGE = 1;

/** varint count, then per segment: 0 ‖ varint len ‖ bytes, or 1 ‖ varint part, offset, stored ‖ u8 encoding ‖ u32 crc ‖ varint start, length. */
export function encodeRecipe(segments: readonly RecipeSegment[]): Uint8Array {
  const head: number[] = [];
  const chunks: Uint8Array[] = [];
  writeVarint(head, segments.length);
  let pending = head;
  const flush = () => {
    chunks.push(Uint8Array.from(pending));
    pending = [];
  };
  for (const s of segments) {
    if (s.type === 'literal') {
      pending.push(SEG_LITERAL);
      writeVarint(pending, s.bytes.length);
      flush();
      chunks.push(s.bytes);
    } else {
      pending.push(SEG_RANGE);
      writeVarint(pending, s.blob.part);
      writeVarint(pending, s.blob.offset);
      writeVarint(pending, s.blob.stored);
      pending.push(s.blob.encoding);
      pending.push(s.blob.crc & 0xff, (s.blob.crc >>> 8) & 0xff, (s.blob.crc >>> 16) & 0xff, (s.blob.crc >>> 24) & 0xff);
      writeVarint(pending, s.start);
      writeVarint(pending, s.length);
    }
  }
  flush();
  return concatBytes(chunks);
}

export function decodeRecipe(b: Uint8Array, where: string, base: number): RecipeSegment[] {
  const c = new Cursor(b, where, base);
  const n = c.varint();
  const out: RecipeSegment[] = [];
  for (let i = 0; i < n; i++) {
    const t = c.byte();
    if (t === SEG_LITERAL) out.push({ type: 'literal', bytes: c.bytes(c.varint()) });
    else if (t === SEG_RANGE) {
      const part = c.varint();
      const offset = c.varint();
      const stored = c.varint();
      const encoding = c.byte();
      if (encoding > Encoding.GZIP) c.fail(`unknown encoding ${encoding} in recipe segment ${i}`);
      const crc = c.u32();
      out.push({ type: 'range', blob: { part, offset, stored, encoding: encoding as Encoding, crc }, start: c.varint(), length: c.varint() });
    } else c.fail(`unknown recipe segment type ${t}`);
  }
  if (c.at !== b.length) c.fail(`${b.length - c.at} bytes after ${n} recipe segments`);
  return out;
}
