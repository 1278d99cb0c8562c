import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compareKeys } from '../src/contract/pack-format.js';
import { parseShard, shardOfKey, shardOfPath } from '../src/contract/shard.js';

const key = (hex: string) => Uint8Array.from(Buffer.from(hex.padEnd(32, '0'), 'hex'));

describe('shard of a key', () => {
  it('is floor(k × N / 2^64) of the top 64 bits, at the edges of the ranges', () => {
    expect(shardOfKey(key('00'), 4)).toBe(0);
    expect(shardOfKey(key('3fffffffffffffff'), 4)).toBe(0);
    expect(shardOfKey(key('4000000000000000'), 4)).toBe(1);
    expect(shardOfKey(key('bfffffffffffffffff'), 4)).toBe(2);
    expect(shardOfKey(key('c000000000000000'), 4)).toBe(3);
    expect(shardOfKey(key('ffffffffffffffffffff'), 4)).toBe(3);
    expect(shardOfKey(key('ffffffffffffffff'), 1)).toBe(0);
    // 2^64 / 3 = 0x5555555555555555.55…: the first key of shard 1 is …56.
    expect(shardOfKey(key('5555555555555555'), 3)).toBe(0);
    expect(shardOfKey(key('5555555555555556'), 3)).toBe(1);
    expect(shardOfKey(key('aaaaaaaaaaaaaaaa'), 3)).toBe(1);
    expect(shardOfKey(key('aaaaaaaaaaaaaaab'), 3)).toBe(2);
  });

  it('cuts the key order into contiguous ranges: every key of shard i sorts before every key of shard i+1', () => {
    for (const n of [1, 2, 3, 4, 7, 64]) {
      const keys = Array.from({ length: 4000 }, () => Uint8Array.from(randomBytes(16))).sort(compareKeys);
      const shards = keys.map((k) => shardOfKey(k, n));
      for (let i = 1; i < shards.length; i++) expect(shards[i]).toBeGreaterThanOrEqual(shards[i - 1]!);
      expect(Math.max(...shards)).toBeLessThan(n);
      // Every shard gets about its share.
      for (let s = 0; s < n && n <= 4; s++) expect(shards.filter((x) => x === s).length).toBeGreaterThan(4000 / n / 2);
    }
  });

  it('of a path is the shard of the first 128 bits of the sha256 of its UTF-8 bytes', () => {
    for (const path of ['_manifest.json', 'tx/00ab.json', 'stats.json', 'v/Ab/name/%C3%A9.json']) {
      const top = createHash('sha256').update(path, 'utf8').digest().readBigUInt64BE(0);
      expect(shardOfPath(path, 5)).toBe(Number((top * 5n) >> 64n));
    }
  });
});

describe('--shard', () => {
  it('parses i/N, 0-based', () => {
    expect(parseShard('0/1', undefined, {})).toEqual({ index: 0, count: 1 });
    expect(parseShard('3/4', undefined, {})).toEqual({ index: 3, count: 4 });
    expect(parseShard('2/4', 4, {})).toEqual({ index: 2, count: 4 });
  });

  it('refuses a wrong spec naming it', () => {
    for (const bad of ['4/4', '1/0', '-1/4', '1', 'a/b', '1/4/2', '01/4', ' 1/4']) expect(() => parseShard(bad, undefined, {})).toThrow(`--shard "${bad}" is not i/N`);
    expect(() => parseShard('1/4', 3, {})).toThrow('--shard 1/4 and --shards 3 disagree');
  });

  it('auto: the index from JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX or SLURM_ARRAY_TASK_ID, the count from --shards', () => {
    expect(parseShard('auto', 4, { JOB_COMPLETION_INDEX: '2' })).toEqual({ index: 2, count: 4 });
    expect(parseShard('auto', 4, { AWS_BATCH_JOB_ARRAY_INDEX: '3' })).toEqual({ index: 3, count: 4 });
    expect(parseShard('auto', 4, { SLURM_ARRAY_TASK_ID: '1' })).toEqual({ index: 1, count: 4 });
    expect(parseShard('auto', 4, { SLURM_ARRAY_TASK_ID: '4', SLURM_ARRAY_TASK_MIN: '1' })).toEqual({ index: 3, count: 4 });
    // The first one set wins (Kubernetes, then AWS Batch, then Slurm).
    expect(parseShard('auto', 4, { SLURM_ARRAY_TASK_ID: '3', JOB_COMPLETION_INDEX: '0' })).toEqual({ index: 0, count: 4 });
    expect(parseShard('auto', 4, { AWS_BATCH_JOB_ARRAY_INDEX: '1', SLURM_ARRAY_TASK_ID: '3' })).toEqual({ index: 1, count: 4 });
  });

  it('auto: refuses a missing --shards, no variable, or an index not below N, naming the variable', () => {
    expect(() => parseShard('auto', undefined, { JOB_COMPLETION_INDEX: '0' })).toThrow('--shard auto needs --shards N');
    expect(() => parseShard('auto', 4, {})).toThrow('none of JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX, SLURM_ARRAY_TASK_ID is set');
    expect(() => parseShard('auto', 4, { JOB_COMPLETION_INDEX: '4' })).toThrow('JOB_COMPLETION_INDEX=4 is not a shard index below --shards 4');
    expect(() => parseShard('auto', 4, { AWS_BATCH_JOB_ARRAY_INDEX: 'x' })).toThrow('AWS_BATCH_JOB_ARRAY_INDEX=x is not a shard index');
    expect(() => parseShard('auto', 4, { SLURM_ARRAY_TASK_ID: '5', SLURM_ARRAY_TASK_MIN: '1' })).toThrow('SLURM_ARRAY_TASK_ID=5 (SLURM_ARRAY_TASK_MIN=1) is not a shard index below --shards 4');
    expect(() => parseShard('auto', 0, { JOB_COMPLETION_INDEX: '0' })).toThrow('--shards 0 is not a whole number');
  });
});
