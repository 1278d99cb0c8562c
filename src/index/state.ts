import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { Network } from '../chain/networks.js';
import { emptyDelta } from './stats.js';
import { metaValue, snapshotValue, undoneValue, type MetaRow, type PublishedSnapshot, type UndoneBlock } from './rows.js';
import { heightRecordAt, openStore, STORE_FORMAT, type Store } from './store.js';

export type { PublishedSnapshot, UndoneBlock };

/**
 * What the index remembers between builds. The meta row (tip, totals, addresses, duplicates)
 * describes the index's rows and is committed in the same transaction as they are, so a killed
 * build leaves an index that is consistent at its last commit, whatever the published tree is.
 * `published` says which snapshot the index was published with; `undone`, which of that
 * snapshot's blocks the index undid since (a reorg, a lower height); `pending`, the snapshot a
 * build is publishing. With them the next build can bring the index back to the published
 * snapshot (or adopt the pending one) and go on incrementally.
 */
export interface IndexMeta extends MetaRow {
  /** The snapshot last published from the index; null before the first one is (a full build). */
  published: PublishedSnapshot | null;
  /** The snapshot a build is publishing, recorded before the swap: a kill after the swap adopts it. */
  pending: PublishedSnapshot | null;
  /**
   * The published snapshot's main-chain blocks the index undid since, lowest first (contiguous
   * up to its tip); the rows above the one below them are not published. Stored as rows of their
   * own (`undone/<height>`), one per undo, in the undo's transaction.
   */
  undone: UndoneBlock[];
  /**
   * Not stored: the published snapshot's capped addresses and off-chain blocks (what a build
   * compares with), until the build replaces them with its own.
   */
  capped: string[];
  offchain: string[];
}

export function emptyMeta(net: Network, options: string): IndexMeta {
  return {
    format: STORE_FORMAT,
    network: net.name,
    genesis: net.genesis,
    options,
    tip: -1,
    totals: emptyDelta(),
    addresses: 0,
    duplicates: [],
    published: null,
    pending: null,
    undone: [],
    capped: [],
    offchain: [],
  };
}

const UNDONE = 'undone/';
const undoneKey = (height: number) => UNDONE + String(height).padStart(10, '0');

/** The stored meta: its format, and the meta itself when the format is this version's. */
export function readMeta(store: Store): { format: number; meta: IndexMeta | undefined } | undefined {
  const v = store.meta.get('meta');
  if (!v) return undefined;
  const format = metaValue.formatOf(v);
  if (format !== STORE_FORMAT) return { format, meta: undefined };
  const snapshot = (key: string) => {
    const s = store.meta.get(key);
    return s ? snapshotValue.decode(s) : null;
  };
  const published = snapshot('published');
  const undone = [...store.meta.getRange({ start: UNDONE, end: `${UNDONE}~` })].map(({ value }) => undoneValue.decode(value));
  const meta: IndexMeta = { ...metaValue.decode(v), published, pending: snapshot('pending'), undone, capped: [...(published?.capped ?? [])], offchain: [...(published?.offchain ?? [])] };
  return { format, meta };
}

/** Stores the meta row (inside a transaction: with the rows it describes). */
export function saveMeta(store: Store, meta: MetaRow): void {
  store.meta.putSync('meta', metaValue.encode(meta));
}

/** Records that the index undid `block` of the published snapshot (in the undo's transaction). */
export function saveUndone(store: Store, block: UndoneBlock): void {
  store.meta.putSync(undoneKey(block.height), undoneValue.encode(block));
}

/** Forgets an undone block applied again (in the transaction that applies it). */
export function forgetUndone(store: Store, height: number): void {
  store.meta.removeSync(undoneKey(height));
}

/**
 * Records the snapshot about to be published (before the swap), with the meta row: a full build's
 * scan commits its rows on the write thread, and its figures only now.
 */
export function savePending(store: Store, meta: IndexMeta, pending: PublishedSnapshot): void {
  store.root.transactionSync(() => {
    saveMeta(store, meta);
    store.meta.putSync('pending', snapshotValue.encode(pending));
  });
  meta.pending = pending;
}

