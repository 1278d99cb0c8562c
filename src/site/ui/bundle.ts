/**
 * Bundles the browsing UI (src/ui: TypeScript modules and app.css) with esbuild into the two
 * files the site serves. Runs at package build time (`npm run build` → dist/ui/), and on the fly
 * when the CLI runs from its TypeScript sources (tsx, vitest). esbuild is a devDependency: the
 * installed package only reads the prebuilt files (see index.ts).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

export interface UiBundle {
  js: string;
  css: string;
}

/** src/ui below the repository (this file is src/site/ui/bundle.ts). */
export const UI_SOURCE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'ui');

function one(entry: string, loader: 'ts' | 'css'): string {
  const r = buildSync({
    entryPoints: [join(UI_SOURCE_DIR, entry)],
    bundle: true,
    write: false,
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    target: 'es2020',
    ...(loader === 'ts' ? { format: 'iife' as const, platform: 'browser' as const } : {}),
    logLevel: 'silent',
  });
  if (r.outputFiles.length !== 1) throw new Error(`esbuild: ${entry} gave ${r.outputFiles.length} files`);
  return r.outputFiles[0]!.text;
}

export function bundleUi(): UiBundle {
  return { js: one('main.ts', 'ts'), css: one('app.css', 'css') };
}

/**
 * `tsx src/site/ui/bundle.ts <dir>` (npm run build): replaces <dir> (dist/ui) with app.js and
 * app.css. The build first transpiles every TypeScript file below src/ into dist/, src/ui too:
 * the browser gets them only inside the bundle, so their one-by-one copies are dropped here.
 */
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: bundle.ts <out dir>');
  const b = bundleUi();
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'app.js'), b.js);
  writeFileSync(join(out, 'app.css'), b.css);
}
