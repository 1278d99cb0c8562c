/**
 * Starts the real edge runtimes on a built tree, for the conformance suite:
 *   - Cloudflare Pages: `wrangler pages dev <tree>` (workerd, the Workers runtime, runs the
 *     tree's `_worker.js/` with `env.ASSETS` served by wrangler's Pages asset server);
 *   - Netlify: Deno runs `netlify-host.ts`, which calls the tree's edge function the way
 *     Netlify's edge does (see there).
 * Both binaries come from npm devDependencies (`wrangler` brings `workerd`; `deno` its binary).
 * Each runtime is a process group of its own, stopped by its group id.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawRequest } from '../http-raw.js';

const require = createRequire(import.meta.url);
const HERE = dirname(fileURLToPath(import.meta.url));

/** Compatibility date the worker runs with (a Pages project sets its own). */
export const COMPATIBILITY_DATE = '2025-09-01';

export interface RuntimeProcess {
  url: string;
  /** stdout + stderr so far. */
  output(): string;
  /** Stops the whole process group and resolves once none of its processes is left. */
  stop(): Promise<void>;
}

/** The binary's path, or why it cannot run here (the tests skip with that message). */
export interface Binary {
  path?: string;
  skip?: string;
}

function probe(label: string, path: () => string, args: string[]): Binary {
  let bin: string;
  try {
    bin = path();
  } catch (e) {
    return { skip: `${label} is not installed (${(e as Error).message.split('\n')[0]}): npm ci installs it` };
  }
  const r = spawnSync(bin, args, { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) return { skip: `${label} (${bin}) cannot run on this machine: ${r.error?.message ?? r.stderr.trim().split('\n')[0]}` };
  return { path: bin };
}

/** Deno from the `deno` npm package (its own lookup of the platform package's binary). */
export function denoBinary(): Binary {
  return probe('deno', () => (require('deno/install_api.cjs') as { runInstall(): string }).runInstall(), ['--version']);
}

/** workerd (probed directly: wrangler only runs where it does), and wrangler's CLI entry. */
export function wranglerBinary(): Binary {
  const workerd = probe('workerd', () => (require('workerd') as { default: string }).default, ['--version']);
  if (workerd.skip) return workerd;
  return { path: join(dirname(require.resolve('wrangler/package.json')), 'bin', 'wrangler.js') };
}

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => ok(p));
    });
    s.on('error', fail);
  });
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Collects the output, resolves once `ready` gives the URL, stops the group on failure. */
function track(proc: ChildProcess, ready: (output: () => string) => Promise<string>, cleanup: () => void): Promise<RuntimeProcess> {
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const output = () => out;
  const exited = new Promise<void>((ok) => proc.once('exit', () => ok()));
  const pgid = proc.pid!;
  const stop = async () => {
    if (groupAlive(pgid)) process.kill(-pgid, 'SIGTERM');
    await exited;
    for (let i = 0; groupAlive(pgid); i++) {
      if (i === 100) process.kill(-pgid, 'SIGKILL');
      if (i > 200) throw new Error(`process group ${pgid} still alive after SIGKILL`);
      await new Promise((r) => setTimeout(r, 50));
    }
    cleanup();
  };
  return Promise.race([
    ready(output).then((url) => ({ url, output, stop })),
    exited.then(() => {
      throw new Error(`runtime exited before it was ready:\n${out.slice(-3000)}`);
    }),
  ]).catch(async (e: unknown) => {
    await stop();
    throw e;
  });
}

async function waitReady(url: string, deadline: number, what: string, output: () => string): Promise<string> {
  for (;;) {
    try {
      await rawRequest(url, '/');
      return url;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`${what} did not answer on ${url}: ${(e as Error).message}\n${output().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** `wrangler pages dev <dir>`: the tree's `_worker.js/` in workerd, `env.ASSETS` = the tree. */
export async function startWranglerPages(wrangler: string, dir: string): Promise<RuntimeProcess> {
  const [port, inspector] = [await freePort(), await freePort()];
  // wrangler keeps its state (.wrangler/) in the working directory and logs in the config dir.
  const work = mkdtempSync(join(tmpdir(), 'wrangler-'));
  const proc = spawn(
    process.execPath,
    // The real path: wrangler finds its bundled entry relative to the directory it is given, which
    // is wrong through a symlink (a built `out` is a symlink into `<out>.releases/`).
    [wrangler, 'pages', 'dev', realpathSync(dir), '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(inspector), '--compatibility-date', COMPATIBILITY_DATE, '--log-level', 'warn'],
    {
      cwd: work,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      // No metrics, and the placeholder `request.cf` instead of fetching one from workers.cloudflare.com.
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', XDG_CONFIG_HOME: work, CI: '1', NO_COLOR: '1' },
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  return track(proc, (output) => waitReady(url, deadline, 'wrangler pages dev', output), () => rmSync(work, { recursive: true, force: true }));
}

/** Deno running `netlify-host.ts` on the tree (it prints its port once listening). */
export async function startDenoNetlify(deno: string, dir: string): Promise<RuntimeProcess> {
  const host = join(HERE, 'netlify-host.ts');
  const tree = realpathSync(dir);
  const proc = spawn(deno, ['run', '--no-prompt', `--allow-read=${tree},${HERE}`, '--allow-net=127.0.0.1', host, tree], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
  });
  const ready = () =>
    new Promise<string>((ok) => {
      let buf = '';
      proc.stdout!.on('data', (d) => {
        buf += d;
        const m = /\{"port":(\d+)\}/.exec(buf);
        if (m) ok(`http://127.0.0.1:${m[1]}`);
      });
    });
  return track(proc, ready, () => undefined);
}
