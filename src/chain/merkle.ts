import { sha256d, toDisplayHex } from './hash.js';

function hasDuplicates(hashes: readonly Buffer[]): boolean {
  const seen = new Set<string>();
  for (const h of hashes) {
    const k = h.toString('latin1');
    if (seen.has(k)) return true;
    seen.add(k);
  }
  return false;
}

const pair = Buffer.alloc(64);

function nextLevel(level: readonly Buffer[]): Buffer[] {
  const next: Buffer[] = [];
  for (let i = 0; i < level.length; i += 2) {
    const a = level[i]!;
    a.copy(pair, 0);
    (level[i + 1] ?? a).copy(pair, 32);
    next.push(sha256d(pair));
  }
  return next;
}

/** Merkle root of txids (internal byte order), Bitcoin style (odd last duplicated). */
export function merkleRoot(hashes: readonly Buffer[]): Buffer {
  if (hashes.length === 0) return Buffer.alloc(32);
  let level: readonly Buffer[] = hashes;
  while (level.length > 1) level = nextLevel(level);
  return level[0]!;
}

/** Every level of the tree from the leaves to the root (an odd last node paired with itself). */
function allLevels(hashes: readonly Buffer[]): (readonly Buffer[])[] {
  const levels: (readonly Buffer[])[] = [hashes];
  for (let level = hashes; level.length > 1; ) levels.push((level = nextLevel(level)));
  return levels;
}

/** The tree of a block's txids, built once per tx list: validation and the indexer (name ops' branches) share it. */
const txTrees = new WeakMap<readonly { hash: Buffer }[], (readonly Buffer[])[]>();

function txLevels(txs: readonly { hash: Buffer }[]): (readonly Buffer[])[] {
  let levels = txTrees.get(txs);
  if (!levels) txTrees.set(txs, (levels = allLevels(txs.map((t) => t.hash))));
  return levels;
}

function rootOf(levels: readonly (readonly Buffer[])[]): { root: Buffer; mutated: boolean } {
  if (levels[0]!.length === 0) return { root: Buffer.alloc(32), mutated: false };
  let mutated = false;
  for (const level of levels) for (let i = 0; i + 1 < level.length; i += 2) if (level[i]!.equals(level[i + 1]!)) mutated = true;
  return { root: levels[levels.length - 1]![0]!, mutated };
}

/**
 * Bitcoin Core's ComputeMerkleRoot with its `mutated` flag: the root, and whether some level
 * holds two equal hashes side by side (an even pair, not the duplicated odd last node). Such a
 * list has the same root as a shorter one (CVE-2012-2459: a duplicated tail of transactions),
 * so a block whose txids are mutated is invalid whatever its root.
 */
export function computeMerkleRoot(hashes: readonly Buffer[]): { root: Buffer; mutated: boolean } {
  return rootOf(allLevels(hashes));
}

/** computeMerkleRoot of a block's txids, keeping the tree for txMerkleLevels. */
export function txMerkleRoot(txs: readonly { hash: Buffer }[]): { root: Buffer; mutated: boolean } {
  return rootOf(txLevels(txs));
}

/**
 * The original's `mrkl_tree`: every level from the leaves up to the root,
 * flattened, display hex; `[null]` when the txids are not unique.
 */
export function merkleTree(hashes: readonly Buffer[]): (string | null)[] {
  if (hasDuplicates(hashes)) return [null];
  const out: string[] = hashes.map(toDisplayHex);
  let level: readonly Buffer[] = hashes;
  while (level.length > 1) {
    level = nextLevel(level);
    for (const h of level) out.push(toDisplayHex(h));
  }
  return out;
}

/**
 * Every level of the merkle tree from the leaves up to the root (one tree per block, shared by
 * all the branches taken from it); undefined when the txids are not unique.
 */
export function merkleLevels(hashes: readonly Buffer[]): (readonly Buffer[])[] | undefined {
  return hasDuplicates(hashes) ? undefined : allLevels(hashes);
}

/**
 * Takes the tree of a block's txids that another thread built (every level from the leaves up,
 * 32 bytes a node, concatenated), so that txMerkleLevels does not hash it again.
 */
export function adoptTxLevels(txs: readonly { hash: Buffer }[], nodes: Buffer): void {
  const levels: Buffer[][] = [];
  let at = 0;
  for (let n = txs.length; at < nodes.length; n = (n + 1) >> 1) {
    const level: Buffer[] = new Array(n);
    for (let i = 0; i < n; i++, at += 32) level[i] = nodes.subarray(at, at + 32);
    levels.push(level);
    if (n === 1) break;
  }
  txTrees.set(txs, levels);
}

/** merkleLevels of a block's txids: the tree validation built when it checked the root, if it did. */
export function txMerkleLevels(txs: readonly { hash: Buffer }[]): (readonly Buffer[])[] | undefined {
  return hasDuplicates(txs.map((t) => t.hash)) ? undefined : txLevels(txs);
}

/** The sibling hashes of the leaf at `index` from the leaves upward (an odd last node is its own sibling), internal order. */
export function branchFromLevels(levels: readonly (readonly Buffer[])[], index: number): Buffer[] {
  const branch: Buffer[] = [];
  let i = index;
  for (let l = 0; l < levels.length - 1; l++, i >>= 1) {
    const level = levels[l]!;
    branch.push(level[i ^ 1] ?? level[i]!);
  }
  return branch;
}

/**
 * The original's `mrkl_branch` for the tx at `index`: sibling hashes from the
 * leaves upward (an odd last node is its own sibling), display hex;
 * `[null]` when the txids are not unique.
 */
export function merkleBranch(hashes: readonly Buffer[], index: number): (string | null)[] {
  const levels = merkleLevels(hashes);
  return levels ? branchFromLevels(levels, index).map(toDisplayHex) : [null];
}

/** Folds a branch back up to a root (internal order); bit j of index picks the side. */
export function rootFromBranch(leaf: Buffer, branchDisplayHex: readonly string[], index: number): Buffer {
  return foldBranch(
    leaf,
    branchDisplayHex.map((h) => Buffer.from(h, 'hex').reverse()),
    index,
  );
}

/**
 * Folds a branch of internal-order hashes up to a root: at step j, bit j of `index` says
 * whether the sibling is on the left. `index` is a signed 32-bit int shifted arithmetically,
 * as in Namecoin Core's CAuxPow::CheckMerkleBranch (its index −1 case is the caller's).
 */
export function foldBranch(leaf: Buffer, branch: readonly Buffer[], index: number): Buffer {
  let cur = leaf;
  let i = index | 0;
  for (const sib of branch) {
    cur = i & 1 ? sha256d(Buffer.concat([sib, cur])) : sha256d(Buffer.concat([cur, sib]));
    i >>= 1;
  }
  return cur;
}
