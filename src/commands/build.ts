/** `snapshot build`: scan a chain and write the API site; also the build step of `snapshot demo`. */
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { getNetwork } from '../chain/networks.js';
import { HOSTS, type HostName } from '../hosts/index.js';
import { nginxUpstream } from '../hosts/nginx.js';
import { buildSnapshot, type BuildOptions, type SiteBuildReport } from '../site/build.js';
import { Progress } from '../runtime/progress.js';
import { demoSource } from '../source/demo.js';
import { openSource } from '../source/index.js';
import type { ChainSource } from '../source/types.js';
import { command, duration, scanThreads, warn, wholeNumber } from '../cli-args.js';
import { buildShardCommand } from './shard.js';

function printReport(r: SiteBuildReport, out: string): void {
  const how = r.mode === 'incremental' ? `incremental${r.rolledBackTo !== undefined ? `, rolled back to height ${r.rolledBackTo}` : ''}` : 'full';
  const lines = [
    `built ${out}: ${r.network} height ${r.height} (tip ${r.tip}), ${how}`,
    `  blocks ${r.blocks.main} main, ${r.blocks.side} side, ${r.blocks.orphan} orphan; txs ${r.txs}`,
    `  files ${r.files}, bytes ${r.bytes}; written ${r.written}, unchanged ${r.unchanged}, deleted ${r.deleted}`,
    `  addresses ${r.addresses} (${r.cappedAddresses} capped); names ${r.names} (${r.nonUtf8Names} records not UTF-8)`,
    `  stages: ${r.stageSeconds.map(([s, t]) => `${s} ${t.toFixed(2)}s`).join(', ')}`,
  ];
  if (r.pack) {
    const p = r.pack;
    lines.push(`  pack ${p.index}: ${p.entries} entries, ${p.whole ? 'written whole' : `${p.reused} kept from the previous pack (${p.carried} unread)`}, ${p.newParts} new part(s), ${p.partBytes} bytes of parts, ${p.bytesWritten} bytes written, ${p.removed} old file(s) removed`);
  }
  if (r.duplicateTxids.length) lines.push(`  duplicate txids (later occurrence served): ${r.duplicateTxids.join(', ')}`);
  if (r.skippedInvalid.length) lines.push(`  invalid blocks skipped: ${r.skippedInvalid.length}${r.requestedHeight !== undefined ? ` (the snapshot stops at height ${r.height}, not ${r.requestedHeight})` : ''}`);
  if (r.warnings.length) lines.push(`  warnings: ${r.warnings.length} (on stderr)`);
  process.stdout.write(lines.join('\n') + '\n');
  // Warnings go to stderr, where they are not lost in the report (skipped invalid blocks, blocks that do not connect, skipped junk).
  for (const w of r.warnings) warn(w);
}

/** Builds the source `open` gives into `outDir` (opened once the output is known to be ours) and prints the report; returns the absolute output path. */
export async function buildAndReport(
  open: () => Promise<ChainSource>,
  outDir: string,
  progress: Progress,
  opts: Omit<BuildOptions, 'source' | 'outDir' | 'progress'>,
): Promise<string> {
  // The path as given: the build's refusals name it so (the build resolves it the same way).
  const out = resolve(outDir);
  printReport(await buildSnapshot({ ...opts, source: open, outDir, progress }), out);
  return out;
}