/** The pending snapshot is the published one now: the index describes it as it is (one transaction). */
export function markPublished(store: Store, meta: IndexMeta): void {
  const published = meta.pending!;
  store.root.transactionSync(() => {
    store.meta.putSync('published', snapshotValue.encode(published));
    store.meta.removeSync('pending');
    for (const u of meta.undone) forgetUndone(store, u.height);
    saveMeta(store, meta);
  });
  Object.assign(meta, { published, pending: null, undone: [], capped: [...published.capped], offchain: [...published.offchain] });
}

/** Forgets a pending snapshot that was not published (the build was killed before the swap). */
function dropPending(store: Store, meta: IndexMeta): void {
  if (!meta.pending) return;
  store.meta.removeSync('pending');
  meta.pending = null;
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

/** An error of the file system or the OS (it has an errno: Node's name, or LMDB's positive number), not of the index's contents. */
function isSystemError(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return (typeof code === 'string' && code !== '') || (typeof code === 'number' && code > 0);
}

/**
 * Why the index cannot extend the published tree whose manifest has the sha256 `published`
 * (undefined: it can, from the snapshot it was published with or the one a killed build published).
 */
export function reuseProblem(stored: ReturnType<typeof readMeta>, published: string | undefined, net: Network, options: string): string | undefined {
  if (!stored) return 'no index yet';
  const meta = stored.meta;
  if (!meta) return `index format ${stored.format || 'older than 5'}, this version uses ${STORE_FORMAT}`;
  if (meta.network !== net.name || meta.genesis !== net.genesis) return `index is for ${meta.network}, not ${net.name}`;
  if (meta.options !== options) return 'build options changed';
  if (published === undefined) return 'no published snapshot';
  if (published === meta.published?.generation || published === meta.pending?.generation) return undefined;
  return meta.published ? 'the published snapshot is not the one the index describes' : 'the previous build did not finish';
}

/**
 * Opens the index in `stateDir` and decides whether it can extend the published tree. It can when
 * it was published with that tree: then `restore` brings it back to that snapshot if a killed
 * build left it elsewhere (undone blocks to apply again, rows above the snapshot to undo); or
 * when a killed build published that tree before recording it: then that build's index is
 * adopted. When it cannot (`fullReason`, also when `restore` fails: a damaged index), the state
 * directory is emptied (`clear`) and a fresh index opened.
 */
export async function openIndex(
  stateDir: string,
  net: Network,
  options: string,
  how: {
    /** true: asked for; a string: why one is needed. */
    full: boolean | string;
    manifestPath: string;
    genesisOfSource: () => Promise<string>;
    clear: () => void;
    note: (line: string) => void;
    restore?: (store: Store, meta: IndexMeta) => void;
  },
): Promise<{ store: Store; meta: IndexMeta; fullReason: string | undefined }> {
  let store = openStore(stateDir);
  const stored = readMeta(store);
  let meta = stored?.meta;
  let fullReason = how.full === true ? 'asked for a full build' : how.full || undefined;
  const published = fullReason || !meta ? undefined : manifestHash(how.manifestPath);
  fullReason ??= reuseProblem(stored, published, net, options);
  if (!fullReason && meta && meta.tip >= 0 && (await how.genesisOfSource()) !== heightRecordAt(store, 0)?.hash) fullReason = 'the source is another chain';
  if (!fullReason && meta) {
    if (meta.pending && published === meta.pending.generation) {
      // Killed after the swap (or before it, its tree byte for byte the published one): the index is the one that tree was made from.
      if (meta.tip !== meta.pending.height || heightRecordAt(store, meta.tip)?.hash !== meta.pending.hash) {
        fullReason = `the index (tip ${meta.tip}) is not the one the published snapshot at height ${meta.pending.height} was made from`;
      } else markPublished(store, meta);
    } else {
      dropPending(store, meta);
      try {
        how.restore?.(store, meta);
      } catch (e) {
        // A failing disk (ENOSPC, EIO, …) is not a damaged index: the build fails naming it, and the index is kept.
        if (isSystemError(e)) {
          await store.close();
          throw e;
        }
        fullReason = `the index cannot be brought back to the published snapshot: ${(e as Error).message}`;
      }
    }
  }
  if (fullReason || !meta) {
    if (fullReason && existsSync(how.manifestPath)) how.note(`full build: ${fullReason}`);
    await store.close();
    how.clear();
    store = openStore(stateDir);
    meta = emptyMeta(net, options);
    saveMeta(store, meta);
  }
  return { store, meta, fullReason };
}
