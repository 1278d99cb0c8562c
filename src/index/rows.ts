/**
 * Row codecs of the index: one key codec and one value codec per LMDB table (like electrs'
 * `types.rs`). This module and record-rows.ts (the variable-length rows of `heights` and
 * `meta`) are the only modules that know how index rows are laid out in bytes;
 * docs/index-schema.md lists the same layouts and test/index-fixtures.test.ts pins them byte
 * for byte. Integers in keys are big-endian (so that keys sort in chain order), integers in
 * values little-endian.
 */
import type { Codec } from './record-rows.js';

/** The main-chain input that spends an output. */
export interface SpenderRow {
  txHash: Buffer;
  vin: number;
}

/** Where a main-chain transaction sits: its block, index in the block and byte range in the block. */
export interface TxLocation {
  height: number;
  index: number;
  /** Byte offset of the transaction inside its block's raw bytes. */
  offset: number;
  length: number;
  /** Output indexes of its P2SH outputs (to classify the redeem script when one is spent). */
  p2sh: number[];
}

/** A chain position: height, tx index in the block, output index. */
export interface ChainPosition {
  height: number;
  txIndex: number;
  vout: number;
}

export interface AddrOutKey extends ChainPosition {
  address: string;
}

export interface AddrOutRow {
  value: bigint;
  txHash: Buffer;
}

export interface NameOpKey extends ChainPosition {
  name: Buffer;
}

/** The facts of a name operation (firstupdate or update); `rawtx` and `mrkl_branch` are computed at render time. */
export interface NameOpRow {
  op: 'name_firstupdate' | 'name_update';
  txHash: Buffer;
  /** The address the name output pays, if its script has one. */
  address: string | null;
  value: Buffer;
  /** The tx's merkle branch in its block (internal byte order, leaves upward); null when the block's txids are not unique. */
  branch: Buffer[] | null;
}

/** The empty value of set-like tables. */
export const empty: Codec<true> = { encode: () => Buffer.alloc(0), decode: () => true };

export const u32le: Codec<number> = {
  encode(n) {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32LE(n);
    return b;
  },
  decode: (b) => b.readUInt32LE(0),
};

/** txid (32, internal order): the key of txloc and coinbases. */
export const txHashKey: Codec<Buffer> = { encode: (h) => h, decode: (b) => b };

/** spent values: spender txid(32) ‖ u32 LE vin. */
export const spenderValue: Codec<SpenderRow> = {
  encode({ txHash, vin }) {
    const v = Buffer.allocUnsafe(36);
    v.set(txHash, 0);
    v.writeUInt32LE(vin, 32);
    return v;
  },
  decode: (b) => ({ txHash: b.subarray(0, 32), vin: b.readUInt32LE(32) }),
};

/** txloc values: u32 LE height ‖ index ‖ offset ‖ length ‖ the vout of each P2SH output (u32 LE each). */
export const txLocationValue: Codec<TxLocation> = {
  encode({ height, index, offset, length, p2sh }) {
    const v = Buffer.allocUnsafe(16 + 4 * p2sh.length);
    v.writeUInt32LE(height, 0);
    v.writeUInt32LE(index, 4);
    v.writeUInt32LE(offset, 8);
    v.writeUInt32LE(length, 12);
    for (let i = 0; i < p2sh.length; i++) v.writeUInt32LE(p2sh[i]!, 16 + 4 * i);
    return v;
  },
  decode(b) {
    const p2sh: number[] = [];
    for (let at = 16; at + 4 <= b.length; at += 4) p2sh.push(b.readUInt32LE(at));
    return { height: b.readUInt32LE(0), index: b.readUInt32LE(4), offset: b.readUInt32LE(8), length: b.readUInt32LE(12), p2sh };
  },
};

function positionKey(prefix: Buffer, p: ChainPosition): Buffer {
  const k = Buffer.allocUnsafe(prefix.length + 12);
  prefix.copy(k, 0);
  k.writeUInt32BE(p.height, prefix.length);
  k.writeUInt32BE(p.txIndex, prefix.length + 4);
  k.writeUInt32BE(p.vout, prefix.length + 8);
  return k;
}

function positionOf(b: Buffer): ChainPosition {
  const at = b.length - 12;
  return { height: b.readUInt32BE(at), txIndex: b.readUInt32BE(at + 4), vout: b.readUInt32BE(at + 8) };
}

const NO_PREFIX = Buffer.alloc(0);

/**
 * spent keys: the position of the spent output, u32 BE height ‖ tx index ‖ vout. The spends
 * of one block's (or one tx's) outputs are one key range (`outputRange`).
 */
export const outputKey: Codec<ChainPosition> = {
  encode: (p) => positionKey(NO_PREFIX, p),
  decode: positionOf,
};

/** The spent keys of the outputs of block `height`, or of its tx `txIndex` only. */
export function outputRange(height: number, txIndex?: number): { start: Buffer; end: Buffer } {
  if (txIndex === undefined) return { start: outputKey.encode({ height, txIndex: 0, vout: 0 }), end: outputKey.encode({ height: height + 1, txIndex: 0, vout: 0 }) };
  return { start: outputKey.encode({ height, txIndex, vout: 0 }), end: outputKey.encode({ height, txIndex: txIndex + 1, vout: 0 }) };
}

