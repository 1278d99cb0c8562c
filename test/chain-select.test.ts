import { describe, expect, it } from 'vitest';
import { sha256d, toDisplayHex } from '../src/chain/hash.js';
import { blockWork } from '../src/chain/work.js';
import { HeaderTree, KIND_MAIN, KIND_ORPHAN, KIND_SIDE } from '../src/source/chain-select.js';

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
