/**
 * `snapshot merge --out OUT SHARD…`: the shard outputs of one snapshot (site/build/shard.ts) joined
 * into one ordinary snapshot, equal to the one `snapshot build` makes (docs/operations.md,
 * "Stages and shards"). The shards are checked first: all trees or all packs, one snapshot
 * (network, height, tip, options), each of 0…N−1 exactly once. A tree is the union of the shards'
 * files plus the files that name the output's own directory (nginx.conf) and one merged
 * `_manifest.json` (publish/merge-tree.ts); a pack is the shards' records in one index over
 * their parts (pack/merge.ts), with the merged manifest and the hosts' glue beside it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MANIFEST_PATH, SITE_INFO_PATH, type SiteInfo } from '../contract/layout.js';
import { PACK_POINTER } from '../contract/pack-format.js';
import { SHARD_INFO_PATH, decodeShardInfo, shardOfKey, shardOfPath, type ShardInfo } from '../contract/shard.js';
import { hostFiles, type HostName } from '../hosts/index.js';
import { collectGarbage, currentIndex } from '../pack/dir.js';
import { mergePacks } from '../pack/merge.js';
import { PackReader, answerBytes } from '../pack/reader.js';
import { manifestLines, mergeManifests, mergeTrees } from '../publish/merge-tree.js';
import { acquireLock, checkTargets, prepareStateDir, publishedDir } from '../publish/publish.js';
import { refuse } from '../publish/releases.js';
import { checkPackDir, packJournal, packTargets, writePackGlueOf } from './build/pack.js';

interface Shard {
  dir: string;
  /** A tree's published directory, or the pack directory. */
  root: string;
  info: ShardInfo;
}

export interface MergeReport {
  out: string;
  output: 'tree' | 'pack';
  shards: number;
  network: string;
  height: number;
  tip: string;
  /** Files of the merged snapshot (manifest included). */
  files: number;
  /** A pack: its index, and the shards' parts linked into it. */
  index?: string;
  linked?: number;
}

async function packText(dir: string, path: string): Promise<string | undefined> {
  const r = await PackReader.open(dir);
  try {
    const a = await r.get(path);
    return a && Buffer.from(await answerBytes(a)).toString('utf8');
  } finally {
    await r.close();
  }
}

async function readShard(given: string): Promise<Shard> {
  const dir = resolve(given);
  if (!existsSync(dir)) refuse(`shard ${dir}: no such directory`);
  const what = `${dir}: not a shard output (built with snapshot build --shard i/N)`;
  if (existsSync(join(dir, PACK_POINTER))) {
    const text = await packText(dir, SHARD_INFO_PATH);
    if (text === undefined) refuse(`${what}: its pack has no ${SHARD_INFO_PATH}`);
    return { dir, root: dir, info: decodeShardInfo(text, `${dir} (${SHARD_INFO_PATH})`) };
  }
  const root = publishedDir(dir);
  if (root === undefined || !existsSync(join(root, MANIFEST_PATH))) refuse(`${what}: no ${PACK_POINTER} and no ${MANIFEST_PATH}`);
  const file = join(root, SHARD_INFO_PATH);
  if (!existsSync(file)) refuse(`${what}: no ${SHARD_INFO_PATH}`);
  return { dir, root, info: decodeShardInfo(readFileSync(file, 'utf8'), file) };
}

const describe = (i: ShardInfo) => `${i.output} shard ${i.shard}/${i.shards} of ${i.network} height ${i.height} (tip ${i.tip})`;

/** The shards in shard order, checked to be all of one snapshot, each once. */
function checkShards(shards: Shard[]): Shard[] {
  const first = shards[0]!;
  for (const s of shards) {
    const a = first.info;
    const b = s.info;
    if (b.output !== a.output || b.shards !== a.shards || b.network !== a.network || b.height !== a.height || b.tip !== a.tip) {
      refuse(`${s.dir} is a ${describe(b)}, but ${first.dir} is a ${describe(a)}: merge the shards of one snapshot`);
    }
    if (JSON.stringify(b.options) !== JSON.stringify(a.options)) {
      refuse(`${s.dir} was built with ${JSON.stringify(b.options)}, ${first.dir} with ${JSON.stringify(a.options)}: build every shard with the same options`);
    }
  }
  const n = first.info.shards;
  const byIndex = new Map<number, Shard>();
  for (const s of shards) {
    const other = byIndex.get(s.info.shard);
    if (other) refuse(`${other.dir} and ${s.dir} are both shard ${s.info.shard}/${n}: give each shard once`);
    byIndex.set(s.info.shard, s);
  }
  const missing = Array.from({ length: n }, (_, i) => i).filter((i) => !byIndex.has(i));
  if (missing.length > 0) refuse(`shard ${missing.map((i) => `${i}/${n}`).join(', ')} ${missing.length > 1 ? 'are' : 'is'} missing: the merge needs all ${n} shards (given ${shards.map((s) => s.dir).join(', ')})`);
  return Array.from({ length: n }, (_, i) => byIndex.get(i)!);
}

