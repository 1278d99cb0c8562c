/**
 * Where each transaction of a serialized block sits in its bytes, for storing a tx's `.bin` as a
 * slice of its block's. The block is parsed as a Namecoin block (AuxPoW after the header when
 * its version says so) or a Bitcoin one, whichever parses; a block that parses as neither gives
 * no places (its txs' files are then stored whole). Every slice is checked against the tx's own
 * file (by its manifest line's sha256) before it is used, so a wrong guess costs bytes, never
 * correctness.
 */
import { AUXPOW_VERSION_FLAG, parseBlock, type Block } from '../chain/block.js';
import { sha48 } from './embedded.js';

export interface TxPlace {
  txid: string;
  /** Offset of the tx's serialization in the block's bytes. */
  start: number;
  length: number;
  /** The first 48 bits of the sha256 of the tx's bytes, and of their lowercase hex: what its `.bin` and `.hex` files hold. */
  binSha: number;
  hexSha: number;
}

function tryParse(raw: Buffer, auxpow: boolean): Block | undefined {
  try {
    return parseBlock(raw, { auxpow });
  } catch {
    return undefined;
  }
}

export function blockTxPlaces(raw: Buffer): TxPlace[] {
  const flagged = raw.length >= 4 && (raw.readUInt32LE(0) & AUXPOW_VERSION_FLAG) !== 0;
  const block = (flagged && tryParse(raw, true)) || tryParse(raw, false);
  if (!block) return [];
  return block.txs.map((tx) => ({ txid: tx.txid, start: tx.raw.byteOffset - raw.byteOffset, length: tx.raw.length, binSha: sha48(tx.raw), hexSha: sha48(Buffer.from(tx.raw.toString('hex'), 'latin1')) }));
}
