/** `snapshot verify`: check a built tree or pack; exit 1 when a problem is found. */
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { Progress } from '../runtime/progress.js';
import { formatVerifyReport, verifySnapshot } from '../verify/index.js';
import { formatPackVerifyReport, isPackDir, verifyPack } from '../verify/pack.js';
import { command } from '../cli-args.js';

export const verifyCommand = command({
  command: 'verify',
  describe: 'check a built snapshot (tree or pack) against its manifest and for internal consistency',
  builder: (y: Argv) =>
    y
      .option('dir', { type: 'string', requiresArg: true, default: 'out', describe: 'snapshot directory' })
      .option('verbose', { type: 'boolean', default: false, describe: 'list every problem and the counts' }),
  handler: async (argv) => {
    const dir = resolve(argv.dir);
    const pack = isPackDir(dir);
    const progress = new Progress();
    progress.stages(pack ? ['pack', 'files'] : ['chain', 'files', 'tree']);
    let stage = '';
    const opts = {
      verbose: argv.verbose,
      onProgress: (s: string, done: number, total: number) => {
        if (s !== stage) progress.begin((stage = s));
        progress.update(done, total, s === 'chain' ? 'blocks' : s === 'pack' ? 'parts' : 'files');
      },
    };
    const report = pack ? await verifyPack(dir, opts) : await verifySnapshot(dir, opts);
    progress.end();
    process.stdout.write(pack ? formatPackVerifyReport(report, argv.verbose) : formatVerifyReport(report, argv.verbose));
    if (!report.ok) process.exitCode = 1;
  },
});
