// The staged build on a real Slurm cluster (a single node the test starts, test/support/slurm.ts):
// the shards of the demo chain as an array job (sbatch --array, examples/slurm/snapshot.sbatch),
// then the whole pipeline through examples/slurm/submit.sh; the merged pack must answer every
// path as a single-machine `snapshot build --format pack` does. Without Slurm here the tests skip
// with the reason; with CI=true they fail instead.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { answerBytes, PackReader } from '../src/pack/reader.js';
import { nodeArgs, REPO } from './support/helpers.js';
import { expectSameAnswers } from './support/pack-compare.js';
import { startSlurm, type SlurmCluster, type SlurmTask } from './support/slurm.js';

const SHARDS = 4;
const CLI = [process.execPath, ...nodeArgs('src/cli.ts')];

let cluster: SlurmCluster | undefined;
let reason: string | undefined;

beforeAll(async () => {
  ({ cluster, reason } = await startSlurm());
}, 90_000);
afterAll(async () => {
  await cluster?.stop();
});

/** The cluster, or the test skips naming why Slurm cannot start here (startSlurm throws on CI). */
function need(ctx: TestContext): SlurmCluster {
  if (!cluster) ctx.skip(`Slurm cannot start here: ${reason}`);
  return cluster!;
}

/** Runs the CLI; fails naming the command and its stderr unless it exits 0. */
function snapshot(args: string[], env?: NodeJS.ProcessEnv): string {
  const r = spawnSync(CLI[0]!, [...CLI.slice(1), ...args], { encoding: 'utf8', cwd: REPO, env });
  if (r.status !== 0) throw new Error(`snapshot ${args.join(' ')}: exit ${r.status ?? r.signal}\n${r.stderr}`);
  return r.stdout;
}

/** Every task ended COMPLETED with exit 0:0; otherwise fails with the task's log. */
function expectAllDone(tasks: SlurmTask[], count: number, log: (t: SlurmTask) => string): void {
  for (const t of tasks) {
    if (t.state !== 'COMPLETED' || t.exitCode !== '0:0') {
      const text = existsSync(log(t)) ? readFileSync(log(t), 'utf8') : `(no log ${log(t)})`;
      expect.fail(`task ${t.task ?? '-'}: ${t.state} exit ${t.exitCode}\n${text}`);
    }
  }
  expect(tasks.length).toBe(count);
}

const jobId = (out: string) => out.trim().split(';')[0]!;

/** The single-machine pack of the demo chain (the reference), built once. */
let single: string | undefined;
function singlePack(c: SlurmCluster): string {
  single ??= (() => {
    const out = join(c.dir, 'single');
    snapshot(['build', '--format', 'pack', '--out', out]);
    return out;
  })();
  return single;
}

/** The merged pack answers every path of the single pack's manifest (and the manifest) with its bytes. */
async function expectSameAsSingle(merged: string, reference: string): Promise<void> {
  const r = await PackReader.open(reference);
  let paths: string[];
  try {
    const manifest = Buffer.from(await answerBytes((await r.get(MANIFEST_PATH))!)).toString('utf8');
    paths = manifest.trim().split('\n').map((l) => l.split(' ')[2]!);
  } finally {
    await r.close();
  }
  expect(paths.length).toBeGreaterThan(100);
  await expectSameAnswers(merged, reference, [...paths, MANIFEST_PATH]);
}

describe('Slurm: a single-node cluster started by the test', () => {
  it('runs an array job: 4 tasks, each with its SLURM_ARRAY_TASK_ID', async (ctx) => {
    const c = need(ctx);
    const dir = join(c.dir, 'trivial');
    mkdirSync(dir);
    const id = jobId(c.run('sbatch', ['--parsable', '--array=0-3', `--chdir=${dir}`, `--output=${dir}/%A_%a.log`, '--wrap', 'echo $SLURM_ARRAY_TASK_ID > out.$SLURM_ARRAY_TASK_ID']));
    const tasks = await c.waitJob(id, 60_000);
    expectAllDone(tasks, 4, (t) => join(dir, `${id}_${t.task}.log`));
    expect(tasks.map((t) => t.task)).toEqual([0, 1, 2, 3]);
    expect(readdirSync(dir).filter((f) => f.startsWith('out.')).sort()).toEqual(['out.0', 'out.1', 'out.2', 'out.3']);
    for (const i of [0, 1, 2, 3]) expect(readFileSync(join(dir, `out.${i}`), 'utf8')).toBe(`${i}\n`);
  }, 120_000);

  it("reports a failed task's state and exit code (the checks above can fail)", async (ctx) => {
    const c = need(ctx);
    const id = jobId(c.run('sbatch', ['--parsable', '--array=0-1', `--chdir=${c.dir}`, '--output=/dev/null', '--wrap', 'exit $((SLURM_ARRAY_TASK_ID * 3))']));
    const tasks = await c.waitJob(id, 60_000);
    expect(tasks.map((t) => [t.task, t.state, t.exitCode])).toEqual([
      [0, 'COMPLETED', '0:0'],
      [1, 'FAILED', '3:0'],
    ]);
  }, 120_000);
});

