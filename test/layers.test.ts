/**
 * The layer and cycle rules of .dependency-cruiser.mjs (run on src/ by `npm test`, test/run-all.ts)
 * on a planted tree: each planted violation is reported under its rule, and nothing else is.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO } from './support/helpers.js';

const tree = mkdtempSync(join(tmpdir(), 'snapshot-layers-'));
afterAll(() => rmSync(tree, { recursive: true, force: true }));

function plant(files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, rel)), { recursive: true });
    writeFileSync(join(tree, rel), text);
  }
}

/** The violations depcruise reports for the tree, as "rule: from → to", and how many are errors. */
function cruise(): { violations: string[]; errors: number; output: string } {
  const r = spawnSync(process.execPath, [join(REPO, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs'), 'src', '--config', join(REPO, '.dependency-cruiser.mjs'), '--output-type', 'json'], {
    cwd: tree,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`depcruise failed (${r.status}): ${r.stderr}`);
  const out = JSON.parse(r.stdout) as { summary: { error: number; violations: { rule: { name: string }; from: string; to: string }[] } };
  return { violations: out.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort(), errors: out.summary.error, output: r.stderr };
}

describe('layer rules (.dependency-cruiser.mjs)', () => {
  it('reports a planted cycle, upward imports (type-only too), a sibling import and an unlisted folder, and nothing allowed', () => {
    plant({
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src'] }),
      // allowed: down the layers, and within a folder
      'src/runtime/error.ts': 'export class E extends Error {}\n',
      'src/chain/hash.ts': "import { E } from '../runtime/error.js';\nexport const h = (): E => new E();\n",
      'src/index/store.ts': "import { h } from '../chain/hash.js';\nimport { q } from './query.js';\nexport const s = () => [h(), q];\n",
      'src/index/query.ts': 'export const q = 1;\n',
      'src/pipeline/stage.ts': "import { s } from '../index/store.js';\nimport { w } from '../publish/writer.js';\nexport const stage = () => [s(), w];\n",
      'src/publish/writer.ts': 'export const w = 2;\n',
      // upward: index imports publish (the index layer is below publish)
      'src/index/thread.ts': "import { w } from '../publish/writer.js';\nexport const t = w;\n",
      // upward, type-only: pipeline imports site
      'src/pipeline/context.ts': "import type { Site } from '../site/build.js';\nexport type C = { site: Site };\n",
      'src/site/build.ts': 'export interface Site { x: number }\n',
      // siblings: publish imports hosts (same level)
      'src/publish/ship.ts': "import { host } from '../hosts/host.js';\nexport const sh = host;\n",
      'src/hosts/host.ts': 'export const host = 3;\n',
      // a cycle within one folder: a → b → c → a (c's edge type-only)
      'src/render/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
      'src/render/b.ts': "import { c } from './c.js';\nexport const b = () => c;\n",
      'src/render/c.ts': "import type { a } from './a.js';\nexport const c = (f: typeof a) => f;\n",
      // a folder without a place in LAYERS
      'src/newthing/x.ts': "import { q } from '../index/query.js';\nexport const x = q;\n",
    });
    const r = cruise();
    expect(r.errors, r.output).toBe(r.violations.length);
    expect(r.violations).toEqual(
      [
        'layer-index: src/index/thread.ts → src/publish/writer.ts',
        'layer-pipeline: src/pipeline/context.ts → src/site/build.ts',
        'layer-publish: src/publish/ship.ts → src/hosts/host.ts',
        'layer-unlisted: src/newthing/x.ts → src/index/query.ts',
        'no-cycle: src/render/a.ts → src/render/b.ts', // a cycle is reported once, from its first module
      ].sort(),
    );
  });

  it('passes once the planted imports are gone', () => {
    for (const f of ['src/index/thread.ts', 'src/pipeline/context.ts', 'src/publish/ship.ts', 'src/render/c.ts', 'src/newthing']) rmSync(join(tree, f), { recursive: true });
    plant({ 'src/render/c.ts': 'export const c = 4;\n' });
    const r = cruise();
    expect(r.violations).toEqual([]);
    expect(r.errors, r.output).toBe(0);
  });

});
