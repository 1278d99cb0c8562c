/**
 * Row codecs of the index: one key codec and one value codec per LMDB table (like electrs'
 * `types.rs`). This is the only module that knows how index rows are laid out in bytes;
 * docs/index-schema.md lists the same layouts. Integers in keys are big-endian (so that keys
 * sort in chain order), integers in values little-endian.
 */

/** An output of a transaction: `txHash` in internal byte order. */
export interface OutPoint {
  txHash: Buffer;
  vout: number;
}

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
}

/** One file of the published tree (the manifest database). */
export interface ManifestEntry {
  size: number;
  sha256: Buffer;
}

export interface Codec<T> {
  encode(v: T): Buffer;
  decode(b: Buffer): T;
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

/** spent and p2sh keys: txid(32) ‖ u32 BE vout. */
export const outPointKey: Codec<OutPoint> = {
  encode({ txHash, vout }) {
    const k = Buffer.allocUnsafe(36);
    k.set(txHash, 0);
    k.writeUInt32BE(vout, 32);
    return k;
  },
  decode: (b) => ({ txHash: b.subarray(0, 32), vout: b.readUInt32BE(32) }),
};

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

/** txloc values: u32 LE height ‖ index ‖ offset ‖ length. */
export const txLocationValue: Codec<TxLocation> = {
  encode({ height, index, offset, length }) {
    const v = Buffer.allocUnsafe(16);
    v.writeUInt32LE(height, 0);
    v.writeUInt32LE(index, 4);
    v.writeUInt32LE(offset, 8);
    v.writeUInt32LE(length, 12);
    return v;
  },
  decode: (b) => ({ height: b.readUInt32LE(0), index: b.readUInt32LE(4), offset: b.readUInt32LE(8), length: b.readUInt32LE(12) }),
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

/** Outputs paid to an address sort by address, then chain position. */
export function addressPrefix(address: string): Buffer {
  return Buffer.from(address + '\0', 'latin1');
}

/** addrOuts keys: address ‖ 0x00 ‖ u32 BE height ‖ tx index ‖ vout. */
export const addrOutKey: Codec<AddrOutKey> = {
  encode: (k) => positionKey(addressPrefix(k.address), k),
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

/** names values: u8 op (0 firstupdate, 1 update) ‖ txid(32) ‖ u8 address length (0xff: none) ‖ address ‖ value. */
export const nameOpValue: Codec<NameOpRow> = {
  encode({ op, txHash, address, value }) {
    const addr = address === null ? Buffer.alloc(0) : Buffer.from(address, 'latin1');
    const v = Buffer.allocUnsafe(34 + addr.length + value.length);
    v[0] = OPS.indexOf(op);
    v.set(txHash, 1);
    v[33] = address === null ? 0xff : addr.length;
    addr.copy(v, 34);
    v.set(value, 34 + addr.length);
    return v;
  },
  decode(b) {
    const len = b[33]!;
    const addrLen = len === 0xff ? 0 : len;
    return {
      op: OPS[b[0]!]!,
      txHash: b.subarray(1, 33),
      address: len === 0xff ? null : b.subarray(34, 34 + addrLen).toString('latin1'),
      value: b.subarray(34 + addrLen),
    };
  },
};

/** files values: u64 LE size ‖ sha256(32). */
export const manifestValue: Codec<ManifestEntry> = {
  encode({ size, sha256 }) {
    const v = Buffer.allocUnsafe(40);
    v.writeBigUInt64LE(BigInt(size), 0);
    v.set(sha256, 8);
    return v;
  },
  decode: (b) => ({ size: Number(b.readBigUInt64LE(0)), sha256: b.subarray(8, 40) }),
};
