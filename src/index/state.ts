import { existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { Network } from '../chain/networks.js';
import { emptyDelta, type Counters } from './stats.js';
import { openStore, STORE_FORMAT, type Store } from './store.js';

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
  totals: Counters;
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
    totals: emptyDelta(),
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

/**
 * Opens the index in `stateDir` and decides whether it can extend the published tree; when it
 * cannot (`fullReason`), the state directory is emptied (`clear`) and a fresh index opened.
 */
export async function openIndex(
  stateDir: string,
  net: Network,
  options: string,
  how: { full: boolean; manifestPath: string; genesisOfSource: () => Promise<string>; clear: () => void; note: (line: string) => void },
): Promise<{ store: Store; meta: IndexMeta; fullReason: string | undefined }> {
  let store = openStore(stateDir);
  let meta = readMeta(store);
  let fullReason = how.full ? 'asked for a full build' : reuseProblem(meta, how.manifestPath, net, options);
  if (!fullReason && meta && meta.tip >= 0 && (await how.genesisOfSource()) !== store.heights.get(0)?.hash) fullReason = 'the source is another chain';
  if (fullReason || !meta) {
    if (fullReason && existsSync(how.manifestPath)) how.note(`full build: ${fullReason}`);
    await store.close();
    how.clear();
    store = openStore(stateDir);
    meta = emptyMeta(net, options);
  }
  meta.generation = 'dirty';
  saveMeta(store, meta);
  return { store, meta, fullReason };
}
