/**
 * The byte layout of a pack (docs/pack-format.md): the same files as a snapshot tree, held in a
 * few immutable range-readable part files plus one index file. Pure functions over Uint8Array
 * (no Node APIs), so the writer, the Node reader and edge readers share one codec.
 *
 * A pack directory holds `pack.json` (the only mutable file: names the current index),
 * `<hex>.idx` (header, part table, directory slots) and `<hex>.part` files (blobs), each named
 * by the sha256 of its bytes so a CDN may cache them forever.
 *
 * The codec is split by what it encodes; this module gathers the public parts so importers (and
 * the Deno bundle in test/pack-runtimes.test.ts) keep one entry point.
 */
export * from './pack-constants.js';
export { chooseBucketBits, compareKeys, crc32, hexBytes, keyHex, packKey, slotOf, writeVarint } from './pack-bytes.js';
export * from './pack-index.js';
export * from './pack-recipe.js';