const options = (y: Argv) =>
  y
    .option('source', { type: 'string', requiresArg: true, describe: 'blocks:<dir> or rpc:<url>; none = the embedded demo chain' })
    .option('network', { type: 'string', requiresArg: true, describe: 'bitcoin, bitcoin-testnet, bitcoin-testnet4, bitcoin-signet, bitcoin-regtest, namecoin, namecoin-testnet, namecoin-regtest' })
    .option('height', { type: 'string', requiresArg: true, describe: 'snapshot height (default: the tip)', coerce: (v: unknown) => wholeNumber('height', v, '1000') })
    .option('out', { type: 'string', requiresArg: true, default: 'out', describe: 'output directory' })
    .option('format', { type: 'string', requiresArg: true, choices: ['tree', 'pack'] as const, default: 'tree' as const, describe: 'tree: one file per document; pack: a few large files read by byte range (the tree is kept in --state)' })
    .option('pretty', { type: 'boolean', default: false, describe: 'indent JSON with 2 spaces' })
    .option('max-address-txouts', {
      type: 'string',
      requiresArg: true,
      default: '10000',
      describe: 'cap on outputs per address document (0 = none)',
      coerce: (v: unknown) => wholeNumber('max-address-txouts', v, '10000'),
    })
    .option('rpc-cookie', { type: 'string', requiresArg: true, describe: 'cookie file for RPC auth' })
    .option('rpc-wait', {
      type: 'string',
      requiresArg: true,
      describe: 'wait this long (e.g. 30s, 2m) for a node that refuses connections (starting); default: fail at once',
      coerce: (v: unknown) => duration('rpc-wait', v, '30s'),
    })
    .option('state', { type: 'string', requiresArg: true, describe: 'persistent index for incremental builds (default: <out>.state); with --shard, the index snapshot index built (read only)' })
    .option('shard', { type: 'string', requiresArg: true, describe: 'i/N (0-based): write only shard i of N of the snapshot, from the index in --state; auto: i from JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX or SLURM_ARRAY_TASK_ID' })
    .option('shards', { type: 'string', requiresArg: true, describe: 'N, with --shard auto', coerce: (v: unknown) => wholeNumber('shards', v, '4') })
    .option('full', { type: 'boolean', default: false, describe: 'ignore the index and build everything' })
    .option('force', { type: 'boolean', default: false, describe: 'replace a non-empty --out not made by this tool; use a --state dir holding other files' })
    .option('skip-invalid', { type: 'boolean', default: false, describe: 'skip invalid blocks with a warning instead of failing (an invalid main-chain block is set aside with its descendants: the best valid chain is built)' })
    .option('scan-threads', {
      type: 'string',
      requiresArg: true,
      describe: 'threads that parse, hash and validate blocks during the scan (default: the cores less one; 1: the main thread)',
      coerce: (v: unknown) => scanThreads(v),
    })
    .option('hosts', { type: 'string', array: true, choices: [...HOSTS], describe: 'hosting providers to write glue files for (default: all)' })
    .option('nginx-upstream', {
      type: 'string',
      requiresArg: true,
      describe: 'host:port of a snapshot serve the generated nginx.conf proxies what nginx cannot answer itself to',
      coerce: (v: unknown) => nginxUpstream('nginx-upstream', v),
    })
    // The old name of --hosts, kept so that scripts keep working (serve's --host is the address to listen on):
    // its values join --hosts before the checks, so that an unknown one is reported as one of --hosts.
    .option('host', { type: 'string', array: true, hidden: true })
    .middleware((argv) => {
      if (argv.host === undefined) return;
      warn('--host is now --hosts (the hosting providers to write glue files for); --host still works on build for now');
      argv.hosts = [...(argv.hosts ?? []), ...argv.host] as HostName[];
      delete argv.host;
    }, true);

export const buildCommand = command({
  command: 'build',
  describe: 'scan the chain from genesis to --height and write every API resource as files',
  builder: options,
  handler: async (argv) => {
    const network = argv.network !== undefined ? getNetwork(argv.network) : undefined;
    const progress = new Progress();
    const rpc = { cookieFile: argv['rpc-cookie'], waitMs: argv['rpc-wait'], log: (line: string) => progress.note(line) };
    const open = async () => (argv.source ? openSource(argv.source, network, { rpc }) : demoSource(network));
    if (argv.shard !== undefined || argv.shards !== undefined) return buildShardCommand(argv, open, progress);
    await buildAndReport(open, argv.out, progress, {
      height: argv.height,
      format: argv.format,
      stateDir: argv.state !== undefined ? resolve(argv.state) : undefined,
      full: argv.full,
      force: argv.force,
      skipInvalid: argv['skip-invalid'],
      pretty: argv.pretty,
      maxAddressTxouts: argv['max-address-txouts'],
      hosts: argv.hosts,
      nginxUpstream: argv['nginx-upstream'],
      scanThreads: argv['scan-threads'],
    });
  },
});
