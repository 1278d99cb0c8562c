// `snapshot publish` of packs, and publishes killed (SIGKILL, a child process) at each step: a
// reader following the root always finds one complete snapshot, and the next run completes it.
// s3rver behind the checking and counting proxy of test/support/s3-server.ts; regtest chains.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { PACK_POINTER } from '../src/contract/pack-format.js';
import { answerBytes, PackReader } from '../src/pack/reader.js';
import { packFromTree } from '../src/pack/from-tree.js';
import { STATE_KEY } from '../src/publish/bucket/plan.js';
import { publishToBucket } from '../src/publish/bucket/run.js';
import { scenario } from './support/chains.js';
import { build, tempDir } from './support/memory-builds.js';
import { BUCKET, S3_ENV, bucketFiles, cli, expectSameFiles, startS3, stores, treeFiles, type S3Fixture, type S3Request } from './support/s3-server.js';

const tmp = tempDir('snapshot-publish-kill-');
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** The files of a pack directory. */
function packFiles(dir: string): Map<string, Buffer> {
  return new Map(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n))]));
}

describe('snapshot publish: packs, and runs killed at any step', { timeout: 600_000 }, () => {
  let fx: S3Fixture;
  const sc = scenario(71, { reorg: false });
  const run = (dir: string, prefix: string, dryRun = false, out: (l: string) => void = () => {}) =>
    publishToBucket({ dir, to: `s3://${BUCKET}/${prefix}`, endpoint: fx.endpoint, region: 'us-east-1', concurrency: 8, maxAttempts: 3, dryRun, force: false, out });

  /** Runs the CLI publish until the proxy holds a request `hold` picks, then SIGKILLs it. */
  async function killedPublish(dir: string, prefix: string, hold: (r: Omit<S3Request, 'status'>) => boolean): Promise<void> {
    fx.held = 0;
    fx.hook = (r) => (fx.held > 0 || hold(r) ? 'hold' : 'pass');
    let kill: () => void = () => {};
    const done = cli(['publish', '--dir', dir, '--to', `s3://${BUCKET}/${prefix}`, '--endpoint', fx.endpoint], (k) => (kill = k));
    const stopped = await Promise.race([fx.whenHeld().then(() => 'held'), done.then((r) => `exited: ${r.code} ${r.stdout} ${r.stderr}`)]);
    expect(stopped, 'the run reached the request to stop at').toBe('held');
    kill();
    const r = await done;
    expect(r.signal, r.stderr).toBe('SIGKILL');
    fx.hook = () => 'pass';
    await fx.settled();
  }

  /** A tree reader: the manifest is the old or the new one; every path it lists exists, with its listed bytes or (old manifest) the new ones. */
  async function treeReaderCheck(prefix: string, old: Map<string, Buffer>, next: Map<string, Buffer>): Promise<'old' | 'new'> {
    const got = await bucketFiles(fx, prefix);
    const manifest = got.get(MANIFEST_PATH)!;
    const which = manifest.equals(next.get(MANIFEST_PATH)!) ? 'new' : manifest.equals(old.get(MANIFEST_PATH)!) ? 'old' : 'neither';
    expect(which).not.toBe('neither');
    for (const line of manifest.toString('utf8').trimEnd().split('\n')) {
      const [hash, , path] = line.split(' ') as [string, string, string];
      const body = got.get(path);
      expect(body, `${path} is listed by the ${which} manifest`).toBeDefined();
      // A tree's documents are replaced in place: under the old manifest a changed one may already be new.
      const ok = sha(body!) === hash || (which === 'old' && next.get(path)?.equals(body!));
      expect(ok, `${path} holds the bytes of the old or new snapshot`).toBe(true);
    }
    return which as 'old' | 'new';
  }

  /** A pack reader on the bucket's objects: the pack pack.json names is whole and holds exactly one of the trees. */
  async function packReaderCheck(prefix: string, trees: Map<string, Buffer>[]): Promise<number> {
    const dir = tmp(`read-${prefix}-${Date.now()}`);
    mkdirSync(dir, { recursive: true });
    for (const [k, v] of await bucketFiles(fx, prefix)) writeFileSync(join(dir, k), v);
    const reader = await PackReader.open(dir);
    try {
      expect(await reader.verify()).toEqual([]);
      // The tree whose stats the pack answers; then every file of that tree, byte for byte.
      const stats = Buffer.from(await answerBytes((await reader.get('stats.json'))!));
      const index = trees.findIndex((t) => t.get('stats.json')!.equals(stats));
      expect(index, 'the pack holds one of the trees').toBeGreaterThanOrEqual(0);
      for (const [path, body] of trees[index]!) {
        if (path === MANIFEST_PATH) continue; // a pack holds the files a manifest lists, not the manifest
        const a = await reader.get(path);
        expect(a && Buffer.from(await answerBytes(a)).equals(body), path).toBe(true);
      }
      return index;
    } finally {
      await reader.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  beforeAll(async () => {
    Object.assign(process.env, S3_ENV);
    fx = await startS3([BUCKET]);
  });
  afterAll(async () => fx?.close());

  it('a pack: new parts and index, then pack.json; by difference; again nothing; the old index goes a run later', async () => {
    const tree = tmp('ptree');
    const pack = tmp('pack');
    const gens: Map<string, Buffer>[] = [];
    for (const [i, h] of [sc.m - 8, sc.m - 4, sc.m].entries()) {
      await build(sc.after, tree, h);
      gens.push(treeFiles(tree));
      const before = new Set(existsSync(pack) ? readdirSync(pack) : []);
      await packFromTree(tree, pack);
      const added = readdirSync(pack).filter((n) => n.endsWith('.part') && !before.has(n)).length;
      const from = fx.requests.length;
      await run(pack, 'pack');
      const storedNow = stores(fx.requests.slice(from), 'pack/');
      expect(storedNow.length, `run ${i + 1}: ${storedNow.map((r) => r.key).join(', ')}`).toBeLessThanOrEqual(added + 3);
      expect(await packReaderCheck('pack', gens)).toBe(i);
      // Every object of the local pack is there with its bytes.
      const got = await bucketFiles(fx, 'pack');
      for (const [k, v] of packFiles(pack)) if (k.endsWith('.part') || k === PACK_POINTER) expect(got.get(k)?.equals(v), k).toBe(true);
      const again = fx.requests.length;
      const planned: string[] = [];
      await run(pack, 'pack', true, (l) => planned.push(l));
      expect(planned.slice(0, -1)).toEqual([]);
      expect((await run(pack, 'pack')).puts).toBe(0);
      expect(fx.requests.slice(again).filter((r) => r.method === 'PUT' || r.method === 'DELETE')).toEqual([]);
      // Indexes in the bucket: this run's and the previous one's (a reader may still hold it).
      expect([...got.keys()].filter((k) => k.endsWith('.idx'))).toHaveLength(Math.min(i + 1, 2));
    }
  });

  it('a tree killed after some uploads, before the manifest, during deletions: readers see one snapshot, the next run finishes', async () => {
    const out = tmp('ktree');
    await build(sc.before, out, sc.m - 6);
    const a = treeFiles(out);
    await run(out, 'kt');
    await build(sc.after, out, sc.n);
    const b = treeFiles(out);
    const content = (r: Omit<S3Request, 'status'>) => r.method === 'PUT' && r.key.startsWith('kt/') && !r.key.endsWith(STATE_KEY);
    let puts = 0;
    await killedPublish(out, 'kt', (r) => content(r) && ++puts === 5);
    expect(await treeReaderCheck('kt', a, b)).toBe('old');
    await killedPublish(out, 'kt', (r) => r.method === 'PUT' && r.key === `kt/${MANIFEST_PATH}`);
    expect(await treeReaderCheck('kt', a, b)).toBe('old');
    await run(out, 'kt');
    expectSameFiles(await bucketFiles(fx, 'kt'), b);
    // Back down to the first height: deletions, stopped at the second one.
    await build(sc.after, out, sc.m - 6);
    expect(treeFiles(out)).toEqual(a);
    let deletes = 0;
    await killedPublish(out, 'kt', (r) => r.method === 'DELETE' && ++deletes === 2);
    expect(await treeReaderCheck('kt', b, a)).toBe('new');
    await run(out, 'kt');
    expectSameFiles(await bucketFiles(fx, 'kt'), a);
  });

  it('a pack killed after some uploads, before pack.json, during deletions: readers see one whole pack, the next run finishes', async () => {
    const tree = tmp('kptree');
    const pack = tmp('kpack');
    const gens: Map<string, Buffer>[] = [];
    const next = async (h: number) => {
      await build(sc.after, tree, h);
      gens.push(treeFiles(tree));
      await packFromTree(tree, pack);
    };
    await next(sc.m - 6);
    await run(pack, 'kp');
    await next(sc.m - 3);
    let puts = 0;
    await killedPublish(pack, 'kp', (r) => r.method === 'PUT' && r.key.startsWith('kp/') && ++puts === 2);
    expect(await packReaderCheck('kp', gens)).toBe(0);
    await killedPublish(pack, 'kp', (r) => r.method === 'PUT' && r.key === `kp/${PACK_POINTER}`);
    expect(await packReaderCheck('kp', gens)).toBe(0);
    await run(pack, 'kp');
    expect(await packReaderCheck('kp', gens)).toBe(1);
    await next(sc.m);
    await killedPublish(pack, 'kp', (r) => r.method === 'DELETE');
    expect(await packReaderCheck('kp', gens)).toBe(2);
    await run(pack, 'kp');
    expect(await packReaderCheck('kp', gens)).toBe(2);
    const idx = [...(await bucketFiles(fx, 'kp')).keys()].filter((k) => k.endsWith('.idx'));
    expect(idx).toHaveLength(2);
  });
});
