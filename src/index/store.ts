import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';

/** Bumped whenever the layout below changes: an index of another format means a full build. */
export const STORE_FORMAT = 3;

/**
 * The persistent index (LMDB) beside the output: everything that needs
 * global knowledge and would not fit in JS maps on a real chain, kept
 * between runs so that the next build only does the new work.
 * - meta:      string → msgpack (format, network, tip, totals, generation…)
 * - heights:   u32 height → HeightRecord
 * - spent:     outpoint(36) → spender txid(32, internal) ‖ vin(u32 LE)
 * - p2sh:      outpoint(36) → '' for every P2SH output (to classify its spend)
 * - coinbases: txid(32) → u32 height   (BIP30 duplicate detection)
 * - txloc:     txid(32) → u32 height ‖ u32 index in block ‖ u32 offset in block ‖ u32 length (LE)
 * - addrOuts:  address ‖ 0x00 ‖ u32 height ‖ u32 tx index ‖ u32 vout (BE) → u64 value ‖ txid(32)
 * - addrCount: address → u32 outputs paid to it
 * - names:     u16 len ‖ name ‖ u32 height ‖ u32 tx index ‖ u32 vout (BE) → NameOpRecord
 * - offchain:  block hash (display hex) → { kind, height, raw }
 * - files:     path → u64 size ‖ sha256(32): the manifest of the published tree
 */
export interface Store {
  root: RootDatabase;
  meta: Database<unknown, string>;
  heights: Database<HeightRecord, number>;
  spent: Database<Buffer, Buffer>;
  p2sh: Database<Buffer, Buffer>;
  coinbases: Database<Buffer, Buffer>;
  txloc: Database<Buffer, Buffer>;
  addrOuts: Database<Buffer, Buffer>;
  addrCount: Database<Buffer, string>;
  names: Database<NameOpRecord, Buffer>;
  offchain: Database<OffChainRecord, string>;
  files: Database<Buffer, string>;
  close(): Promise<void>;
}

/** Per-height figures, so a rollback can subtract exactly what a block added. */
export interface CounterDelta {
  txs: number;
  txins: number;
  txouts: number;
  size: number;
  nameOps: number;
  scriptTypes: Record<string, number>;
  p2shTypes: Record<string, number>;
}

export interface HeightRecord {
  hash: string;
  offset: number;
  length: number;
  time: number;
  /** Cumulative chain work up to this block, decimal digits. */
  work: string;
  delta: CounterDelta;
}

export interface OffChainRecord {
  kind: 'side' | 'orphan';
  height: number | null;
  raw: Buffer;
}

export interface NameOpRecord {
  op: 'name_firstupdate' | 'name_update';
  name: Buffer;
  value: Buffer;
  txid: string;
  vout: number;
  address: string | null;
  height: number;
  block: string;
  txIndex: number;
  rawtx: string;
  mrklBranch: (string | null)[];
}

export function openStore(dir: string): Store {
  const path = join(dir, 'lmdb');
  mkdirSync(path, { recursive: true });
  const root = open({ path, noSubdir: false, noSync: true, noMemInit: true, maxDbs: 16, remapChunks: true }) as RootDatabase;
  const binary = { keyEncoding: 'binary', encoding: 'binary' } as const;
  return {
    root,
    meta: root.openDB<unknown, string>('meta', {}),
    heights: root.openDB<HeightRecord, number>('heights', { keyEncoding: 'uint32' }),
    spent: root.openDB<Buffer, Buffer>('spent', binary),
    p2sh: root.openDB<Buffer, Buffer>('p2sh', binary),
    coinbases: root.openDB<Buffer, Buffer>('coinbases', binary),
    txloc: root.openDB<Buffer, Buffer>('txloc', binary),
    addrOuts: root.openDB<Buffer, Buffer>('addrOuts', binary),
    addrCount: root.openDB<Buffer, string>('addrCount', { encoding: 'binary' }),
    names: root.openDB<NameOpRecord, Buffer>('names', { keyEncoding: 'binary', encoding: 'msgpack' }),
    offchain: root.openDB<OffChainRecord, string>('offchain', { encoding: 'msgpack' }),
    files: root.openDB<Buffer, string>('files', { encoding: 'binary' }),
    close: () => root.close(),
  };
}

/** True for an error thrown by LMDB (its errno is a number; Node's are strings). */
export function isStoreError(e: unknown): boolean {
  return typeof (e as { code?: unknown })?.code === 'number' || /[\\/]lmdb[\\/]/.test(String((e as Error)?.stack ?? ''));
}

export function outpointKey(txHash: Uint8Array, vout: number): Buffer {
  const k = Buffer.allocUnsafe(36);
  k.set(txHash, 0);
  k.writeUInt32BE(vout, 32);
  return k;
}

function positionKey(prefix: Buffer, height: number, txIndex: number, vout: number): Buffer {
  const k = Buffer.allocUnsafe(prefix.length + 12);
  prefix.copy(k, 0);
  k.writeUInt32BE(height, prefix.length);
  k.writeUInt32BE(txIndex, prefix.length + 4);
  k.writeUInt32BE(vout, prefix.length + 8);
  return k;
}

/** Name operations sort by name, then chain position. */
export function namePrefix(name: Uint8Array): Buffer {
  const p = Buffer.allocUnsafe(2 + name.length);
  p.writeUInt16BE(name.length, 0);
  p.set(name, 2);
  return p;
}

export function nameKey(name: Uint8Array, height: number, txIndex: number, vout: number): Buffer {
  return positionKey(namePrefix(name), height, txIndex, vout);
}

/** Outputs paid to an address sort by address, then chain position. */
export function addressPrefix(address: string): Buffer {
  return Buffer.from(address + '\0', 'latin1');
}

export function addrOutKey(address: string, height: number, txIndex: number, vout: number): Buffer {
  return positionKey(addressPrefix(address), height, txIndex, vout);
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
