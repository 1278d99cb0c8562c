import { ParseError } from './errors.js';
import { sha256d, sha256dParts, toDisplayHex } from './hash.js';
import { Reader } from './reader.js';

export interface TxIn {
  /** Previous txid, internal byte order. */
  prevHash: Buffer;
  prevIndex: number;
  script: Buffer;
  sequence: number;
  /** Witness stack items, or undefined when the input carries none. */
  witness: Buffer[] | undefined;
}

export interface TxOut {
  /** Base units; bigint so that even garbage 64-bit values stay exact. */
  value: bigint;
  script: Buffer;
}

export interface Tx {
  /** nVersion as uint32 (Namecoin name transactions: 0x7100). */
  version: number;
  inputs: TxIn[];
  outputs: TxOut[];
  lockTime: number;
  /** The full serialization, witness included: a slice of the block, not a copy. */
  raw: Buffer;
  /** txid (hash of the non-witness serialization), internal byte order. */
  hash: Buffer;
  /** txid, display hex. */
  txid: string;
  hasWitness: boolean;
  /** Size of the non-witness serialization. */
  baseSize: number;
}

const ZERO_HASH = Buffer.alloc(32);

export function isCoinbaseInput(input: TxIn): boolean {
  return input.prevIndex === 0xffffffff && input.prevHash.equals(ZERO_HASH);
}

export function isCoinbase(tx: Tx): boolean {
  return tx.inputs.length === 1 && isCoinbaseInput(tx.inputs[0]!);
}

/** Reads one transaction at the reader's position (legacy or BIP144 segwit form). */
export function readTx(r: Reader): Tx {
  const start = r.pos;
  const version = r.u32('tx version');
  let hasWitness = false;
  if (r.remaining >= 2 && r.buf[r.pos] === 0x00 && r.buf[r.pos + 1] === 0x01) {
    hasWitness = true;
    r.pos += 2;
  }
  const bodyStart = r.pos;
  const nIn = r.count('input count', 41);
  const inputs: TxIn[] = new Array(nIn);
  for (let i = 0; i < nIn; i++) {
    const prevHash = r.bytes(32, 'prev_out hash');
    const prevIndex = r.u32('prev_out index');
    const script = r.varBytes('scriptSig');
    const sequence = r.u32('sequence');
    inputs[i] = { prevHash, prevIndex, script, sequence, witness: undefined };
  }
  const nOut = r.count('output count', 9);
  const outputs: TxOut[] = new Array(nOut);
  for (let i = 0; i < nOut; i++) {
    const value = r.u64('output value');
    const script = r.varBytes('scriptPubKey');
    outputs[i] = { value, script };
  }
  const bodyEnd = r.pos;
  if (hasWitness) {
    for (let i = 0; i < nIn; i++) {
      const nItems = r.count('witness item count', 1);
      const items: Buffer[] = new Array(nItems);
      for (let j = 0; j < nItems; j++) items[j] = r.varBytes('witness item');
      if (nItems > 0) inputs[i]!.witness = items;
    }
  }
  const lockStart = r.pos;
  const lockTime = r.u32('lock_time');
  const raw = r.buf.subarray(start, r.pos);
  const hash = hasWitness
    ? sha256dParts([r.buf.subarray(start, start + 4), r.buf.subarray(bodyStart, bodyEnd), r.buf.subarray(lockStart, lockStart + 4)])
    : sha256d(raw);
  const baseSize = hasWitness ? raw.length - (lockStart - bodyEnd) - 2 : raw.length;
  return { version, inputs, outputs, lockTime, raw, hash, txid: toDisplayHex(hash), hasWitness, baseSize };
}

/** Parses a standalone serialized transaction; trailing bytes are an error. */
export function parseTx(buf: Buffer): Tx {
  const r = new Reader(buf);
  const tx = readTx(r);
  if (r.remaining !== 0) throw new ParseError(`${r.remaining} trailing bytes after transaction`, r.pos);
  return tx;
}

/** wtxid (BIP141), display hex: equals the txid for transactions without witness. */
export function wtxid(tx: Tx): string {
  return tx.hasWitness ? toDisplayHex(sha256d(tx.raw)) : tx.txid;
}

/** Serialized size with witness data counted at 1/4 (BIP141 weight units). */
export function weight(tx: Tx): number {
  return tx.baseSize * 3 + tx.raw.length;
}

function varintBytes(n: number): Buffer {
  if (n < 0xfd) return Buffer.from([n]);
  if (n <= 0xffff) {
    const b = Buffer.alloc(3);
    b[0] = 0xfd;
    b.writeUInt16LE(n, 1);
    return b;
  }
  const b = Buffer.alloc(5);
  b[0] = 0xfe;
  b.writeUInt32LE(n, 1);
  return b;
}

/**
 * The original system's `nid` (bitcoin-ruby `normalized_hash`): sha256d of the
 * legacy serialization with every scriptSig emptied, followed by
 * SIGHASH_ALL as 4 LE bytes; display hex.
 */
export function normalizedId(tx: Tx): string {
  const parts: Buffer[] = [];
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0);
    return b;
  };
  parts.push(u32(tx.version), varintBytes(tx.inputs.length));
  for (const input of tx.inputs) {
    parts.push(input.prevHash, u32(input.prevIndex), Buffer.from([0]), u32(input.sequence));
  }
  parts.push(varintBytes(tx.outputs.length));
  for (const out of tx.outputs) {
    const v = Buffer.alloc(8);
    v.writeBigUInt64LE(out.value);
    parts.push(v, varintBytes(out.script.length), out.script);
  }
  parts.push(u32(tx.lockTime), u32(1));
  return toDisplayHex(sha256dParts(parts));
}

export { varintBytes };
