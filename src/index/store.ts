import { mkdirSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';

/**
 * The build's embedded store (LMDB): everything that needs global knowledge
 * and would not fit in JS maps on a real chain.
 * - spent:   outpoint(36) → spender txid(32, internal) ‖ vin(u32 LE)
 * - p2sh:    outpoint(36) → '' for every P2SH output (to classify its spend)
 * - names:   u16 len ‖ name ‖ u32 seq → NameOpRecord (msgpack)
 * - coinbases: txid(32) → ''   (BIP30 duplicate detection)
 */
export interface Store {
  root: RootDatabase;
  spent: Database<Buffer, Buffer>;
  p2sh: Database<Buffer, Buffer>;
  names: Database<NameOpRecord, Buffer>;
  coinbases: Database<Buffer, Buffer>;
  close(): Promise<void>;
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
  mkdirSync(dir, { recursive: true });
  const root = open({ path: dir, noSync: true, noMemInit: true, maxDbs: 8, mapSize: 2 ** 36 }) as RootDatabase;
  const binary = { keyEncoding: 'binary', encoding: 'binary' } as const;
  const spent = root.openDB<Buffer, Buffer>('spent', binary);
  const p2sh = root.openDB<Buffer, Buffer>('p2sh', binary);
  const names = root.openDB<NameOpRecord, Buffer>('names', { keyEncoding: 'binary', encoding: 'msgpack' });
  const coinbases = root.openDB<Buffer, Buffer>('coinbases', binary);
  return { root, spent, p2sh, names, coinbases, close: () => root.close() };
}

export function outpointKey(txHash: Uint8Array, vout: number): Buffer {
  const k = Buffer.allocUnsafe(36);
  k.set(txHash, 0);
  k.writeUInt32BE(vout, 32);
  return k;
}

export function nameKey(name: Uint8Array, seq: number): Buffer {
  const k = Buffer.allocUnsafe(2 + name.length + 4);
  k.writeUInt16BE(name.length, 0);
  k.set(name, 2);
  k.writeUInt32BE(seq, 2 + name.length);
  return k;
}
