/**
 * Throughput of the test-chain generator: `npx tsx bench/builder.ts [txCount] [network] [profile]`
 * (default 1,000,000 transactions on namecoin-regtest with AuxPoW, and bitcoin-regtest; profile
 * `bench` (default) or `real`).
 */
import { generateChain, type ChainProfile } from '../src/builder/generate.js';
import { getNetwork } from '../src/chain/networks.js';

const txCount = Number(process.argv[2] ?? 1_000_000);
const nets = process.argv[3] ? [process.argv[3]] : ['namecoin-regtest', 'bitcoin-regtest'];
const profile = (process.argv[4] ?? 'bench') as ChainProfile;
for (const name of nets) {
  const network = getNetwork(name);
  const t0 = performance.now();
  let blocks = 0;
  let txs = 0;
  let bytes = 0;
  for (const b of generateChain({ network, seed: 'bench', txCount, profile })) {
    blocks++;
    txs += b.txCount;
    bytes += b.raw.length;
  }
  const s = (performance.now() - t0) / 1000;
  console.log(
    `${name} (${profile}): ${txs.toLocaleString('en')} tx (${txCount.toLocaleString('en')} non-coinbase) in ${blocks} blocks, ` +
      `${(bytes / 1e6).toFixed(0)} MB, ${s.toFixed(1)} s → ${Math.round(txs / s).toLocaleString('en')} tx/s`,
  );
}
