import { parseHeader } from '../chain/block.js';
import type { Network } from '../chain/networks.js';
import type { ChainSource, ChainTip, OffChainBlock, SourceBlock } from './types.js';

export interface MemoryBlock {
  raw: Buffer;
  kind: 'main' | 'side' | 'orphan';
  /** Side blocks' height (parent height + 1). */
  height?: number;
}

/**
 * A chain held in memory (the builder's chains: the demo and test chains).
 * Main blocks must be given in height order from genesis.
 */
export function memorySource(network: Network, blocks: readonly MemoryBlock[], description = 'in-memory chain'): ChainSource {
  const main = blocks.filter((b) => b.kind === 'main');
  const mainHashes = main.map((b) => parseHeader(b.raw).id);
  if (mainHashes[0] !== network.genesis) {
    throw new Error(`${description}: first block ${mainHashes[0] ?? '(none)'} is not the ${network.name} genesis ${network.genesis}`);
  }
  const tipHeight = main.length - 1;
  return {
    network,
    description,
    warnings: [],
    async tip(): Promise<ChainTip> {
      return { height: tipHeight, hash: mainHashes[tipHeight]! };
    },
    async *mainChain(height: number, from = 0): AsyncIterable<SourceBlock> {
      if (height > tipHeight) throw new Error(`height ${height} is above the tip of ${description} (height ${tipHeight})`);
      for (let h = from; h <= height; h++) yield { height: h, hash: mainHashes[h]!, raw: main[h]!.raw };
    },
    async scanWork(height: number, from: number) {
      let total = 0;
      for (let h = from; h <= Math.min(height, tipHeight); h++) total += main[h]!.raw.length;
      return { unit: 'bytes' as const, total };
    },
    async hashAt(height: number): Promise<string> {
      if (height > tipHeight) throw new Error(`height ${height} is above the tip of ${description} (height ${tipHeight})`);
      return mainHashes[height]!;
    },
    async *offChain(height: number): AsyncIterable<OffChainBlock> {
      for (const b of blocks) {
        // Side blocks above the snapshot height branch off blocks the snapshot does not have.
        if (b.kind === 'main' || (b.kind === 'side' && (b.height ?? 0) > height)) continue;
        yield { kind: b.kind, hash: parseHeader(b.raw).id, height: b.height, raw: b.raw };
      }
    },
    async close(): Promise<void> {},
  };
}
