import { ParseError } from './errors.js';
import { sha256d, toDisplayHex } from './hash.js';
import { Reader } from './reader.js';
import { readTx, type Tx } from './tx.js';

export const HEADER_SIZE = 80;
/** Namecoin's merge-mining flag in the block version. */
export const AUXPOW_VERSION_FLAG = 0x100;

export interface BlockHeader {
  /** nVersion as uint32. */
  version: number;
  /** Internal byte order. */
  prevHash: Buffer;
  merkleRoot: Buffer;
  time: number;
  bits: number;
  nonce: number;
  /** sha256d of the 80 header bytes, internal byte order. */
  hash: Buffer;
  /** Block hash, display hex. */
  id: string;
  raw: Buffer;
}

export interface AuxPow {
  /** The parent chain's coinbase (legacy serialization). */
  coinbaseTx: Tx;
  /** hashBlock exactly as stored (not reversed). */
  blockHash: Buffer;
  coinbaseBranch: Buffer[];
  coinbaseIndex: number;
  chainBranch: Buffer[];
  chainIndex: number;
  parentHeader: BlockHeader;
  /** Byte length of the AuxPoW part. */
  size: number;
}

export interface Block {
  header: BlockHeader;
  auxpow: AuxPow | undefined;
  txs: Tx[];
  /** The whole serialized block (header, AuxPoW, transactions). */
  raw: Buffer;
}

export interface ParseOptions {
  /** Parse AuxPoW when the version carries 0x100 (Namecoin networks only). */
  auxpow: boolean;
}

export function readHeader(r: Reader): BlockHeader {
  r.need(HEADER_SIZE, 'block header');
  const start = r.pos;
  const raw = r.buf.subarray(start, start + HEADER_SIZE);
  const version = raw.readUInt32LE(0);
  const prevHash = raw.subarray(4, 36);
  const merkleRoot = raw.subarray(36, 68);
  const time = raw.readUInt32LE(68);
  const bits = raw.readUInt32LE(72);
  const nonce = raw.readUInt32LE(76);
  r.pos += HEADER_SIZE;
  const hash = sha256d(raw);
  return { version, prevHash, merkleRoot, time, bits, nonce, hash, id: toDisplayHex(hash), raw };
}

/** Parses just the 80-byte header at the start of `buf`. */
export function parseHeader(buf: Buffer): BlockHeader {
  return readHeader(new Reader(buf));
}

export function hasAuxPow(version: number, opts: ParseOptions): boolean {
  return opts.auxpow && (version & AUXPOW_VERSION_FLAG) !== 0;
}

function readBranch(r: Reader, what: string): Buffer[] {
  const n = r.count(`${what} count`, 32);
  const out: Buffer[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = r.bytes(32, what);
  return out;
}

function readAuxPow(r: Reader): AuxPow {
  const start = r.pos;
  let coinbaseTx: Tx;
  try {
    coinbaseTx = readTx(r);
  } catch (e) {
    // Its fields have the names of a block's transactions: say which transaction this is.
    if (e instanceof ParseError) throw new ParseError(`auxpow coinbase tx: ${e.what}`, e.offset);
    throw e;
  }
  const blockHash = r.bytes(32, 'auxpow block hash');
  const coinbaseBranch = readBranch(r, 'auxpow coinbase branch');
  const coinbaseIndex = r.u32('auxpow coinbase index');
  const chainBranch = readBranch(r, 'auxpow chain branch');
  const chainIndex = r.u32('auxpow chain index');
  const parentHeader = readHeader(r);
  return { coinbaseTx, blockHash, coinbaseBranch, coinbaseIndex, chainBranch, chainIndex, parentHeader, size: r.pos - start };
}

/**
 * Parses the header and, when the version announces one (Namecoin networks), the AuxPoW that
 * follows it; the transactions after them are not read. Errors carry offsets relative to `buf`.
 */
export function parseBlockHead(buf: Buffer, opts: ParseOptions): { header: BlockHeader; auxpow: AuxPow | undefined } {
  const r = new Reader(buf);
  const header = readHeader(r);
  return { header, auxpow: hasAuxPow(header.version, opts) ? readAuxPow(r) : undefined };
}

/**
 * Parses one serialized block occupying exactly `buf` (trailing bytes are an
 * error). Errors carry the offset relative to `buf`; `baseOffset` is added so
 * callers can report file offsets. `txHashes`: the txids (32 bytes each, in order) when a
 * scan thread already computed them, so they are not hashed again.
 */
export function parseBlock(buf: Buffer, opts: ParseOptions, baseOffset = 0, txHashes?: Buffer): Block {
  try {
    const r = new Reader(buf);
    const header = readHeader(r);
    const auxpow = hasAuxPow(header.version, opts) ? readAuxPow(r) : undefined;
    const n = r.count('tx count', 60);
    const txs: Tx[] = new Array(n);
    for (let i = 0; i < n; i++) txs[i] = readTx(r, txHashes?.subarray(32 * i, 32 * i + 32));
    if (r.remaining !== 0) throw new ParseError(`${r.remaining} trailing bytes after the last transaction`, r.pos);
    return { header, auxpow, txs, raw: buf };
  } catch (e) {
    if (e instanceof ParseError && baseOffset) throw new ParseError(e.what, e.offset + baseOffset);
    throw e;
  }
}
