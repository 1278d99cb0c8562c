// Re-runs over RPC against the real Namecoin Core regtest chain (../shared/chaindata/namecoin-core-regtest),
// replayed block for block by the fake node: nothing new, a lower height, new blocks, reorgs between runs.
// Each incremental result must be byte-identical to a fresh full build of the same chain and height.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { buildSnapshot, type BuildReport } from '../src/site/build.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { Progress, type ProgressSample } from '../src/runtime/progress.js';
import { openRpc, type RpcOptions } from '../src/source/rpc.js';
import { blockId, FakeNode, loadCoreRegtest, type Chain } from './support/fake-node.js';
import { chainPath, manifestMismatches } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

const NET = NETWORKS['namecoin-regtest'];
// nginx.conf names the tree's absolute path; leave it out so trees in different dirs compare equal.
const HOSTS = ['netlify', 'cloudflare'] as const;
const FAST: RpcOptions = { network: NET, retryInitialMs: 5, retryMaxMs: 40, giveUpMs: 3000, timeoutMs: 5000 };

describeShared('chaindata/namecoin-core-regtest/blocks-manifest.json')('RPC re-runs on the real Namecoin Core regtest chain (fake node replaying its blocks)', () => {
  let root: string;
  let node: FakeNode;
  let core: { main: Buffer[]; stale: Map<number, Buffer> };
  const out = () => join(root, 'out');
  let freshN = 0;

  /** The main chain to `tip`, with the recorded stale blocks below it as side blocks (the real node's view). */
  const mainTo = (tip: number): Chain => ({
    main: core.main.slice(0, tip + 1),
    side: [...core.stale].filter(([h]) => h <= tip).map(([, raw]) => raw),
  });
  /** The chain a node saw before a reorg: main to `fork`, then the stale blocks above it as the tip. */
  const staleTip = (fork: number, staleHeights: number[]): Chain => ({
    main: [...core.main.slice(0, fork + 1), ...staleHeights.map((h) => core.stale.get(h)!)],
    side: [],
  });

  const build = async (outDir: string, height?: number, progress?: Progress): Promise<BuildReport> => {
    const source = await openRpc(node.url, FAST);
    try {
      return await buildSnapshot({ source, outDir, height, hosts: HOSTS, progress });
    } finally {
      await source.close();
    }
  };
  const manifest = (dir: string) => readFileSync(join(dir, MANIFEST_PATH), 'utf8');
  /** A fresh full build of what the node serves now, compared with the incremental tree. */
  const expectSameAsFresh = async (height: number) => {
    const dir = join(root, `fresh-${freshN++}`);
    const r = await build(dir, height);
    expect(r.mode).toBe('full');
    expect(manifest(out())).toBe(manifest(dir));
    expect(manifestMismatches(out())).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.state`, { recursive: true, force: true });
  };

  beforeAll(async () => {
    core = loadCoreRegtest();
    expect(core.main).toHaveLength(261);
    expect([...core.stale.keys()].sort((a, b) => a - b)).toEqual([150, 151, 257]);
    root = mkdtempSync(join(tmpdir(), 'snapshot-rpc-rerun-'));
    // Before reorg 1: the node's tip is stale 151 (on stale 150).
    node = await new FakeNode(staleTip(149, [150, 151])).start();
  });
  afterAll(async () => {
    await node?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('first build: the node’s tip, full; the scan counts the node’s txs (getchaintxstats)', async () => {
    const samples: ProgressSample[] = [];
    const r = await build(out(), undefined, new Progress(null, { onSample: (s) => samples.push(s) }));
    expect(r.mode).toBe('full');
    // nTx of the node's getblock answers: main 0–149, then stale 150 and 151
    const recorded = JSON.parse(readFileSync(chainPath('namecoin-core-regtest', 'chain.json'), 'utf8')) as {
      main: { block: { nTx: number } }[];
      stale: { height: number; block: { nTx: number } }[];
    };
    const txs = recorded.main.slice(0, 150).reduce((n, b) => n + b.block.nTx, 0) + recorded.stale.filter((b) => b.height <= 151).reduce((n, b) => n + b.block.nTx, 0);
    const scan = samples.filter((s) => s.stage === 'scan').at(-1)!;
    expect([scan.unit, scan.done, scan.total]).toEqual(['txs', txs, txs]);
    expect(r.height).toBe(151);
    expect(r.tip).toBe(blockId(core.stale.get(151)!));
  });

  it('a re-run with nothing new is a no-op success: incremental, 0 files written or deleted', async () => {
    const before = manifest(out());
    const r = await build(out());
    expect(r.mode).toBe('incremental');
    expect(r.rolledBackTo).toBeUndefined();
    expect([r.written, r.deleted]).toEqual([0, 0]);
    expect(manifest(out())).toBe(before);
    // and a third time too (a failed second run would make this one full)
    const again = await build(out(), 151);
    expect([again.mode, again.written, again.deleted]).toEqual(['incremental', 0, 0]);
  });

  it('a reorg between runs (stale 150–151 replaced by the main chain, tip 200) rolls back to the fork 149 and goes on', async () => {
    node.setChain(mainTo(200));
    const r = await build(out());
    expect(r.mode).toBe('incremental');
    expect(r.rolledBackTo).toBe(149);
    expect(r.height).toBe(200);
    expect(r.blocks.side).toBe(2); // stale 150 and 151, now side blocks
    await expectSameAsFresh(200);
  });

  it('a lower --height is a rollback equal to a fresh build at that height', async () => {
    const r = await build(out(), 180);
    expect(r.mode).toBe('incremental');
    expect(r.rolledBackTo).toBe(180);
    expect(r.height).toBe(180);
    await expectSameAsFresh(180);
  });

  it('new blocks extend the snapshot (tip stale 257 on 256)', async () => {
    node.setChain(staleTip(256, [257]));
    const r = await build(out());
    expect(r.mode).toBe('incremental');
    expect(r.rolledBackTo).toBeUndefined();
    expect(r.height).toBe(257);
    expect(r.tip).toBe(blockId(core.stale.get(257)!));
    await expectSameAsFresh(257);
  });

  it('a one-block reorg between runs (stale 257 replaced, tip 260) rolls back to 256', async () => {
    node.setChain(mainTo(260));
    const r = await build(out());
    expect(r.mode).toBe('incremental');
    expect(r.rolledBackTo).toBe(256);
    expect(r.height).toBe(260);
    expect(r.tip).toBe('c7f3e020fd13e5828dcfc2d439f685a99bfddc3ba34c3aad32a9e8f21c8d396b');
    expect(r.blocks.side).toBe(3);
    await expectSameAsFresh(260);
    const again = await build(out());
    expect([again.mode, again.written, again.deleted]).toEqual(['incremental', 0, 0]);
  });
});
