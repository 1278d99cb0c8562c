/**
 * Codecs of the variable-length rows of the index: `heights` values and the `meta` table's
 * rows (meta, published/pending snapshots, undone blocks). Fields are little-endian; strings and
 * byte strings are u32 length ‖ bytes. Layouts: docs/index-schema.md.
 */
import type { Counters } from './stats.js';

/** A row's bytes from its value and back (rows.ts re-exports it with the fixed-size rows' codecs). */
export interface Codec<T> {
  encode(v: T): Buffer;
  decode(b: Buffer): T;
}

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
