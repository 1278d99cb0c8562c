import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { Counters } from './stats.js';

/** Bumped whenever the layout below changes: an index of another format means a full build. */
export const STORE_FORMAT = 4;

/**
 * The persistent index (LMDB) beside the output: everything that needs
 * global knowledge and would not fit in JS maps on a real chain, kept
 * between runs so that the next build only does the new work. The tables and
 * their row layouts: docs/index-schema.md; the row codecs: rows.ts.
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
  names: Database<Buffer, Buffer>;
  offchain: Database<OffChainRecord, string>;
  files: Database<Buffer, string>;
  close(): Promise<void>;
}

export interface HeightRecord {
  hash: string;
  offset: number;
  length: number;
  time: number;
  /** Cumulative chain work up to this block, decimal digits. */
  work: string;
  /** The figures this block adds, so a rollback can subtract exactly them. */
  delta: Counters;
}

export interface OffChainRecord {
  kind: 'side' | 'orphan';
  height: number | null;
  raw: Buffer;
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
    names: root.openDB<Buffer, Buffer>('names', binary),
    offchain: root.openDB<OffChainRecord, string>('offchain', { encoding: 'msgpack' }),
    files: root.openDB<Buffer, string>('files', { encoding: 'binary' }),
    close: () => root.close(),
  };
}

/** True for an error thrown by LMDB (its errno is a number; Node's are strings). */
export function isStoreError(e: unknown): boolean {
  return typeof (e as { code?: unknown })?.code === 'number' || /[\\/]lmdb[\\/]/.test(String((e as Error)?.stack ?? ''));
}
