/** `snapshot demo`: build the embedded demo chain, then serve it from the same process. */
import type { Argv } from 'yargs';
import { serveUntilSignal } from '../serve/server.js';
import { Progress } from '../runtime/progress.js';
import { demoSource } from '../source/demo.js';
import { command } from '../cli-args.js';
import { buildAndReport } from './build.js';
import { listenOptions } from './serve.js';

export const demoCommand = command({
  command: 'demo',
  describe: 'build the embedded demo chain and serve it (one process: stopping it stops the server)',
  builder: (y: Argv) => listenOptions(y.option('out', { type: 'string', requiresArg: true, default: 'out', describe: 'output directory' })),
  handler: async (argv) => {
    const out = await buildAndReport(async () => demoSource(undefined), argv.out, new Progress(), {});
    await serveUntilSignal({ dir: out, port: argv.port, host: argv.host });
  },
});
