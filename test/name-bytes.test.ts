// decisions.md: a name and its value are the pushed bytes decoded as UTF-8, every byte kept.
// A leading UTF-8 BOM (EF BB BF, U+FEFF) is such a byte sequence: it must survive in every
// name document, in the router's decoding of a requested name and in its error texts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainBuilder, type NameNewHandle } from '../src/builder/chain.js';
import { NETWORKS } from '../src/chain/networks.js';
import { makeRouterSite, route } from '../src/contract/router.js';
import { buildSnapshot } from '../src/site/build.js';
import { ALL_NAME_VARIANTS, namePath, type SiteInfo } from '../src/contract/layout.js';
import { Progress } from '../src/runtime/progress.js';
import { memorySource } from '../src/source/memory.js';
import { asMemoryBlocks } from './support/chains.js';

const NET = NETWORKS['namecoin-regtest'];
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const BOM_NAME = Buffer.concat([BOM, Buffer.from('bom-name')]);
const BOM_VALUE_NAME = Buffer.from('d/bom-value');
const VALUES = {
  bomName: [Buffer.from('plain value'), Buffer.concat([BOM, BOM, Buffer.from('two BOMs')])],
  bomValue: [Buffer.concat([BOM, Buffer.from('{"ip":"10.0.0.1"}')]), Buffer.concat([BOM])],
};
const silent = new Progress({ write: () => true } as unknown as NodeJS.WriteStream, false);

let out: string;
let root: string;
beforeAll(async () => {
  const cb = new ChainBuilder({ network: NET, seed: 'bom' });
  cb.mine(101);
  let a!: NameNewHandle;
  let b!: NameNewHandle;
  cb.block((x) => {
    a = x.nameNew(BOM_NAME);
    b = x.nameNew(BOM_VALUE_NAME);
  });
  cb.mine(12);
  cb.block((x) => {
    x.nameFirstUpdate(a, VALUES.bomName[0]!);
    x.nameFirstUpdate(b, VALUES.bomValue[0]!);
  });
  cb.block((x) => {
    x.nameUpdate(BOM_NAME, VALUES.bomName[1]!);
    x.nameUpdate(BOM_VALUE_NAME, VALUES.bomValue[1]!);
  });
  root = mkdtempSync(join(tmpdir(), 'name-bytes-'));
  out = join(root, 'out');
  await buildSnapshot({ source: memorySource(NET, asMemoryBlocks(cb.build())), outDir: out, progress: silent });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The JSON text of a string field, re-encoded to the bytes it stands for. */
const bytesOf = (s: string) => Buffer.from(s, 'utf8');

describe('name bytes: a leading UTF-8 BOM is kept', () => {
  for (const [label, name, values] of [
    ['a value that begins with a BOM', BOM_VALUE_NAME, VALUES.bomValue],
    ['a name that begins with a BOM', BOM_NAME, VALUES.bomName],
  ] as const) {
    it(`${label}: every byte in all 64 documents`, () => {
      for (const v of ALL_NAME_VARIANTS) {
        const doc = JSON.parse(readFileSync(join(out, namePath(name, v)), 'utf8')) as { name: string; value: string } | { name: string; value: string }[];
        const recs = Array.isArray(doc) ? doc : [doc];
        expect(recs.length).toBe(v.history ? 2 : 1);
        recs.forEach((r, i) => {
          expect(bytesOf(r.name).toString('hex'), namePath(name, v)).toBe(name.toString('hex'));
          expect(bytesOf(r.value).toString('hex'), namePath(name, v)).toBe(values[v.history ? i : 1]!.toString('hex'));
        });
      }
    });
  }

  it('the router decodes a requested name without dropping its BOM', () => {
    const info = JSON.parse(readFileSync(join(out, '_site.json'), 'utf8')) as SiteInfo;
    const site = makeRouterSite(info);
    const natural = route('/name/%EF%BB%BFbom-name.json', site);
    expect(natural.type === 'file' && natural.file).toBe(namePath(BOM_NAME, ALL_NAME_VARIANTS[0]!));
    const miss = route('/name/%EF%BB%BFnope.json', site);
    expect(miss.type === 'file' && JSON.parse(miss.missing.body)).toEqual({ error: 'Name \ufeffnope not found.' });
    const canon = route('/name/~EF~BB~BFnope.json', site);
    expect(canon.type === 'file' && JSON.parse(canon.missing.body)).toEqual({ error: 'Name \ufeffnope not found.' });
  });
});
