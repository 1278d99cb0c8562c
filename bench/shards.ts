// npm run bench:shards [-- --tx 200000 --shards 4 --at-once 2 --dir /tmp --profile real|bench]
// A builder-made chain (bench/chain.ts) built once by `snapshot build` and once in stages:
// `snapshot index`, N shard builds (`--at-once` at a time on the one index) and `snapshot merge`,
// as a tree and as a pack. Checks that the merged snapshot is the single build's (the tree's
// manifest line for line and every file against it; every manifest path's pack answer against
// the single tree's sha256) and prints the wall time of each step.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { PackReader, answerBytes } from '../src/pack/reader.js';
import { buildSnapshot } from '../src/site/build.js';
import { indexStage } from '../src/site/build/index-stage.js';
import { buildShard } from '../src/site/build/shard.js';
import { mergeShards } from '../src/site/merge.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { verifySnapshot } from '../src/verify/index.js';
import { net, numberArg as arg, profileArg, writeBenchChain } from './chain.js';

const txCount = arg('tx', 200_000);
const n = arg('shards', 4);
const atOnce = arg('at-once', 2);
const dirArg = process.argv.indexOf('--dir');
const root = mkdtempSync(join(dirArg === -1 ? tmpdir() : process.argv[dirArg + 1]!, 'snapshot-bench-shards-'));
const hosts = ['netlify', 'cloudflare'] as const; // nginx.conf names the output's directory: left out of the comparison

async function timed<T>(label: string, f: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const r = await f();
  console.log(`${label}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return r;
}

const manifestOf = (tree: string) => readFileSync(join(tree, MANIFEST_PATH), 'utf8');

async function main(): Promise<void> {
  const blocks = join(root, 'blocks');
  writeBenchChain(blocks, { txCount, txPerBlock: 1000, profile: profileArg() });
  const source = () => openBlocksDir(blocks, net);
  const S = join(root, 'S');
  await timed('snapshot index', () => indexStage({ source, stateDir: S }));
  for (const format of ['tree', 'pack'] as const) {
    const single = join(root, `single-${format}`);
    await timed(`one ${format} build`, () => buildSnapshot({ source, outDir: single, format, hosts }));
    const outs = Array.from({ length: n }, (_, i) => join(root, `${format}-${i}`));
    await timed(`${n} ${format} shards, ${atOnce} at a time`, async () => {
      for (let i = 0; i < n; i += atOnce) {
        await Promise.all(outs.slice(i, i + atOnce).map((outDir, k) => buildShard({ source, indexDir: S, shard: { index: i + k, count: n }, outDir, format, hosts })));
      }
    });
    const merged = join(root, `merged-${format}`);
    await timed(`merge of the ${format} shards`, () => mergeShards(merged, outs));
    if (format === 'tree') {
      if (manifestOf(merged) !== manifestOf(single)) throw new Error('the merged tree manifest differs from the single build');
      const v = await verifySnapshot(merged);
      if (!v.ok) throw new Error(`verify of the merged tree failed: ${JSON.stringify(v).slice(0, 500)}`);
      console.log(`tree: ${manifestOf(merged).split('\n').length - 1} files, the manifest equal, every file matches it`);
    } else {
      const tree = join(`${single}.state`, 'tree');
      const r = await PackReader.open(merged);
      let paths = 0;
      for (const line of manifestOf(tree).trimEnd().split('\n')) {
        const [sha, , path] = line.split(' ') as [string, string, string];
        const a = await r.get(path);
        if (!a || createHash('sha256').update(await answerBytes(a)).digest('hex') !== sha) throw new Error(`the merged pack answers ${path} otherwise`);
        paths++;
      }
      await r.close();
      console.log(`pack: all ${paths} paths answer the single build's bytes`);
    }
  }
}

main()
  .finally(() => rmSync(root, { recursive: true, force: true }))
  .catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
