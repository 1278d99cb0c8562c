/**
 * Bundles the browsing UI (src/ui: TypeScript modules and app.css) with esbuild into the two
 * files the site serves. Runs at package build time (`npm run build` → dist/ui/), and on the fly
 * when the CLI runs from its TypeScript sources (tsx, vitest). esbuild is a devDependency: the
 * installed package only reads the prebuilt files (see ui-files.ts).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { esbuild } from '../runtime/from-source.js';

export interface UiBundle {
  js: string;
  css: string;
}

/** src/ui below the repository (this file is src/pipeline/ui-bundle.ts). */
export const UI_SOURCE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'ui');

function one(entry: string, loader: 'ts' | 'css'): string {
  const r = esbuild().buildSync({
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
