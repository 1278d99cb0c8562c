/**
 * `npm test`: `vitest run` and the static checks (`npm run checks`: tsc on both projects, eslint;
 * and the layer rules, depcruise)
 * side by side instead of one after the other. vitest leaves part of the cores idle (waits on
 * child processes, files ending at different times); the checks run at a lower priority and fill
 * those gaps instead of adding their own ~30 s in front. vitest prints as usual; each check's
 * output is kept and printed after vitest's summary. Exits non-zero if vitest or any check failed.
 * Arguments go to vitest (`npm test -- test/foo.test.ts`).
 */
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');

const bin = (...parts: string[]) => join(REPO, 'node_modules', ...parts);
const CHECKS: [name: string, args: string[]][] = [
  ['tsc -p .', [bin('typescript', 'bin', 'tsc'), '--noEmit', '-p', '.']],
  ['tsc -p src/ui', [bin('typescript', 'bin', 'tsc'), '--noEmit', '-p', 'src/ui']],
  ['eslint .', [bin('eslint', 'bin', 'eslint.js'), '.']],
  // The layer order and no import cycles under src/ (.dependency-cruiser.mjs).
  ['depcruise src', [bin('dependency-cruiser', 'bin', 'dependency-cruise.mjs'), 'src', '--config', '.dependency-cruiser.mjs', '--output-type', 'err']],
];

interface Done {
  name: string;
  code: number;
  output: string;
  seconds: number;
}

/** Runs `node args` in the repository; `quiet`: its output is kept instead of printed, and it runs at a lower priority. */
function run(name: string, args: string[], quiet: boolean): Promise<Done> {
  const start = Date.now();
  const child = spawn(process.execPath, args, { cwd: REPO, stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  if (quiet && child.pid !== undefined) setPriority(child.pid, 10);
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => {
    child.on('error', (e) => resolve({ name, code: 1, output: `${output}${String(e)}\n`, seconds: (Date.now() - start) / 1000 }));
    child.on('close', (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), output, seconds: (Date.now() - start) / 1000 }));
  });
}

const checks = CHECKS.map(([name, args]) => run(name, args, true));
const vitest = await run('vitest run', [bin('vitest', 'vitest.mjs'), 'run', ...process.argv.slice(2)], false);
const done = await Promise.all(checks);
console.log();
for (const c of done) {
  console.log(`${c.code === 0 ? 'ok  ' : 'FAIL'} ${c.name} (${c.seconds.toFixed(1)} s)`);
  if (c.code !== 0) console.log(c.output.trimEnd().replace(/^/gm, '     '));
}
const failed = [vitest, ...done].filter((c) => c.code !== 0).map((c) => c.name);
if (failed.length > 0) console.log(`\nnpm test failed: ${failed.join(', ')}`);
process.exit(failed.length > 0 ? 1 : 0);
