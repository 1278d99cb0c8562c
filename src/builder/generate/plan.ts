// Step 1 of generateChain: the options resolved into a plan (profile, name rate, block sizes).
import { isNamecoin, type Network } from '../../chain/networks.js';
import { KeyFactory, Signer } from '../keys.js';
import { Prng } from '../prng.js';
import { NAME_RATES, REAL_WORLD_DEFAULTS, type GenerateOptions, type RealWorldShape } from './options.js';

/** Blocks 1–100 hold only coinbases: the first coinbase is spendable at 101, as Core's maturity. */
export const COINBASE_MATURITY = 100;
/** Seconds between blocks. */
export const BLOCK_INTERVAL = 600;

export interface ChainPlan {
  network: Network;
  /** Seed of the generator's random streams. */
  seed: number | string;
  auxpow: boolean;
  /** Non-coinbase transactions to make in all. */
  txCount: number;
  /** Namecoin network: names expire, and name operations are made at `nameRate`. */
  names: boolean;
  nameRate: number;
  /** The `real` profile (else `bench`). */
  real: boolean;
  shape: RealWorldShape;
  coinbaseOutputs: number;
  /** Time of block 1 when given. */
  startTime: number | undefined;
  /** How many non-coinbase transactions the block at `height` gets, `made` having been made before it. */
  txTarget(height: number, made: number): number;
}

export function planChain(opts: GenerateOptions): ChainPlan {
  const network = opts.network;
  const names = isNamecoin(network);
  const real = opts.profile === 'real';
  const shape: RealWorldShape = { ...REAL_WORLD_DEFAULTS, ...opts.real };
  const perBlock = opts.txPerBlock ?? 1000;
  const txPerBlock = typeof perBlock === 'number' ? () => perBlock : perBlock;
  const maxPerBlock = typeof perBlock === 'number' ? perBlock : undefined;
  // real (with a number txPerBlock): blocks grow as (n / rampBlocks)² × txPerBlock over the first rampBlocks tx blocks.
  const rampBlocks = real && maxPerBlock !== undefined ? Math.max(1, Math.ceil((shape.rampFactor * opts.txCount) / maxPerBlock)) : undefined;
  const txTarget = (height: number, made: number): number => {
    const n = height - COINBASE_MATURITY; // tx block number, from 1
    const size = rampBlocks !== undefined && n < rampBlocks ? Math.max(1, Math.round(maxPerBlock! * (n / rampBlocks) ** 2)) : Math.floor(txPerBlock(height));
    return n <= 0 ? 0 : Math.min(size, opts.txCount - made);
  };
  return {
    network,
    seed: opts.seed,
    auxpow: opts.auxpow ?? network.auxpow,
    txCount: opts.txCount,
    names,
    nameRate: names ? (opts.nameRate ?? NAME_RATES[real ? 'real' : 'bench']) : 0,
    real,
    shape,
    coinbaseOutputs: opts.coinbaseOutputs ?? 10,
    startTime: opts.startTime,
    txTarget,
  };
}

/** The generator's random streams (apart from ChainBuilder's, so either can change alone). */
export interface RandomStreams {
  prng: Prng;
  keys: KeyFactory;
  signer: Signer;
}

export function randomStreams(seed: number | string): RandomStreams {
  return { prng: new Prng(`${seed}/generate`), keys: new KeyFactory(new Prng(`${seed}/generate-keys`)), signer: new Signer(new Prng(`${seed}/generate-sigs`)) };
}

/** Fees: a base per transaction and a share per input (and, for plain spends, per output). */
export const FEE_BASE = 250;
export const FEE_PER_INPUT = 150;
/** The smallest output a spend makes (and what a coin must leave after a name output and the fee). */
export const MIN_OUTPUT = 1000;
