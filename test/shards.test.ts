// Stages and shards: `snapshot index`, `snapshot build --shard i/N` (from the index, read-only)
// and `snapshot merge` give the snapshot a single `snapshot build` gives: a tree with the same
// files byte for byte, a pack with the same answer for every path and every conformance row.
// Shard builds run as child processes, two at a time on one index, which they leave untouched.
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { SITE_INFO_PATH, type SiteInfo } from '../src/contract/layout.js';
import { openSource } from '../src/source/index.js';
import { buildSnapshot } from '../src/site/build.js';
import { indexStage } from '../src/site/build/index-stage.js';
import { buildShard } from '../src/site/build/shard.js';
import { mergeShards } from '../src/site/merge.js';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { demoSource } from '../src/source/demo.js';
import { verifyPack } from '../src/verify/pack.js';
import { verifySnapshot } from '../src/verify/index.js';
import { shardOfPath } from '../src/contract/shard.js';
import { mergePacks } from '../src/pack/merge.js';
import { PackReader, answerBytes } from '../src/pack/reader.js';
import { PackWriter } from '../src/pack/writer.js';
import { buildTable, listFiles, namesOf } from './support/conformance-rows.js';
import { chainPath, mapLimit } from './support/helpers.js';
import { rawRequest, type RawResponse } from './support/http-raw.js';
import { tempDir } from './support/memory-builds.js';
import { expectPackAnswersTree, expectSameAnswers, manifestPaths } from './support/pack-compare.js';
import { describeShared } from './support/shared-data.js';
import { cli, cliError, cliOk, expectSameTree, fileMap, stamps } from './support/shard-runs.js';

const tmp = tempDir('snapshot-shards-');

const seen = (r: RawResponse) => ({ status: r.status, type: r.headers['content-type'] ?? '', cache: r.headers['cache-control'] ?? '', body: (r.headers['content-encoding'] === 'gzip' ? gunzipSync(r.body) : r.body).toString('latin1') });

