// Finishing a block, the same for ChainBuilder and generateChain: the coinbase (BIP34 height,
// BIP141 witness commitment), the header with its PoW solved or an AuxPoW attached, the bytes.
import { sha256d } from '../chain/hash.js';
import { merkleRoot } from '../chain/merkle.js';
import type { Network } from '../chain/networks.js';
import { ByteWriter } from './bytes.js';
import type { Prng } from './prng.js';
import {
  AUXPOW_FLAG,
  buildAuxPow,
  coinbaseScriptSig,
  grindHeader,
  NAMECOIN_CHAIN_ID,
  serializeHeader,
  witnessCommitmentScript,
  ZERO_HASH,
  type TxData,
  type TxOutData,
} from './serialize.js';

/** Namecoin: chain id 1, version 4, the AuxPoW flag when merge-mined; Bitcoin: BIP9's base version. */
export function blockVersion(network: Network, auxpow: boolean): number {
  return network.auxpow ? (NAMECOIN_CHAIN_ID << 16) | 4 | (auxpow ? AUXPOW_FLAG : 0) : 0x20000000;
}

/**
 * The coinbase of a block at `height`: `extra` after the BIP34 height in its scriptSig; when any
 * other tx of the block has a witness, a commitment to their `wtxids` and the reserved value.
 */
export function coinbaseTx(height: number, extra: Buffer, outputs: readonly TxOutData[], witness: { any: boolean; wtxids: readonly Buffer[] }): TxData {
  const outs = [...outputs];
  if (witness.any) outs.push({ value: 0n, script: witnessCommitmentScript([ZERO_HASH, ...witness.wtxids]) });
  const input = { prevHash: ZERO_HASH, prevIndex: 0xffffffff, script: coinbaseScriptSig(height, extra), sequence: 0xffffffff, witness: witness.any ? [ZERO_HASH] : undefined };
  return { version: 2, inputs: [input], outputs: outs, lockTime: 0 };
}

export interface HeaderFields {
  version: number;
  /** Internal byte order. */
  prevHash: Buffer;
  /** txids of the block, coinbase first, internal byte order. */
  txids: readonly Buffer[];
  time: number;
  bits: number;
  /** Merge-mined: the header's own hash is left as is and an AuxPoW proves the work. */
  auxpow: boolean;
  /** The AuxPoW's random parts come from here. */
  prng: Prng;
}

export interface SealedHeader {
  header: Buffer;
  /** Internal byte order. */
  hash: Buffer;
  auxpow: Buffer | undefined;
}

/** The header over `txids` with its PoW solved (nonce ground), or with an AuxPoW when merge-mined. */
export function sealHeader(f: HeaderFields): SealedHeader {
  const header = serializeHeader({ version: f.version, prevHash: f.prevHash, merkleRoot: merkleRoot(f.txids), time: f.time, bits: f.bits, nonce: 0 });
  if (!f.auxpow) return { header, hash: grindHeader(header), auxpow: undefined };
  const hash = sha256d(header);
  return { header, hash, auxpow: buildAuxPow(hash, f.bits, f.time, f.prng).bytes };
}

/** header ‖ [auxpow] ‖ tx count ‖ the txs (a buffer of `txBytes` may hold several txs). */
export function blockBytes(s: SealedHeader, txCount: number, txBytes: readonly Buffer[]): Buffer {
  const count = new ByteWriter(9);
  count.varint(txCount);
  return Buffer.concat([s.header, ...(s.auxpow ? [s.auxpow] : []), count.view(), ...txBytes]);
}
