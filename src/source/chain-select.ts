/**
 * Header tree and best-chain selection, shared by the chain sources.
 *
 * Headers are kept in compact, growable typed storage (80 bytes of header +
 * 32 bytes of hash + a 4-byte hash-table slot per block, no object per
 * block), so ~800k headers fit in roughly 100 MB. Selection follows Bitcoin
 * Core: the best tip is the connected header with the most cumulative work
 * (exact BigInt, 2^256 / (target + 1) per block); ties go to the header seen
 * first. Blocks found invalid are marked, and with their descendants take no
 * part in the choice (Core's BLOCK_FAILED_VALID / BLOCK_FAILED_CHILD), so
 * choosing again gives the most-work chain among the blocks not known invalid.
 */
import { fromDisplayHex, sha256d, toDisplayHex } from '../chain/hash.js';
import { HEADER_SIZE } from '../chain/block.js';
import { blockWork } from '../chain/work.js';
import type { ChainChoice, ChainTip } from './types.js';

const HASH_SIZE = 32;

function grow<T extends Uint8Array | Int32Array | Uint32Array>(arr: T, need: number, make: (n: number) => T): T {
  if (need <= arr.length) return arr;
  let n = Math.max(arr.length * 2, 1024);
  while (n < need) n *= 2;
  const next = make(n);
  next.set(arr);
  return next;
}

export interface AddResult {
  /** Index of the header in the tree (the existing one for a duplicate). */
  index: number;
  /** False when a header with the same hash was already present. */
  isNew: boolean;
}

/** Result of best-chain selection over a HeaderTree. */
export interface ChainSelection {
  /** Tree index of the genesis block, or -1 when it is not in the tree. */
  genesis: number;
  /** Height of the best tip (-1 when genesis is missing). */
  tipHeight: number;
  /** Tree index of the main-chain block at each height 0..tipHeight. */
  main: Int32Array;
  /** Height per tree index; -1 for blocks not connected to genesis (orphans). */
  height: Int32Array;
  /** Per tree index: 1 = main chain, 2 = side (connected, off the best chain), 0 = orphan. */
  kind: Uint8Array;
  /** Per tree index: 1 for a block marked invalid or built on one (a side block then), else 0. */
  failed: Uint8Array;
  /** Cumulative chain work of the best tip (exact). */
  tipWork: bigint;
  sideCount: number;
  orphanCount: number;
  /** Cumulative work of a connected block (undefined for orphans). */
  chainWork(index: number): bigint | undefined;
  /**
   * For a side block: the height of the last main-chain ancestor (the fork
   * point). -1 for main and orphan blocks.
   */
  forkHeight(index: number): number;
  /**
   * Main-chain heights whose blocks decide between branches: each block that some other branch
   * (not known invalid) matches or beats in work — if it were invalid, that branch would win —
   * and the block just above each run of them, whose validity settles the run. Validating these
   * first gives the best valid chain before the scan, as long as the other blocks are valid.
   */
  decisiveHeights(): number[];
}

export interface SelectOptions {
  /** Per tree index, 1 = known invalid: the block and its descendants cannot be chosen. */
  failed?: Uint8Array;
  /** A tip chosen elsewhere (a node's choice) kept unless it is failed; the default is the most-work tip. */
  tip?: number;
}

export const KIND_ORPHAN = 0;
export const KIND_MAIN = 1;
export const KIND_SIDE = 2;

/** Insert-only set of block headers keyed by hash. */
export class HeaderTree {
  private headers = new Uint8Array(0) as Uint8Array;
  private hashes = new Uint8Array(0) as Uint8Array;
  private table = new Int32Array(0);
  private mask = 0;
  private n = 0;

  constructor(expected = 1024) {
    this.resizeTable(Math.max(16, expected * 2));
  }

  get size(): number {
    return this.n;
  }

  /** Approximate bytes held by the tree's storage. */
  get byteSize(): number {
    return this.headers.byteLength + this.hashes.byteLength + this.table.byteLength;
  }

  private resizeTable(minSlots: number): void {
    let slots = 16;
    while (slots < minSlots) slots *= 2;
    this.table = new Int32Array(slots).fill(-1);
    this.mask = slots - 1;
    for (let i = 0; i < this.n; i++) this.insertSlot(i);
  }

  private slotOf(hash: Uint8Array, off: number): number {
    // Internal-order hash bytes 0..3 are uniformly random (PoW zeros are at the other end).
    return ((hash[off]! | (hash[off + 1]! << 8) | (hash[off + 2]! << 16) | (hash[off + 3]! << 24)) >>> 0) & this.mask;
  }

  private insertSlot(index: number): void {
    let s = this.slotOf(this.hashes, index * HASH_SIZE);
    while (this.table[s] !== -1) s = (s + 1) & this.mask;
    this.table[s] = index;
  }