describe('stages and shards: the demo chain', () => {
  const S = () => tmp('S');
  const shardArgs = (i: number, n: number, out: string, extra: string[] = []) => ['build', '--state', S(), '--shard', `${i}/${n}`, '--out', out, ...extra];

  beforeAll(async () => {
    const out = await cliOk(['index', '--state', S()]);
    expect(out).toMatch(new RegExp(`^indexed ${S()}: namecoin-regtest height 150 \\(tip [0-9a-f]{64}\\)`));
    await Promise.all([buildSnapshot({ source: demoSource(), outDir: tmp('single') }), buildSnapshot({ source: demoSource(), outDir: tmp('single-pack'), format: 'pack' })]);
  }, 240_000);

  it('4 tree shards built two at a time on one index, merged: the single build, file for file; the index untouched', async () => {
    const before = stamps(S());
    const outs = [0, 1, 2, 3].map((i) => tmp(`t4-${i}`));
    const reports = await mapLimit([0, 1, 2, 3], 2, (i) => cliOk(shardArgs(i, 4, outs[i]!)));
    reports.forEach((r, i) => expect(r).toContain(`built shard ${i}/4 `));
    // LMDB readers register in its lock file (the reader table); nothing else in S changes, nothing is added.
    const after = stamps(S());
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [p, v] of before) if (p !== 'lmdb/lock.mdb') expect(after.get(p), p).toBe(v);
    // Disjoint: each shard holds its own files only (and its manifest and _shard.json).
    const counts = outs.map((o) => fileMap(o).size - 2);
    const single = fileMap(tmp('single')).size;
    expect(counts.reduce((a, b) => a + b, 0)).toBe(single - 2); // the single build's manifest and nginx.conf are the merge's
    for (const c of counts) expect(c).toBeGreaterThan(single / 8);

    expect(await cliOk(['merge', '--out', tmp('t4-merged'), ...outs.reverse()])).toContain(`merged 4 tree shard(s) into ${tmp('t4-merged')}`);
    expectSameTree(tmp('t4-merged'), tmp('single'));
    const v = await verifySnapshot(tmp('t4-merged'));
    expect(v.ok, JSON.stringify(v).slice(0, 2000)).toBe(true);
  }, 300_000);

  it('1 and 3 tree shards, merged: the single build', async () => {
    for (const n of [1, 3]) {
      const outs = Array.from({ length: n }, (_, i) => tmp(`t${n}-${i}`));
      for (const [i, out] of outs.entries()) await buildShard({ source: demoSource(), indexDir: S(), shard: { index: i, count: n }, outDir: out });
      await mergeShards(tmp(`t${n}-merged`), outs);
      expectSameTree(tmp(`t${n}-merged`), tmp('single'));
    }
  }, 300_000);

  describe('4 pack shards, merged', () => {
    let merged: string;
    let servers: RunningServer[] = [];
    beforeAll(async () => {
      const outs = [0, 1, 2, 3].map((i) => tmp(`p4-${i}`));
      await mapLimit([0, 1, 2, 3], 2, (i) => cliOk(shardArgs(i, 4, outs[i]!, ['--format', 'pack'])));
      merged = tmp('p4-merged');
      await cliOk(['merge', '--out', merged, ...outs]);
    }, 300_000);
    afterAll(async () => {
      for (const s of servers) await s.close();
    });

    it('answers every path as the single build pack and its tree; verify finds it sound', async () => {
      // The single pack build's private tree; the txs' raw files it lists without them, from the tree build.
      const tree = tmp('single-pack.state', 'tree');
      await expectPackAnswersTree(merged, tree, undefined, tmp('single'));
      await expectSameAnswers(merged, tmp('single-pack'), manifestPaths(tree));
      const v = await verifyPack(merged);
      expect(v.ok, JSON.stringify(v).slice(0, 2000)).toBe(true);
      // The hosts' glue beside the pack, as a single pack build writes it.
      for (const glue of ['netlify.toml', '_netlify', '_pack-worker']) expect(existsSync(join(merged, glue)), glue).toBe(true);
    }, 240_000);

    it('serves every conformance row as the single build pack does', async () => {
      const single = tmp('single');
      const info = JSON.parse(readFileSync(join(single, SITE_INFO_PATH), 'utf8')) as SiteInfo;
      const rows = buildTable({ label: 'demo', dir: single, info, names: namesOf(listFiles(single)) });
      expect(rows.length).toBeGreaterThan(1000);
      servers = [await startServer({ dir: merged, port: 0, log: () => {} }), await startServer({ dir: tmp('single-pack'), port: 0, log: () => {} })];
      // One server at a time, a few requests at once: both run in this process, on a shared machine.
      const a = await mapLimit(rows, 4, (r) => rawRequest(servers[0]!.url, r.target));
      const b = await mapLimit(rows, 4, (r) => rawRequest(servers[1]!.url, r.target));
      rows.forEach((row, i) => expect(seen(a[i]!), row.target).toEqual(seen(b[i]!)));
    }, 240_000);
  });

  it('a shard built again gives the same bytes (tree and pack)', async () => {
    for (const [out, format] of [
      [tmp('t4-2'), 'tree'],
      [tmp('p4-2'), 'pack'],
    ] as const) {
      const before = fileMap(out);
      await buildShard({ source: demoSource(), indexDir: S(), shard: { index: 2, count: 4 }, outDir: out, format });
      const after = fileMap(out);
      expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
      for (const [p, b] of before) expect(after.get(p)!.equals(b), `${format} ${p}`).toBe(true);
    }
  }, 240_000);

  it('--shard auto takes the index from JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX or SLURM_ARRAY_TASK_ID (minus SLURM_ARRAY_TASK_MIN)', async () => {
    const cases: [Record<string, string>, number][] = [
      [{ JOB_COMPLETION_INDEX: '1' }, 1],
      [{ AWS_BATCH_JOB_ARRAY_INDEX: '3' }, 3],
      [{ SLURM_ARRAY_TASK_ID: '3', SLURM_ARRAY_TASK_MIN: '1' }, 2],
    ];
    await mapLimit(cases, 2, async ([env, want]) => {
      const out = tmp(`auto-${Object.keys(env)[0]}`);
      expect(await cliOk(['build', '--state', S(), '--shard', 'auto', '--shards', '4', '--out', out], env)).toContain(`built shard ${want}/4 `);
      expect(fileMap(out)).toEqual(fileMap(tmp(`t4-${want}`)));
    });
  }, 240_000);

  it('refuses a wrong shard, a missing index variable, an index at another height or none: exit 1, one line naming it', async () => {
    const out = tmp('refused');
    expect(await cliError(shardArgs(4, 4, out))).toBe('snapshot: --shard "4/4" is not i/N with 0 ≤ i < N (0-based), nor auto');
    expect(await cliError(['build', '--state', S(), '--shard', 'auto', '--shards', '4', '--out', out])).toContain('none of JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX, SLURM_ARRAY_TASK_ID is set');
    expect(await cliError(['build', '--state', S(), '--shard', 'auto', '--shards', '4', '--out', out], { SLURM_ARRAY_TASK_ID: '7' })).toContain('SLURM_ARRAY_TASK_ID=7 is not a shard index below --shards 4');
    expect(await cliError(shardArgs(0, 4, out, ['--height', '120']))).toBe(
      `snapshot: --state ${S()} holds an index at height 150, not 120; run snapshot index --state ${S()} --height 120 first`,
    );
    mkdirSync(tmp('empty'));
    expect(await cliError(['build', '--state', tmp('empty'), '--shard', '0/2', '--out', out])).toBe(`snapshot: --state ${tmp('empty')} holds no index; run snapshot index --state ${tmp('empty')} first`);
    expect(existsSync(out)).toBe(false);
  }, 240_000);

  it('merge refuses a missing or repeated shard, shards of another N, height or format: one line naming the dir', async () => {
    const t4 = [0, 1, 2, 3].map((i) => tmp(`t4-${i}`));
    const out = tmp('bad-merge');
    expect(await cliError(['merge', '--out', out, t4[0]!, t4[1]!, t4[3]!])).toBe(`snapshot: shard 2/4 is missing: the merge needs all 4 shards (given ${t4[0]}, ${t4[1]}, ${t4[3]})`);
    await expect(mergeShards(out, [t4[0]!, t4[1]!, t4[2]!, t4[3]!, t4[1]!])).rejects.toThrow(`${t4[1]} and ${t4[1]} are both shard 1/4: give each shard once`);
    await expect(mergeShards(out, [...t4.slice(0, 3), tmp('t3-0')])).rejects.toThrow(`${tmp('t3-0')} is a tree shard 0/3 of namecoin-regtest height 150`);
    await expect(mergeShards(out, [...t4.slice(0, 3), tmp('p4-3')])).rejects.toThrow(`${tmp('p4-3')} is a pack shard 3/4`);
    // An index at another height: its shard is of another snapshot.
    cpSync(S(), tmp('S120'), { recursive: true });
    await indexStage({ source: demoSource(), stateDir: tmp('S120'), height: 120 });
    await buildShard({ source: demoSource(), indexDir: tmp('S120'), shard: { index: 3, count: 4 }, outDir: tmp('h120-3') });
    await expect(mergeShards(out, [...t4.slice(0, 3), tmp('h120-3')])).rejects.toThrow(`${tmp('h120-3')} is a tree shard 3/4 of namecoin-regtest height 120`);
    expect(existsSync(out)).toBe(false);
    // Lowered to 120 in place (incremental, blocks undone), the index gives the shards of that snapshot.
    const fresh = tmp('single-120');
    await buildSnapshot({ source: demoSource(), outDir: fresh, height: 120 });
    const outs = [0, 1, 2].map((i) => tmp(`h120-${i}`));
    for (const [i, o] of outs.entries()) await buildShard({ source: demoSource(), indexDir: tmp('S120'), shard: { index: i, count: 4 }, outDir: o });
    await mergeShards(tmp('merged-120'), [...outs, tmp('h120-3')]);
    expectSameTree(tmp('merged-120'), fresh);
  }, 300_000);
});

