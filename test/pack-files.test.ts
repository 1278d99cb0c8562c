// snapshot serve's pack answers: small ones are held in memory per pack generation, as the tree's
// small files are (a recipe's assembled bytes too), so a repeated request reads nothing from the
// pack's files.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Kind } from '../src/contract/pack-format.js';
import { PackReader } from '../src/pack/reader.js';
import { PackFiles } from '../src/serve/pack-files.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { HOSTS, tempDir } from './support/memory-builds.js';

const tmp = tempDir('snapshot-pack-files-');

describe('PackFiles', () => {
  it('answers a repeated request from memory (its parts zeroed), a new one from the parts', async () => {
    const tree = tmp('tree');
    const pack = tmp('pack');
    await buildSnapshot({ source: demoSource(), outDir: tree, height: 30, hosts: HOSTS });
    await buildSnapshot({ source: demoSource(), outDir: pack, height: 30, hosts: HOSTS, format: 'pack' });
    const files = new PackFiles(pack);
    const first = await files.load('stats.json', undefined);
    expect(first.kind === 'file' && first.body.equals(readFileSync(join(tree, 'stats.json')))).toBe(true);
    // An address document, a recipe over its tx documents' blobs, is held as assembled.
    const address = `address/${readdirSync(join(tree, 'address'))[0]}`;
    const reader = await PackReader.open(pack);
    expect((await reader.lookup(address))!.kind).toBe(Kind.RECIPE);
    await reader.close();
    const doc = await files.load(address, 'gzip');
    expect(doc.kind === 'file' && doc.body.equals(readFileSync(join(tree, address)))).toBe(true);
    // Every part's bytes zeroed in place (the reader's open files see it): only what is held in memory still answers.
    for (const f of readdirSync(pack).filter((f) => f.endsWith('.part'))) writeFileSync(join(pack, f), Buffer.alloc(statSync(join(pack, f)).size));
    const again = await files.load('stats.json', undefined);
    expect(again).toBe(first);
    expect(await files.load(address, 'gzip')).toBe(doc);
    await expect(files.load('names.json', undefined)).rejects.toThrow();
  }, 120_000);
});
