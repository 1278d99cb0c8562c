// The index as the scan leaves it, checked against the chain itself (not against the code
// that wrote it): every spend found at the spent output's position, P2SH outputs, name
// operations' merkle branches; and an index of an older format means a full build.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBlock } from '../src/chain/block.js';
import { toDisplayHex } from '../src/chain/hash.js';
import { branchFromLevels, computeMerkleRoot, foldBranch, merkleLevels } from '../src/chain/merkle.js';
import { NETWORKS } from '../src/chain/networks.js';
import { scriptAddress } from '../src/chain/address.js';
import { classifyScript } from '../src/chain/script.js';
import { isCoinbaseInput } from '../src/chain/tx.js';
import { BlocksSpill } from '../src/index/blocks-spill.js';
import { ChainIndex } from '../src/index/query.js';
import { metaValue } from '../src/index/rows.js';
import { openIndex } from '../src/index/state.js';
import { openStore, STORE_FORMAT, type Store } from '../src/index/store.js';
import { BlockApplier, undoBlock, type BlockToApply } from '../src/index/indexer.js';
import { IndexWriteThread } from '../src/index/commit-thread.js';
import { syncIndex } from '../src/index/sync.js';
import { buildSnapshot } from '../src/site/build.js';
import { memorySource } from '../src/source/memory.js';
import { validatedSource } from '../src/source/block-validation.js';
import { scenario } from './support/chains.js';

const NET = NETWORKS['namecoin-regtest'];
const sc = scenario(61, { reorg: false });
let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'snapshot-index-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the scan index', () => {
  let index: ChainIndex;
  const blocks = sc.after.filter((b) => b.kind === 'main').map((b) => parseBlock(b.raw, { auxpow: NET.auxpow }));
  beforeAll(async () => {
    const state = join(root, 'state');
    const { store, meta } = await openIndex(state, NET, 'test', { full: true, manifestPath: join(root, 'none'), genesisOfSource: async () => NET.genesis, clear: () => {}, note: () => {} });
    index = new ChainIndex(store, new BlocksSpill(join(state, 'blocks.spill')), NET);
    await syncIndex({ source: validatedSource(memorySource(NET, sc.after)), index, meta, fork: -1, height: sc.n, full: true, progress: { begin() {}, update() {} } });
  });
  afterAll(async () => {
    index.spill.close();
    await index.store.close();
  });

  it('every input of the chain is the spender of the output it spends, read as one range per block; nothing else is spent', () => {
    const where = new Map<string, [number, number]>();
    blocks.forEach((b, h) => b.txs.forEach((tx, i) => where.set(tx.txid, [h, i])));
    const expected = blocks.map((b) => b.txs.map((tx) => new Array<unknown>(tx.outputs.length).fill(undefined)));
    let inputs = 0;
    for (const b of blocks) {
      for (const tx of b.txs) {
        tx.inputs.forEach((input, n) => {
          if (isCoinbaseInput(input)) return;
          const [h, i] = where.get(toDisplayHex(input.prevHash))!;
          expected[h]![i]![input.prevIndex] = { hash: tx.txid, n };
          inputs++;
        });
      }
    }
    expect(inputs).toBeGreaterThan(50);
    blocks.forEach((b, h) => {
      const got = index.spendersInBlock(h, b.txs);
      expect(got).toEqual(expected[h]);
      b.txs.forEach((tx, i) => expect(index.spendersOf(tx.hash, tx.outputs.length)).toEqual(expected[h]![i]));
    });
  });

  it('tx locations hold the byte range in the block and the P2SH outputs', () => {
    let p2sh = 0;
    blocks.forEach((b, h) =>
      b.txs.forEach((tx, i) => {
        const loc = index.txLocation(tx.hash)!;
        expect([loc.height, loc.index, loc.length]).toEqual([h, i, tx.raw.length]);
        expect(b.raw.subarray(loc.offset, loc.offset + loc.length).equals(tx.raw)).toBe(true);
        const want = tx.outputs.flatMap((o, v) => (classifyScript(o.script, true) === 'script_hash' ? [v] : []));
        expect(loc.p2sh).toEqual(want);
        p2sh += want.length;
      }),
    );
    expect(p2sh).toBeGreaterThan(0);
  });

  it("name operations carry their tx's merkle branch, which folds up to the block's merkle root", () => {
    const ops = [...index.nameOps()];
    expect(ops.length).toBeGreaterThan(3);
    for (const op of ops) {
      const b = blocks[op.height]!;
      expect(op.rawtx).toBe(b.txs[op.txIndex]!.raw.toString('hex'));
      const branch = op.mrklBranch.map((h) => Buffer.from(h!, 'hex').reverse());
      expect(foldBranch(b.txs[op.txIndex]!.hash, branch, op.txIndex).equals(b.header.merkleRoot)).toBe(true);
    }
  });
});

