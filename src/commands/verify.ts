/** `snapshot verify`: check a built tree; exit 1 when a problem is found. */
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { Progress } from '../runtime/progress.js';
import { formatVerifyReport, verifySnapshot } from '../verify/index.js';
import { command } from '../cli-args.js';

export const verifyCommand = command({
  command: 'verify',
  describe: 'check a built snapshot against its manifest and for internal consistency',
  builder: (y: Argv) =>
    y
      .option('dir', { type: 'string', requiresArg: true, default: 'out', describe: 'snapshot directory' })
      .option('verbose', { type: 'boolean', default: false, describe: 'list every problem and the counts' }),
  handler: async (argv) => {
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
});
