/**
 * Real nginx on a generated config (the `http`-level snippet `snapshot build` writes as
 * nginx.conf), in a prefix directory of its own: a minimal main config includes the snippet.
 * `HAVE_NGINX` is false where nginx is not installed (.ci/run installs it; the tests skip).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { rawRequest } from './http-raw.js';

export const HAVE_NGINX = spawnSync('sh', ['-c', 'command -v nginx || test -x /usr/sbin/nginx']).status === 0;
const NGINX_BIN = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';

export interface RunningNginx {
  url: string;
  /** The tail of its error log (for a failing test's output). */
  errors(): string;
  stop(): Promise<void>;
}

/** Starts nginx with `snippet` in `prefix` (created; removed on stop); resolves once `probe` answers. */
export async function startNginx(snippet: string, prefix: string, port: number, probe = '/stats.json'): Promise<RunningNginx> {
  mkdirSync(join(prefix, 'logs'), { recursive: true });
  writeFileSync(join(prefix, 'snapshot.conf'), snippet);
  const tmp = (n: string) => `${n}_temp_path ${join(prefix, n)};`;
  writeFileSync(
    join(prefix, 'nginx.conf'),
    `worker_processes 1;\nerror_log ${join(prefix, 'logs', 'error.log')} warn;\npid ${join(prefix, 'nginx.pid')};\nevents { worker_connections 256; }\nhttp {\n  access_log off;\n  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(tmp).join('\n  ')}\n  include ${join(prefix, 'snapshot.conf')};\n}\n`,
  );
  const proc = spawn(NGINX_BIN, ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((ok) => proc.once('exit', ok));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      await exited;
    }
    await rm(prefix, { recursive: true, force: true });
  };
  for (let i = 0; ; i++) {
    try {
      await rawRequest(url, probe);
      break;
    } catch (e) {
      if (i > 100 || proc.exitCode !== null) {
        await stop();
        throw new Error(`nginx did not start: ${stderr} ${(e as Error).message}`, { cause: e });
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const errors = () => {
    try {
      return readFileSync(join(prefix, 'logs', 'error.log'), 'utf8').slice(-3000);
    } catch {
      return '';
    }
  };
  return { url, errors, stop };
}

/** The generated snippet listening on `port` instead of the port it was generated with. */
export function listenOn(snippet: string, port: number): string {
  const out = snippet.replace(/^(\s*)listen [^;]+;$/m, `$1listen 127.0.0.1:${port};`);
  if (out === snippet) throw new Error('no listen directive in the nginx config');
  return out;
}
