// The build's path as a reader meets it: test hooks are an argument of their own (not options a
// user passes), the CLI leaves the target checks to the build, and no file of the path grows past
// 400 lines.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSnapshot, type BuildOptions } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';

const root = mkdtempSync(join(tmpdir(), 'snapshot-build-path-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const src = (rel: string) => fileURLToPath(new URL(`../src/${rel}`, import.meta.url));
const lines = (path: string) => readFileSync(path, 'utf8').trimEnd().split('\n').length;

describe('build hooks', () => {
  it('are called from the second argument, and hook-named keys among the options are not hooks', async () => {
    const seen: string[] = [];
    const asOptions = { beforePublish: () => void seen.push('options: beforePublish'), onPublishStep: (s: string) => void seen.push(`options: ${s}`) };
    await buildSnapshot({ source: demoSource(), outDir: join(root, 'a'), height: 3, hosts: [], ...asOptions } as BuildOptions);
    expect(seen).toEqual([]);
    await buildSnapshot(
      { source: demoSource(), outDir: join(root, 'b'), height: 3, hosts: [] },
      { beforePublish: () => void seen.push('publishing'), onPublishStep: (s) => void seen.push(s) },
    );
    // The publish's steps (publish/publish.ts PublishStep) after the hook before it; a first publish has no old tree to move aside.
    expect(seen[0]).toBe('publishing');
    expect(seen).toContain('swapped');
  });
});

describe('the build path in the source', () => {
  it('the CLI commands do not check --out/--state themselves (the build does, first)', () => {
    const dir = src('commands/');
    for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f), 'utf8'), f).not.toMatch(/\bcheckTargets\b/);
  });

  it('no file of the build path is over 400 lines', () => {
    const files = [src('site/build.ts'), ...readdirSync(src('site/build/')).map((f) => src(`site/build/${f}`)), src('index/sync.ts'), src('index/indexer.ts'), src('index/state.ts')];
    expect(files.length).toBeGreaterThan(5);
    expect(files.map((f) => ({ f, n: lines(f) })).filter((x) => x.n > 400)).toEqual([]);
  });
});
