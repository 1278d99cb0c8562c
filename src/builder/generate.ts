import { toDisplayHex } from '../chain/hash.js';
import { regtestGenesis } from './serialize.js';
import { finishBlock, type ChainState } from './generate/block.js';
import { BlockTxs } from './generate/block-txs.js';
import { CoinPool } from './generate/coins.js';
import { NameBook } from './generate/name-ops.js';
import type { GeneratedBlock, GenerateOptions } from './generate/options.js';
import { makePayees } from './generate/payees.js';
import { BLOCK_INTERVAL, COINBASE_MATURITY, planChain, randomStreams } from './generate/plan.js';
import { spendTx } from './generate/spend.js';

export * from './generate/options.js';

/**
 * Streams a large main chain fast (benchmarks): genesis, 100 coinbase-only
 * blocks, then blocks of up to `txPerBlock` random spends (shaped by `profile`) of a realistic mix
 * of output types (P2PKH, P2WPKH, P2SH-P2WPKH, P2SH multisig, P2TR, P2WSH,
 * P2PK, bare multisig, OP_RETURN) with balanced values and, on Namecoin,
 * name_new → name_firstupdate (≥ 12 blocks) → name_update ops, some names
 * left to expire. The `bench` profile's scripts and spending data are pre-built; each block is
 * serialized into reused buffers. Deterministic from the seed.
 *
 * Unlike ChainBuilder (scripted chains with forks, every block and UTXO kept), it keeps only
 * what the next spends need; both finish blocks the same way (seal.ts).
 */
export function* generateChain(opts: GenerateOptions): Generator<GeneratedBlock> {
  const plan = planChain(opts);
  const streams = randomStreams(plan.seed);
  const st: ChainState = {
    plan,
    prng: streams.prng,
    payees: makePayees(plan, streams),
    coins: new CoinPool(streams.prng, plan.real ? plan.shape.hubs : 0),
    names: new NameBook(),
    txs: new BlockTxs(),
  };
  const genesis = regtestGenesis();
  yield { height: 0, hash: toDisplayHex(genesis.hash), raw: genesis.raw, txCount: 1 };
  let prevHash = genesis.hash;
  let time = plan.startTime ?? genesis.header.readUInt32LE(68) + BLOCK_INTERVAL;
  let made = 0;
  for (let height = 1; made < plan.txCount || height <= COINBASE_MATURITY; height++) {
    made += fillBlock(st, height, plan.txTarget(height, made));
    const { block, hash } = finishBlock(st, height, prevHash, time);
    yield block;
    prevHash = hash;
    time += BLOCK_INTERVAL;
  }
}

/** Starts the block at `height` and makes up to `target` transactions in it; returns how many it made. */
function fillBlock(st: ChainState, height: number, target: number): number {
  const { plan, prng, coins, names, txs } = st;
  txs.startBlock();
  coins.mature(height);
  if (plan.names) names.startBlock(height, plan.network.nameExpirationDepth!(height));
  let inBlock = 0;
  for (; inBlock < target && coins.spendable.length > 0; inBlock++) {
    txs.startTx();
    // A name operation when drawn, unless no coin can pay for it: a plain spend then.
    if (plan.nameRate > 0 && prng.float() < plan.nameRate && names.nameTx(st, height, inBlock)) continue;
    spendTx(st);
  }
  return inBlock;
}