describe('Slurm: examples/slurm/submit.sh with a stand-in for the CLI that records its calls', () => {
  /** Runs submit.sh with SNAPSHOT_CMD = a script that logs `<job name> <task id> <args>` and fails on `fail`. */
  async function submitWithStub(c: SlurmCluster, name: string, fail: string) {
    const work = join(c.dir, name);
    mkdirSync(work);
    const stub = join(work, 'stub.sh');
    writeFileSync(stub, `#!/bin/bash\necho "$SLURM_JOB_NAME \${SLURM_ARRAY_TASK_ID:--} $*" >> ${join(work, 'calls')}\n[ "$1" != ${fail} ]\n`, { mode: 0o755 });
    const env = { ...c.env, SNAPSHOT_WORK: work, SNAPSHOT_CMD: stub, SNAPSHOT_PUBLISH_TO: 's3://bucket/prefix' };
    const [index, shards, merge] = c.run('bash', [join(REPO, 'examples', 'slurm', 'submit.sh')], { env }).trim().split('\n');
    const states = async (id: string, ms = 120_000) => (await c.waitJob(id, ms)).map((t) => `${t.task ?? '-'} ${t.state} ${t.exitCode}`);
    const ended = { index: await states(index!), shards: await states(shards!, 90_000), merge: await states(merge!, 60_000) };
    return { work, ended, calls: () => readFileSync(join(work, 'calls'), 'utf8').trim().split('\n') };
  }

  it('runs index, then the 4 shards (each its own task id and --out), then merge of all 4, verify and publish', async (ctx) => {
    const c = need(ctx);
    const { work, ended, calls } = await submitWithStub(c, 'stub-ok', 'never');
    expect(ended).toEqual({ index: ['- COMPLETED 0:0'], shards: [0, 1, 2, 3].map((i) => `${i} COMPLETED 0:0`), merge: ['- COMPLETED 0:0'] });
    const lines = calls();
    expect(lines[0]).toBe(`snapshot-index - index --state ${work}/state`);
    expect(lines.slice(1, 5).sort()).toEqual([0, 1, 2, 3].map((i) => `snapshot-shard ${i} build --state ${work}/state --shard auto --shards 4 --format pack --out ${work}/shards/${i}`));
    expect(lines.slice(5)).toEqual([
      `snapshot-merge - merge --out ${work}/out ${[0, 1, 2, 3].map((i) => `${work}/shards/${i}`).join(' ')}`,
      `snapshot-merge - verify --dir ${work}/out`,
      `snapshot-merge - publish --dir ${work}/out --to s3://bucket/prefix`,
    ]);
  }, 300_000);

  it('a failed index cancels the shards and the merge: nothing after it runs', async (ctx) => {
    const c = need(ctx);
    const { work, ended, calls } = await submitWithStub(c, 'stub-fail', 'index');
    expect(ended.index).toEqual(['- FAILED 1:0']);
    expect([...ended.shards, ...ended.merge].every((s) => / CANCELLED /.test(s)), JSON.stringify(ended)).toBe(true);
    expect(calls()).toEqual([`snapshot-index - index --state ${work}/state`]);
  }, 300_000);
});

describe('Slurm: the staged build of the demo chain', () => {
  // The jobs run the CLI the tests run (compiled once per test run), as SNAPSHOT_CMD.
  const jobEnv = (c: SlurmCluster, work: string): NodeJS.ProcessEnv => ({ ...c.env, SNAPSHOT_WORK: work, SNAPSHOT_CMD: CLI.join(' ') });

  it('index here, the shards as sbatch --array=0-3 (examples/slurm/snapshot.sbatch), merge here: the merged pack answers as a single build', async (ctx) => {
    const c = need(ctx);
    const work = join(c.dir, 'direct');
    mkdirSync(join(work, 'logs'), { recursive: true });
    snapshot(['index', '--state', join(work, 'state')]);
    const script = join(REPO, 'examples', 'slurm', 'snapshot.sbatch');
    const id = jobId(c.run('sbatch', ['--parsable', `--chdir=${work}`, `--output=${work}/logs/%A_%a.out`, script], { env: jobEnv(c, work) }));
    const tasks = await c.waitJob(id, 240_000);
    expectAllDone(tasks, SHARDS, (t) => join(work, 'logs', `${id}_${t.task}.out`));
    expect(tasks.map((t) => t.task)).toEqual([0, 1, 2, 3]);
    const shardDirs = tasks.map((t) => join(work, 'shards', String(t.task)));
    snapshot(['merge', '--out', join(work, 'out'), ...shardDirs]);
    snapshot(['verify', '--dir', join(work, 'out')]);
    await expectSameAsSingle(join(work, 'out'), singlePack(c));
  }, 300_000);

  it('examples/slurm/submit.sh: index job → array (afterok) → merge job (afterok); the merged pack answers as a single build', async (ctx) => {
    const c = need(ctx);
    const work = join(c.dir, 'driver');
    const out = c.run('bash', [join(REPO, 'examples', 'slurm', 'submit.sh')], { env: jobEnv(c, work) });
    const [index, shards, merge] = out.trim().split('\n');
    expect([index, shards, merge].every((id) => /^\d+$/.test(id ?? '')), `submit.sh printed ${JSON.stringify(out)}`).toBe(true);
    expectAllDone(await c.waitJob(index!, 120_000), 1, () => join(work, 'logs', `snapshot-index-${index}.out`));
    expectAllDone(await c.waitJob(shards!, 240_000), SHARDS, (t) => join(work, 'logs', `snapshot-shard-${shards}_${t.task}.out`));
    expectAllDone(await c.waitJob(merge!, 120_000), 1, () => join(work, 'logs', `snapshot-merge-${merge}.out`));
    await expectSameAsSingle(join(work, 'out'), singlePack(c));
  }, 480_000);
});
