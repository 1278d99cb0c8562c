/**
 * vitest globalSetup: transpiles the sources the tests run as child processes (src/, the child
 * fixtures and the test chains) once per test run with esbuild, the way `npm run build` does,
 * into `test-output/compiled-<hash>/` (inside the repository, so package imports resolve), and
 * hands the directory to the test files (`inject('compiledDir')`, see `nodeArgs` in helpers.ts).
 * A child then starts on plain JavaScript instead of registering tsx and transpiling on its
 * way in (~1 s of CPU per spawn), and starts its worker threads and the browsing UI from the
 * compiled files instead of bundling them again with esbuild.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import type { TestProject } from 'vitest/node';
import { bundleUi } from '../../src/pipeline/ui-bundle.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The compiled copy of the repository (see test/support/compile-children.ts). */
    compiledDir: string;
  }
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = join(ROOT, 'test-output');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Transpiles into `test-output/compiled-<hash of the output>/`, reused while the sources do not change. */
export function compileChildren(): string {
  const entries = [...tsFiles(join(ROOT, 'src')), ...tsFiles(join(ROOT, 'test', 'fixtures')), join(ROOT, 'test', 'support', 'chains.ts')];
  const r = buildSync({ entryPoints: entries, outbase: ROOT, outdir: '/', format: 'esm', platform: 'node', target: 'node20', write: false, logLevel: 'warning' });
  const ui = bundleUi();
  const files = new Map<string, string | Uint8Array>(r.outputFiles.map((f) => [relative('/', f.path), f.contents]));
  files.set('src/ui/app.js', ui.js); // where src/pipeline/ui-files.js looks for the prebuilt UI (dist/ui in the package)
  files.set('src/ui/app.css', ui.css);
  const hash = createHash('sha256');
  for (const [p, c] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) hash.update(`${p}\0`).update(c).update('\0');
  const dir = join(OUT, `compiled-${hash.digest('hex').slice(0, 16)}`);
  if (!existsSync(dir)) {
    const tmp = `${dir}.${process.pid}.tmp`;
    rmSync(tmp, { recursive: true, force: true });
    for (const [p, c] of files) {
      mkdirSync(dirname(join(tmp, p)), { recursive: true });
      writeFileSync(join(tmp, p), c);
    }
    // What the sources read relative to themselves: ../package.json (cli.ts), ../../docs/ (openapi.ts).
    cpSync(join(ROOT, 'package.json'), join(tmp, 'package.json'));
    symlinkSync(join(ROOT, 'docs'), join(tmp, 'docs'));
    try {
      renameSync(tmp, dir);
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      if (!existsSync(dir)) throw e; // else a run beside this one wrote the same files first
    }
  }
  // Copies of older sources, a day old: no run is still using them.
  for (const e of readdirSync(OUT)) {
    const p = join(OUT, e);
    if (e.startsWith('compiled-') && p !== dir && Date.now() - statSync(p).mtimeMs > 86_400_000) rmSync(p, { recursive: true, force: true });
  }
  return dir;
}

/** Each vitest project loads and runs this setup on its own: the first one compiles, the others reuse its directory. */
const memo = globalThis as { snapshotCompiledDir?: string };

export default function setup(project: TestProject): void {
  memo.snapshotCompiledDir ??= compileChildren();
  project.provide('compiledDir', memo.snapshotCompiledDir);
}
