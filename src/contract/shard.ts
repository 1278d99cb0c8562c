/**
 * Shards of one snapshot (docs/operations.md, "Stages and shards"): shard i of N holds the files
 * whose pack key (the first 128 bits of sha256 of the tree path, pack-bytes.ts packKey) has top
 * 64 bits k with floor(k × N / 2^64) = i. The shards are contiguous ranges of the pack
 * directory's key order, so shard i's keys all sort before shard i+1's and shard packs merge by
 * concatenating their records.
 */
import { packKey } from './pack-bytes.js';

export interface ShardSpec {
  /** 0-based: 0 ≤ index < count. */
  index: number;
  count: number;
}

/** Written by each shard build into its own output (not part of the merged snapshot). */
export const SHARD_INFO_PATH = '_shard.json';
export const SHARD_FORMAT_NAME = 'chain-snapshot-shard';

/** Which scheduler variables `--shard auto` reads, first set wins. */
export const SHARD_ENV_VARS = ['JOB_COMPLETION_INDEX', 'AWS_BATCH_JOB_ARRAY_INDEX', 'SLURM_ARRAY_TASK_ID'] as const;
/** Subtracted from SLURM_ARRAY_TASK_ID when set (an array `--array=1-4` numbers its tasks from 1). */
export const SLURM_MIN_VAR = 'SLURM_ARRAY_TASK_MIN';

const WHOLE = /^(0|[1-9][0-9]{0,8})$/;

function whole(s: string | undefined): number | undefined {
  return s !== undefined && WHOLE.test(s.trim()) ? Number(s.trim()) : undefined;
}

/**
 * `--shard i/N`, or `--shard auto` with `--shards N` and the index from the scheduler's
 * environment (SHARD_ENV_VARS). Throws a one-line error naming the option or variable and its value.
 */
export function parseShard(spec: string, shards: number | undefined, env: Readonly<Record<string, string | undefined>>): ShardSpec {
  if (spec === 'auto') {
    if (shards === undefined) throw new Error('--shard auto needs --shards N (the number of shards)');
    if (!Number.isInteger(shards) || shards < 1) throw new Error(`--shards ${shards} is not a whole number ≥ 1`);
    const name = SHARD_ENV_VARS.find((v) => env[v] !== undefined && env[v] !== '');
    if (name === undefined) throw new Error(`--shard auto: none of ${SHARD_ENV_VARS.join(', ')} is set; run it as an array job, or give --shard i/N`);
    const raw = env[name]!;
    let index = whole(raw);
    let what = `${name}=${raw}`;
    if (index !== undefined && name === 'SLURM_ARRAY_TASK_ID' && env[SLURM_MIN_VAR] !== undefined && env[SLURM_MIN_VAR] !== '') {
      const min = whole(env[SLURM_MIN_VAR]);
      what += ` (${SLURM_MIN_VAR}=${env[SLURM_MIN_VAR]})`;
      index = min === undefined || min > index ? undefined : index - min;
    }
    if (index === undefined || index >= shards) throw new Error(`--shard auto: ${what} is not a shard index below --shards ${shards}`);
    return { index, count: shards };
  }
  const m = /^(\d+)\/(\d+)$/.exec(spec);
  const index = whole(m?.[1]);
  const count = whole(m?.[2]);
  if (index === undefined || count === undefined || count < 1 || index >= count) {
    throw new Error(`--shard ${JSON.stringify(spec)} is not i/N with 0 ≤ i < N (0-based), nor auto`);
  }
  if (shards !== undefined && shards !== count) throw new Error(`--shard ${spec} and --shards ${shards} disagree`);
  return { index, count };
}

/** The shard (of `count`) of a pack key: floor(k × count / 2^64), k its top 64 bits. */
export function shardOfKey(key: Uint8Array, count: number): number {
  if (count === 1) return 0;
  let k = 0n;
  for (let i = 0; i < 8; i++) k = (k << 8n) | BigInt(key[i]!);
  return Number((k * BigInt(count)) >> 64n);
}

/** The shard (of `count`) of a tree path. */
export function shardOfPath(path: string, count: number): number {
  return count === 1 ? 0 : shardOfKey(packKey(path), count);
}

/** What `_shard.json` says: which shard of which snapshot, built with which options. */
export interface ShardInfo {
  format: typeof SHARD_FORMAT_NAME;
  version: 1;
  shard: number;
  shards: number;
  /** tree or pack. */
  output: 'tree' | 'pack';
  network: string;
  height: number;
  tip: string;
  /** The build options the documents depend on (equal across the shards of one snapshot). */
  options: { pretty: boolean; cap: number; hosts: string[]; nginxUpstream?: string };
}

export function encodeShardInfo(info: ShardInfo): string {
  return JSON.stringify(info) + '\n';
}

/** Parses `_shard.json` read from `where`; throws naming it when it is not one. */
export function decodeShardInfo(text: string, where: string): ShardInfo {
  let o: Partial<ShardInfo>;
  try {
    o = JSON.parse(text) as Partial<ShardInfo>;
  } catch (e) {
    throw new Error(`${where}: not JSON (${(e as Error).message})`, { cause: e });
  }
  const ok =
    o?.format === SHARD_FORMAT_NAME &&
    o.version === 1 &&
    Number.isInteger(o.shard) &&
    Number.isInteger(o.shards) &&
    o.shards! >= 1 &&
    o.shard! >= 0 &&
    o.shard! < o.shards! &&
    (o.output === 'tree' || o.output === 'pack') &&
    typeof o.network === 'string' &&
    Number.isInteger(o.height) &&
    typeof o.tip === 'string' &&
    typeof o.options === 'object';
  if (!ok) throw new Error(`${where}: not a ${SHARD_FORMAT_NAME} description of version 1`);
  return o as ShardInfo;
}

/** The host file that names the tree's absolute directory: written by the merge, not by a shard. */
export const SHARD_SKIPPED_PATHS: readonly string[] = ['nginx.conf'];

/** The paths a shard build writes: its shard's, and its `_shard.json`. */
export function shardKeeps(shard: ShardSpec): (rel: string) => boolean {
  return (rel) => rel === SHARD_INFO_PATH || (!SHARD_SKIPPED_PATHS.includes(rel) && shardOfPath(rel, shard.count) === shard.index);
}
