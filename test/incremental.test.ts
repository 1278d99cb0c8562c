import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { verifySnapshot } from '../src/verify/index.js';
import { scenario } from './support/chains.js';
import { manifestMismatches } from './support/helpers.js';
import { build, manifest, tempDir } from './support/memory-builds.js';

const tmp = tempDir('snapshot-inc-');



describe('incremental builds equal full builds', () => {
  // Two random chains without a reorg, three with one: the shallowest, a middle and the deepest
  // reorg depth the scenarios make (1, 5, 10).
  const cases = [
    ...[11, 12].map((seed) => ({ seed, reorg: false, depth: undefined })),
    ...[
      [21, 1],
      [22, 5],
      [23, 10],
    ].map(([seed, depth]) => ({ seed: seed!, reorg: true, depth })),
  ];

  it.each(cases)('seed $seed, reorg $reorg (depth $depth): build(M) then build(N) is byte-identical to build(N)', async ({ seed, reorg, depth }) => {
    const sc = scenario(seed, { reorg, depth });
    if (depth !== undefined) expect(sc.reorgDepth).toBe(depth);
    const inc = tmp(`inc-${seed}`);
    const fresh = tmp(`fresh-${seed}`);
    const first = await build(sc.before, inc, sc.m);
    expect(first.mode).toBe('full');
    expect((await verifySnapshot(inc)).ok).toBe(true);

    const second = await build(sc.after, inc, sc.n);
    expect(second.mode).toBe('incremental');
    if (reorg) expect(second.rolledBackTo).toBe(sc.m - sc.reorgDepth);
    const full = await build(sc.after, fresh, sc.n);
    expect(full.mode).toBe('full');
    expect(manifest(inc)).toBe(manifest(fresh));
    expect(manifestMismatches(inc)).toEqual([]);
    const verified = await verifySnapshot(inc);
    expect(verified.problems).toEqual([]);
    // Less is written than a full build writes.
    expect(second.written + second.deleted).toBeLessThan(full.written);
    expect(second.unchanged).toBeGreaterThan(0);
    // Changed address documents were made from their previous version, none assembled whole.
    expect(second.addressReuse.spliced).toBeGreaterThan(0);
    expect(second.addressReuse.fallbacks).toBe(0);
  });

  it('unchanged files keep their inode and mtime; a second run with nothing new writes only what moves with the tip', async () => {
    const sc = scenario(31, { reorg: false });
    const out = tmp('mtime');
    await build(sc.after, out, sc.n - 3);
    const deep = manifest(out).split('\n').find((l) => l.endsWith('.bin') && l.includes(' tx/'))!.split(' ')[2]!;
    const before = statSync(join(out, deep));
    const r = await build(sc.after, out, sc.n);
    const after = statSync(join(out, deep));
    expect(r.mode).toBe('incremental');
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    const again = await build(sc.after, out, sc.n);
    expect(again.mode).toBe('incremental');
    expect(again.deleted).toBe(0);
    // Same height again: only stats/site info could move, and they do not.
    expect(again.written).toBe(0);
  });

  it('going back to a lower height equals a full build at that height', async () => {
    const sc = scenario(41, { reorg: false });
    const out = tmp('down');
    const fresh = tmp('down-fresh');
    await build(sc.after, out, sc.n);
    const r = await build(sc.after, out, sc.n - 5);
    expect(r.mode).toBe('incremental');
    await build(sc.after, fresh, sc.n - 5);
    expect(manifest(out)).toBe(manifest(fresh));
  });

  it('a missing, foreign or stale index means a full build, said in the report', async () => {
    const sc = scenario(51, { reorg: false });
    const out = tmp('foreign');
    await build(sc.after, out, sc.n - 2);
    rmSync(`${out}.state`, { recursive: true, force: true });
    const r1 = await build(sc.after, out, sc.n);
    expect(r1.mode).toBe('full');
    expect(r1.fullReason).toMatch(/no index/);
    const r2 = await build(sc.after, out, sc.n, { pretty: true });
    expect(r2.fullReason).toMatch(/options changed/);
    // A tree that changed behind the index's back (still one of ours: a file gone with its manifest line).
    const { unlinkSync, writeFileSync } = await import('node:fs');
    const lines = manifest(out).split('\n');
    const gone = lines.findIndex((l) => l.endsWith('.hex') && l.includes(' tx/'));
    unlinkSync(join(out, lines[gone]!.split(' ')[2]!));
    writeFileSync(join(out, MANIFEST_PATH), lines.filter((_, i) => i !== gone).join('\n'));
    const r3 = await build(sc.after, out, sc.n, { pretty: true });
    expect(r3.fullReason).toMatch(/not the one the index describes/);
    // Another chain (same network, different genesis successors): the first block differs.
    const other = scenario(52, { reorg: false });
    const r4 = await build(other.after, out, 120, { pretty: true });
    expect(r4.mode).toBe('incremental'); // same genesis (regtest); the fork is found and rolled back
    const fresh = tmp('foreign-fresh');
    await build(other.after, fresh, 120, { pretty: true });
    expect(manifest(out)).toBe(manifest(fresh));
  });
});
