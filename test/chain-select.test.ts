import { describe, expect, it } from 'vitest';
import { sha256d, toDisplayHex } from '../src/chain/hash.js';
import { blockWork } from '../src/chain/work.js';
import { HeaderTree, KIND_MAIN, KIND_ORPHAN, KIND_SIDE, treeChoice } from '../src/source/chain-select.js';

const REGTEST_BITS = 0x207fffff; // work 2
const HARDER_BITS = 0x1f7fffff; // work 512

let nonceCounter = 0;
/** A synthetic 80-byte header linking to `prev` (internal order); unique by nonce. */
function header(prev: Buffer, bits = REGTEST_BITS): { raw: Buffer; hash: Buffer; id: string } {
  const raw = Buffer.alloc(80);
  raw.writeUInt32LE(1, 0);
  prev.copy(raw, 4);
  raw.writeUInt32LE(1_300_000_000, 68);
  raw.writeUInt32LE(bits, 72);
  raw.writeUInt32LE(++nonceCounter, 76);
  const hash = sha256d(raw);
  return { raw, hash, id: toDisplayHex(hash) };
}

function chain(from: Buffer, n: number, bits = REGTEST_BITS): ReturnType<typeof header>[] {
  const out: ReturnType<typeof header>[] = [];
  let prev = from;
  for (let i = 0; i < n; i++) {
    const h = header(prev, bits);
    out.push(h);
    prev = h.hash;
  }
  return out;
}

describe('HeaderTree', () => {
  it('stores headers compactly, finds them by hash and detects duplicates', () => {
    const tree = new HeaderTree(4);
    const hs = chain(Buffer.alloc(32), 5000);
    for (const h of hs) expect(tree.add(h.raw).isNew).toBe(true);
    expect(tree.size).toBe(5000);
    for (const [i, h] of hs.entries()) {
      expect(tree.indexOf(h.id)).toBe(i);
      expect(tree.indexOf(h.hash)).toBe(i);
      expect(tree.header(i).equals(h.raw)).toBe(true);
      expect(tree.hashHex(i)).toBe(h.id);
    }
    expect(tree.add(hs[1234]!.raw)).toEqual({ index: 1234, isNew: false });
    expect(tree.size).toBe(5000);
    expect(tree.indexOf('00'.repeat(32))).toBe(-1);
    expect(tree.parentOf(0)).toBe(-1);
    expect(tree.parentOf(10)).toBe(9);
    // 80 + 32 bytes per header plus the hash table: well under 200 bytes per block.
    expect(tree.byteSize / tree.size).toBeLessThan(200);
  });

  it('selects the longest chain and classifies side and orphan blocks', () => {
    const tree = new HeaderTree();
    const [g] = chain(Buffer.alloc(32), 1);
    const main = chain(g!.hash, 10); // heights 1..10
    const side = chain(main[3]!.hash, 3); // heights 5..7, forks at 4
    const orphans = chain(Buffer.alloc(32, 7), 2); // unknown parent, and its child
    for (const h of [...side, g!, ...orphans, ...main]) tree.add(h.raw);
    const sel = tree.select(g!.id);
    expect(sel.genesis).toBe(tree.indexOf(g!.id));
    expect(sel.tipHeight).toBe(10);
    expect([...sel.main].map((i) => tree.hashHex(i))).toEqual([g!.id, ...main.map((h) => h.id)]);
    expect(sel.sideCount).toBe(3);
    expect(sel.orphanCount).toBe(2);
    for (const [k, h] of side.entries()) {
      const i = tree.indexOf(h.id);
      expect(sel.kind[i]).toBe(KIND_SIDE);
      expect(sel.height[i]).toBe(5 + k);
      expect(sel.forkHeight(i)).toBe(4);
    }
    for (const h of orphans) {
      const i = tree.indexOf(h.id);
      expect(sel.kind[i]).toBe(KIND_ORPHAN);
      expect(sel.height[i]).toBe(-1);
      expect(sel.chainWork(i)).toBeUndefined();
    }
    expect(sel.kind[tree.indexOf(main[9]!.id)]).toBe(KIND_MAIN);
    expect(sel.tipWork).toBe(11n * 2n);
    expect(sel.chainWork(tree.indexOf(main[4]!.id))).toBe(6n * 2n);
  });

  it('prefers more cumulative work over more blocks (exact BigInt work)', () => {
    const tree = new HeaderTree();
    const [g] = chain(Buffer.alloc(32), 1);
    const long = chain(g!.hash, 20); // 20 × 2
    const heavy = chain(g!.hash, 2, HARDER_BITS); // 2 × 512
    for (const h of [g!, ...long, ...heavy]) tree.add(h.raw);
    const sel = tree.select(g!.id);
    expect(sel.tipHeight).toBe(2);
    expect(tree.hashHex(sel.main[2]!)).toBe(heavy[1]!.id);
    expect(sel.tipWork).toBe(blockWork(REGTEST_BITS) + 2n * blockWork(HARDER_BITS));
    expect(sel.sideCount).toBe(20);
  });

  it('breaks ties by the header seen first', () => {
    const [g] = chain(Buffer.alloc(32), 1);
    const a = chain(g!.hash, 3);
    const b = chain(g!.hash, 3);
    const t1 = new HeaderTree();
    for (const h of [g!, ...a, ...b]) t1.add(h.raw);
    expect(t1.hashHex(t1.select(g!.id).main[3]!)).toBe(a[2]!.id);
    const t2 = new HeaderTree();
    for (const h of [g!, ...b, ...a]) t2.add(h.raw);
    expect(t2.hashHex(t2.select(g!.id).main[3]!)).toBe(b[2]!.id);
  });

  it('reports a missing genesis', () => {
    const tree = new HeaderTree();
    for (const h of chain(Buffer.alloc(32, 1), 3)) tree.add(h.raw);
    const sel = tree.select('11'.repeat(32));
    expect(sel.genesis).toBe(-1);
    expect(sel.tipHeight).toBe(-1);
    expect(sel.orphanCount).toBe(3);
  });
});

