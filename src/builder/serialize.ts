import type { BlockHeader } from '../chain/block.js';
import { sha256d, sha256dParts, toDisplayHex } from '../chain/hash.js';
import { merkleRoot } from '../chain/merkle.js';
import { bitsToTarget } from '../chain/work.js';
import { ByteWriter } from './bytes.js';
import type { Prng } from './prng.js';
import { pushData, pushInt } from './scripts.js';

export interface TxInData {
  /** Previous txid, internal byte order. */
  prevHash: Buffer;
  prevIndex: number;
  script: Buffer;
  sequence: number;
  /** Witness items; undefined or empty = none. */
  witness?: Buffer[] | undefined;
}

export interface TxOutData {
  value: bigint;
  script: Buffer;
}

export interface TxData {
  version: number;
  inputs: TxInData[];
  outputs: TxOutData[];
  lockTime: number;
}

export interface SerializedTx {
  /** Full serialization (BIP144 form when any input has witness data). */
  raw: Buffer;
  /** txid, internal byte order. */
  hash: Buffer;
  /** wtxid, internal byte order (equals hash without witness). */
  whash: Buffer;
  txid: string;
  hasWitness: boolean;
}

export const ZERO_HASH: Buffer = Buffer.alloc(32);
export const REGTEST_BITS = 0x207fffff;
/** Namecoin: merge-mining flag and chain id 1 in the block version. */
export const AUXPOW_FLAG = 0x100;
export const NAMECOIN_CHAIN_ID = 1;

export function txHasWitness(tx: TxData): boolean {
  return tx.inputs.some((i) => i.witness !== undefined && i.witness.length > 0);
}

export interface WrittenTx {
  start: number;
  bodyStart: number;
  bodyEnd: number;
  end: number;
  witness: boolean;
}

/**
 * Writes `tx` into `w`; returns the byte ranges needed for the txid
 * (legacy serialization = [start, start+4) + [bodyStart, bodyEnd) + last 4 bytes).
 */
export function writeTx(w: ByteWriter, tx: TxData, withWitness = true): WrittenTx {
  const start = w.pos;
  const witness = withWitness && txHasWitness(tx);
  w.u32(tx.version);
  if (witness) {
    w.u8(0);
    w.u8(1);
  }
  const bodyStart = w.pos;
  w.varint(tx.inputs.length);
  for (const i of tx.inputs) {
    w.bytes(i.prevHash);
    w.u32(i.prevIndex);
    w.varBytes(i.script);
    w.u32(i.sequence);
  }
  w.varint(tx.outputs.length);
  for (const o of tx.outputs) {
    w.u64(o.value);
    w.varBytes(o.script);
  }
  const bodyEnd = w.pos;
  if (witness) {
    for (const i of tx.inputs) {
      const items = i.witness ?? [];
      w.varint(items.length);
      for (const it of items) w.varBytes(it);
    }
  }
  w.u32(tx.lockTime);
  return { start, bodyStart, bodyEnd, end: w.pos, witness };
}

const scratch = new ByteWriter(1 << 16);

export function serializeTx(tx: TxData): SerializedTx {
  scratch.reset();
  const r = writeTx(scratch, tx);
  const raw = scratch.copy(r.start, r.end);
  const { hash, whash } = txHashes(scratch.buf, r);
  return { raw, hash, whash, txid: toDisplayHex(hash), hasWitness: r.witness };
}

/** txid and wtxid (internal byte order) of the tx that `writeTx` wrote at `r` in `buf`. */
export function txHashes(buf: Buffer, r: WrittenTx): { hash: Buffer; whash: Buffer } {
  const raw = buf.subarray(r.start, r.end);
  if (!r.witness) {
    const hash = sha256d(raw);
    return { hash, whash: hash };
  }
  const hash = sha256dParts([buf.subarray(r.start, r.start + 4), buf.subarray(r.bodyStart, r.bodyEnd), buf.subarray(r.end - 4, r.end)]);
  return { hash, whash: sha256d(raw) };
}

/** The header fields a block is built from (hashes in internal byte order). */
export type HeaderData = Pick<BlockHeader, 'version' | 'prevHash' | 'merkleRoot' | 'time' | 'bits' | 'nonce'>;

export function serializeHeader(h: HeaderData): Buffer {
  const b = Buffer.allocUnsafe(80);
  b.writeUInt32LE(h.version >>> 0, 0);
  h.prevHash.copy(b, 4);
  h.merkleRoot.copy(b, 36);
  b.writeUInt32LE(h.time >>> 0, 68);
  b.writeUInt32LE(h.bits >>> 0, 72);
  b.writeUInt32LE(h.nonce >>> 0, 76);
  return b;
}

/** True when sha256d(header) ≤ the target of `bits`. */
export function hashMeetsTarget(hash: Buffer, bits: number): boolean {
  return BigInt(`0x${toDisplayHex(hash)}`) <= bitsToTarget(bits);
}

/**
 * Solves the PoW of an 80-byte header in place (nonce from 0 upward);
 * returns the hash (internal order). Cheap at regtest difficulty.
 */
export function grindHeader(header: Buffer): Buffer {
  const bits = header.readUInt32LE(72);
  const target = bitsToTarget(bits);
  if (target === 0n) throw new Error(`bits ${bits.toString(16)} encode no valid target`);
  const topByteLimit = target >> 248n; // quick reject on the most significant byte
  for (let nonce = 0; nonce <= 0xffffffff; nonce++) {
    header.writeUInt32LE(nonce, 76);
    const h = sha256d(header);
    if (BigInt(h[31]!) > topByteLimit) continue;
    if (BigInt(`0x${toDisplayHex(h)}`) <= target) return h;
  }
  throw new Error('no nonce solves this header');
}