describeShared('chaindata/nbitcoin')('stages and shards: Bitcoin mainnet 0–599', () => {
  const source = () => openSource(`blocks:${chainPath('nbitcoin')}`, NETWORKS.bitcoin);

  it('index, 4 shards and merge give the single build, tree file for file and pack answer for answer', async () => {
    const t0 = performance.now();
    const ix = await indexStage({ source, stateDir: tmp('btc-S'), height: 599 });
    expect(ix.height).toBe(599);
    const times: number[] = [performance.now() - t0];
    for (const format of ['tree', 'pack'] as const) {
      const t1 = performance.now();
      const outs = [0, 1, 2, 3].map((i) => tmp(`btc-${format}-${i}`));
      for (const [i, out] of outs.entries()) await buildShard({ source, indexDir: tmp('btc-S'), shard: { index: i, count: 4 }, outDir: out, format });
      await mergeShards(tmp(`btc-${format}-merged`), outs);
      times.push(performance.now() - t1);
    }
    const t2 = performance.now();
    await buildSnapshot({ source, outDir: tmp('btc-single'), height: 599 });
    times.push(performance.now() - t2);
    await buildSnapshot({ source, outDir: tmp('btc-single-pack'), height: 599, format: 'pack' });
    expectSameTree(tmp('btc-tree-merged'), tmp('btc-single'));
    const tree = tmp('btc-single-pack.state', 'tree');
    await expectPackAnswersTree(tmp('btc-pack-merged'), tree, undefined, tmp('btc-single'));
    await expectSameAnswers(tmp('btc-pack-merged'), tmp('btc-single-pack'), manifestPaths(tree));
    console.log(`Bitcoin 0–599: index ${(times[0]! / 1000).toFixed(1)}s; 4 tree shards one after another + merge ${(times[1]! / 1000).toFixed(1)}s; 4 pack shards + merge ${(times[2]! / 1000).toFixed(1)}s; one tree build ${(times[3]! / 1000).toFixed(1)}s`);
  }, 600_000);
});