  private sameHash(index: number, hash: Uint8Array, off: number): boolean {
    const base = index * HASH_SIZE;
    for (let k = 0; k < HASH_SIZE; k++) if (this.hashes[base + k] !== hash[off + k]) return false;
    return true;
  }

  private find(hash: Uint8Array, off = 0): number {
    let s = this.slotOf(hash, off);
    for (;;) {
      const i = this.table[s]!;
      if (i === -1) return -1;
      if (this.sameHash(i, hash, off)) return i;
      s = (s + 1) & this.mask;
    }
  }

  /**
   * Adds an 80-byte header (its hash is computed unless given, internal byte
   * order). Duplicates are detected by hash and not stored twice.
   */
  add(header: Uint8Array, hash?: Uint8Array): AddResult {
    if (header.length < HEADER_SIZE) throw new Error(`header needs ${HEADER_SIZE} bytes, got ${header.length}`);
    const h = hash ?? sha256d(header.subarray(0, HEADER_SIZE));
    const existing = this.find(h);
    if (existing !== -1) return { index: existing, isNew: false };
    const i = this.n;
    this.headers = grow(this.headers, (i + 1) * HEADER_SIZE, (k) => new Uint8Array(k));
    this.hashes = grow(this.hashes, (i + 1) * HASH_SIZE, (k) => new Uint8Array(k));
    this.headers.set(header.subarray(0, HEADER_SIZE), i * HEADER_SIZE);
    this.hashes.set(h.subarray(0, HASH_SIZE), i * HASH_SIZE);
    this.n++;
    if (this.n * 2 > this.table.length) this.resizeTable(this.n * 4);
    else this.insertSlot(i);
    return { index: i, isNew: true };
  }

  /** Tree index of a hash (display hex or internal-order bytes), -1 when absent. */
  indexOf(hash: string | Uint8Array): number {
    const h = typeof hash === 'string' ? fromDisplayHex(hash) : hash;
    if (h.length !== HASH_SIZE) return -1;
    return this.find(h);
  }

  /** The 80 header bytes (a view into the tree's storage: copy before keeping). */
  header(index: number): Buffer {
    return Buffer.from(this.headers.buffer, this.headers.byteOffset + index * HEADER_SIZE, HEADER_SIZE);
  }

  /** Hash, internal byte order (a view). */
  hash(index: number): Buffer {
    return Buffer.from(this.hashes.buffer, this.hashes.byteOffset + index * HASH_SIZE, HASH_SIZE);
  }

  hashHex(index: number): string {
    return toDisplayHex(this.hash(index));
  }

  /** prevHash, internal byte order (a view). */
  prevHash(index: number): Buffer {
    return Buffer.from(this.headers.buffer, this.headers.byteOffset + index * HEADER_SIZE + 4, HASH_SIZE);
  }

