import { demoChain } from '../builder/demo.js';
import type { Network } from '../chain/networks.js';
import { memorySource } from './memory.js';
import type { ChainSource } from './types.js';

/** The embedded demo chain (Namecoin regtest, made by the chain builder) as a source. */
export function demoSource(network?: Network): ChainSource {
  const chain = demoChain();
  if (network && network.name !== chain.network.name) {
    throw new Error(`the demo chain is ${chain.network.name}; --network ${network.name} needs a --source`);
  }
  return memorySource(
    chain.network,
    [...chain.main, ...chain.side, ...chain.orphans].map((b) => ({ raw: b.raw, kind: b.kind, height: b.height })),
    'the demo chain',
  );
}
