// `snapshot publish` of the Bitcoin mainnet 0–599 tree (../shared) to s3rver: built at 300,
// then 599 into the same output, then again, then down to 200; after each publish the bucket
// equals the tree, and only what changed is stored.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { fileHeaders } from '../src/contract/router.js';
import { publishToBucket } from '../src/publish/bucket/run.js';
import { buildSnapshot } from '../src/site/build.js';
import { memorySource } from '../src/source/memory.js';
import { framedBlocks, readChain } from './support/helpers.js';
import { tempDir } from './support/memory-builds.js';
import { BUCKET, S3_ENV, bucketFiles, changedFiles, expectSameFiles, startS3, stores, treeFiles, type S3Fixture } from './support/s3-server.js';
import { describeShared } from './support/shared-data.js';

const tmp = tempDir('snapshot-publish-btc-');

function nbitcoinSource() {
  const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
  return memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin blk files');
}

describeShared('chaindata')('snapshot publish: Bitcoin mainnet 0–599 to S3', { timeout: 900_000 }, () => {
  let fx: S3Fixture;
  const out = () => tmp('out');
  const publish = () => publishToBucket({ dir: out(), to: `s3://${BUCKET}/btc`, endpoint: fx.endpoint, region: 'us-east-1', concurrency: 16, maxAttempts: 3, dryRun: false, force: false, out: () => {} });
  const buildAt = (height: number) => buildSnapshot({ source: nbitcoinSource(), outDir: out(), height });

  beforeAll(async () => {
    Object.assign(process.env, S3_ENV);
    fx = await startS3([BUCKET]);
  });
  afterAll(async () => fx?.close());

  it('300, 599, 599 again, 200: the bucket equals each tree; stored objects ≤ changed files + 3; nothing when nothing changed', async () => {
    await buildAt(300);
    const t300 = treeFiles(out());
    await publish();
    const b300 = await bucketFiles(fx, 'btc');
    expectSameFiles(b300, t300);
    // Content-Type per file, as snapshot serve sends it (the raw bytes and their hex included).
    const types = new Set<string>();
    for (const path of [...t300.keys()].filter((_, i) => i % 25 === 0)) {
      const o = await fx.head(BUCKET, `btc/${path}`);
      expect({ path, type: o.contentType, cache: o.cacheControl }).toEqual({ path, type: fileHeaders(path).contentType, cache: fileHeaders(path).cacheControl });
      types.add(o.contentType!);
    }
    for (const t of ['application/json; charset=utf-8', 'application/octet-stream', 'text/plain; charset=utf-8']) expect(types).toContain(t);

    await buildAt(599);
    const t599 = treeFiles(out());
    let from = fx.requests.length;
    await publish();
    expectSameFiles(await bucketFiles(fx, 'btc'), t599);
    const stored599 = stores(fx.requests.slice(from), 'btc/').length;
    const changed599 = changedFiles(t300, t599);
    console.log(`bitcoin 300 → 599: ${t300.size} → ${t599.size} files, ${changed599} new or changed, ${stored599} objects stored`);
    expect(stored599).toBeLessThanOrEqual(changed599 + 3);

    from = fx.requests.length;
    await publish();
    expect(fx.requests.slice(from).filter((r) => r.method === 'PUT' || r.method === 'DELETE' || r.method === 'POST')).toEqual([]);

    await buildAt(200);
    const t200 = treeFiles(out());
    from = fx.requests.length;
    await publish();
    expectSameFiles(await bucketFiles(fx, 'btc'), t200);
    const stored200 = stores(fx.requests.slice(from), 'btc/').length;
    expect(stored200).toBeLessThanOrEqual(changedFiles(t599, t200) + 3);
    expect(fx.requests.slice(from).filter((r) => r.method === 'DELETE' && r.status === 204).length).toBe([...t599.keys()].filter((k) => !t200.has(k)).length);
  });
});
