import { Worker } from 'node:worker_threads';

/**
 * Starts a worker thread on a module of this program: in dist/ the compiled `.js` module
 * directly; from the TypeScript sources (vitest, tsx; `from` ends in `.ts`) the `.ts` module
 * through a small tsx loader shim (ts-worker.mjs).
 */
export function startWorker(from: string, name: string, data: object): Worker {
  const ts = from.endsWith('.ts');
  const module = new URL(`${name}.${ts ? 'ts' : 'js'}`, from);
  if (!ts) return new Worker(module, { workerData: data });
  return new Worker(new URL('./ts-worker.mjs', import.meta.url), { workerData: { ...data, entry: module.href } });
}
