import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { buildSnapshot } from '../src/site/build.js';
import { openRpc } from '../src/source/rpc.js';
import { FakeNode, loadBlocks } from './support/fake-node.js';
import { chainPath } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

interface CoreStats {
  height: number;
  blockhash: string;
  txs: number;
  ins: number;
  outs: number;
  total_out: number;
  totalfee: number;
  total_size: number;
  swtxs: number;
}

interface TxDoc {
  hash: string;
  size: number;
  in: { prev_out: { hash: string; n: number }; coinbase?: string; witness?: string[] }[];
  out: { value: string }[];
}

const sat = (v: string) => Number(BigInt(v.replace('.', '')));

describeShared('chaindata')('build through the RPC source: Bitcoin Core regtest 0–103', () => {
  let node: FakeNode;
  let dir: string;
  let out: string;
  const json = (rel: string) => JSON.parse(readFileSync(join(out, rel), 'utf8'));

  beforeAll(async () => {
    node = await new FakeNode({ main: loadBlocks(), side: [] }).start();
    dir = mkdtempSync(join(tmpdir(), 'snapshot-rpc-'));
    out = join(dir, 'out');
    const source = await openRpc(node.url, { network: NETWORKS['bitcoin-regtest'] });
    await buildSnapshot({ source, outDir: out });
    await source.close();
  });
  afterAll(async () => {
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const stats = (): CoreStats[] => JSON.parse(readFileSync(chainPath('bitcoin-core', 'rpc_getblockstats.json'), 'utf8')).stats;

  it('per block, the counts and totals equal Bitcoin Core’s getblockstats (heights 101–103)', () => {
    for (const core of stats()) {
      const block = json(`block/${core.blockhash}.json`);
      const txs: TxDoc[] = block.tx;
      const spending = txs.slice(1);
      const inputValue = (t: TxDoc) =>
        t.in.reduce((s, i) => s + sat(json(`tx/${i.prev_out.hash}.json`).out[i.prev_out.n].value), 0);
      const outputValue = (t: TxDoc) => t.out.reduce((s, o) => s + sat(o.value), 0);
      expect(
        {
          height: json(`tx/${txs[0]!.hash}.json`).blocknumber,
          txs: block.n_tx,
          ins: spending.reduce((s, t) => s + t.in.length, 0),
          outs: txs.reduce((s, t) => s + t.out.length, 0),
          total_out: spending.reduce((s, t) => s + outputValue(t), 0),
          totalfee: spending.reduce((s, t) => s + inputValue(t) - outputValue(t), 0),
          total_size: spending.reduce((s, t) => s + t.size, 0),
          swtxs: spending.filter((t) => t.in.some((i) => i.witness)).length,
        },
        `height ${core.height}`,
      ).toEqual({
        height: core.height,
        txs: core.txs,
        ins: core.ins,
        outs: core.outs,
        total_out: core.total_out,
        totalfee: core.totalfee,
        total_size: core.total_size,
        swtxs: core.swtxs,
      });
    }
  });

  it('stats.json: 104 blocks, 109 txs, the chain’s script types', () => {
    const s = json('stats.json');
    expect(s.blocks.main).toBe(104);
    expect(s.txs).toBe(109);
    expect(s.script_types).toMatchObject({ pubkey: 1, pubkey_hash: 107, op_return: 104, witness_v0_keyhash: 5 });
    expect(s.coins).toBe(104 * 50e8); // regtest halves every 150 blocks
  });

  it('the tip is the one chaindata.md names', () => {
    expect(json('_site.json').tip).toBe('7474991c2ae3c94c4813d75b4c752028304b773dd4dce8d460dfa2d1e7b542a3');
  });
});
