import { parseHeader } from '../chain/block.js';
import type { Network } from '../chain/networks.js';
import { HeaderTree, KIND_MAIN, KIND_SIDE, treeChoice, type ChainSelection } from './chain-select.js';
import { checkedSource } from './request-checks.js';
import type { ChainChoice, ChainSource, ChainTip, OffChainBlock, SourceBlock } from './types.js';

export interface MemoryBlock {
  raw: Buffer;
  kind: 'main' | 'side' | 'orphan';
  /** Side blocks' height (parent height + 1). */
  height?: number;
}

/**
 * A chain held in memory (the builder's chains: the demo and test chains).
 * Main blocks must be given in height order from genesis.
 *
 * The given main chain stands as the node's choice until the validating wrapper finds one of its
 * blocks invalid (`choice`, see block-validation.ts); from then on the main chain is the one with the
 * most work among the blocks not known invalid, over the headers of every block given, and side
 * blocks get their heights from it.
 */
export function memorySource(network: Network, blocks: readonly MemoryBlock[], description = 'in-memory chain'): ChainSource {
  const main = blocks.filter((b) => b.kind === 'main');
  const mainHashes = main.map((b) => parseHeader(b.raw).id);
  if (mainHashes[0] !== network.genesis) {
    throw new Error(`${description}: first block ${mainHashes[0] ?? '(none)'} is not the ${network.name} genesis ${network.genesis}`);
  }
  const tipHeight = main.length - 1;

  // Every header, for choosing again; the given main chain is kept as the chosen tip.
  const tree = new HeaderTree(blocks.length);
  const rawOf: Buffer[] = [];
  for (const b of blocks) {
    const { index, isNew } = tree.add(b.raw);
    if (isNew) rawOf[index] = b.raw;
  }
  const givenTip = tree.indexOf(mainHashes[tipHeight]!);
  const given = tree.select(network.genesis, { tip: givenTip });
  // A given main chain that is not a chain of these headers from genesis is delivered as given, for validation to refuse.
  const consistent = given.tipHeight === tipHeight && mainHashes.every((h, i) => tree.hashHex(given.main[i]!) === h);
  /** Set once a block was found invalid: the chain chosen again. */
  let chosen: ChainSelection | undefined;
  const choice: ChainChoice | undefined = consistent
    ? treeChoice(
        tree,
        () => chosen ?? given,
        (s) => (chosen = s),
        (failed) => tree.select(network.genesis, { failed, tip: givenTip }),
      )
    : undefined;
  const hashAtNow = (h: number): string => (chosen ? tree.hashHex(chosen.main[h]!) : mainHashes[h]!);
  const rawAtNow = (h: number): Buffer => (chosen ? rawOf[chosen.main[h]!]! : main[h]!.raw);
  const tipNow = (): number => (chosen ? chosen.tipHeight : tipHeight);

  return checkedSource({
    network,
    description,
    warnings: [],
    choice,
    async tip(): Promise<ChainTip> {
      return { height: tipNow(), hash: hashAtNow(tipNow()) };
    },
    async *mainChain(height: number, from = 0): AsyncIterable<SourceBlock> {
      for (let h = from; h <= height; h++) yield { height: h, hash: hashAtNow(h), raw: rawAtNow(h) };
    },
    async scanWork(height: number, from: number) {
      let total = 0;
      for (let h = from; h <= Math.min(height, tipNow()); h++) total += rawAtNow(h).length;
      return { unit: 'bytes' as const, total };
    },
    async hashAt(height: number): Promise<string> {
      return hashAtNow(height);
    },
    async *offChain(height: number): AsyncIterable<OffChainBlock> {
      for (const b of blocks) {
        const hash = parseHeader(b.raw).id;
        if (chosen) {
          const i = tree.indexOf(hash);
          if (chosen.kind[i] === KIND_MAIN) continue;
          if (chosen.kind[i] === KIND_SIDE) {
            if (chosen.height[i]! <= height) yield { kind: 'side', hash, height: chosen.height[i]!, raw: b.raw };
          } else yield { kind: 'orphan', hash, height: b.kind === 'orphan' ? b.height : undefined, raw: b.raw };
          continue;
        }
        // Side blocks above the snapshot height branch off blocks the snapshot does not have.
        if (b.kind === 'main' || (b.kind === 'side' && (b.height ?? 0) > height)) continue;
        yield { kind: b.kind, hash, height: b.height, raw: b.raw };
      }
    },
    async close(): Promise<void> {},
  });
}
