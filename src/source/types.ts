import type { Block } from '../chain/block.js';
import type { Network } from '../chain/networks.js';
import type { Invalid } from '../chain/validate.js';

/** Where a block's bytes sit in a blocks dir: the blk file and the absolute offset of the block's first byte. */
export interface BlockPlace {
  file: string;
  offset: number;
}

/** One block of the main chain, delivered in height order. */
export interface SourceBlock {
  height: number;
  /** Block hash, display hex. */
  hash: string;
  /** The serialized block exactly as stored by the node. */
  raw: Buffer;
  /** `raw` was read for this delivery and the source keeps no reference to it: a scan thread may take its memory (else it gets a copy). */
  own?: true;
  /** Blocks dirs: where the block is stored (error messages). */
  place?: BlockPlace;
  /** The parsed block, once the validating wrapper has checked it (see block-validation.ts). */
  block?: Block;
  /** The address each output of the block pays (null: none), in order, when a scan thread found them (scan-pool.ts). */
  addresses?: readonly (string | null)[];
}

/** A block the source holds off the main chain. */
export interface OffChainBlock {
  /** 'side': connects to genesis but is not on the best chain; 'orphan': parent unknown. */
  kind: 'side' | 'orphan';
  hash: string;
  /** Height when connected (side blocks); undefined for orphans. */
  height: number | undefined;
  raw: Buffer;
  place?: BlockPlace;
  block?: Block;
}

/** A block the source set aside before choosing the chain (a blocks dir's header that fails its own proof of work). */
export interface RejectedBlock {
  hash: string;
  /** Its height when its parent is known. */
  height: number | undefined;
  place: BlockPlace;
  invalid: Invalid;
}

/** How much work a scan of the main chain is, in a unit proportional to its time. */
export interface ScanWork {
  unit: 'bytes' | 'txs';
  total: number;
}

export interface ChainTip {
  height: number;
  hash: string;
}

/**
 * How a source that chose the main chain itself by header work (blocks dir, in-memory) lets the
 * validating wrapper reach the best *valid* chain, as Bitcoin Core's ActivateBestChain: a main
 * block found invalid is marked, with its descendants, and the chain is chosen again among the
 * other blocks. Sources whose node chose (RPC) have none.
 */
export interface ChainChoice {
  /** Main-chain heights to validate first because their blocks decide between branches (ascending). */
  decisiveHeights(): number[];
  /**
   * Marks the main-chain block `hash` (above genesis) and its descendants invalid and chooses the
   * main chain again by work; every member of the source follows the new choice. Returns its tip,
   * the height of the last block the old and new main chains share, and how many blocks were
   * newly left out (the block and its descendants).
   */
  invalidate(hash: string): { tip: ChainTip; fork: number; failed: number };
}

/**
 * What every chain source delivers: the main chain from genesis to a height,
 * in order, plus the blocks it holds off the main chain.
 */
export interface ChainSource {
  readonly network: Network;
  /** Human-readable description for logs and errors (dir path, URL without password). */
  readonly description: string;
  /** The best chain's tip as the source sees it now. */
  tip(): Promise<ChainTip>;
  /**
   * Main-chain blocks from..height (from defaults to 0) in height order.
   * Throws when height is above the tip (naming the tip height) or when the
   * chain changes underneath.
   */
  mainChain(height: number, from?: number): AsyncIterable<SourceBlock>;
  /**
   * The size of mainChain(height, from): bytes of block data, or transactions when the source
   * cannot tell bytes (RPC); undefined when unknown (progress then counts blocks).
   */
  scanWork?(height: number, from: number): Promise<ScanWork | undefined>;
  /** Hash of the main-chain block at a height (display hex), without its body. */
  hashAt(height: number): Promise<string>;
  /** Side-branch and orphan blocks known to the source (for `height`: those not on the main chain up to it). */
  offChain(height: number): AsyncIterable<OffChainBlock>;
  /** Problems found and worked around (skipped junk, duplicates...): one line each, naming file and offset. */
  readonly warnings: readonly string[];
  /** Blocks found invalid before the chain was chosen (left out of it); reported by the validating wrapper. */
  readonly rejected?: readonly RejectedBlock[];
  /** Sources that chose the main chain by header work: how to choose again without invalid blocks. */
  readonly choice?: ChainChoice;
  close(): Promise<void>;
}