export async function mergeShards(out: string, given: readonly string[]): Promise<MergeReport> {
  if (given.length === 0) refuse('name the shard outputs to merge: snapshot merge --out OUT SHARD…');
  const shards = checkShards(await Promise.all(given.map(readShard)));
  const info = shards[0]!.info;
  const n = info.shards;
  const inRange = (s: Shard) => `${s.dir}: it holds a file outside shard ${s.info.shard}/${n}`;
  const report = { output: info.output, shards: n, network: info.network, height: info.height, tip: info.tip };
  if (info.output === 'tree') {
    const { outDir } = checkTargets(out, undefined);
    const extra = new Map<string, string>();
    if (info.options.hosts.includes('nginx')) {
      const holder = shards[shardOfPath(SITE_INFO_PATH, n)]!;
      const site = JSON.parse(readFileSync(join(holder.root, SITE_INFO_PATH), 'utf8')) as SiteInfo;
      const files = await hostFiles(outDir, site, { hosts: ['nginx'], nginxUpstream: info.options.nginxUpstream });
      extra.set('nginx.conf', files.get('nginx.conf')!);
    }
    const check = (path: string, from: number) => {
      if (shardOfPath(path, n) !== from) refuse(`${inRange(shards[from]!)} (${path})`);
    };
    const tree = shards.map((s) => ({ dir: s.root, name: s.dir }));
    const merged = await mergeTrees(tree, outDir, new Set([SHARD_INFO_PATH]), extra, check);
    return { ...report, out: merged.outDir, files: merged.files };
  }

  const pack = packTargets({ outDir: out, stateDir: undefined, force: false });
  prepareStateDir(pack.stateDir);
  const lock = acquireLock(pack.packDir, pack.stateDir);
  try {
    const manifest = await mergedPackManifest(shards);
    checkPackDir(pack.packDir, pack.stateDir, false); // nothing foreign appeared meanwhile
    const previous = existsSync(join(pack.packDir, PACK_POINTER)) ? currentIndex(pack.packDir) : undefined;
    const journal = packJournal(pack.stateDir);
    const summary = await mergePacks(
      shards.map((s) => s.dir),
      pack.packDir,
      {
        drop: [MANIFEST_PATH, SHARD_INFO_PATH],
        add: new Map([[MANIFEST_PATH, manifest.bytes]]),
        check: (key, from) => {
          if (shardOfKey(key, n) !== from) refuse(inRange(shards[from]!));
        },
        onCreate: (name) => journal.add(name),
      },
    );
    collectGarbage(pack.packDir, [summary.index, ...(previous !== undefined && previous !== summary.index ? [previous] : [])], journal.names());
    journal.clear();
    const site = JSON.parse((await packText(pack.packDir, SITE_INFO_PATH)) ?? refuse(`the merged pack has no ${SITE_INFO_PATH}`)) as SiteInfo;
    await writePackGlueOf(pack, site, info.options.hosts as HostName[]);
    return { ...report, out: pack.packDir, files: manifest.lines + 1, index: summary.index, linked: summary.linked };
  } finally {
    lock.release();
  }
}

/** The shard packs' manifests merged (their `_shard.json` left out). */
async function mergedPackManifest(shards: readonly Shard[]): Promise<{ bytes: Uint8Array; lines: number }> {
  const sources = [];
  for (const s of shards) {
    const text = (await packText(s.dir, MANIFEST_PATH)) ?? refuse(`${s.dir}: its pack has no ${MANIFEST_PATH}`);
    const lines = text.split('\n');
    if (lines.pop() !== '') refuse(`${s.dir}: its ${MANIFEST_PATH} does not end with a newline`);
    sources.push({ lines: manifestLines(toAsync(lines), `${s.dir} (${MANIFEST_PATH})`), name: s.dir });
  }
  const out: string[] = [];
  for await (const l of mergeManifests(sources, new Set([SHARD_INFO_PATH, MANIFEST_PATH]))) out.push(`${l.sha256} ${l.size} ${l.path}\n`);
  return { bytes: Buffer.from(out.join(''), 'utf8'), lines: out.length };
}

async function* toAsync<T>(items: Iterable<T>): AsyncGenerator<T> {
  yield* items;
}
