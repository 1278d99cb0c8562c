import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { Network } from '../chain/networks.js';
import { emptyDelta } from './stats.js';
import { metaValue, type IndexMeta } from './rows.js';
import { heightRecordAt, openStore, STORE_FORMAT, type Store } from './store.js';

export type { IndexMeta };

export function emptyMeta(net: Network, options: string): IndexMeta {
  return {
    format: STORE_FORMAT,
    network: net.name,
    genesis: net.genesis,
    options,
    tip: -1,
    generation: 'dirty',
    totals: emptyDelta(),
    addresses: 0,
    capped: [],
    offchain: [],
    duplicates: [],
  };
}

/** The stored meta row: its format, and the meta itself when the format is this version's. */
export function readMeta(store: Store): { format: number; meta: IndexMeta | undefined } | undefined {
  const v = store.meta.get('meta');
  if (!v) return undefined;
  const format = metaValue.formatOf(v);
  return { format, meta: format === STORE_FORMAT ? metaValue.decode(v) : undefined };
}

export function saveMeta(store: Store, meta: IndexMeta): void {
  store.meta.putSync('meta', metaValue.encode(meta));
}

export function manifestHash(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  // Read in chunks: a mainnet manifest is larger than one Buffer may be (2 GiB).
  const hash = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0; ) hash.update(buf.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/** Why the index cannot extend the published tree (undefined: it can). */
export function reuseProblem(stored: ReturnType<typeof readMeta>, manifestPath: string, net: Network, options: string): string | undefined {
  if (!stored) return 'no index yet';
  const meta = stored.meta;
  if (!meta) return `index format ${stored.format || 'older than 5'}, this version uses ${STORE_FORMAT}`;
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
  const stored = readMeta(store);
  let meta = stored?.meta;
  let fullReason = how.full ? 'asked for a full build' : reuseProblem(stored, how.manifestPath, net, options);
  if (!fullReason && meta && meta.tip >= 0 && (await how.genesisOfSource()) !== heightRecordAt(store, 0)?.hash) fullReason = 'the source is another chain';
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
