// Output bytes are locked: the data documents of the demo build and of the Bitcoin 0–599 build
// must keep the sha256 recorded in test/golden/*.sha256, so a restructuring that changes a byte
// fails here. Code shipped into the site (UI
// bundle, host glue, nginx.conf with its absolute path) is not data and is left out.
// Regenerate only for an intended output change: GOLDEN_UPDATE=1 npx vitest run test/golden.test.ts
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { memorySource } from '../src/source/memory.js';
import type { ChainSource } from '../src/source/types.js';
import { framedBlocks, readChain } from './support/helpers.js';
import { itShared } from './support/shared-data.js';

const GOLDEN = join(dirname(fileURLToPath(import.meta.url)), 'golden');
const CODE = /^(assets\/|index\.html$|_netlify\/|_worker\.js\/|nginx\.conf$|netlify\.toml$|_headers$|404\.html$)/;

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** `sha256 size path` lines of the data files of a fresh full build. */
async function dataLines(source: ChainSource): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'snapshot-golden-'));
  dirs.push(dir);
  const out = join(dir, 'out');
  await buildSnapshot({ source, outDir: out, full: true });
  return readFileSync(join(out, MANIFEST_PATH), 'utf8')
    .trim()
    .split('\n')
    .filter((l) => !CODE.test(l.split(' ')[2]!));
}

async function check(name: string, source: ChainSource): Promise<void> {
  const lines = await dataLines(source);
  const file = join(GOLDEN, `${name}.sha256`);
  if (process.env.GOLDEN_UPDATE === '1') writeFileSync(file, lines.join('\n') + '\n');
  const want = readFileSync(file, 'utf8').trim().split('\n');
  const have = new Set(lines);
  const wanted = new Set(want);
  expect({ missingOrChanged: want.filter((l) => !have.has(l)), new: lines.filter((l) => !wanted.has(l)) }).toEqual({ missingOrChanged: [], new: [] });
  expect(lines.length).toBeGreaterThan(1000);
}

describe('output bytes are unchanged (golden sha256 lists)', () => {
  it('demo chain', async () => {
    await check('demo', demoSource());
  });

  itShared('chaindata/nbitcoin')('Bitcoin mainnet 0–599', async () => {
    const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
    await check('bitcoin-600', memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin blk files'));
  });
});
