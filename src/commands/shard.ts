/** `snapshot build --shard i/N --state S`: the shard part of the build command (docs/operations.md, "Stages and shards"). */
import { resolve } from 'node:path';
import { parseShard } from '../contract/shard.js';
import type { HostName } from '../hosts/index.js';
import type { Progress } from '../runtime/progress.js';
import { buildShard } from '../site/build/shard.js';
import type { ChainSource } from '../source/types.js';

/** The build command's options a shard build reads. */
export interface ShardArgs {
  shard?: string;
  shards?: number;
  state?: string;
  out: string;
  height?: number;
  format: 'tree' | 'pack';
  pretty: boolean;
  'max-address-txouts': number;
  hosts?: HostName[];
  'nginx-upstream'?: string;
  full: boolean;
  'skip-invalid': boolean;
  force: boolean;
}

export async function buildShardCommand(argv: ShardArgs, open: () => Promise<ChainSource>, progress: Progress): Promise<void> {
  if (argv.shard === undefined) throw new Error('--shards needs --shard auto (or give --shard i/N)');
  const shard = parseShard(argv.shard, argv.shards, process.env);
  if (argv.state === undefined) throw new Error('--shard needs --state: the index directory snapshot index built');
  if (argv.full) throw new Error('--full does not go with --shard: rebuild the index with snapshot index --full');
  if (argv['skip-invalid']) throw new Error('--skip-invalid does not go with --shard: give it to snapshot index');
  const r = await buildShard(
    {
      source: open,
      indexDir: argv.state,
      shard,
      outDir: argv.out,
      height: argv.height,
      format: argv.format,
      pretty: argv.pretty,
      maxAddressTxouts: argv['max-address-txouts'],
      hosts: argv.hosts,
      nginxUpstream: argv['nginx-upstream'],
      force: argv.force,
      progress,
    },
  );
  const lines = [
    `built shard ${shard.index}/${shard.count} ${resolve(r.out)}: ${r.network} height ${r.height} (tip ${r.tip})`,
    `  files ${r.files}, bytes ${r.bytes}`,
    `  stages: ${r.stageSeconds.map(([s, t]) => `${s} ${t.toFixed(2)}s`).join(', ')}`,
  ];
  if (r.pack) lines.push(`  pack ${r.pack.index}: ${r.pack.entries} entries, ${r.pack.newParts} new part(s), ${r.pack.bytesWritten} bytes written`);
  process.stdout.write(lines.join('\n') + '\n');
}