it('cli: the stage commands are listed', async () => {
  const r = await cli(['--help']);
  expect(r.stdout).toMatch(/snapshot index\s/);
  expect(r.stdout).toMatch(/snapshot merge \[shards\.\.\]/);
});

describe('merge of shard packs: records of every kind', () => {
  it('recipes (kind 2) answer as before, their part numbers shifted; stored, hex and slices too; several parts a shard', async () => {
    const n = 3;
    const files = Array.from({ length: 300 }, (_, i) => [`d/${i}.json`, Buffer.from(JSON.stringify({ i, pad: 'x'.repeat(40 + (i % 7) * 30) }))] as const);
    const want = new Map<string, Buffer>();
    const outs = Array.from({ length: n }, (_, s) => tmp(`recipes-${s}`));
    for (const [s, dir] of outs.entries()) {
      // Small parts: a recipe's ranges point into parts other than its own.
      const w = new PackWriter(dir, { maxPartBytes: 2048 });
      const mine = files.filter(([p]) => shardOfPath(p, n) === s);
      const placed = mine.map(([p, b]) => ({ p, b, at: w.add(p, b) }));
      for (const [k, { p, b, at }] of placed.entries()) {
        const raw = Buffer.from(`raw ${p}`);
        const bin = `b/${k}-${s}.bin`;
        if (shardOfPath(bin, n) === s) {
          const blob = w.add(bin, raw).blob;
          want.set(bin, raw);
          const hex = `b/${k}-${s}.hex`;
          if (shardOfPath(hex, n) === s) {
            w.addHex(hex, raw);
            want.set(hex, Buffer.from(raw.toString('hex')));
          }
          const slice = `b/${k}-${s}.slice`;
          if (shardOfPath(slice, n) === s) {
            w.addSlice(slice, blob, 4, { length: raw.length - 4, crc: crc32(raw.subarray(4)) });
            want.set(slice, raw.subarray(4));
          }
        }
        const r = `r/${p}`;
        if (shardOfPath(r, n) !== s) continue;
        const other = placed[(k * 7 + 3) % placed.length]!;
        w.addRecipe(r, [
          { type: 'literal', bytes: Buffer.from('[') },
          { type: 'range', blob: at.blob, start: 0, length: b.length },
          { type: 'literal', bytes: Buffer.from(',') },
          { type: 'range', blob: other.at.blob, start: 2, length: other.b.length - 4 },
          { type: 'literal', bytes: Buffer.from(']') },
        ]);
        want.set(r, Buffer.concat([Buffer.from('['), b, Buffer.from(','), other.b.subarray(2, other.b.length - 2), Buffer.from(']')]));
      }
      for (const { p, b } of placed) want.set(p, b);
      w.add('_manifest.json', Buffer.from(`shard ${s}\n`));
      w.finish();
      const check = await PackReader.open(dir);
      expect(check.parts.length).toBeGreaterThan(1);
      await check.close();
    }
    const merged = tmp('recipes-merged');
    const summary = await mergePacks(outs, merged, { drop: ['_manifest.json'], add: new Map([['_manifest.json', Buffer.from('merged\n')]]) });
    want.set('_manifest.json', Buffer.from('merged\n'));
    expect(summary.entries).toBe(want.size);
    const r = await PackReader.open(merged);
    try {
      expect(await r.verify()).toEqual([]);
      for (const [p, b] of want) expect(Buffer.from(await answerBytes((await r.get(p))!)).toString(), p).toBe(b.toString());
    } finally {
      await r.close();
    }
  });
});
