import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Bundled worker modules of this process, by source path. */
const bundled = new Map<string, string>();

/**
 * From the TypeScript sources (vitest, tsx) a worker module is bundled once per process with
 * esbuild (a devDependency, present wherever the sources run) into
 * `node_modules/.cache/chain-snapshot/`, where its package imports (lmdb, …) resolve, under a
 * name made from its content (processes running side by side write the same file). A thread
 * then starts on plain JavaScript instead of registering tsx and compiling on the way in,
 * which cost ~0.4 s of CPU per thread.
 */
function bundleFromSources(entry: string): string {
  let file = bundled.get(entry);
  if (file !== undefined) return file;
  const require = createRequire(import.meta.url);
  const esbuild = require('esbuild') as typeof import('esbuild');
  const out = esbuild.buildSync({ entryPoints: [entry], bundle: true, packages: 'external', platform: 'node', format: 'esm', target: 'node20', write: false, logLevel: 'silent' });
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
 * (a rendered text, a batch's views), and by default each of the four threads grows a nursery
 * of tens of MiB that stays resident. Measured on a 200k-tx real-profile build (tmpfs, A/B of 3 pairs):
 * peak anonymous memory 959–987 → 801–818 MiB, build time unchanged within the run-to-run noise.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 4 };

/**
 * Starts a worker thread on a module of this program: in dist/ the compiled `.js` module
 * directly; from the TypeScript sources (`from` ends in `.ts`) the `.ts` module bundled to
 * JavaScript once per process (see {@link bundleFromSources}). `transferList`: what `data` hands
 * over (a MessagePort).
 */
export function startWorker(from: string, name: string, data: object, transferList?: WorkerOptions['transferList']): Worker {
  const ts = from.endsWith('.ts');
  const module = new URL(`${name}.${ts ? 'ts' : 'js'}`, from);
  const options = { workerData: data, resourceLimits: WORKER_LIMITS, transferList };
  if (!ts) return new Worker(module, options);
  return new Worker(bundleFromSources(fileURLToPath(module)), options);
}
