// `snapshot publish` of a tree to a real S3 server (s3rver on a loopback port, behind the
// checking and counting proxy of test/support/s3-server.ts), on regtest chains built in memory.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { fileHeaders } from '../src/contract/router.js';
import { objectHeaders, publishToBucket, type PublishOptions } from '../src/publish/bucket/run.js';
import { Bucket } from '../src/publish/bucket/s3.js';
import { startServer } from '../src/serve/server.js';
import { scenario } from './support/chains.js';
import { build, tempDir } from './support/memory-builds.js';
import { BUCKET, S3_ENV, bucketFiles, changedFiles, cli, expectSameFiles, startS3, stores, treeFiles, type S3Fixture } from './support/s3-server.js';

const tmp = tempDir('snapshot-publish-');

describe('snapshot publish: a tree to S3', { timeout: 300_000 }, () => {
  let fx: S3Fixture;
  const sc = scenario(61, { reorg: true, depth: 3 });
  const out = () => tmp('tree');
  const lines: string[] = [];
  const run = (prefix: string, extra: Partial<PublishOptions> = {}) =>
    publishToBucket({ dir: out(), to: `s3://${BUCKET}/${prefix}`, endpoint: fx.endpoint, region: 'us-east-1', concurrency: 8, maxAttempts: 3, dryRun: false, force: false, out: (l) => lines.push(l), ...extra });
  const putsSince = (from: number, prefix: string) => stores(fx.requests.slice(from), prefix + '/');

  beforeAll(async () => {
    Object.assign(process.env, S3_ENV);
    fx = await startS3([BUCKET]);
  });
  afterAll(async () => fx?.close());

  it('publishes every file with its bytes and the headers snapshot serve sends; again: nothing; then by difference', async () => {
    await build(sc.before, out(), sc.m);
    const first = treeFiles(out());
    await fx.put(BUCKET, 'outside/keep.txt', 'not ours');
    await fx.put(BUCKET, 'treex/keep.txt', 'a sibling prefix');
    await run('tree');
    expectSameFiles(await bucketFiles(fx, 'tree'), first);
    // Headers: as fileHeaders says, and as snapshot serve answers the same path.
    const server = await startServer({ dir: out(), port: 0 });
    try {
      let served = 0;
      const paths = [...first.keys()];
      const heads = await Promise.all(paths.map((p) => fx.head(BUCKET, `tree/${p}`)));
      for (const [i, path] of paths.entries()) {
        const o = heads[i]!;
        expect({ path, type: o.contentType, cache: o.cacheControl }).toEqual({ path, type: fileHeaders(path).contentType, cache: fileHeaders(path).cacheControl });
        const r = await fetch(`${server.url}/${path}`);
        await r.arrayBuffer();
        if (r.status !== 200) continue; // not a URL of the API (v/…, errors/…, _site.json): its own headers
        served++;
        expect({ path, type: r.headers.get('content-type'), cache: r.headers.get('cache-control') }).toEqual({ path, type: o.contentType, cache: o.cacheControl });
      }
      expect(served).toBeGreaterThan(first.size / 2);
    } finally {
      await server.close();
    }
    // Nothing changed: no PUT, no DELETE.
    let from = fx.requests.length;
    const again = await run('tree');
    expect(again.puts).toBe(0);
    expect(fx.requests.slice(from).filter((r) => r.method === 'PUT' || r.method === 'DELETE')).toEqual([]);
    // The chain after a reorg and new blocks: only what changed is stored, the rest is deleted.
    await build(sc.after, out(), sc.n);
    const second = treeFiles(out());
    from = fx.requests.length;
    const r2 = await run('tree');
    expectSameFiles(await bucketFiles(fx, 'tree'), second);
    const stored = putsSince(from, 'tree').length;
    expect(stored).toBe(r2.puts);
    expect(stored).toBeLessThanOrEqual(changedFiles(first, second) + 3);
    const gone = [...first.keys()].filter((k) => !second.has(k)).length;
    expect(gone).toBeGreaterThan(0);
    expect(fx.requests.slice(from).filter((r) => r.method === 'DELETE' && r.status === 204)).toHaveLength(gone);
    // Down to a lower height: the bucket equals that tree.
    await build(sc.after, out(), sc.m - 5);
    await run('tree');
    expectSameFiles(await bucketFiles(fx, 'tree'), treeFiles(out()));
    // Nothing outside the prefix was touched.
    expect((await fx.head(BUCKET, 'outside/keep.txt')).body.toString()).toBe('not ours');
    expect((await fx.head(BUCKET, 'treex/keep.txt')).body.toString()).toBe('a sibling prefix');
    expect(fx.requests.filter((r) => r.method !== 'GET' && !r.key.startsWith('tree/') && r.key !== '').map((r) => `${r.method} ${r.key}`)).toEqual([]);
  });

  it('a pack built by snapshot build: its parts, index and pack.json, and the browsing UI beside them with serve\'s headers', async () => {
    const dir = tmp('pack-ui');
    await build(sc.before, dir, sc.m, { format: 'pack' });
    const ui = ['index.html', 'assets/app.js', 'assets/app.css'];
    const r = await publishToBucket({ dir, to: `s3://${BUCKET}/packui`, endpoint: fx.endpoint, region: 'us-east-1', concurrency: 8, maxAttempts: 3, dryRun: false, force: false, out: () => {} });
    const got = await bucketFiles(fx, 'packui');
    for (const key of ui) {
      expect(got.get(key)?.equals(readFileSync(join(dir, key))), key).toBe(true);
      const o = await fx.head(BUCKET, `packui/${key}`);
      expect({ key, type: o.contentType, cache: o.cacheControl }).toEqual({ key, type: fileHeaders(key).contentType, cache: fileHeaders(key).cacheControl });
    }
    expect(r.puts).toBeGreaterThan(ui.length);
    // Again: nothing to store.
    expect((await publishToBucket({ dir, to: `s3://${BUCKET}/packui`, endpoint: fx.endpoint, region: 'us-east-1', concurrency: 8, maxAttempts: 3, dryRun: false, force: false, out: () => {} })).puts).toBe(0);
  });

  it('refuses a prefix holding an object it did not write, naming it; --force publishes beside it and keeps it', async () => {
    await build(sc.after, out(), sc.n);
    await fx.put(BUCKET, 'mixed/index.html', 'someone else’s');
    await fx.put(BUCKET, 'mixed/zz/other.txt', 'someone else’s too');
    const from = fx.requests.length;
    await expect(run('mixed')).rejects.toThrow(`s3://${BUCKET}/mixed/index.html was not written by snapshot publish (2 such objects under s3://${BUCKET}/mixed)`);
    expect(fx.requests.slice(from).filter((r) => r.method === 'PUT' || r.method === 'DELETE')).toEqual([]);
    const r = await run('mixed', { force: true });
    expect(r.foreign).toEqual(['index.html', 'zz/other.txt']);
    const files = await bucketFiles(fx, 'mixed');
    expect(files.get('zz/other.txt')?.toString()).toBe('someone else’s too');
    for (const [k, v] of treeFiles(out())) expect(files.get(k)?.equals(v), k).toBe(true);
  });

  it('--dry-run prints the PUTs, DELETEs, bytes and cost, and writes nothing', async () => {
    await build(sc.after, out(), sc.n);
    lines.length = 0;
    const from = fx.requests.length;
    const r = await run('dry', { dryRun: true });
    expect(fx.requests.slice(from).filter((q) => q.method !== 'GET')).toEqual([]);
    const files = treeFiles(out());
    expect(lines.filter((l) => l.startsWith('PUT ')).length).toBe(files.size + 2);
    expect(lines).toContain(`PUT s3://${BUCKET}/dry/${MANIFEST_PATH} ${files.get(MANIFEST_PATH)!.length} bytes`);
    const bytes = [...files.values()].reduce((n, b) => n + b.length, 0);
    expect(lines.at(-1)).toContain(`dry run: ${files.size + 2} PUTs (${bytes} bytes), 0 DELETEs`);
    // (PUTs + one LIST) × $0.005/1000 + two GETs × $0.0004/1000.
    expect(r.costUsd).toBeCloseTo((files.size + 3) * 0.000005 + 2 * 0.0000004, 12);
    expect(lines.at(-1)).toMatch(/storage and transfer not included/);
  });

  it('retries throttling and 5xx answers; a corrupted upload is refused by its checksum and named with the key and code', async () => {
    await build(sc.after, out(), sc.n);
    // The first attempt of every third PUT fails, alternately throttled and with a server error.
    const tried = new Set<string>();
    let failed = 0;
    fx.hook = (r, nth) => {
      if (r.method !== 'PUT' || tried.has(r.key)) return 'pass';
      tried.add(r.key);
      if (tried.size % 3 !== 0) return 'pass';
      failed++;
      return nth % 2 ? { status: 503, code: 'SlowDown' } : { status: 500, code: 'InjectedError' };
    };
    try {
      await run('retry');
    } finally {
      fx.hook = () => 'pass';
    }
    expect(failed).toBeGreaterThan(3);
    expectSameFiles(await bucketFiles(fx, 'retry'), treeFiles(out()));
    // One byte flipped on the way: the store refuses it (BadDigest, not retried), the run stops before the manifest.
    const victim = [...treeFiles(out()).keys()].find((k) => k.startsWith('tx/'))!;
    fx.hook = (r) => (r.method === 'PUT' && r.key === `bad/${victim}` ? 'corrupt' : 'pass');
    try {
      await expect(run('bad')).rejects.toThrow(`PUT s3://${BUCKET}/bad/${victim} failed: BadDigest (HTTP 400)`);
    } finally {
      fx.hook = () => 'pass';
    }
    expect((await fx.objects(BUCKET, 'bad/')).has(`bad/${MANIFEST_PATH}`)).toBe(false);
  });

  it('a bucket that does not exist: exit 1 naming the bucket and the S3 error code', async () => {
    await build(sc.after, out(), sc.n);
    const r = await cli(['publish', '--dir', out(), '--to', 's3://no-such-bucket/p', '--endpoint', fx.endpoint, '--max-attempts', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('snapshot: LIST s3://no-such-bucket/p failed: NoSuchBucket (HTTP 404)');
    expect(r.stderr).not.toMatch(/NodeVersionSupportWarning/);
    // No region anywhere: said with the way to give one.
    const none = await cli(['publish', '--dir', out(), '--to', 's3://some-bucket/p', '--max-attempts', '1'], undefined, { AWS_REGION: undefined, AWS_DEFAULT_REGION: undefined, AWS_PROFILE: undefined, HOME: out() });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('snapshot: LIST s3://some-bucket/p failed: Region is missing (pass --region or set AWS_REGION)');
  });
});

describe('snapshot publish: large objects', { timeout: 300_000 }, () => {
  let fx: S3Fixture;
  beforeAll(async () => {
    Object.assign(process.env, S3_ENV);
    fx = await startS3([BUCKET]);
  });
  afterAll(async () => fx?.close());

  it('go in a multipart upload, each part with a checksum the server checks; a corrupted part is refused', async () => {
    const file = tmp('big.part');
    const bytes = randomBytes(11 * 1024 * 1024 + 123);
    writeFileSync(file, bytes);
    const bucket = new Bucket({ bucket: BUCKET, prefix: 'mp' }, { endpoint: fx.endpoint, region: 'us-east-1', maxAttempts: 1 });
    try {
      let sent = 0;
      const got = await bucket.upload('big.part', file, objectHeaders('pack', 'big.part'), 5 * 1024 * 1024, 2, (n) => (sent += n));
      expect(got).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(sent).toBe(bytes.length);
      const parts = fx.requests.filter((r) => r.method === 'PUT' && r.query.includes('partNumber'));
      expect(parts.map((r) => r.status)).toEqual([200, 200, 200]);
      const o = await fx.head(BUCKET, 'mp/big.part');
      expect(o.body.equals(bytes)).toBe(true);
      expect(o.contentType).toBe('application/octet-stream');
      fx.hook = (r) => (r.method === 'PUT' && r.query.includes('partNumber=2') ? 'corrupt' : 'pass');
      // (s3rver cannot abort a multipart upload, so the error thrown is that of the abort.)
      await expect(bucket.upload('bad.part', file, objectHeaders('pack', 'bad.part'), 5 * 1024 * 1024, 2, () => {})).rejects.toThrow(`PUT (multipart) s3://${BUCKET}/mp/bad.part failed: `);
      expect(fx.requests.filter((r) => r.key === 'mp/bad.part' && r.query.includes('partNumber=2')).map((r) => r.status)).toEqual([400]);
      expect((await fx.objects(BUCKET, 'mp/')).has('mp/bad.part')).toBe(false);
    } finally {
      fx.hook = () => 'pass';
      bucket.close();
    }
  });
});