  bits(index: number): number {
    const o = index * HEADER_SIZE + 72;
    const b = this.headers;
    return (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
  }

  /** Tree index of the parent, -1 when the parent is unknown. */
  parentOf(index: number): number {
    return this.find(this.headers, index * HEADER_SIZE + 4);
  }

  /**
   * Selects the best chain from `genesis` (display hex): every header whose
   * ancestry reaches genesis gets a height and cumulative work; the tip is the
   * one with most work (first added on ties).
   */
  select(genesis: string, opts: SelectOptions = {}): ChainSelection {
    const n = this.n;
    const height = new Int32Array(n).fill(-1);
    const kind = new Uint8Array(n);
    const failed = new Uint8Array(n);
    const marks = opts.failed;
    const g = this.indexOf(genesis);
    if (g === -1 || marks?.[g]) {
      if (g !== -1) failed[g] = 1;
      return {
        genesis: g,
        tipHeight: -1,
        main: new Int32Array(0),
        height,
        kind,
        failed,
        tipWork: 0n,
        sideCount: 0,
        orphanCount: g === -1 ? n : 0,
        chainWork: () => undefined,
        forkHeight: () => -1,
        decisiveHeights: () => [],
      };
    }
    // Children in CSR form: parent -> [first, end) into `childList`.
    const parent = new Int32Array(n);
    const childCount = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) {
      const p = i === g ? -1 : this.parentOf(i);
      parent[i] = p;
      if (p !== -1) childCount[p + 1]!++;
    }
    for (let i = 0; i < n; i++) childCount[i + 1]! += childCount[i]!;
    const fill = childCount.slice(0, n);
    const childList = new Int32Array(childCount[n]!);
    for (let i = 0; i < n; i++) {
      const p = parent[i]!;
      if (p !== -1) childList[fill[p]!++] = i; // ascending i: first seen first
    }
    // BFS from genesis (a tree: every header has one parent, no cycles possible by hash).
    const work: (bigint | undefined)[] = new Array(n);
    const queue = new Int32Array(n);
    let qh = 0;
    let qt = 0;
    queue[qt++] = g;
    height[g] = 0;
    work[g] = blockWork(this.bits(g));
    let best = g;
    let bestWork = work[g]!;
    while (qh < qt) {
      const i = queue[qh++]!;
      const wi = work[i]!;
      if (!failed[i] && (wi > bestWork || (wi === bestWork && i < best))) {
        best = i;
        bestWork = wi;
      }
      for (let c = childCount[i]!; c < childCount[i + 1]!; c++) {
        const ch = childList[c]!;
        height[ch] = height[i]! + 1;
        work[ch] = wi + blockWork(this.bits(ch));
        if (failed[i] || marks?.[ch]) failed[ch] = 1;
        queue[qt++] = ch;
      }
    }
    const forced = opts.tip;
    if (forced !== undefined && forced >= 0 && forced < n && height[forced]! >= 0 && !failed[forced]) {
      best = forced;
      bestWork = work[forced]!;
    }
    const tipHeight = height[best]!;
    const main = new Int32Array(tipHeight + 1);
    for (let i = best; i !== -1; i = parent[i]!) {
      main[height[i]!] = i;
      kind[i] = KIND_MAIN;
    }
    let sideCount = 0;
    for (let k = 0; k < qt; k++) {
      const i = queue[k]!;
      if (kind[i] !== KIND_MAIN) {
        kind[i] = KIND_SIDE;
        sideCount++;
      }
    }
    const forkHeight = (index: number): number => {
      if (kind[index] !== KIND_SIDE) return -1;
      let i = index;
      while (kind[i] === KIND_SIDE) i = parent[i]!;
      return height[i]!;
    };
    // Heights where the main block is beaten or matched by an unfailed branch forking below it.
    const better = (a: number, b: number): boolean => work[a]! > work[b]! || (work[a] === work[b] && a < b);
    const decisiveHeights = (): number[] => {
      const fork = new Int32Array(n).fill(-1);
      const rival = new Int32Array(tipHeight + 1).fill(-1); // best unfailed side block per fork height
      for (let k = 1; k < qt; k++) {
        const i = queue[k]!; // parents before children
        if (kind[i] !== KIND_SIDE) continue;
        const p = parent[i]!;
        fork[i] = kind[p] === KIND_MAIN ? height[p]! : fork[p]!;
        const f = fork[i]!;
        if (!failed[i] && f <= tipHeight && (rival[f] === -1 || better(i, rival[f]!))) rival[f] = i;
      }
      const out: number[] = [];
      let strongest = -1; // best rival forking below the height looked at
      let contested = false;
      for (let h = 1; h <= tipHeight; h++) {
        const r = rival[h - 1]!;
        if (r !== -1 && (strongest === -1 || better(r, strongest))) strongest = r;
        const now = strongest !== -1 && !better(main[h]!, strongest);
        if (now || contested) out.push(h);
        contested = now;
      }
      return out;
    };
    return {
      genesis: g,
      tipHeight,
      main,
      height,
      kind,
      failed,
      tipWork: bestWork,
      sideCount,
      orphanCount: n - qt,
      chainWork: (index: number) => work[index],
      forkHeight,
      decisiveHeights,
    };
  }
}

/**
 * A source's {@link ChainChoice} over its header tree: `get`/`set` reach the source's current
 * selection, `select` chooses again with the blocks marked invalid.
 */
export function treeChoice(tree: HeaderTree, get: () => ChainSelection, set: (sel: ChainSelection) => void, select: (failed: Uint8Array) => ChainSelection): ChainChoice {
  const marks = new Uint8Array(tree.size);
  return {
    decisiveHeights: () => get().decisiveHeights(),
    invalidate(hash: string) {
      const old = get();
      const i = tree.indexOf(hash);
      if (i === -1 || old.kind[i] !== KIND_MAIN || i === old.genesis) throw new Error(`block ${hash} is not a main-chain block above genesis: it cannot be set aside`);
      marks[i] = 1;
      const sel = select(marks);
      set(sel);
      let fork = Math.min(old.tipHeight, sel.tipHeight);
      while (fork >= 0 && old.main[fork] !== sel.main[fork]) fork--;
      let failed = 0;
      for (let k = 0; k < tree.size; k++) if (sel.failed[k] && !old.failed[k]) failed++;
      const tip: ChainTip = { height: sel.tipHeight, hash: sel.tipHeight >= 0 ? tree.hashHex(sel.main[sel.tipHeight]!) : '' };
      return { tip, fork, failed };
    },
  };
}
