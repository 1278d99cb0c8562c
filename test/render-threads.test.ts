// The render stages on threads (render-pool.ts) against the same stages on the main thread (what
// small builds, like the other tests' chains, use): full and incremental builds, byte for byte.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_TIP_HEIGHT } from '../src/builder/demo.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { buildSnapshot, type BuildReport } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { expectFullRebuildIdentical } from './support/determinism.js';

describe('render threads', () => {
  let dir: string;
  let inline: BuildReport;
  const manifest = (out: string) => readFileSync(join(out, MANIFEST_PATH), 'utf8').replace(/^.* nginx\.conf\n/m, '');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-threads-'));
    inline = await buildSnapshot({ source: demoSource(), outDir: join(dir, 'inline') });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a small build renders on the main thread; on threads a full rebuild gives the same bytes', async () => {
    expect(inline.renderThreads).toBe(0);
    let threaded: BuildReport | undefined;
    await expectFullRebuildIdentical(join(dir, 'inline'), async () => (threaded = await buildSnapshot({ source: demoSource(), outDir: join(dir, 'inline'), full: true }, { renderThreadsAbove: 0 })));
    expect(threaded!.renderThreads).toBeGreaterThan(0);
  });

  it('an incremental build on threads (update mode) equals the full build', async () => {
    const out = join(dir, 'incremental');
    const first = await buildSnapshot({ source: demoSource(), outDir: out, height: DEMO_TIP_HEIGHT - 30 }, { renderThreadsAbove: 0 });
    expect(first.renderThreads).toBeGreaterThan(0);
    const next = await buildSnapshot({ source: demoSource(), outDir: out }, { renderThreadsAbove: 0 });
    expect(next.mode).toBe('incremental');
    expect(next.renderThreads).toBeGreaterThan(0);
    expect(next.unchanged).toBeGreaterThan(0);
    expect(manifest(out)).toBe(manifest(join(dir, 'inline')));
  });
});
