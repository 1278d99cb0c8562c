#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { getNetwork } from './chain/networks.js';
import { IoError } from './index/io-error.js';
import { buildSnapshot, type BuildReport } from './site/build.js';
import { demoSource } from './site/demo-source.js';
import { HOSTS, type HostName } from './site/hosts/index.js';
import { Progress } from './site/progress.js';
import { checkTargets } from './site/publish.js';
import { openSource } from './source/index.js';
import type { ChainSource } from './source/types.js';
import { port, snapshotDir, wholeNumber } from './cli-args.js';
import { serveUntilSignal } from './serve/server.js';
import { formatVerifyReport, verifySnapshot } from './site/verify.js';

function printReport(r: BuildReport, out: string): void {
  const how = r.mode === 'incremental' ? `incremental${r.rolledBackTo !== undefined ? `, rolled back to height ${r.rolledBackTo}` : ''}` : 'full';
  const lines = [
    `built ${out}: ${r.network} height ${r.height} (tip ${r.tip}), ${how}`,
    `  blocks ${r.blocks.main} main, ${r.blocks.side} side, ${r.blocks.orphan} orphan; txs ${r.txs}`,
    `  files ${r.files}, bytes ${r.bytes}; written ${r.written}, unchanged ${r.unchanged}, deleted ${r.deleted}`,
    `  addresses ${r.addresses} (${r.cappedAddresses} capped); names ${r.names} (${r.nonUtf8Names} records not UTF-8)`,
    `  stages: ${r.stageSeconds.map(([s, t]) => `${s} ${t.toFixed(2)}s`).join(', ')}`,
  ];
  if (r.duplicateTxids.length) lines.push(`  duplicate txids (later occurrence served): ${r.duplicateTxids.join(', ')}`);
  if (r.skippedInvalid.length) lines.push(`  invalid blocks skipped: ${r.skippedInvalid.length}${r.requestedHeight !== undefined ? ` (the snapshot stops at height ${r.height}, not ${r.requestedHeight})` : ''}`);
  if (r.warnings.length) lines.push(`  warnings: ${r.warnings.length} (on stderr)`);
  process.stdout.write(lines.join('\n') + '\n');
  // Warnings go to stderr, where they are not lost in the report (skipped invalid blocks, blocks that do not connect, skipped junk).
  for (const w of r.warnings) process.stderr.write(`snapshot: warning: ${w}\n`);
}

/** The package's version: package.json sits one level above both src/ and dist/. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** Builds `source` into `outDir` and prints the report; returns the absolute output path. */
async function build(
  source: ChainSource,
  outDir: string,
  progress: Progress,
  opts: Omit<Parameters<typeof buildSnapshot>[0], 'source' | 'outDir' | 'progress'>,
): Promise<string> {
  try {
    const out = resolve(outDir);
    printReport(await buildSnapshot({ ...opts, source, outDir: out, progress }), out);
    return out;
  } finally {
    await source.close();
  }
}

