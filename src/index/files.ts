/** The files of an index (the `--state` dir), named here so the build's safety checks and the index agree. */

/** The LMDB environment (a directory). */
export const LMDB_DIR = 'lmdb';
/** The spilled block records (blocks-spill.ts). */
export const BLOCKS_SPILL_FILE = 'blocks.spill';
/** What an index (state) directory holds besides the marker and the lock; a full build replaces only these. */
export const STATE_ENTRIES = [LMDB_DIR, BLOCKS_SPILL_FILE] as const;
