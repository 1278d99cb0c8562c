// A `--format pack` build SIGKILLed in its pack phase leaves --out answering the previous pack
// (or, once pack.json is replaced, the new one), and the next run completes and leaves only the
// files the current and the previous index need.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PACK_POINTER } from '../src/contract/pack-format.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { REPO, killChildAt } from './support/helpers.js';
import { HOSTS, tempDir } from './support/memory-builds.js';
import { expectPackAnswersTree, packDirEntries, packFiles } from './support/pack-compare.js';

const CHILD = join(REPO, 'test', 'fixtures', 'pack-build-child.ts');
const tmp = tempDir('snapshot-pack-kill-');

/** Runs the child build to `height` and SIGKILLs it once it pauses at `point`; rejects unless it died by that signal there. */
const killAt = (outDir: string, height: number, point: string): Promise<void> => killChildAt(CHILD, [outDir, String(height), point], point);

const demo = (outDir: string, height: number, format: 'tree' | 'pack') => buildSnapshot({ source: demoSource(), outDir, height, hosts: HOSTS, format });

describe('SIGKILL in the pack phase', () => {
  let out: string;
  beforeAll(async () => {
    out = tmp('out');
    await Promise.all([demo(tmp('tree-120'), 120, 'tree'), demo(tmp('tree-150'), 150, 'tree'), demo(tmp('tree-130'), 130, 'tree')]);
    await demo(out, 120, 'pack');
  }, 300_000);

  it('before the new index is in place (its parts written): --out answers the previous pack; the next run completes', async () => {
    const gen1 = await packFiles(out);
    await killAt(out, 150, 'file:idx');
    // The killed run wrote parts that no index lists yet.
    expect(packDirEntries(out).length).toBeGreaterThan(1 + gen1.parts.length);
    await expectPackAnswersTree(out, tmp('tree-120'));
    await demo(out, 150, 'pack');
    await expectPackAnswersTree(out, tmp('tree-150'));
    const gen2 = await packFiles(out);
    expect(packDirEntries(out)).toEqual([...new Set([gen2.index, ...gen2.parts, gen1.index, ...gen1.parts])].sort());
    expect(readdirSync(out)).toContain(PACK_POINTER);
  }, 180_000);

  it('after pack.json is replaced, before the clean-up: --out answers the new pack; the next run completes and cleans up', async () => {
    const gen2 = await packFiles(out);
    await killAt(out, 130, 'step:published');
    await expectPackAnswersTree(out, tmp('tree-130'));
    const gen3 = await packFiles(out);
    expect(gen3.index).not.toBe(gen2.index);
    await demo(out, 130, 'pack');
    await expectPackAnswersTree(out, tmp('tree-130'));
    const gen4 = await packFiles(out);
    expect(packDirEntries(out)).toEqual([...new Set([gen4.index, ...gen4.parts, gen3.index, ...gen3.parts])].sort());
    expect(existsSync(join(tmp('out.state'), 'pack.journal'))).toBe(false);
  }, 180_000);

  it('in a run that writes the pack whole again (its parts grown past REPACK_GROWTH), before the new index is in place: --out answers the previous pack; the next run writes it whole', async () => {
    // The record of the size when last written whole, made small: the next run writes the pack whole.
    const record = join(tmp('out.state'), 'pack-state.json');
    const shrunk = () => writeFileSync(record, JSON.stringify({ ...(JSON.parse(readFileSync(record, 'utf8')) as object), wholeBytes: 1 }) + '\n');
    shrunk();
    const before = await packFiles(out);
    await killAt(out, 150, 'file:idx');
    await expectPackAnswersTree(out, tmp('tree-130'));
    expect(await packFiles(out)).toEqual(before);
    const r = await demo(out, 150, 'pack');
    expect(r.pack!.whole).toBe(true);
    await expectPackAnswersTree(out, tmp('tree-150'));
    const now = await packFiles(out);
    expect(now.parts.filter((p) => before.parts.includes(p))).toEqual([]);
    expect(packDirEntries(out)).toEqual([...new Set([now.index, ...now.parts, before.index, ...before.parts])].sort());
  }, 180_000);
});
