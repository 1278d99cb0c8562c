/** `snapshot index`: build (or bring to --height) the persistent index in --state only, for shard builds to read. */
import type { Argv } from 'yargs';
import { getNetwork } from '../chain/networks.js';
import { indexStage } from '../site/build/index-stage.js';
import { Progress } from '../runtime/progress.js';
import { demoSource } from '../source/demo.js';
import { openSource } from '../source/index.js';
import { command, duration, scanThreads, warn, wholeNumber } from '../cli-args.js';

export const indexCommand = command({
  command: 'index',
  describe: 'build or update the index in --state only (no documents): the first stage of a sharded build',
  builder: (y: Argv) =>
    y
      .option('source', { type: 'string', requiresArg: true, describe: 'blocks:<dir> or rpc:<url>; none = the embedded demo chain' })
      .option('network', { type: 'string', requiresArg: true, describe: 'the chain (as for build)' })
      .option('height', { type: 'string', requiresArg: true, describe: 'index height (default: the tip)', coerce: (v: unknown) => wholeNumber('height', v, '1000') })
      .option('state', { type: 'string', requiresArg: true, demandOption: true, describe: 'the index directory shard builds read (snapshot build --shard … --state)' })
      .option('full', { type: 'boolean', default: false, describe: 'build the index again from genesis' })
      .option('skip-invalid', { type: 'boolean', default: false, describe: 'skip invalid blocks with a warning instead of failing' })
      .option('scan-threads', {
        type: 'string',
        requiresArg: true,
        describe: 'threads that parse, hash and validate blocks (default: the cores less one; 1: the main thread)',
        coerce: (v: unknown) => scanThreads(v),
      })
      .option('rpc-cookie', { type: 'string', requiresArg: true, describe: 'cookie file for RPC auth' })
      .option('rpc-wait', {
        type: 'string',
        requiresArg: true,
        describe: 'wait this long (e.g. 30s, 2m) for a node that refuses connections',
        coerce: (v: unknown) => duration('rpc-wait', v, '30s'),
      }),
  handler: async (argv) => {
    const network = argv.network !== undefined ? getNetwork(argv.network) : undefined;
    const progress = new Progress();
    const rpc = { cookieFile: argv['rpc-cookie'], waitMs: argv['rpc-wait'], log: (line: string) => progress.note(line) };
    const r = await indexStage({
      source: async () => (argv.source ? openSource(argv.source, network, { rpc }) : demoSource(network)),
      height: argv.height,
      stateDir: argv.state,
      full: argv.full,
      skipInvalid: argv['skip-invalid'],
      scanThreads: argv['scan-threads'],
      progress,
    });
    const how = r.mode === 'full' ? `full${r.fullReason && r.fullReason !== 'no index yet' ? ` (${r.fullReason})` : ''}` : `incremental${r.rolledBackTo !== undefined ? `, rolled back to height ${r.rolledBackTo}` : ''}`;
    process.stdout.write(
      [
        `indexed ${r.stateDir}: ${r.network} height ${r.height} (tip ${r.tip})`,
        `  ${how}; txs ${r.txs}; off-chain blocks ${r.side} side, ${r.orphan} orphan`,
        `  stages: ${r.stageSeconds.map(([s, t]) => `${s} ${t.toFixed(2)}s`).join(', ')}`,
      ].join('\n') + '\n',
    );
    for (const w of r.warnings) warn(w);
  },
});
