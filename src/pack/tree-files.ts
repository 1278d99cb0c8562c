/**
 * The finished tree as the pack converter (from-tree.ts) reads it: its manifest's lines and the
 * classes of paths it packs differently.
 */
import { ManifestCursor } from '../contract/manifest.js';

export const TX_FILE = /^tx\/([0-9a-f]{64})\.(json|bin|hex)$/;
export const TX_JSON = /^tx\/([0-9a-f]{64})\.json$/;
export const BLOCK_BIN = /^block\/[0-9a-f]{64}\.bin$/;
/** The documents that embed tx documents: packed in the second pass, as recipes. */
export const EMBEDDING = /^(?:address\/[^/]+|block\/[0-9a-f]{64})\.json$/;
export const BLOCK_JSON = /^block\/[0-9a-f]{64}\.json$/;
/** Raw bytes (stored as they are, or as slices) and their hex (derived from them). */
export const RAW = /\.(?:bin|hex)$/;

/** Whether the file at `path` is stored whole and gzipped (documents that embed tx documents are recipes): the read thread may gzip it. */
export const gzipAhead = (path: string): boolean => !RAW.test(path) && !EMBEDDING.test(path);

/** The bytes a `.hex` file spells, when it is exactly their lowercase hex; else undefined. */
export function rawOfHex(text: Uint8Array): Uint8Array | undefined {
  if (text.length % 2 !== 0) return undefined;
  const s = Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('latin1');
  // Node's hex decoding stops at the first pair that is not hex and takes upper case: the
  // decoded bytes are the text's exactly when their lowercase hex is the text again.
  const raw = Buffer.from(s, 'hex');
  return raw.length * 2 === s.length && raw.toString('hex') === s ? new Uint8Array(raw) : undefined;
}

export interface ManifestLine {
  lineNo: number;
  sha: string;
  size: number;
  path: string;
  /** A tx file's path parsed (txid, extension), once a line: it is asked of every line more than once. */
  tx: RegExpExecArray | null;
}

/**
 * The manifest's lines whose path `take` accepts, read strictly (contract/manifest.ts), with
 * blocking reads (a caller may take lines between awaits of its own). `take` is given each
 * line's size and its sha256 (hex, made on demand) too: a caller can deal with a line there, at
 * no cost of a line object, and refuse it.
 */
export function* manifestLines(manifestPath: string, take: (path: string, size: number, sha: () => string) => boolean): Generator<ManifestLine> {
  const c = new ManifestCursor(manifestPath, '', -1, 1 << 20, true);
  const sha = () => c.buf.toString('latin1', c.start, c.start + 64);
  try {
    while (!c.done) {
      const path = c.buf.toString('utf8', c.pathAt, c.end);
      if (take(path, c.size, sha)) yield { lineNo: c.line, sha: c.buf.toString('latin1', c.start, c.start + 64), size: c.size, path, tx: TX_FILE.exec(path) };
      c.next();
    }
  } finally {
    if (!c.done) c.close();
  }
}
