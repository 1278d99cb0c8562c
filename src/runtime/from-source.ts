/**
 * Running from the TypeScript sources (vitest, tsx) or from the compiled package (dist/): the one
 * place that tells the two apart, and loads esbuild (a devDependency, present wherever the
 * sources run; an installed package never loads it) for what the sources need built at run time.
 * Its three users do different builds and keep their own options: worker threads (here: a node
 * bundle of the worker module), the edge modules (hosts/ship.ts: one file transpiled as
 * written, for people to read) and the browsing UI (pipeline/ui-bundle.ts: a minified browser
 * bundle, also made by `npm run build`).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Whether the module at `moduleUrl` (its import.meta.url) runs from its TypeScript source. */
export function fromSources(moduleUrl: string): boolean {
  return moduleUrl.endsWith('.ts');
}

const require = createRequire(import.meta.url);

/** esbuild, for code running from the sources (a devDependency: the compiled package never needs it). */
export function esbuild(): typeof import('esbuild') {
  return require('esbuild') as typeof import('esbuild');
}

/** Bundled worker modules of this process, by source path. */
const bundled = new Map<string, string>();

/**
 * From the TypeScript sources a worker module is bundled once per process into
 * `node_modules/.cache/chain-snapshot/`, where its package imports (lmdb, …) resolve, under a
 * name made from its content (processes running side by side write the same file). A thread
 * then starts on plain JavaScript instead of registering tsx and compiling on the way in,
 * which costs far more CPU per thread.
 */
function bundleFromSources(entry: string): string {
  let file = bundled.get(entry);
  if (file !== undefined) return file;
  const out = esbuild().buildSync({ entryPoints: [entry], bundle: true, packages: 'external', platform: 'node', format: 'esm', target: 'node20', write: false, logLevel: 'silent' });
  const code = out.outputFiles[0]!.contents;
  const root = dirname(dirname(require.resolve('esbuild/package.json')));
  const dir = join(root, '.cache', 'chain-snapshot');
  const name = entry.replace(/^.*\//, '').replace(/\.ts$/, '');
  file = join(dir, `${name}-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, file);
  }
  bundled.set(entry, file);
  return file;
}

/**
 * The threads' young generation (V8's nursery) is capped at 4 MiB: their garbage is short-lived
 * (a rendered text, a batch's views), and by default each thread grows a nursery of tens of MiB
 * that stays resident; the cap lowers peak memory without slowing the build.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 4 };

/**
 * Starts a worker thread on the module `name` beside `from` (the caller's import.meta.url): in
 * dist/ the compiled `.js` module directly; from the sources the `.ts` module bundled to
 * JavaScript once per process (see {@link bundleFromSources}). `transferList`: what `data`
 * hands over (a MessagePort).
 */
export function startWorker(from: string, name: string, data: object, transferList?: WorkerOptions['transferList']): Worker {
  const ts = fromSources(from);
  const module = new URL(`${name}.${ts ? 'ts' : 'js'}`, from);
  const options = { workerData: data, resourceLimits: WORKER_LIMITS, transferList };
  if (!ts) return new Worker(module, options);
  return new Worker(bundleFromSources(fileURLToPath(module)), options);
}
