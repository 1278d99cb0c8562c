/**
 * Row codecs of the index: one key codec and one value codec per LMDB table (like electrs'
 * `types.rs`). This is the only module that knows how index rows are laid out in bytes;
 * docs/index-schema.md lists the same layouts. Integers in keys are big-endian (so that keys
 * sort in chain order), integers in values little-endian.
 */
import type { Counters } from './stats.js';

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

/** A main-chain block's record (the heights table). */
export interface HeightRecord {
  /** Block hash, display hex. */
  hash: string;
  /** Where the block sits in the spill. */
  offset: number;
  length: number;
  /** Header time. */
  time: number;
  /** Cumulative chain work up to this block, decimal digits. */
  work: string;
  /** The figures this block adds, so a rollback can subtract exactly them. */
  delta: Counters;
}

/** A side or orphan block (the offchain table). */
export interface OffChainRecord {
  kind: 'side' | 'orphan';
  height: number | null;
  raw: Buffer;
}

/** Appends little-endian fields and length-prefixed strings (the variable-length rows below). */
class RowWriter {
  private readonly parts: Buffer[] = [];
  private cur = Buffer.allocUnsafe(256);
  private at = 0;

  private room(n: number): void {
    if (this.at + n <= this.cur.length) return;
    this.parts.push(this.cur.subarray(0, this.at));
    this.cur = Buffer.allocUnsafe(Math.max(256, n));
    this.at = 0;
  }
  u8(n: number): this {
    this.room(1);
    this.cur[this.at++] = n;
    return this;
  }
  u32(n: number): this {
    this.room(4);
    this.at = this.cur.writeUInt32LE(n, this.at);
    return this;
  }
  /** A whole number up to 2^53 (u64 LE). */
  u64(n: number): this {
    this.room(8);
    this.at = this.cur.writeBigUInt64LE(BigInt(n), this.at);
    return this;
  }
  /** u32 LE byte length ‖ bytes. */
  bytes(b: Uint8Array): this {
    this.u32(b.length);
    this.room(b.length);
    this.cur.set(b, this.at);
    this.at += b.length;
    return this;
  }
  str(s: string): this {
    return this.bytes(Buffer.from(s, 'utf8'));
  }
  done(): Buffer {
    return Buffer.concat([...this.parts, this.cur.subarray(0, this.at)]);
  }
}

class RowReader {
  at = 0;
  constructor(private readonly b: Buffer) {}
  private need(n: number): number {
    if (this.at + n > this.b.length) throw new RangeError(`index row ends at byte ${this.b.length}, ${n} more needed at ${this.at}`);
    const at = this.at;
    this.at += n;
    return at;
  }
  u8(): number {
    return this.b[this.need(1)]!;
  }
  u32(): number {
    return this.b.readUInt32LE(this.need(4));
  }
  u64(): number {
    return Number(this.b.readBigUInt64LE(this.need(8)));
  }
  bytes(): Buffer {
    const n = this.u32();
    return this.b.subarray(this.need(n), this.at);
  }
  str(): string {
    return this.bytes().toString('utf8');
  }
  end(): void {
    if (this.at !== this.b.length) throw new RangeError(`index row has ${this.b.length - this.at} bytes after its last field`);
  }
}

/** Counters: u64 txs, txins, txouts, size, nameOps ‖ script types ‖ P2SH types (u32 count ‖ (str name ‖ u64 n)*). */
function writeCounters(w: RowWriter, c: Counters): void {
  w.u64(c.txs).u64(c.txins).u64(c.txouts).u64(c.size).u64(c.nameOps);
  for (const rec of [c.scriptTypes, c.p2shTypes]) {
    const entries = Object.entries(rec);
    w.u32(entries.length);
    for (const [k, v] of entries) w.str(k).u64(v);
  }
}

function readCounters(r: RowReader): Counters {
  const [txs, txins, txouts, size, nameOps] = [r.u64(), r.u64(), r.u64(), r.u64(), r.u64()];
  const [scriptTypes, p2shTypes] = [0, 1].map(() => {
    const rec: Record<string, number> = {};
    for (let n = r.u32(); n > 0; n--) rec[r.str()] = r.u64();
    return rec;
  }) as [Record<string, number>, Record<string, number>];
  return { txs, txins, txouts, size, nameOps, scriptTypes, p2shTypes };
}

/**
 * heights values: block hash(32, display order) ‖ u64 spill offset ‖ u32 length ‖ u32 time ‖
 * work (u32 length ‖ big-endian bytes) ‖ Counters.
 */