/** The key just after every key starting with `prefix` (for range ends). */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]!++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.concat([prefix, Buffer.from([0xff])]);
}

/** The `addrOuts` keys of an address (they sort by address, then chain position): a range's start and end. */
export function addressRange(address: string): { start: Buffer; end: Buffer } {
  const start = Buffer.from(address + '\0', 'latin1');
  return { start, end: prefixEnd(start) };
}

/** addrOuts keys: address ‖ 0x00 ‖ u32 BE height ‖ tx index ‖ vout (one buffer, written in place: one per output scanned). */
export const addrOutKey: Codec<AddrOutKey> = {
  encode(k) {
    const n = k.address.length; // latin1: one byte per character
    const key = Buffer.allocUnsafe(n + 13);
    key.write(k.address, 0, n, 'latin1');
    key[n] = 0;
    key.writeUInt32BE(k.height, n + 1);
    key.writeUInt32BE(k.txIndex, n + 5);
    key.writeUInt32BE(k.vout, n + 9);
    return key;
  },
  decode: (b) => ({ address: b.subarray(0, b.length - 13).toString('latin1'), ...positionOf(b) }),
};

/** addrOuts values: u64 LE value ‖ txid(32). */
export const addrOutValue: Codec<AddrOutRow> = {
  encode({ value, txHash }) {
    const v = Buffer.allocUnsafe(40);
    v.writeBigUInt64LE(value, 0);
    v.set(txHash, 8);
    return v;
  },
  decode: (b) => ({ value: b.readBigUInt64LE(0), txHash: b.subarray(8, 40) }),
};

/** Name operations sort by name, then chain position: u16 BE length ‖ name. */
export function namePrefix(name: Uint8Array): Buffer {
  const p = Buffer.allocUnsafe(2 + name.length);
  p.writeUInt16BE(name.length, 0);
  p.set(name, 2);
  return p;
}

/** names keys: u16 BE name length ‖ name ‖ u32 BE height ‖ tx index ‖ vout. */
export const nameOpKey: Codec<NameOpKey> = {
  encode: (k) => positionKey(namePrefix(k.name), k),
  decode: (b) => ({ name: b.subarray(2, 2 + b.readUInt16BE(0)), ...positionOf(b) }),
};

const OPS = ['name_firstupdate', 'name_update'] as const;

/**
 * names values: u8 op (0 firstupdate, 1 update) ‖ txid(32) ‖ u8 branch length n (0xff: the
 * block's txids are not unique) ‖ n × 32 merkle branch ‖ u8 address length (0xff: none) ‖
 * address ‖ value.
 */
export const nameOpValue: Codec<NameOpRow> = {
  encode({ op, txHash, address, value, branch }) {
    const addr = address === null ? Buffer.alloc(0) : Buffer.from(address, 'latin1');
    const n = branch?.length ?? 0;
    const v = Buffer.allocUnsafe(35 + 32 * n + addr.length + value.length);
    v[0] = OPS.indexOf(op);
    v.set(txHash, 1);
    v[33] = branch === null ? 0xff : n;
    for (let i = 0; i < n; i++) v.set(branch![i]!, 34 + 32 * i);
    let at = 34 + 32 * n;
    v[at++] = address === null ? 0xff : addr.length;
    addr.copy(v, at);
    v.set(value, at + addr.length);
    return v;
  },
  decode(b) {
    const n = b[33]!;
    const branch: Buffer[] | null = n === 0xff ? null : [];
    for (let i = 0; branch && i < n; i++) branch.push(b.subarray(34 + 32 * i, 66 + 32 * i));
    const at = 34 + (branch ? 32 * n : 0);
    const len = b[at]!;
    const addrLen = len === 0xff ? 0 : len;
    return {
      op: OPS[b[0]!]!,
      txHash: b.subarray(1, 33),
      branch,
      address: len === 0xff ? null : b.subarray(at + 1, at + 1 + addrLen).toString('latin1'),
      value: b.subarray(at + 1 + addrLen),
    };
  },
};

/** A side or orphan block (the offchain table). */
export interface OffChainRecord {
  kind: 'side' | 'orphan';
  height: number | null;
  raw: Buffer;
}

/** offchain values: u8 kind (0 side, 1 orphan) ‖ u32 height (0xffffffff: none) ‖ raw block. */
export const offChainValue: Codec<OffChainRecord> = {
  encode({ kind, height, raw }) {
    const v = Buffer.allocUnsafe(5 + raw.length);
    v[0] = kind === 'side' ? 0 : 1;
    v.writeUInt32LE(height ?? 0xffffffff, 1);
    v.set(raw, 5);
    return v;
  },
  decode(b) {
    const h = b.readUInt32LE(1);
    return { kind: b[0] === 0 ? 'side' : 'orphan', height: h === 0xffffffff ? null : h, raw: b.subarray(5) };
  },
};

export {
  heightValue,
  metaValue,
  snapshotValue,
  undoneValue,
  type HeightRecord,
  type MetaRow,
  type PublishedSnapshot,
  type UndoneBlock,
  type Codec,
} from './record-rows.js';