describe('the index write thread (a full build) gives the index of synchronous transactions', () => {
  const blocks = sc.after.filter((b) => b.kind === 'main').map((b) => parseBlock(b.raw, { auxpow: NET.auxpow }));
  const toApply: BlockToApply[] = blocks.map((block, height) => ({ block, height, record: { hash: block.header.id, offset: 0, length: block.raw.length, time: block.header.time, work: '1' } }));
  const TABLES = ['heights', 'spent', 'coinbases', 'txloc', 'addrOuts', 'names'] as const;
  const rows = (store: Store) => Object.fromEntries(TABLES.map((t) => [t, [...(store[t] as Store['spent']).getRange()].map(({ key, value }) => [Buffer.isBuffer(key) ? key.toString('hex') : String(key), Buffer.from(value).toString('hex')])]));

  it('one block per batch, each batch committed while the next is applied: the same rows, every spend found', async () => {
    const [queued, sync] = [openStore(join(root, 'queued')), openStore(join(root, 'sync'))];
    const thread = IndexWriteThread.start(queued.dir);
    const q = new BlockApplier(queued, NET, thread);
    const s = new BlockApplier(sync, NET);
    let pendingSeen = 0;
    for (const b of toApply) {
      q.apply([b]);
      // The rows just queued are not in the index yet: the spends of this block's outputs in the next one are found in the pending batch.
      if (queued.txloc.get(b.block.txs[0]!.hash) === undefined) pendingSeen++;
      await q.settle(1);
      s.apply([b]);
    }
    await q.settle();
    await thread.close();
    expect(pendingSeen).toBeGreaterThan(blocks.length / 2);
    const [got, want] = [rows(queued), rows(sync)];
    expect(got).toEqual(want);
    const inputs = blocks.flatMap((b) => b.txs.flatMap((tx) => tx.inputs.filter((i) => !isCoinbaseInput(i)))).length;
    expect(inputs).toBeGreaterThan(50);
    expect(got.spent!.length).toBe(inputs);
    expect(got.txloc!.length).toBe(blocks.reduce((n, b) => n + b.txs.length, 0));
    await Promise.all([queued.close(), sync.close()]);
  });

  it('the address count: blocks applied in place count the addresses they pay first, undone ones those they leave unpaid; the pass over every address (a full build) finds them', async () => {
    // Independent of the index: the distinct addresses the outputs of the first `n` blocks pay.
    const paid = (n: number) => new Set(blocks.slice(0, n).flatMap((b) => b.txs.flatMap((tx) => tx.outputs.flatMap((o) => scriptAddress(o.script, NET) ?? [])))).size;
    const store = openStore(join(root, 'count'));
    const applier = new BlockApplier(store, NET);
    let count = 0;
    for (const b of toApply) count += applier.apply([b])[0]!.addressesChange;
    expect(paid(blocks.length)).toBeGreaterThan(20);
    expect(count).toBe(paid(blocks.length));
    const index = new ChainIndex(store, new BlocksSpill(join(root, 'count.spill')), NET);
    expect([...index.addressesWithOutputs()].length).toBe(count);
    expect([...index.addressesWithOutputs()].reduce((n, [, outputs]) => n + outputs, 0)).toBe(index.addressOutputsTotal());
    // Undone from the tip, one block at a time (a reorg): the count follows the remaining chain.
    let decreased = false;
    for (let h = blocks.length - 1; h >= blocks.length / 2; h--) {
      const change = undoBlock(store, NET, blocks[h]!, h).addressesChange;
      decreased ||= change < 0;
      count += change;
      expect(count).toBe(paid(h));
    }
    expect(decreased).toBe(true);
    // A write thread's batches (a full build's scan) leave the count to the address stage's pass.
    const queued = openStore(join(root, 'count-queued'));
    const thread = IndexWriteThread.start(queued.dir);
    const q = new BlockApplier(queued, NET, thread);
    expect(q.apply(toApply).every((fx) => fx.addressesChange === 0)).toBe(true);
    await q.settle();
    await thread.close();
    expect([...new ChainIndex(queued, index.spill, NET).addressesWithOutputs()].length).toBe(paid(blocks.length));
    index.spill.close();
    await Promise.all([store.close(), queued.close()]);
  });
});

