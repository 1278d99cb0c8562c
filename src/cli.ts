#!/usr/bin/env node
// The command line: the commands themselves, their options and checks are in src/commands/.
import { readFileSync } from 'node:fs';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { IoError } from './runtime/io-error.js';
import { buildCommand } from './commands/build.js';
import { demoCommand } from './commands/demo.js';
import { indexCommand } from './commands/index.js';
import { mergeCommand } from './commands/merge.js';
import { publishCommand } from './commands/publish.js';
import { serveCommand } from './commands/serve.js';
import { verifyCommand } from './commands/verify.js';

/** The package's version: package.json sits one level above both src/ and dist/. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

async function main(): Promise<void> {
  const args = hideBin(process.argv);
  await yargs(args)
    .scriptName('snapshot')
    .version(packageVersion())
    .command(buildCommand)
    .command(serveCommand)
    .command(demoCommand)
    .command(verifyCommand)
    .command(publishCommand)
    .command(indexCommand)
    .command(mergeCommand)
    .demandCommand(1, 'name a command: build, serve, verify, publish, demo, index or merge')
    .recommendCommands()
    .strict()
    .fail((msg, err) => {
      if (err) throw err;
      throw new Error(/^Did you mean/.test(msg) ? `unknown command "${args[0]}". ${msg}` : msg);
    })
    .epilog('Run snapshot <command> --help for the options of a command.')
    .help()
    .parseAsync();
}

main().catch((e: unknown) => {
  if (e instanceof IoError && e.nativeDiagnostic) process.stderr.write('\n'); // our line on a line of its own
  process.stderr.write(`snapshot: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
