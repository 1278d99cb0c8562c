// The chain builder's constants and the shapes of what it takes and returns (ChainBuilder in
// chain.ts, the block under construction in block-context.ts).
import type { Network } from '../chain/networks.js';
import type { Lock } from './scripts.js';

/** Namecoin: tx version of name operations. */
export const NAMECOIN_TX_VERSION = 0x7100;
/** Namecoin: blocks between name_new and name_firstupdate (MIN_FIRSTUPDATE_DEPTH). */
export const MIN_FIRSTUPDATE_DEPTH = 12;
/** Namecoin: coins locked in a name output (NAME_LOCKED_AMOUNT, 0.01 NMC). */
export const NAME_AMOUNT = 1_000_000n;
export const MAX_NAME_LENGTH = 255;
export const MAX_VALUE_LENGTH = 1023;
export const DEFAULT_FEE = 10_000n;
/** The smallest change output the builder makes. */
export const DUST = 546n;

export interface ChainBuilderOptions {
  network: Network;
  /** Same seed (and same calls) → byte-identical blocks. */
  seed: number | string;
  /** Merge-mined (AuxPoW) blocks; default: the network's `auxpow` (Namecoin networks). */
  auxpow?: boolean;
  /** Time of block 1; default genesis time + blockInterval. */
  startTime?: number;
  /** Seconds between consecutive blocks (default 600). */
  blockInterval?: number;
  /** Coinbase maturity in blocks (default 100, as Core). */
  coinbaseMaturity?: number;
  /** Compact target of every block after genesis (default regtest 0x207fffff). */
  bits?: number;
}

/** An output by txid (display hex) and index. */
export interface OutRef {
  txid: string;
  vout: number;
}

/** An unspent output as the builder tracks it. */
export interface Coin {
  /** txid, internal byte order. */
  hash: Buffer;
  txid: string;
  vout: number;
  value: bigint;
  lock: Lock;
  height: number;
  coinbase: boolean;
  /** Spendable by the builder's automatic funding (coinbase and change outputs). */
  wallet: boolean;
}

export interface InputSpec {
  ref: OutRef;
  /** Override the scriptSig / witness the coin's lock would produce. */
  scriptSig?: Buffer;
  witness?: Buffer[];
  sequence?: number;
}

export interface OutputSpec {
  lock: Lock;
  /** Omitted: an equal share of what is left after fixed outputs and the fee. */
  value?: bigint;
  /** Let automatic funding spend this output later (default false). */
  wallet?: boolean;
}

export interface TxSpec {
  inputs?: (OutRef | InputSpec)[];
  outputs?: OutputSpec[];
  /** Default DEFAULT_FEE. */
  fee?: bigint;
  /** Default 2 (0x7100 is set by the name methods). */
  version?: number;
  lockTime?: number;
  /** Add mature wallet coins when the inputs do not cover outputs + fee (default true). */
  fund?: boolean;
  /** Where surplus goes: a lock, or false to leave it to the fee (default: a wallet change lock). */
  change?: Lock | false;
}

export interface TxHandle {
  txid: string;
  /** txid, internal order. */
  hash: Buffer;
  raw: Buffer;
  fee: bigint;
  /** Every output of the transaction. */
  outputs: OutRef[];
  /** The coins this transaction spent (as they were). */
  spent: Coin[];
  out(vout: number): OutRef;
}

export interface NameNewHandle extends TxHandle {
  name: Buffer;
  rand: Buffer;
  /** hash160(rand ‖ name). */
  commitment: Buffer;
  /** The name_new output. */
  nameOut: OutRef;
  height: number;
}

export type NameOpKind = 'name_new' | 'name_firstupdate' | 'name_update';

/** One name operation the builder made. */
export interface NameOpRecord {
  op: NameOpKind;
  /** The name (for name_new: the name it commits to, not visible on chain). */
  name: Buffer;
  value: Buffer | undefined;
  rand: Buffer | undefined;
  /** name_new: the 20-byte commitment. */
  commitment: Buffer | undefined;
  height: number;
  /** Block hash, display hex. */
  block: string;
  txid: string;
  vout: number;
  /** firstupdate after an earlier registration expired. */
  reregistration: boolean;
}

export type BlockKind = 'main' | 'side' | 'orphan';

/** A block as built (kind is decided by `build()`). */
export interface BlockHandle {
  /** Display hex. */
  hash: string;
  height: number;
  time: number;
  prevHash: string;
  raw: Buffer;
  /** txids in block order, coinbase first. */
  txids: string[];
}

export interface BuiltBlock extends BlockHandle {
  kind: BlockKind;
}

export interface BuiltChain {
  network: Network;
  /** Every block (main, side, orphan) in creation order, genesis first. */
  blocks: BuiltBlock[];
  /** Main chain, index = height. */
  main: BuiltBlock[];
  side: BuiltBlock[];
  orphans: BuiltBlock[];
  tip: BuiltBlock;
  /** Name operations in creation order, each with its block; filter by block kind for the main chain's. */
  names: NameOpRecord[];
}

export interface BlockOptions {
  /** Parent block (handle or display hash); default the best tip. */
  parent?: BlockHandle | string;
  time?: number;
  /** Coinbase outputs (values omitted share subsidy + fees); default the miner's P2PKH. */
  coinbase?: Lock | OutputSpec[];
  /** Override the builder's auxpow setting for this block. */
  auxpow?: boolean;
  /**
   * This block's coinbase is the one of the block the builder made last at this height, byte for byte: a
   * duplicate txid (BIP30), as Bitcoin's blocks 91842 and 91880 repeat the coinbases of 91812
   * and 91722. The block holds no other tx, and its subsidy is that block's; the earlier
   * coinbase's unspent outputs become this one's.
   */
  coinbaseOf?: number;
}

/** An undoable change to the builder's state (UTXO set, names); internal to the builder. */
export type Op =
  | { t: 'add'; key: string; coin: Coin }
  | { t: 'del'; key: string; coin: Coin }
  | { t: 'name'; name: string; prev: NameEntry | undefined; next: NameEntry | undefined };

/** A registered name's current coin; internal to the builder. */
export interface NameEntry {
  /** Outpoint key of the current name coin. */
  key: string;
  /** Height of the last registration/update. */
  height: number;
}

/** A UTXO map key. */
export const refKey = (txid: string, vout: number) => `${txid}:${vout}`;
