// The shared source rules (src/source/request-checks.ts), through the in-memory source over real
// regtest blocks: heights above the tip name the tip, bad heights and scan starts are refused,
// a closed source refuses use; within the bounds the blocks pass through unchanged.
import { expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { memorySource } from '../src/source/memory.js';
import { blockId, loadBlocks } from './support/fake-node.js';
import { describeShared } from './support/shared-data.js';


async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describeShared('chaindata')('checked source rules', () => {
  const main = loadBlocks().slice(0, 11);
  const open = () => memorySource(NETWORKS['bitcoin-regtest'], main.map((raw) => ({ raw, kind: 'main' as const })), 'ten blocks');
  const tip = blockId(main[10]!);

  it('within the bounds: blocks and hashes pass through', async () => {
    const src = open();
    expect((await collect(src.mainChain(10, 4))).map((b) => b.hash)).toEqual(main.slice(4).map(blockId));
    expect(await collect(src.mainChain(10, 11))).toEqual([]); // from = height + 1: nothing to scan
    expect(await src.hashAt(10)).toBe(tip);
  });

  it('a height above the tip is an error naming the tip, for every call that takes one', async () => {
    const src = open();
    const above = `ten blocks: height 11 is above the tip (height 10, ${tip})`;
    await expect(collect(src.mainChain(11))).rejects.toThrow(above);
    await expect(collect(src.offChain(11))).rejects.toThrow(above);
    await expect(src.hashAt(11)).rejects.toThrow(above);
  });

  it('invalid heights and scan starts are refused', async () => {
    const src = open();
    await expect(src.hashAt(-1)).rejects.toThrow('ten blocks: invalid height -1');
    await expect(src.hashAt(1.5)).rejects.toThrow('ten blocks: invalid height 1.5');
    await expect(collect(src.mainChain(5, -1))).rejects.toThrow('ten blocks: invalid scan start -1');
    await expect(collect(src.mainChain(5, 7))).rejects.toThrow('ten blocks: scan from 7 starts above height 5 + 1');
  });

  it('a closed source refuses use', async () => {
    const src = open();
    await src.close();
    await expect(collect(src.mainChain(3))).rejects.toThrow('ten blocks: source is closed');
    await expect(collect(src.offChain(3))).rejects.toThrow('ten blocks: source is closed');
    await expect(src.hashAt(3)).rejects.toThrow('ten blocks: source is closed');
  });
});
