import { existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { Network } from '../chain/networks.js';
import { STORE_FORMAT, type CounterDelta, type Store } from './store.js';

/** What the index remembers about the snapshot it was last published with. */
export interface IndexMeta {
  format: number;
  network: string;
  genesis: string;
  /** Build options that change file contents; another value means a full build. */
  options: string;
  /** Height of the indexed tip (-1: empty). */
  tip: number;
  /** sha256 of the published `_manifest.json`, or 'dirty' while a build is changing the index. */
  generation: string;
  totals: CounterDelta;
  capped: string[];
  offchain: string[];
  duplicates: { txid: string; height: number }[];
}

export function emptyMeta(net: Network, options: string): IndexMeta {
  return {
    format: STORE_FORMAT,
    network: net.name,
    genesis: net.genesis,
    options,
    tip: -1,
    generation: 'dirty',
    totals: { txs: 0, txins: 0, txouts: 0, size: 0, nameOps: 0, scriptTypes: {}, p2shTypes: {} },
    capped: [],
    offchain: [],
    duplicates: [],
  };
}

export function readMeta(store: Store): IndexMeta | undefined {
  return store.meta.get('meta') as IndexMeta | undefined;
}

export function saveMeta(store: Store, meta: IndexMeta): void {
  store.meta.putSync('meta', meta);
}

export function manifestHash(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Why the index cannot extend the published tree (undefined: it can). */
export function reuseProblem(meta: IndexMeta | undefined, manifestPath: string, net: Network, options: string): string | undefined {
  if (!meta) return 'no index yet';
  if (meta.format !== STORE_FORMAT) return `index format ${meta.format}, this version uses ${STORE_FORMAT}`;
  if (meta.network !== net.name || meta.genesis !== net.genesis) return `index is for ${meta.network}, not ${net.name}`;
  if (meta.options !== options) return 'build options changed';
  if (meta.generation === 'dirty') return 'the previous build did not finish';
  const published = manifestHash(manifestPath);
  if (published === undefined) return 'no published snapshot';
  if (published !== meta.generation) return 'the published snapshot is not the one the index describes';
  return undefined;
}

export function addDelta(total: CounterDelta, d: CounterDelta, sign: 1 | -1): void {
  total.txs += sign * d.txs;
  total.txins += sign * d.txins;
  total.txouts += sign * d.txouts;
  total.size += sign * d.size;
  total.nameOps += sign * d.nameOps;
  for (const [k, v] of Object.entries(d.scriptTypes)) total.scriptTypes[k] = (total.scriptTypes[k] ?? 0) + sign * v;
  for (const [k, v] of Object.entries(d.p2shTypes)) total.p2shTypes[k] = (total.p2shTypes[k] ?? 0) + sign * v;
}
