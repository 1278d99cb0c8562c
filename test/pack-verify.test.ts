// `snapshot verify --dir <pack>`: a sound pack passes (every manifest path resolves, every
// answer's sha256 equals the manifest's, recipes assembled); a byte flipped in a copy of a part is
// reported naming the part file, the byte range and the path, and the command exits 1.
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { Kind } from '../src/contract/pack-format.js';
import { answerBytes, PackReader } from '../src/pack/reader.js';
import { recipeOf } from './support/pack-compare.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { REPO, nodeArgs } from './support/helpers.js';
import { HOSTS, tempDir } from './support/memory-builds.js';

const tmp = tempDir('snapshot-pack-verify-');
const verify = (dir: string) => spawnSync(process.execPath, [...nodeArgs('src/cli.ts'), 'verify', '--dir', dir, '--verbose'], { cwd: REPO, encoding: 'utf8' });

describe('verify --dir <pack>', () => {
  let pack: string;
  let lines: string[];
  beforeAll(async () => {
    pack = tmp('pack');
    await buildSnapshot({ source: demoSource(), outDir: pack, format: 'pack', hosts: HOSTS });
    const r = await PackReader.open(pack);
    lines = Buffer.from(await answerBytes((await r.get(MANIFEST_PATH))!)).toString('utf8').trim().split('\n');
    await r.close();
  }, 180_000);

  it('a sound pack: OK, every file of its manifest checked, exit 0', () => {
    const r = verify(pack);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.stdout).toContain(`OK: pack of ${lines.length} files (${lines.length + 1} entries)`);
    expect(r.status).toBe(0);
  });

  it('a flipped byte in a part: the part file, the byte range and the path are named; exit 1', async () => {
    const damaged = tmp('damaged');
    cpSync(pack, damaged, { recursive: true });
    // A tx document's blob, which the recipes of its block's and its addresses' documents reference.
    const path = lines.map((l) => l.split(' ')[2]!).find((p) => p.startsWith('tx/') && p.endsWith('.json'))!;
    const r0 = await PackReader.open(damaged);
    const rec = (await r0.lookup(path))!;
    const part = r0.parts[rec.part]!.name;
    const embedding: string[] = [];
    for (const p of lines.map((l) => l.split(' ')[2]!).filter((q) => /^(address|block)\/[^/]+\.json$/.test(q))) {
      if ((await r0.lookup(p))!.kind !== Kind.RECIPE) continue;
      const segs = await recipeOf(r0, p);
      if (segs.some((x) => x.type === 'range' && x.blob.part === rec.part && x.blob.offset === rec.offset)) embedding.push(p);
    }
    await r0.close();
    expect(embedding.length).toBeGreaterThanOrEqual(2);
    const file = join(damaged, part);
    const bytes = readFileSync(file);
    bytes[rec.offset + Math.floor(rec.stored / 2)]! ^= 0x40;
    writeFileSync(file, bytes);
    const r = verify(damaged);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('FAILED');
    const line = r.stdout.split('\n').find((l) => l.includes(`entry ${path})`));
    expect(line, r.stdout).toBeDefined();
    expect(line).toContain(`${part}: bytes ${rec.offset}–${rec.offset + rec.stored - 1} fail their CRC-32`);
    expect(r.stdout).toContain(`${part}: sha256 differs from the part table's`);
    // Recipes are assembled: each document embedding the damaged tx document is named too.
    for (const p of embedding) expect(r.stdout).toMatch(new RegExp(`fail their CRC-32 \\(segment \\d+ of the recipe of ${p.replace(/[.]/g, '\\.')}\\)`));
  });
});
