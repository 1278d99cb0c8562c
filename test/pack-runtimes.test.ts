// The pack codec is pure (no Node APIs): bundled as it is, it runs in Deno and gives the same
// keys, checksums, headers, slots and recipes as in Node.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { REPO } from './support/helpers.js';
import { tempDir } from './support/memory-builds.js';
import { denoBinary } from './runtimes/launch.js';

const deno = denoBinary();
const dir = tempDir('snapshot-pack-rt-');

// Runs in both runtimes: a digest of what the codec produces for fixed inputs.
const PROBE = `
import * as f from './pack-format.mjs';
const enc = new TextEncoder();
const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const keys = ['tx/' + '0'.repeat(64) + '.json', 'v/history-rawtx/name/d~2falpha.json', 'name/é.json'].map((p) => f.packKey(p));
const recs = new Uint8Array(keys.length * f.RECORD_SIZE);
[...keys].sort(f.compareKeys).forEach((key, i) => f.encodeRecord({ key, kind: f.Kind.HEX, encoding: f.Encoding.GZIP, part: 2, offset: 2 ** 40 + i, stored: 77, size: 154, crc: 0xdeadbeef }, recs, i * f.RECORD_SIZE));
const slot = f.encodeSlot(recs, keys.length, 4);
const found = f.findInSlot(slot, f.checkSlot(slot, 4, 'i', 0), keys[1], 'i', 0);
const header = f.encodeHeader({ version: 1, bucketBits: 9, slotCapacity: 600, partCount: 1, entries: 2 ** 35, blobs: 9, slotsOffset: 300, slotsLength: 512 * (8 + 600 * 40), partTableOffset: 128, partTableLength: 80, generation: 4 });
const recipe = f.encodeRecipe([{ type: 'literal', bytes: enc.encode('{"a":') }, { type: 'range', blob: { part: 1, offset: 2 ** 33, stored: 9, encoding: 1, crc: 5 }, start: 1, length: 3 }]);
console.log(JSON.stringify({
  keys: keys.map(hex), crc: f.crc32(enc.encode('123456789')), hex: new TextDecoder().decode(f.hexBytes(Uint8Array.from([0, 171, 255]))),
  slot: hex(slot), found: found && found.offset - 2 ** 40, pos: [...keys].sort(f.compareKeys).indexOf(keys[1]), header: hex(header), back: f.decodeHeader(header, 'i').entries,
  recipe: hex(recipe), segs: f.decodeRecipe(recipe, 'r', 0).length, slotOf: f.slotOf(keys[0], 9),
}));
`;

describe('pack codec in other runtimes', () => {
  it.skipIf(deno.skip !== undefined)(`Deno gives the same bytes as Node${deno.skip ? ` (${deno.skip})` : ''}`, async () => {
    await build({ entryPoints: [join(REPO, 'src/contract/pack-format.ts')], bundle: true, format: 'esm', platform: 'neutral', outfile: dir('pack-format.mjs'), logLevel: 'warning' });
    writeFileSync(dir('probe.mjs'), PROBE);
    const inNode = spawnSync(process.execPath, [dir('probe.mjs')], { encoding: 'utf8' });
    expect(inNode.stderr).toBe('');
    const inDeno = spawnSync(deno.path!, ['run', '--no-prompt', '--no-config', dir('probe.mjs')], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(inDeno.stderr).toBe('');
    expect(inDeno.status).toBe(0);
    const a = JSON.parse(inNode.stdout);
    expect(a.crc).toBe(0xcbf43926);
    expect(a.found).toBe(a.pos);
    expect(a.back).toBe(2 ** 35);
    expect(JSON.parse(inDeno.stdout)).toEqual(a);
  });
});