describe('merkle levels (one tree per block, every branch from it)', () => {
  const leaves = (n: number) => Array.from({ length: n }, (_, i) => Buffer.alloc(32, i + 1));
  it.each([1, 2, 3, 4, 5, 7, 8, 9, 16, 17])('%i leaves: each branch folds to the root', (n) => {
    const hashes = leaves(n);
    const levels = merkleLevels(hashes)!;
    const { root: merkleRoot } = computeMerkleRoot(hashes);
    expect(levels[levels.length - 1]).toEqual([merkleRoot]);
    for (let i = 0; i < n; i++) expect(foldBranch(hashes[i]!, branchFromLevels(levels, i), i).equals(merkleRoot)).toBe(true);
  });
  it('txids that are not unique have no tree (the original answers [null])', () => {
    expect(merkleLevels([...leaves(3), Buffer.alloc(32, 1)])).toBeUndefined();
  });
});

describe('an index of another format', () => {
  const build = (out: string, height: number) => buildSnapshot({ source: memorySource(NET, sc.after), outDir: out, height, hosts: ['netlify'] });
  const reopen = (out: string) => open({ path: join(`${out}.state`, 'lmdb'), maxDbs: 16 });

  it('an older (msgpack) meta row or another format number means a full build, said in the report', async () => {
    const out = join(root, 'old');
    await build(out, sc.n - 2);
    // Format 4 stored meta as msgpack under the same key.
    let env = reopen(out);
    const old = env.openDB<unknown, string>('meta', {});
    await old.put('meta', { format: 4, network: NET.name, genesis: NET.genesis, tip: sc.n - 2, generation: 'x' });
    await env.close();
    const r1 = await build(out, sc.n);
    expect(r1.mode).toBe('full');
    expect(r1.fullReason).toBe(`index format older than 5, this version uses ${STORE_FORMAT}`);

    env = reopen(out);
    const meta = env.openDB<Buffer, string>('meta', { encoding: 'binary' });
    const m = metaValue.decode(meta.get('meta')!);
    await meta.put('meta', metaValue.encode({ ...m, format: STORE_FORMAT + 1 }));
    await env.close();
    const r2 = await build(out, sc.n);
    expect(r2.fullReason).toBe(`index format ${STORE_FORMAT + 1}, this version uses ${STORE_FORMAT}`);
  });
});

describe('the index mapping', () => {
  // lmdb-js keeps every older map of the file when it grows the map (mdb_env_set_mapsize, for
  // readers of the old one), so each page read through an old map and again through a new one
  // was resident twice: a 229 MB index counted 558 MB in a 200k-tx build's RSS. The store maps
  // once, at a size it does not outgrow.
  const mappingsOf = (file: string) =>
    readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .filter((l) => l.endsWith(` ${file}`)).length;

  it.skipIf(!existsSync('/proc/self/maps'))('the file is mapped once, however much it grows', async () => {
    const dir = join(root, 'mapped');
    const store = openStore(dir);
    const file = join(dir, 'lmdb', 'data.mdb');
    const value = Buffer.alloc(1000, 7);
    for (let batch = 0; batch < 8; batch++)
      store.txloc.transactionSync(() => {
        for (let i = 0; i < 4000; i++) store.txloc.putSync(Buffer.from(`${batch}:${i}`), value);
      });
    expect(statSync(file).size).toBeGreaterThan(32e6); // from nothing to 32 MB: 8 doublings of lmdb-js's default 128 KB map
    expect(store.txloc.get(Buffer.from('7:3999'))).toEqual(value);
    expect(mappingsOf(file)).toBe(1);
    await store.close();
  });
});
