// Random but deterministic builder chains for the incremental-build tests:
// payments between a few keys, spends of earlier outputs, names with
// updates, and optionally a reorg of depth 1–10 between two snapshots.
import { ChainBuilder, type BlockContext, type BlockHandle, type NameNewHandle } from '../../src/builder/chain.js';
import { locks, type Lock } from '../../src/builder/scripts.js';
import { NETWORKS } from '../../src/chain/networks.js';
import type { MemoryBlock } from '../../src/source/memory.js';
import type { BuiltChain } from '../../src/builder/chain.js';

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Scenario {
  /** The chain as the first build sees it. */
  before: MemoryBlock[];
  /** The chain as the second build sees it (after new blocks and maybe a reorg). */
  after: MemoryBlock[];
  /** Heights of the two snapshots. */
  m: number;
  n: number;
  /** Depth of the reorg between them (0: none). */
  reorgDepth: number;
}

export function asMemoryBlocks(chain: BuiltChain): MemoryBlock[] {
  return [...chain.main, ...chain.side, ...chain.orphans].map((b) => ({ raw: b.raw, kind: b.kind, height: b.height }));
}

/**
 * A Namecoin regtest chain of 101 + `extra` blocks with activity in each, then
 * either more blocks on top (no reorg) or a heavier branch from `depth` blocks
 * below the first snapshot's tip (`depth`, or a random one of 1–10).
 */
export function scenario(seed: number, opts: { reorg: boolean; depth?: number }): Scenario {
  const rng = mulberry32(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rng() * xs.length)]!;
  const cb = new ChainBuilder({ network: NETWORKS['namecoin-regtest'], seed, auxpow: seed % 2 === 0 });
  const keys = Array.from({ length: 5 }, () => cb.key());
  const lockOf = (): Lock => {
    const k = pick(keys);
    return pick([locks.p2pkh(k), locks.p2wpkh(k), locks.p2pk(k), locks.p2sh(locks.p2pkh(k)), locks.p2tr(k)]);
  };
  cb.mine(101);
  const names = ['d/alpha', 'd/beta/gamma', 'id/x y'].slice(0, 1 + Math.floor(rng() * 3));
  const pending: NameNewHandle[] = [];
  const registered: string[] = [];
  const activity = (b: BlockContext, label: string) => {
    const n = 1 + Math.floor(rng() * 3);
    for (let i = 0; i < n; i++) b.pay(lockOf(), BigInt(1_000_000 + Math.floor(rng() * 50_000_000)));
    const h = b.height;
    if (h === 102) for (const name of names) pending.push(b.nameNew(name));
    if (h === 114) for (const nn of pending.splice(0)) {
      b.nameFirstUpdate(nn, `{"first":"${label}"}`);
      registered.push(nn.name.toString('latin1'));
    }
    if (h > 114 && registered.length > 0 && rng() < 0.5) b.nameUpdate(pick(registered), `{"at":${h},"on":"${label}"}`);
  };
  // Tall enough for a fork above the names (114) `depth` blocks below the first tip.
  const extra = Math.max(20 + Math.floor(rng() * 15), (opts.depth ?? 0) + 14);
  for (let i = 0; i < extra; i++) cb.block((b) => activity(b, 'a'));
  const firstTip = cb.tip.height;
  const before = asMemoryBlocks(cb.build());
  let reorgDepth = 0;
  if (opts.reorg) {
    // Names are registered at 114: keep the fork above it so both branches hold the same names.
    reorgDepth = 1 + Math.floor(rng() * Math.min(10, firstTip - 115));
    if (opts.depth !== undefined) reorgDepth = opts.depth;
    if (reorgDepth > firstTip - 114) throw new Error(`a reorg of depth ${reorgDepth} would fork below the names (tip ${firstTip})`);
    let parent: BlockHandle = cb.build().main[firstTip - reorgDepth]!;
    for (let i = 0; i < reorgDepth + 1 + Math.floor(rng() * 3); i++) parent = cb.block((b) => activity(b, 'b'), { parent });
  } else {
    for (let i = 0, more = 1 + Math.floor(rng() * 8); i < more; i++) cb.block((b) => activity(b, 'a'));
  }
  const afterChain = cb.build();
  const m = opts.reorg ? firstTip : 101 + Math.floor(rng() * (firstTip - 101));
  return { before, after: asMemoryBlocks(afterChain), m, n: afterChain.tip.height, reorgDepth };
}
