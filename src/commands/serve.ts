/** `snapshot serve`: serve a built tree or pack over HTTP until SIGINT/SIGTERM. */
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { PackFiles } from '../serve/pack-files.js';
import { serveUntilSignal } from '../serve/server.js';
import { command, port, snapshotDir } from '../cli-args.js';

/** Where to listen; shared with `snapshot demo`. */
export const listenOptions = <T>(y: Argv<T>) =>
  y
    .option('port', { type: 'string', requiresArg: true, default: '8080', describe: 'port to listen on (0 = any free port)', coerce: (v: unknown) => port('port', v) })
    .option('host', { type: 'string', requiresArg: true, default: '127.0.0.1', describe: 'address to listen on (0.0.0.0 = every interface)' });

export const serveCommand = command({
  command: 'serve',
  describe: 'serve a built snapshot over HTTP',
  builder: (y: Argv) => listenOptions(y.option('dir', { type: 'string', requiresArg: true, default: 'out', describe: 'snapshot directory: a tree or a pack (made by snapshot build)' })),
  handler: (argv) => {
    const dir = resolve(argv.dir);
    return serveUntilSignal({ dir: PackFiles.isPack(dir) ? dir : snapshotDir(dir), port: argv.port, host: argv.host });
  },
});