/** BIP34 coinbase scriptSig: the height as Core pushes it, then extra bytes. */
export function coinbaseScriptSig(height: number, extra: Buffer): Buffer {
  return Buffer.concat([pushInt(height), pushData(extra)]);
}

/** BIP141 witness commitment output script for the given wtxids (coinbase first, as zero). */
export function witnessCommitmentScript(whashes: readonly Buffer[]): Buffer {
  const root = merkleRoot([ZERO_HASH, ...whashes.slice(1)]);
  const commitment = sha256d(Buffer.concat([root, ZERO_HASH]));
  return Buffer.concat([Buffer.from('6a24aa21a9ed', 'hex'), commitment]);
}

/** Merged-mining marker in the parent coinbase (Namecoin `pchMergedMiningHeader`). */
export const MERGED_MINING_MARKER = Buffer.from('fabe6d6d', 'hex');

/**
 * AuxPoW section for a child block (its hash, internal order): a parent
 * coinbase whose scriptSig carries `fabe6d6d ‖ child hash (display order) ‖
 * merkle size 1 ‖ nonce 0`, a coinbase branch into a parent block with a few
 * other (random) txids, an empty chain branch, and a parent header whose PoW
 * is solved against the child's bits. Returns the serialized AuxPoW bytes.
 */
export function buildAuxPow(childHash: Buffer, bits: number, time: number, prng: Prng): { bytes: Buffer; parentHash: Buffer } {
  const mm = Buffer.concat([MERGED_MINING_MARKER, Buffer.from(childHash).reverse(), Buffer.from([1, 0, 0, 0]), Buffer.from([0, 0, 0, 0])]);
  const cbScript = Buffer.concat([pushData(prng.bytes(4)), pushData(mm)]);
  const cb = serializeTx({
    version: 1,
    inputs: [{ prevHash: ZERO_HASH, prevIndex: 0xffffffff, script: cbScript, sequence: 0xffffffff }],
    outputs: [{ value: 2_500_000_000n, script: Buffer.concat([Buffer.from('76a914', 'hex'), prng.bytes(20), Buffer.from('88ac', 'hex')]) }],
    lockTime: 0,
  });
  const leaves = [cb.hash];
  const others = prng.int(4);
  for (let i = 0; i < others; i++) leaves.push(prng.bytes(32));
  // Coinbase branch for index 0: siblings from the leaves up.
  const branch: Buffer[] = [];
  let level = leaves;
  while (level.length > 1) {
    branch.push(level[1] ?? level[0]!);
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(sha256dParts([level[i]!, level[i + 1] ?? level[i]!]));
    level = next;
  }
  const parent = serializeHeader({ version: 0x20000000, prevHash: prng.bytes(32), merkleRoot: level[0]!, time, bits, nonce: 0 });
  const parentHash = grindHeader(parent);
  const w = new ByteWriter(cb.raw.length + 200);
  w.bytes(cb.raw);
  w.bytes(ZERO_HASH); // hashBlock (unused)
  w.varint(branch.length);
  for (const b of branch) w.bytes(b);
  w.i32(0); // nIndex
  w.varint(0); // chain merkle branch
  w.i32(0); // nChainIndex
  w.bytes(parent);
  return { bytes: w.copy(), parentHash };
}

/** Assembles header ‖ [auxpow] ‖ tx count ‖ txs. */
export function assembleBlock(header: Buffer, auxpow: Buffer | undefined, txs: readonly Buffer[]): Buffer {
  let size = 80 + (auxpow?.length ?? 0) + 9;
  for (const t of txs) size += t.length;
  const w = new ByteWriter(size);
  w.bytes(header);
  if (auxpow) w.bytes(auxpow);
  w.varint(txs.length);
  for (const t of txs) w.bytes(t);
  return w.copy();
}

const GENESIS_SCRIPTSIG = Buffer.from(
  '04ffff001d0104455468652054696d65732030332f4a616e2f32303039204368616e63656c6c6f72206f6e206272696e6b206f66207365636f6e64206261696c6f757420666f722062616e6b73',
  'hex',
);
const GENESIS_PUBKEY_SCRIPT = Buffer.from(
  '4104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5fac',
  'hex',
);
export const REGTEST_GENESIS_TIME = 1296688602;

/**
 * The regtest genesis block exactly as Bitcoin Core's CreateGenesisBlock
 * builds it ("The Times 03/Jan/2009 …" coinbase, 50 coins to Satoshi's key,
 * time 1296688602, nonce 2, bits 0x207fffff, version 1). Namecoin regtest
 * uses the same block.
 */
export function regtestGenesis(): { raw: Buffer; hash: Buffer; coinbase: SerializedTx; header: Buffer } {
  const coinbase = serializeTx({
    version: 1,
    inputs: [{ prevHash: ZERO_HASH, prevIndex: 0xffffffff, script: GENESIS_SCRIPTSIG, sequence: 0xffffffff }],
    outputs: [{ value: 5_000_000_000n, script: GENESIS_PUBKEY_SCRIPT }],
    lockTime: 0,
  });
  const header = serializeHeader({ version: 1, prevHash: ZERO_HASH, merkleRoot: coinbase.hash, time: REGTEST_GENESIS_TIME, bits: REGTEST_BITS, nonce: 2 });
  return { raw: assembleBlock(header, undefined, [coinbase.raw]), hash: sha256d(header), coinbase, header };
}
