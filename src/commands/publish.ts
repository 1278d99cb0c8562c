/** `snapshot publish`: copy a built tree or pack to an S3-compatible bucket, by difference. */
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { Progress } from '../runtime/progress.js';
import { command, wholeNumber } from '../cli-args.js';

export const publishCommand = command({
  command: 'publish',
  describe: 'publish a built tree or pack to an S3-compatible bucket (S3, R2, B2, MinIO), writing only what changed',
  builder: (y: Argv) =>
    y
      .option('dir', { type: 'string', requiresArg: true, default: 'out', describe: 'the snapshot: a tree (_manifest.json) or a pack (pack.json)' })
      .option('to', { type: 'string', requiresArg: true, demandOption: true, describe: 'where: s3://<bucket>/<prefix>' })
      .option('endpoint', { type: 'string', requiresArg: true, describe: 'an S3-compatible endpoint URL (R2, B2, MinIO); path-style addressing' })
      .option('region', { type: 'string', requiresArg: true, describe: "the bucket's region (default: the AWS SDK's chain, e.g. AWS_REGION)" })
      .option('concurrency', { type: 'string', requiresArg: true, default: '16', describe: 'requests at once' })
      .option('max-attempts', { type: 'string', requiresArg: true, default: '6', describe: 'attempts per request (retries with back-off on throttling, 5xx and network errors)' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'print the PUTs and DELETEs, bytes and request cost; change nothing' })
      .option('force', { type: 'boolean', default: false, describe: 'publish into a prefix holding objects this tool did not write (they are left as they are)' }),
  handler: async (argv) => {
    const concurrency = wholeNumber('concurrency', argv.concurrency, '16');
    const maxAttempts = wholeNumber('max-attempts', argv['max-attempts'], '6');
    if (concurrency < 1) throw new Error('--concurrency 0: give at least 1');
    if (maxAttempts < 1) throw new Error('--max-attempts 0: give at least 1');
    if (argv.endpoint !== undefined && !/^https?:\/\/[^/]/.test(argv.endpoint)) throw new Error(`--endpoint ${JSON.stringify(argv.endpoint)} is not an http(s) URL (e.g. --endpoint https://<account>.r2.cloudflarestorage.com)`);
    // The AWS SDK loads only for this command.
    const { publishToBucket } = await import('../publish/bucket/run.js');
    await publishToBucket({
      dir: resolve(argv.dir),
      to: argv.to,
      endpoint: argv.endpoint,
      region: argv.region,
      concurrency,
      maxAttempts,
      dryRun: argv['dry-run'],
      force: argv.force,
      progress: new Progress(),
    });
  },
});
