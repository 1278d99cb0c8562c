/**
 * Starts the real edge runtimes on built trees, for the conformance suite, one process per
 * runtime serving every tree (one port each):
 *   - Cloudflare Pages: workerd, the Workers runtime, runs each tree's `_worker.js/` with
 *     `env.ASSETS` served by wrangler's Pages asset server (test/fixtures/pages-host.ts);
 *   - Netlify: Deno runs `netlify-host.ts`, which calls each tree's edge function the way
 *     Netlify's edge does (see there).
 * Both binaries come from npm devDependencies (`wrangler` brings `workerd` and `miniflare`;
 * `deno` its binary). Each runtime is a process group of its own, stopped by its group id.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeArgs } from '../support/helpers.js';

const require = createRequire(import.meta.url);
const HERE = dirname(fileURLToPath(import.meta.url));

/** Compatibility date the worker runs with (a Pages project sets its own). */
export const COMPATIBILITY_DATE = '2025-09-01';

export interface RuntimeProcess {
  /** One base URL per tree, in the order given. */
  urls: string[];
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

/** workerd (its npm package's binary, probed directly); the host runs it through Miniflare. */
export function workerdBinary(): Binary {
  const workerd = probe('workerd', () => (require('workerd') as { default: string }).default, ['--version']);
  if (workerd.skip) return workerd;
  try {
    createRequire(require.resolve('wrangler')).resolve('miniflare');
  } catch (e) {
    return { skip: `miniflare or wrangler is not installed (${(e as Error).message.split('\n')[0]}): npm ci installs them` };
  }
  return workerd;
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

/** Collects the output, resolves once `ready` gives the URLs, stops the group on failure. */
function track(proc: ChildProcess, ready: () => Promise<string[]>): Promise<RuntimeProcess> {
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
  };
  return Promise.race([
    ready().then((urls) => ({ urls, output, stop })),
    exited.then(() => {
      throw new Error(`runtime exited before it was ready:\n${out.slice(-3000)}`);
    }),
  ]).catch(async (e: unknown) => {
    await stop();
    throw e;
  });
}

/** Resolves with the first line of stdout that `parse` accepts. */
function readyLine<T>(proc: ChildProcess, parse: (line: string) => T | undefined): Promise<T> {
  return new Promise<T>((ok) => {
    let buf = '';
    proc.stdout!.on('data', (d) => {
      buf += d;
      for (const line of buf.split('\n').slice(0, -1)) {
        const got = line.startsWith('{') ? parse(line) : undefined;
        if (got !== undefined) return ok(got);
      }
    });
  });
}

/**
 * The trees' `_worker.js/` in workerd, one worker per tree, each with `env.ASSETS` = wrangler's
 * Pages asset server on that tree (see test/fixtures/pages-host.ts). One process group.
 */
export function startPagesHost(dirs: string[]): Promise<RuntimeProcess> {
  const proc = spawn(process.execPath, [...nodeArgs(join(HERE, '..', 'fixtures', 'pages-host.ts')), COMPATIBILITY_DATE, ...dirs], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    // No metrics; the placeholder `request.cf` instead of fetching one from workers.cloudflare.com.
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_COLOR: '1' },
  });
  return track(proc, () => readyLine(proc, (l) => (JSON.parse(l) as { urls?: string[] }).urls));
}

/**
 * Deno running `netlify-host.ts` on the trees, one port per tree (it prints them once listening);
 * `functionDirs`: each tree's edge functions directory (default `<tree>/_netlify/edge-functions`);
 * `env`: variables the functions may read (`Netlify.env.get`), e.g. DENO_DIR for a fresh cache.
 */
export function startDenoNetlify(deno: string, dirs: string[], functionDirs?: (string | undefined)[], env: Record<string, string> = {}): Promise<RuntimeProcess> {
  const host = join(HERE, 'netlify-host.ts');
  const trees = dirs.map((d) => realpathSync(d));
  const args = trees.map((t, i) => (functionDirs?.[i] !== undefined ? `${t}::${realpathSync(functionDirs[i])}` : t));
  const allowEnv = Object.keys(env).length ? [`--allow-env=${Object.keys(env).join(',')}`] : [];
  const proc = spawn(deno, ['run', '--no-prompt', `--allow-read=${[...trees, HERE].join(',')}`, '--allow-net=127.0.0.1', ...allowEnv, host, ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1', ...env },
  });
  return track(proc, () => readyLine(proc, (l) => (JSON.parse(l) as { ports?: number[] }).ports?.map((p) => `http://127.0.0.1:${p}`)));
}

/**
 * A pack's Cloudflare Worker directory (its `index.js` and `lib/`) in workerd with `env.BUCKET`
 * the local R2 bucket `bucket` persisted in `r2Persist` (where `wrangler r2 bulk put --local
 * --persist-to <state>` put it: `<state>/v3/r2`). See test/fixtures/pack-worker-host.ts.
 */
export function startPackWorker(workerDir: string, r2Persist: string, bucket: string): Promise<RuntimeProcess> {
  const proc = spawn(process.execPath, [...nodeArgs(join(HERE, '..', 'fixtures', 'pack-worker-host.ts')), COMPATIBILITY_DATE, workerDir, r2Persist, bucket], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_COLOR: '1' },
  });
  return track(proc, () => readyLine(proc, (l) => (JSON.parse(l) as { urls?: string[] }).urls));
}