export const heightValue: Codec<HeightRecord> = {
  encode({ hash, offset, length, time, work, delta }) {
    const w = new RowWriter();
    const hex = BigInt(work).toString(16);
    w.bytes(Buffer.from(hash, 'hex')).u64(offset).u32(length).u32(time).bytes(Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex'));
    writeCounters(w, delta);
    return w.done();
  },
  decode(b) {
    const r = new RowReader(b);
    const hash = r.bytes().toString('hex');
    const offset = r.u64();
    const length = r.u32();
    const time = r.u32();
    const work = r.bytes();
    const rec = { hash, offset, length, time, work: work.length ? BigInt(`0x${work.toString('hex')}`).toString() : '0', delta: readCounters(r) };
    r.end();
    return rec;
  },
};

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

/** A snapshot published from the index (or being published): what the next build starts from. */
export interface PublishedSnapshot {
  /** sha256 of its `_manifest.json`. */
  generation: string;
  height: number;
  /** Its tip's hash. */
  hash: string;
  /** Its capped addresses and off-chain blocks: documents a later build may have to replace. */
  capped: string[];
  offchain: string[];
}

/** A main-chain block the index undid, and where its bytes still are (to apply it again). */
export type UndoneBlock = { height: number } & Omit<HeightRecord, 'delta'>;

/** The meta row: the state of the index's rows, committed in the same transaction as they are. */
export interface MetaRow {
  format: number;
  network: string;
  genesis: string;
  /** Build options that change file contents; another value means a full build. */
  options: string;
  /** Height of the indexed tip (-1: empty). */
  tip: number;
  totals: Counters;
  /** Addresses paid by at least one main-chain output (stats.json's `addrs`). */
  addresses: number;
  duplicates: { txid: string; height: number }[];
}

/** The first bytes of a meta value of this layout (older indexes stored msgpack there). */
const META_MAGIC = Buffer.from('csix', 'latin1');

/**
 * meta value (key `'meta'`): 'csix' ‖ u32 format ‖ str network, genesis, options ‖ u32 tip + 1 ‖
 * Counters totals ‖ u32 addresses ‖ duplicates (u32 count ‖ (str txid ‖ u32 height)*). Strings
 * are u32 length ‖ UTF-8. `formatOf` reads just the format, so an index of another layout is
 * recognised before decoding.
 */
export const metaValue: Codec<MetaRow> & { formatOf(b: Buffer): number } = {
  encode(m) {
    const w = new RowWriter();
    w.u8(META_MAGIC[0]!).u8(META_MAGIC[1]!).u8(META_MAGIC[2]!).u8(META_MAGIC[3]!);
    w.u32(m.format).str(m.network).str(m.genesis).str(m.options).u32(m.tip + 1);
    writeCounters(w, m.totals);
    w.u32(m.addresses);
    w.u32(m.duplicates.length);
    for (const d of m.duplicates) w.str(d.txid).u32(d.height);
    return w.done();
  },
  decode(b) {
    const r = new RowReader(b);
    r.at = 4;
    const m = { format: r.u32(), network: r.str(), genesis: r.str(), options: r.str(), tip: r.u32() - 1, totals: readCounters(r), addresses: r.u32() };
    const duplicates = Array.from({ length: r.u32() }, () => ({ txid: r.str(), height: r.u32() }));
    r.end();
    return { ...m, duplicates };
  },
  formatOf: (b) => (b.length >= 8 && b.subarray(0, 4).equals(META_MAGIC) ? b.readUInt32LE(4) : 0),
};

/**
 * published and pending values (keys `'published'`, `'pending'`): str generation ‖ u32 height ‖
 * str hash ‖ string lists capped, offchain (u32 count ‖ str*).
 */
export const snapshotValue: Codec<PublishedSnapshot> = {
  encode(s) {
    const w = new RowWriter();
    w.str(s.generation).u32(s.height).str(s.hash);
    for (const list of [s.capped, s.offchain]) {
      w.u32(list.length);
      for (const x of list) w.str(x);
    }
    return w.done();
  },
  decode(b) {
    const r = new RowReader(b);
    const s = { generation: r.str(), height: r.u32(), hash: r.str() };
    const [capped, offchain] = [0, 1].map(() => Array.from({ length: r.u32() }, () => r.str())) as [string[], string[]];
    r.end();
    return { ...s, capped, offchain };
  },
};

/** undone values (keys `'undone/'` ‖ height in 10 decimal digits): u32 height ‖ str hash ‖ u64 offset ‖ u32 length ‖ u32 time ‖ str work. */
export const undoneValue: Codec<UndoneBlock> = {
  encode(u) {
    return new RowWriter().u32(u.height).str(u.hash).u64(u.offset).u32(u.length).u32(u.time).str(u.work).done();
  },
  decode(b) {
    const r = new RowReader(b);
    const u = { height: r.u32(), hash: r.str(), offset: r.u64(), length: r.u32(), time: r.u32(), work: r.str() };
    r.end();
    return u;
  },
};
