// A re-run with nothing new (same height, same tip, same off-chain blocks) writes nothing and
// leaves the published release in place; anything new at the same height is still built.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChainBuilder } from '../src/builder/chain.js';
import { locks } from '../src/builder/scripts.js';
import { PACK_POINTER } from '../src/contract/pack-format.js';
import { asMemoryBlocks } from './support/chains.js';
import { build, manifest, NET, tempDir } from './support/memory-builds.js';

const tmp = tempDir('snapshot-noop-');

function chain(stale: boolean) {
  const cb = new ChainBuilder({ network: NET, seed: 7 });
  const key = cb.key();
  cb.mine(101);
  for (let i = 0; i < 6; i++) cb.block((b) => void b.pay(locks.p2wpkh(key), BigInt(1_000_000 * (i + 1))));
  const tip = cb.tip.height;
  // A stale block beside the tip's parent: an off-chain block at a height the snapshot holds.
  if (stale) cb.block((b) => void b.pay(locks.p2pkh(key), 5_000_000n), { parent: cb.build().main[tip - 2]! });
  return { blocks: asMemoryBlocks(cb.build()), tip };
}

describe('a re-run with nothing new', () => {
  it('writes nothing and keeps the published release: same height, same tip', async () => {
    const { blocks, tip } = chain(false);
    const out = tmp('tree');
    await build(blocks, out, tip);
    const release = readlinkSync(out);
    const before = manifest(out);
    const again = await build(blocks, out, tip);
    expect(again.upToDate).toBe(true);
    expect(again.mode).toBe('incremental');
    expect([again.written, again.deleted]).toEqual([0, 0]);
    expect(readlinkSync(out)).toBe(release);
    expect(manifest(out)).toBe(before);
    // The report's figures are the published tree's.
    expect(again.files).toBe(before.trim().split('\n').length);
    expect(again.height).toBe(tip);
  });

  it('a new off-chain block at the same height is built, equal to a fresh build', async () => {
    const out = tmp('stale');
    const plain = chain(false);
    await build(plain.blocks, out, plain.tip);
    const withStale = chain(true);
    expect(withStale.tip).toBe(plain.tip);
    const r = await build(withStale.blocks, out, plain.tip);
    expect(r.upToDate).toBeUndefined();
    expect(r.written).toBeGreaterThan(0);
    const fresh = tmp('stale-fresh');
    await build(withStale.blocks, fresh, plain.tip);
    expect(manifest(out)).toBe(manifest(fresh));
    // And from there, nothing new again.
    expect((await build(withStale.blocks, out, plain.tip)).upToDate).toBe(true);
  });

  it('another height is never up to date (name documents count expires_in from it)', async () => {
    const { blocks, tip } = chain(false);
    const out = tmp('lower');
    await build(blocks, out, tip);
    const r = await build(blocks, out, tip - 1);
    expect(r.upToDate).toBeUndefined();
    expect(r.height).toBe(tip - 1);
  });

  it('other host glue (--nginx-upstream) is written, not skipped', async () => {
    const { blocks, tip } = chain(false);
    const out = tmp('upstream');
    await build(blocks, out, tip, { hosts: ['nginx'] });
    expect(readFileSync(join(out, 'nginx.conf'), 'utf8')).not.toContain('proxy_pass');
    const r = await build(blocks, out, tip, { hosts: ['nginx'], nginxUpstream: '127.0.0.1:8080' });
    expect(r.upToDate).toBeUndefined();
    expect(readFileSync(join(out, 'nginx.conf'), 'utf8')).toContain('proxy_pass http://127.0.0.1:8080');
  });

  it('a pack: no new generation, pack.json and its files as they were', async () => {
    const { blocks, tip } = chain(false);
    const out = tmp('pack');
    await build(blocks, out, tip, { format: 'pack' });
    const pointer = readFileSync(join(out, PACK_POINTER), 'utf8');
    const files = readdirSync(out).sort();
    const again = await build(blocks, out, tip, { format: 'pack' });
    expect(again.upToDate).toBe(true);
    expect(readFileSync(join(out, PACK_POINTER), 'utf8')).toBe(pointer);
    expect(readdirSync(out).sort()).toEqual(files);
  });
});
