// `snapshot verify` checks every document's shape against the published JSON Schemas
// (docs/schemas): an extra field, a missing field or a wrong type is named by file and JSON
// pointer, even where the document's values stay consistent with the chain (manifest line
// updated, so only the shape check can tell).
import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SITE_INFO_PATH, STATS_PATH, blockPath, txPath } from '../src/contract/layout.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { verifySnapshot, type VerifyReport } from '../src/verify/index.js';
import { linkCopy, rewriteListed } from './support/tree-copy.js';

describe('snapshot verify: document shapes', () => {
  let dir: string;
  let good: string;
  let copies = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-verify-shape-'));
    good = join(dir, 'good');
    await buildSnapshot({ source: demoSource(), outDir: good });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const copy = (): string => linkCopy(good, join(dir, `bad-${++copies}`));
  const rewrite = rewriteListed;

  const read = (rel: string) => JSON.parse(readFileSync(join(good, rel), 'utf8')) as Record<string, unknown>;
  const tip = () => (read(SITE_INFO_PATH) as { tip: string }).tip;

  /** The problems on `rel`, each as "<file>: <message>". */
  const on = (r: VerifyReport, rel: string) => r.problems.filter((p) => p.file === rel).map((p) => `${p.file}: ${p.message}`);

  it('the good tree has no shape problems', async () => {
    expect((await verifySnapshot(good)).problems).toEqual([]);
  });

  it('an extra field in a tx document is named with its pointer', async () => {
    const d = copy();
    const txid = (read(blockPath(tip(), 'json')) as { tx: { hash: string }[] }).tx[0]!.hash;
    const rel = txPath(txid, 'json');
    rewrite(d, rel, JSON.stringify({ ...read(rel), confirmations: 1 }));
    const r = await verifySnapshot(d);
    expect(on(r, rel)).toEqual([`${rel}: /confirmations: is an unknown field (tx.schema.json)`]);
  });

  it('a missing field (the tx time) is named with its pointer', async () => {
    const d = copy();
    const txid = (read(blockPath(tip(), 'json')) as { tx: { hash: string }[] }).tx[0]!.hash;
    const rel = txPath(txid, 'json');
    const { time: _t, ...noTime } = read(rel);
    rewrite(d, rel, JSON.stringify(noTime));
    const r = await verifySnapshot(d);
    expect(on(r, rel)).toEqual([`${rel}: /time: is missing (tx.schema.json)`]);
  });

  it('a wrong type (stats work as a string) is named with its pointer', async () => {
    const d = copy();
    const stats = read(STATS_PATH);
    rewrite(d, STATS_PATH, JSON.stringify({ ...stats, work: String(stats.work) }));
    const r = await verifySnapshot(d);
    expect(on(r, STATS_PATH)).toEqual([`${STATS_PATH}: /work: must be integer (stats.schema.json)`]);
  });

  it('a wrong type deep in a block document: file and pointer', async () => {
    const d = copy();
    const rel = blockPath(tip(), 'json');
    const block = read(rel) as { tx: { out: { value: unknown }[] }[] };
    block.tx[0]!.out[0]!.value = Number(block.tx[0]!.out[0]!.value);
    rewrite(d, rel, JSON.stringify(block));
    const r = await verifySnapshot(d);
    expect(on(r, rel)).toContain(`${rel}: /tx/0/out/0/value: must be string (block.schema.json)`);
  });

  it('a name document with a field its variant lacks, and an error document with a status', async () => {
    const d = copy();
    const rel = 'name/d/history.json';
    rewrite(d, rel, JSON.stringify({ ...read(rel), owner: 'x' }));
    rewrite(d, 'errors/tx.json', JSON.stringify({ ...read('errors/tx.json'), status: 404 }));
    const r = await verifySnapshot(d);
    expect(on(r, rel)).toEqual([`${rel}: /owner: is an unknown field (name.schema.json)`]);
    expect(on(r, 'errors/tx.json')).toEqual(['errors/tx.json: /status: is an unknown field (error.schema.json)']);
  });
});
