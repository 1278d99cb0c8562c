/** `snapshot merge --out OUT SHARD…`: join the shard outputs of one snapshot into one tree or pack. */
import type { Argv } from 'yargs';
import { mergeShards } from '../site/merge.js';
import { command } from '../cli-args.js';

export const mergeCommand = command({
  command: 'merge [shards..]',
  describe: 'join the outputs of snapshot build --shard i/N (all N of them) into one snapshot',
  builder: (y: Argv) =>
    y
      .positional('shards', { type: 'string', array: true, describe: 'the shard outputs (the --out of each shard build)' })
      .option('out', { type: 'string', requiresArg: true, demandOption: true, describe: 'output directory (a tree or a pack, as the shards are)' }),
  handler: async (argv) => {
    const r = await mergeShards(argv.out, (argv.shards ?? []).map(String));
    const lines = [`merged ${r.shards} ${r.output} shard(s) into ${r.out}: ${r.network} height ${r.height} (tip ${r.tip})`, `  files ${r.files}`];
    if (r.index !== undefined) lines.push(`  pack ${r.index}: ${r.linked} part(s) linked from the shards`);
    process.stdout.write(lines.join('\n') + '\n');
  },
});
