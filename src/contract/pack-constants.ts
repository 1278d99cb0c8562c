/** The constants, entry kinds, encodings and error type of the pack format (docs/pack-format.md). */
export const PACK_POINTER = 'pack.json';
export const PACK_FORMAT_NAME = 'chain-snapshot-pack';
export const PACK_VERSION = 1;
export const INDEX_MAGIC = 'SNAPPACK';
export const PART_MAGIC = 'SNAPPART';
export const HEADER_SIZE = 128;
/** A reader's first read of the index: header and (usually) the part table. */
export const ROOT_READ = 16384;
export const PART_HEADER_SIZE = 16;
export const KEY_BYTES = 16;
export const RECORD_SIZE = 40;
export const SLOT_HEADER = 8;
/** Mean entries per slot the writer aims at; slots get larger only past 2^MAX_BUCKET_BITS slots. */
export const TARGET_SLOT_ENTRIES = 512;
export const MAX_BUCKET_BITS = 24;
/** Parts are cut before they would pass this size (a blob larger than it gets a part of its own). */
export const DEFAULT_MAX_PART_BYTES = 1 << 30;

/** What an entry's blob is. */
export const Kind = {
  /** The answer itself (maybe compressed). */
  STORED: 0,
  /** Bytes whose lowercase hex (no newline) is the answer: a `.hex` file made from its `.bin`. */
  HEX: 1,
  /** A recipe (see {@link encodeRecipe}) whose assembled segments are the answer. */
  RECIPE: 2,
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

/** How a blob's bytes are stored. */
export const Encoding = { IDENTITY: 0, GZIP: 1 } as const;
export type Encoding = (typeof Encoding)[keyof typeof Encoding];
export const ENCODING_NAMES: Readonly<Record<Encoding, string>> = { 0: 'identity', 1: 'gzip' };

/** Thrown for bytes that do not decode: `where` names the file and absolute offset. */
export class PackFormatError extends Error {
  constructor(
    readonly where: string,
    readonly offset: number,
    message: string,
  ) {
    super(`${where} at offset ${offset}: ${message}`);
    this.name = 'PackFormatError';
  }
}
