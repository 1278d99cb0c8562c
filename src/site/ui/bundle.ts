/**
 * `tsx src/site/ui/bundle.ts <dir>` (npm run build): replaces <dir> (dist/ui) with app.js and
 * app.css (pipeline/ui-bundle.ts). The build first transpiles every TypeScript file below src/
 * into dist/, src/ui too: the browser gets them only inside the bundle, so their one-by-one
 * copies are dropped here.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleUi } from '../../pipeline/ui-bundle.js';

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: bundle.ts <out dir>');
  const b = bundleUi();
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'app.js'), b.js);
  writeFileSync(join(out, 'app.css'), b.css);
}