describe('HeaderTree: choosing without invalid blocks', () => {
  /** genesis, a main chain of `m` blocks and a branch of `s` blocks from height `at` (branch added first when `branchFirst`). */
  function forked(m: number, s: number, at: number, branchFirst = false) {
    const [g] = chain(Buffer.alloc(32), 1);
    const main = chain(g!.hash, m);
    const side = chain(at === 0 ? g!.hash : main[at - 1]!.hash, s);
    const tree = new HeaderTree();
    for (const h of branchFirst ? [g!, ...side, ...main] : [g!, ...main, ...side]) tree.add(h.raw);
    return { g: g!, main, side, tree };
  }

  it('a block marked invalid and its descendants are not chosen; they stay side blocks with heights', () => {
    const { g, main, side, tree } = forked(6, 3, 2); // main 1..6, side 3..5 from 2
    const failed = new Uint8Array(tree.size);
    failed[tree.indexOf(main[3]!.id)] = 1; // height 4
    const sel = tree.select(g.id, { failed });
    // Left: main 1..3 (work 4 blocks) against the side branch to 5 (6 blocks): the side branch wins.
    expect(sel.tipHeight).toBe(5);
    expect([...sel.main].map((i) => tree.hashHex(i))).toEqual([g.id, main[0]!.id, main[1]!.id, ...side.map((h) => h.id)]);
    for (const h of main.slice(3)) {
      const i = tree.indexOf(h.id);
      expect([sel.kind[i], sel.failed[i]]).toEqual([KIND_SIDE, 1]);
    }
    expect(sel.height[tree.indexOf(main[5]!.id)]).toBe(6);
    expect(sel.failed[tree.indexOf(main[2]!.id)]).toBe(0);
    expect(sel.tipWork).toBe(6n * 2n);
    // Marking the side branch's first block too: main 1..3 is the best left.
    failed[tree.indexOf(side[0]!.id)] = 1;
    const again = tree.select(g.id, { failed });
    expect([again.tipHeight, tree.hashHex(again.main[3]!)]).toEqual([3, main[2]!.id]);
  });

  it('a tip chosen elsewhere is kept unless it is failed', () => {
    const { g, main, side, tree } = forked(3, 5, 1); // the side branch has more work
    const tip = tree.indexOf(main[2]!.id);
    expect(tree.hashHex(tree.select(g.id).main[tree.select(g.id).tipHeight]!)).toBe(side[4]!.id);
    expect(tree.hashHex(tree.select(g.id, { tip }).main[3]!)).toBe(main[2]!.id);
    const failed = new Uint8Array(tree.size);
    failed[tree.indexOf(main[1]!.id)] = 1;
    const sel = tree.select(g.id, { tip, failed });
    expect(tree.hashHex(sel.main[sel.tipHeight]!)).toBe(side[4]!.id);
  });

  it('decisive heights: the main blocks another branch matches or beats in work, and the one settling each run', () => {
    // Main 1..8, a branch 4..6 from 3: it beats main 4 and 5 and ties main 6, which was seen
    // first and wins the tie: main 6 settles the run.
    const a = forked(8, 3, 3);
    expect(a.tree.select(a.g.id).decisiveHeights()).toEqual([4, 5, 6]);
    // The branch seen first wins the tie at 6 too; main 7 settles.
    const b = forked(8, 3, 3, true);
    expect(b.tree.select(b.g.id).decisiveHeights()).toEqual([4, 5, 6, 7]);
    // A shorter branch that does not reach: only the heights it beats.
    const c = forked(8, 1, 3); // a block at 4, added after main 4: it loses the tie
    expect(c.tree.select(c.g.id).decisiveHeights()).toEqual([]);
    const d = forked(8, 1, 3, true); // seen first: it wins the tie with main 4, main 5 settles
    expect(d.tree.select(d.g.id).decisiveHeights()).toEqual([4, 5]);
    // A failed branch decides nothing.
    const failed = new Uint8Array(a.tree.size);
    failed[a.tree.indexOf(a.side[0]!.id)] = 1;
    expect(a.tree.select(a.g.id, { failed }).decisiveHeights()).toEqual([]);
    // No branch: nothing.
    const e = forked(5, 0, 2);
    expect(e.tree.select(e.g.id).decisiveHeights()).toEqual([]);
  });

  it('treeChoice.invalidate marks the block, chooses again and says where the chains part', () => {
    const { g, main, side, tree } = forked(6, 3, 2);
    let sel = tree.select(g.id);
    const choice = treeChoice(tree, () => sel, (s) => (sel = s), (failed) => tree.select(g.id, { failed }));
    expect(() => choice.invalidate(side[0]!.id)).toThrow(/not a main-chain block/);
    expect(() => choice.invalidate(g.id)).toThrow(/not a main-chain block above genesis/);
    const r = choice.invalidate(main[3]!.id);
    expect(r).toEqual({ tip: { height: 5, hash: side[2]!.id }, fork: 2, failed: 3 });
    expect(tree.hashHex(sel.main[5]!)).toBe(side[2]!.id);
    // Marks accumulate: the side branch's block at 4 next; main 3 and the branch's 3 tie, main 3 was seen first.
    expect(choice.invalidate(side[1]!.id)).toEqual({ tip: { height: 3, hash: main[2]!.id }, fork: 2, failed: 2 });
  });
});
