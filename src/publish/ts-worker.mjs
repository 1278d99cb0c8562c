// Starts a TypeScript worker module (workerData.entry) under tsx: used only when running from the
// TypeScript sources (vitest, tsx); dist/ starts the compiled .js module directly.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
