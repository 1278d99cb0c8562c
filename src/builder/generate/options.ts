// What generateChain takes and yields: its options, the two chain profiles and their parameters.
import type { Network } from '../../chain/networks.js';

export interface GenerateOptions {
  network: Network;
  seed: number | string;
  /** Non-coinbase transactions to make (the chain has ~txCount / txPerBlock + 101 blocks). */
  txCount: number;
  /** Non-coinbase transactions per block (default 1000), or a function of the height (growing blocks). */
  txPerBlock?: number | ((height: number) => number);
  /** Merge-mined blocks (default: the network's auxpow). */
  auxpow?: boolean;
  /** Time of block 1 (default genesis + 600); blocks 600 s apart. */
  startTime?: number;
  /** Share of transactions that are name operations on Namecoin networks (default {@link NAME_RATES} of the profile). */
  nameRate?: number;
  /** Coinbase outputs per block (default 10): they seed the spendable pool. */
  coinbaseOutputs?: number;
  /**
   * Shape of the chain (default `bench`):
   * - `bench`: full blocks from the start, 1–3 inputs and 1–5 outputs per tx, payees drawn
   *   from a fixed pool of 432 scripts over 64 keys (every address in a large share of all txs), name
   *   rate 2%;
   * - `real`: a real-world shape (see {@link RealWorldShape}): a growing address population with
   *   heavy-tailed reuse and exchange-like hubs, ~2.5 inputs and outputs per tx with hub
   *   consolidations and batch payouts of hundreds, blocks growing from nearly empty to
   *   `txPerBlock`, name rate 4%. The benchmarks' default (docs/benchmarks.md, "Chain profiles").
   */
  profile?: ChainProfile;
  /** Parameters of the `real` profile (defaults: {@link REAL_WORLD_DEFAULTS}). */
  real?: Partial<RealWorldShape>;
}

export type ChainProfile = 'bench' | 'real';

/** Parameters of the real-world profile. */
export interface RealWorldShape {
  /** Share of payees that are one of the `hubs` exchange-like addresses. */
  hubShare: number;
  /** How many hub addresses; hub k (from 1) is drawn with weight 1/k^zipf. */
  hubs: number;
  zipf: number;
  /** Share of payees that reuse an earlier ordinary address, in proportion to its uses so far; the other payees are new addresses. */
  reuseShare: number;
  /**
   * Share of txs that are a hub's consolidation (100–499 of its coins to itself) or batch payout
   * (1–3 of its coins to 100–500 payees and itself). Hub coins are spent only so, as an
   * exchange's wallet: the defaults keep the coins in and out of the hubs about balanced.
   */
  consolidationRate: number;
  batchRate: number;
  /**
   * Tx blocks grow as (n / rampBlocks)² × txPerBlock up to txPerBlock; rampBlocks = rampFactor ×
   * txCount / txPerBlock (1.5: half the txs in the ramp). Not when txPerBlock is a function.
   */
  rampFactor: number;
}

export const REAL_WORLD_DEFAULTS: RealWorldShape = {
  hubShare: 0.25,
  hubs: 50,
  zipf: 1,
  reuseShare: 0.15,
  consolidationRate: 0.0025,
  batchRate: 0.001,
  rampFactor: 1.5,
};

/**
 * Name operations per tx on Namecoin networks: `bench` 2%; `real` 4%, our assumption for
 * Namecoin mainnet (~7M txs, a few hundred thousand name operations: ~280k at 4%).
 */
export const NAME_RATES: Record<ChainProfile, number> = { bench: 0.02, real: 0.04 };

export interface GeneratedBlock {
  height: number;
  /** Display hex. */
  hash: string;
  raw: Buffer;
  /** Transactions in the block, coinbase included. */
  txCount: number;
}
