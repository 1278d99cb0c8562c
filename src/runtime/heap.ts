import { setFlagsFromString } from 'node:v8';

/**
 * How far a V8 heap may grow past what its last full collection kept alive, in percent: 100, so
 * at most twice. V8's own factor goes up to 4× on a machine with this much memory, and a build's
 * threads (the main thread, the scan, render, writer and index threads: each has its own heap)
 * make short-lived garbage at a high rate (rendered texts, index reads, batches), so each heap
 * holds up to four times its live data between full collections (in a 200k-tx build, 150–220
 * MiB of heap on the main thread for 35 MiB alive). At 2× a build's peak is about 100 MiB lower
 * at no measured cost in time; lower factors cost time (docs/benchmarks.md, "Where the memory goes").
 */
const HEAP_GROWING_PERCENT = 100;

/**
 * Bounds the growth of every V8 heap of this process, the main thread's and those of the worker
 * threads started after it (V8's flags are the process's): called when a build starts.
 */
export function boundHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
