// The benchmarks' chains: builder-made Namecoin regtest chains of the `real` (default) or `bench`
// profile (`--profile bench`), written as a blocks dir, with their measured shape printed.
import { writeBlocksDir } from '../src/builder/blkfiles.js';
import { generateChain, type ChainProfile, type GeneratedBlock } from '../src/builder/generate.js';
import { formatShape, ShapeMeter } from '../src/builder/shape.js';
import { NETWORKS } from '../src/chain/networks.js';

export const net = NETWORKS['namecoin-regtest'];

export function numberArg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
}

export function profileArg(): ChainProfile {
  const i = process.argv.indexOf('--profile');
  const p = i === -1 ? 'real' : process.argv[i + 1];
  if (p !== 'real' && p !== 'bench') throw new Error(`--profile: expected real or bench, got ${p}`);
  return p;
}

/** Generates the chain into `dir` (blk files) and prints how long that took and the chain's shape. */
export function writeBenchChain(dir: string, opts: { txCount: number; txPerBlock: number; profile: ChainProfile }): void {
  const t0 = performance.now();
  const meter = new ShapeMeter(net);
  function* metered(): Generator<GeneratedBlock> {
    for (const b of generateChain({ network: net, seed: 'bench', ...opts })) {
      meter.add(b.raw);
      yield b;
    }
  }
  writeBlocksDir(metered(), dir, { network: net });
  console.log(`profile ${opts.profile}: chain of ${opts.txCount} txs (≤ ${opts.txPerBlock} per block) generated and measured in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  console.log(formatShape(meter.result()));
}
