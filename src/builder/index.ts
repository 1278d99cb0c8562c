/** Deterministic test-chain builder: public API. */
export * from './blkfiles.js';
export * from './chain.js';
export * from './generate.js';
export * from './keys.js';
export * from './prng.js';
export * from './scripts.js';
export * from './serialize.js';
export { ByteWriter } from './bytes.js';