async function main(): Promise<void> {
  const args = hideBin(process.argv);
  await yargs(args)
    .scriptName('snapshot')
    .version(packageVersion())
    .command(
      'build',
      'scan the chain from genesis to --height and write every API resource as files',
      (y) =>
        y
          .option('source', { type: 'string', describe: 'blocks:<dir> or rpc:<url>; none = the embedded demo chain' })
          .option('network', { type: 'string', describe: 'bitcoin, bitcoin-testnet, bitcoin-testnet4, bitcoin-signet, bitcoin-regtest, namecoin, namecoin-testnet, namecoin-regtest' })
          .option('height', { type: 'string', describe: 'snapshot height (default: the tip)', coerce: (v: unknown) => wholeNumber('height', v, '1000') })
          .option('out', { type: 'string', default: 'out', describe: 'output directory' })
          .option('pretty', { type: 'boolean', default: false, describe: 'indent JSON with 2 spaces' })
          .option('max-address-txouts', {
            type: 'string',
            default: '10000',
            describe: 'cap on outputs per address document (0 = none)',
            coerce: (v: unknown) => wholeNumber('max-address-txouts', v, '10000'),
          })
          .option('rpc-cookie', { type: 'string', describe: 'cookie file for RPC auth' })
          .option('state', { type: 'string', describe: 'persistent index for incremental builds (default: <out>.state)' })
          .option('full', { type: 'boolean', default: false, describe: 'ignore the index and build everything' })
          .option('force', { type: 'boolean', default: false, describe: 'replace a non-empty --out not made by this tool; use a --state dir holding other files' })
          .option('skip-invalid', { type: 'boolean', default: false, describe: 'skip invalid blocks with a warning instead of failing (the snapshot stops below an invalid main-chain block)' })
          .option('host', { type: 'string', array: true, choices: [...HOSTS], describe: 'write glue files only for these hosts (default: all)' }),
      async (argv) => {
        const network = argv.network !== undefined ? getNetwork(argv.network) : undefined;
        checkTargets(argv.out, argv.state, argv.force); // refuse a wrong --out/--state before opening the source
        const progress = new Progress();
        const rpc = { cookieFile: argv['rpc-cookie'], log: (line: string) => progress.note(line) };
        const source = argv.source ? await openSource(argv.source, network, { rpc }) : demoSource(network);
        await build(source, argv.out, progress, {
          height: argv.height,
          stateDir: argv.state !== undefined ? resolve(argv.state) : undefined,
          full: argv.full,
          force: argv.force,
          skipInvalid: argv['skip-invalid'],
          pretty: argv.pretty,
          maxAddressTxouts: argv['max-address-txouts'],
          hosts: argv.host as HostName[] | undefined,
        });
      },
    )
    .command(
      'serve',
      'serve a built snapshot over HTTP',
      (y) =>
        y
          .option('dir', { type: 'string', default: 'out' })
          .option('port', { type: 'string', default: '8080', coerce: (v: unknown) => port('port', v) })
          .option('host', { type: 'string', default: '127.0.0.1' }),
      (argv) => serveUntilSignal({ dir: snapshotDir(resolve(argv.dir)), port: argv.port, host: argv.host }),
    )
    .command(
      'demo',
      'build the embedded demo chain and serve it (one process: stopping it stops the server)',
      (y) =>
        y
          .option('out', { type: 'string', default: 'out', describe: 'output directory' })
          .option('port', { type: 'string', default: '8080', coerce: (v: unknown) => port('port', v) })
          .option('host', { type: 'string', default: '127.0.0.1' }),
      async (argv) => {
        checkTargets(argv.out, undefined, false);
        const out = await build(demoSource(undefined), argv.out, new Progress(), {});
        await serveUntilSignal({ dir: out, port: argv.port, host: argv.host });
      },
    )
    .command(
      'verify',
      'check a built snapshot against its manifest and for internal consistency',
      (y) =>
        y
          .option('dir', { type: 'string', default: 'out', describe: 'snapshot directory' })
          .option('verbose', { type: 'boolean', default: false, describe: 'list every problem and the counts' }),
      async (argv) => {
        const progress = new Progress();
        progress.stages(['chain', 'files', 'tree']);
        let stage = '';
        const report = await verifySnapshot(resolve(argv.dir), {
          verbose: argv.verbose,
          onProgress: (s, done, total) => {
            if (s !== stage) progress.begin((stage = s));
            progress.update(done, total, s === 'chain' ? 'blocks' : 'files');
          },
        });
        progress.end();
        process.stdout.write(formatVerifyReport(report, argv.verbose));
        if (!report.ok) process.exitCode = 1;
      },
    )
    .demandCommand(1, 'name a command: build, serve, verify or demo')
    .recommendCommands()
    .strict()
    .fail((msg, err) => {
      if (err) throw err;
      throw new Error(/^Did you mean/.test(msg) ? `unknown command "${args[0]}". ${msg}` : msg);
    })
    .help()
    .parseAsync();
}

main().catch((e: unknown) => {
  if (e instanceof IoError && e.nativeDiagnostic) process.stderr.write('\n'); // our line on a line of its own
  process.stderr.write(`snapshot: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
