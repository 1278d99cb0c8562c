/**
 * The router and the host glue (edge.ts, netlify-edge.ts, cloudflare-worker.ts; for a pack
 * pack-edge.ts with src/contract's pack-reader.ts) as plain ES modules for edge runtimes. From the built CLI (`dist/`) the compiled
 * `.js` files are copied; under vitest/tsx (TS sources, no compiled files) the `.ts` sources are
 * transpiled with esbuild (a devDependency, loaded only then: the installed package never needs it;
 * it starts in milliseconds where loading `typescript` took seconds per process). Imports are
 * followed from the entry; any non-relative import fails the build, so the router cannot silently
 * grow a dependency.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { esbuild } from '../runtime/from-source.js';

/** `src/` or `dist/`: the root the module paths below are relative to. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const EDGE_ENTRY = 'hosts/edge.js';

type Transpile = (source: string, fileName: string) => string;

async function loadTranspiler(): Promise<Transpile> {
  const { transformSync } = esbuild();
  return (source, fileName) =>
    transformSync(source, {
      sourcefile: fileName,
      loader: 'ts',
      format: 'esm',
      target: 'es2023',
      // Keep the module as written (names, comments, layout): it is read by people deploying it.
      minify: false,
      legalComments: 'inline',
      tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
      logLevel: 'silent',
    }).code;
}

/** Transpiled sources, once per process (a test process builds many trees). */
const transpiled = new Map<string, string>();

const IMPORT_RE = /^\s*(?:import|export)\s[^;]*?\sfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;

/** Module path (relative to src|dist, '.js' suffix) → JS source, for the entry and its imports. */
export async function shippedModules(entry: string = EDGE_ENTRY): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let transpile: Transpile | undefined;
  const queue = [entry];
  while (queue.length > 0) {
    const rel = queue.shift()!;
    if (out.has(rel)) continue;
    const js = join(ROOT, rel);
    const tsFile = js.replace(/\.js$/, '.ts');
    let code: string;
    if (existsSync(js)) {
      code = readFileSync(js, 'utf8').replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');
    } else if (existsSync(tsFile)) {
      let cached = transpiled.get(tsFile);
      if (cached === undefined) {
        transpile ??= await loadTranspiler();
        cached = transpile(readFileSync(tsFile, 'utf8'), tsFile);
        transpiled.set(tsFile, cached);
      }
      code = cached;
    } else {
      throw new Error(`Router module ${rel} not found below ${ROOT}`);
    }
    out.set(rel, code);
    for (const m of code.matchAll(IMPORT_RE)) {
      const spec = m[1] ?? m[2]!;
      if (!spec.startsWith('./') && !spec.startsWith('../')) {
        throw new Error(`${rel} imports "${spec}": modules shipped to edge runtimes must only import relative, dependency-free modules`);
      }
      queue.push(posix.normalize(posix.join(posix.dirname(rel), spec)));
    }
  }
  return out;
}
