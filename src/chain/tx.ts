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

/**
 * Reads one transaction at the reader's position (legacy or BIP144 segwit form). `knownHash`:
 * its txid when the caller already has it (read back from the index), so it is not hashed again.
 */
export function readTx(r: Reader, knownHash?: Buffer): Tx {
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
    // Core's "Superfluous witness record": the extended form with only empty stacks is not a tx.
    if (!inputs.some((i) => i.witness)) throw new ParseError('superfluous witness record: the segwit marker with every witness stack empty', start + 4);
  }
  const lockStart = r.pos;
  const lockTime = r.u32('lock_time');
  const raw = r.buf.subarray(start, r.pos);
  const hash =
    knownHash ??
    (hasWitness
      ? sha256dParts([r.buf.subarray(start, start + 4), r.buf.subarray(bodyStart, bodyEnd), r.buf.subarray(lockStart, lockStart + 4)])
      : sha256d(raw));
  const baseSize = hasWitness ? raw.length - (lockStart - bodyEnd) - 2 : raw.length;
  return { version, inputs, outputs, lockTime, raw, hash, txid: toDisplayHex(hash), hasWitness, baseSize };
}

/** Parses a standalone serialized transaction; trailing bytes are an error. `knownHash`: see readTx. */
export function parseTx(buf: Buffer, knownHash?: Buffer): Tx {
  const r = new Reader(buf);
  const tx = readTx(r, knownHash);
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

const varintSize = (n: number) => (n < 0xfd ? 1 : n <= 0xffff ? 3 : 5);

function writeVarint(b: Buffer, at: number, n: number): number {
  if (n < 0xfd) return b.writeUInt8(n, at);
  if (n <= 0xffff) return b.writeUInt16LE(n, b.writeUInt8(0xfd, at));
  return b.writeUInt32LE(n, b.writeUInt8(0xfe, at));
}

/** Computed once per transaction: the tx document and its block's document both show it. */
const nids = new WeakMap<Tx, string>();

/**
 * The original system's `nid` (bitcoin-ruby `normalized_hash`): sha256d of the
 * legacy serialization with every scriptSig emptied, followed by
 * SIGHASH_ALL as 4 LE bytes; display hex.
 */
export function normalizedId(tx: Tx): string {
  const known = nids.get(tx);
  if (known !== undefined) return known;
  // The outputs (count, values, scripts) are copied from the tx's bytes in one piece: they sit
  // there exactly as the legacy serialization has them.
  const outputs = outputsBytes(tx);
  const b = Buffer.allocUnsafe(4 + varintSize(tx.inputs.length) + 41 * tx.inputs.length + outputs.length + 8);
  let at = b.writeUInt32LE(tx.version >>> 0, 0);
  at = writeVarint(b, at, tx.inputs.length);
  for (const input of tx.inputs) {
    at += input.prevHash.copy(b, at);
    at = b.writeUInt32LE(input.prevIndex >>> 0, at);
    at = b.writeUInt8(0, at);
    at = b.writeUInt32LE(input.sequence >>> 0, at);
  }
  at += outputs.copy(b, at);
  at = b.writeUInt32LE(tx.lockTime >>> 0, at);
  b.writeUInt32LE(1, at);
  const nid = toDisplayHex(sha256d(b));
  nids.set(tx, nid);
  return nid;
}

/**
 * The output count and outputs in the legacy serialization: a slice of the tx's bytes (the parser
 * accepts canonical CompactSizes only, so they are exactly these bytes), written out for a tx
 * whose scripts are not slices of its bytes.
 */
function outputsBytes(tx: Tx): Buffer {
  const n = tx.outputs.length;
  let size = varintSize(n);
  for (const out of tx.outputs) size += 8 + varintSize(out.script.length) + out.script.length;
  const lastIn = tx.inputs[tx.inputs.length - 1]?.script;
  const lastOut = tx.outputs[n - 1]?.script;
  if (lastIn && lastOut && lastIn.buffer === tx.raw.buffer && lastOut.buffer === tx.raw.buffer) {
    // From just after the last input's sequence to the end of the last output's script; longer than `size` if not canonical.
    const start = lastIn.byteOffset - tx.raw.byteOffset + lastIn.length + 4;
    const end = lastOut.byteOffset - tx.raw.byteOffset + lastOut.length;
    if (end - start === size) return tx.raw.subarray(start, end);
  }
  const b = Buffer.allocUnsafe(size);
  let at = writeVarint(b, 0, n);
  for (const out of tx.outputs) {
    at = b.writeBigUInt64LE(out.value, at);
    at = writeVarint(b, at, out.script.length);
    at += out.script.copy(b, at);
  }
  return b;
}

export { varintBytes };
