// The example manifests and scripts of examples/ (a staged build on Kubernetes, Slurm and GitHub
// Actions): every Kubernetes object against the Kubernetes API's JSON schema, strictly; every
// `snapshot` command line against the CLI's commands and flags; and the invariants that make the
// stages fit together (shard count, read-only index, the merge naming every shard once).
// The Slurm scripts run for real in test/slurm.test.ts.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseSnapshotArgs, shardCount, shellSnapshotCommands, SURFACE, type SnapshotCommand } from './support/cli-surface.js';
import { nodeArgs, REPO } from './support/helpers.js';
import { k8sProblems } from './support/k8s-strict.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const example = (...p: string[]) => join(REPO, 'examples', ...p);
const text = (...p: string[]) => readFileSync(example(...p), 'utf8');

/** Every YAML document of the file, as plain data; a syntax error fails with its position. */
function yamlDocs(...p: string[]): Obj[] {
  return parseAllDocuments(text(...p)).map((d) => {
    if (d.errors.length > 0) throw new Error(`${p.join('/')}: ${d.errors.map((e) => e.message).join('; ')}`);
    return d.toJS() as Obj;
  });
}

const K8S = ['volumes.yaml', 'index-job.yaml', 'shard-job.yaml', 'merge-job.yaml'];
const k8s = () => K8S.flatMap((f) => yamlDocs('kubernetes', f).map((o) => ({ file: f, o })));
const job = (name: string): Obj => structuredClone(k8s().find(({ o }) => o.kind === 'Job' && o.metadata.name === name)!.o);

/** A container's `snapshot` command, parsed against the CLI surface (its image runs `snapshot`). */
function containerCommand(c: Obj, where: string): SnapshotCommand {
  if (JSON.stringify(c.command) !== '["snapshot"]') throw new Error(`${where}: command ${JSON.stringify(c.command)} is not [snapshot]`);
  return parseSnapshotArgs(c.args, where);
}

/** The volume a path in container `c` of pod spec `pod` lies on: the mount, and the pod's volume. */
function volumeAt(pod: Obj, c: Obj, path: string): { mount: Obj; volume: Obj } | undefined {
  const mount = (c.volumeMounts as Obj[] | undefined)?.find((m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`));
  return mount && { mount, volume: (pod.volumes as Obj[]).find((v) => v.name === mount.name)! };
}

const claim = (v: { volume: Obj } | undefined) => v?.volume.persistentVolumeClaim?.claimName as string | undefined;

/** The index Job's --state and its claim. */
function indexState(indexJob: Obj): { state: string; claim: string | undefined; problems: string[] } {
  const pod = indexJob.spec.template.spec;
  const c = pod.containers[0];
  const cmd = containerCommand(c, 'index-job.yaml');
  const state = cmd.flags.get('state') as string;
  const on = volumeAt(pod, c, state);
  const problems = [];
  if (cmd.command !== 'index') problems.push(`runs ${cmd.command}, not index`);
  if (!on || on.mount.readOnly || on.volume.persistentVolumeClaim?.readOnly) problems.push(`--state ${state} is not on a writable volume`);
  return { state, claim: claim(on), problems };
}

/** What breaks the shard Job's contract with the CLI and the index Job. */
function shardJobProblems(shardJob: Obj, index: { state: string; claim: string | undefined }): string[] {
  const problems: string[] = [];
  const spec = shardJob.spec;
  const pod = spec.template.spec;
  const c = pod.containers[0];
  const cmd = containerCommand(c, 'shard-job.yaml');
  if (cmd.command !== 'build' || cmd.flags.get('shard') !== 'auto') problems.push('not snapshot build --shard auto');
  if (spec.completionMode !== 'Indexed') problems.push(`completionMode ${spec.completionMode}, not Indexed (JOB_COMPLETION_INDEX is set only then)`);
  const n = shardCount(cmd);
  if (spec.completions !== n || spec.parallelism !== n) problems.push(`completions ${spec.completions} and parallelism ${spec.parallelism} are not --shards ${n}`);
  const state = cmd.flags.get('state') as string;
  const on = volumeAt(pod, c, state);
  if (state !== index.state || claim(on) !== index.claim) problems.push(`--state ${state} (claim ${claim(on)}) is not the index Job's ${index.state} (claim ${index.claim})`);
  if (on?.mount.readOnly !== true || on.volume.persistentVolumeClaim?.readOnly !== true) problems.push('the state volume is not mounted readOnly: true');
  const out = cmd.flags.get('out') as string;
  if (!out.endsWith('/$(JOB_COMPLETION_INDEX)')) problems.push(`--out ${out} does not end in /$(JOB_COMPLETION_INDEX)`);
  const outOn = volumeAt(pod, c, out);
  if (!claim(outOn) || outOn!.mount.readOnly) problems.push(`--out ${out} is not on a writable claim`);
  return problems;
}

describe('examples/kubernetes', () => {
  it('every object is valid against the Kubernetes API schema, no unknown field', () => {
    const objects = k8s();
    expect(objects.map(({ o }) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(
      ['Job/snapshot-index', 'Job/snapshot-merge', 'Job/snapshot-shards', 'PersistentVolumeClaim/snapshot-out', 'PersistentVolumeClaim/snapshot-shards', 'PersistentVolumeClaim/snapshot-state'].sort(),
    );
    for (const { file, o } of objects) expect(k8sProblems(o), `${file}: ${o.kind}/${o.metadata.name}`).toEqual([]);
  });

  it('the schema check fails a misspelt field, a wrong type and a wrong enum value, naming the field', () => {
    const a = job('snapshot-shards');
    a.spec.template.spec.containers[0].volumeMounts[1].readonly = a.spec.template.spec.containers[0].volumeMounts[1].readOnly;
    delete a.spec.template.spec.containers[0].volumeMounts[1].readOnly;
    expect(k8sProblems(a)).toEqual(['/spec/template/spec/containers/0/volumeMounts/1/readonly: unknown field']);
    const b = job('snapshot-shards');
    b.spec.completions = '4';
    expect(k8sProblems(b).join()).toMatch(/\/spec\/completions must be integer/);
    const c = job('snapshot-shards');
    c.spec.completionMode = 'Index';
    expect(k8sProblems(c).join()).toMatch(/\/spec\/completionMode must be equal to one of the allowed values/);
    const d = yamlDocs('kubernetes', 'volumes.yaml')[0]!;
    d.spec.accesModes = d.spec.accessModes;
    expect(k8sProblems(d)).toContain('/spec/accesModes: unknown field');
  });

  it('every container runs a real snapshot command with flags the CLI has', () => {
    const seen: string[] = [];
    for (const { file, o } of k8s().filter(({ o }) => o.kind === 'Job')) {
      const pod = o.spec.template.spec;
      for (const c of [...(pod.initContainers ?? []), ...pod.containers]) seen.push(containerCommand(c, `${file} ${c.name}`).command);
    }
    expect(seen).toEqual(['index', 'build', 'merge', 'verify', 'publish']);
    const bad = job('snapshot-shards').spec.template.spec.containers[0];
    bad.args[bad.args.indexOf('--shards')] = '--shard-count';
    expect(() => containerCommand(bad, 'shard-job.yaml')).toThrow(/shard-job.yaml: .*unknown flag --shard-count for build/);
  });

  it('index Job: snapshot index writes --state on the state claim', () => {
    const index = indexState(job('snapshot-index'));
    expect(index.problems).toEqual([]);
    expect(index.claim).toBe('snapshot-state');
  });

  it('shard Job: Indexed, completions = parallelism = --shards, the index read-only, --out per index', () => {
    const index = indexState(job('snapshot-index'));
    expect(shardJobProblems(job('snapshot-shards'), index)).toEqual([]);
    // The check can fail: one shard fewer than --shards, a writable index, NonIndexed.
    const fewer = job('snapshot-shards');
    fewer.spec.completions = 3;
    expect(shardJobProblems(fewer, index)).toEqual(['completions 3 and parallelism 4 are not --shards 4']);
    const writable = job('snapshot-shards');
    delete writable.spec.template.spec.containers[0].volumeMounts.find((m: Obj) => m.name === 'state').readOnly;
    expect(shardJobProblems(writable, index)).toEqual(['the state volume is not mounted readOnly: true']);
    const plain = job('snapshot-shards');
    plain.spec.completionMode = 'NonIndexed';
    expect(shardJobProblems(plain, index)).toEqual(['completionMode NonIndexed, not Indexed (JOB_COMPLETION_INDEX is set only then)']);
  });

  it('merge Job: merges every shard once, verifies, then publishes the merged directory', () => {
    const shards = job('snapshot-shards');
    const shardCmd = containerCommand(shards.spec.template.spec.containers[0], 'shard-job.yaml');
    const n = shardCount(shardCmd)!;
    const shardOut = (i: number) => (shardCmd.flags.get('out') as string).replace('$(JOB_COMPLETION_INDEX)', String(i));
    const pod = job('snapshot-merge').spec.template.spec;
    const [merge, verify] = pod.initContainers.map((c: Obj) => containerCommand(c, 'merge-job.yaml'));
    const publish = containerCommand(pod.containers[0], 'merge-job.yaml');
    expect(merge.positional).toEqual(Array.from({ length: n }, (_, i) => shardOut(i)));
    const shardsOn = volumeAt(pod, pod.initContainers[0], merge.positional[0]!);
    expect(claim(shardsOn)).toBe(claim(volumeAt(shards.spec.template.spec, shards.spec.template.spec.containers[0], shardOut(0))));
    const out = merge.flags.get('out');
    expect([verify.command, verify.flags.get('dir'), publish.command, publish.flags.get('dir')]).toEqual(['verify', out, 'publish', out]);
    expect(publish.flags.get('to')).toMatch(/^s3:\/\//);
  });
});

// Stand-ins for the variables the scripts read; bash fails a line that uses any other.
const SHELL_ENV = { SNAPSHOT_WORK: '/shared/work', SNAPSHOT_SOURCE: 'blocks:/data/blocks', SNAPSHOT_NETWORK: 'bitcoin', SNAPSHOT_PUBLISH_TO: 's3://b/p', SLURM_ARRAY_TASK_ID: '<task>' };

describe('examples/slurm', () => {
  const sbatch = text('slurm', 'snapshot.sbatch');
  const submit = text('slurm', 'submit.sh');

  it('both scripts are valid bash', () => {
    for (const f of ['snapshot.sbatch', 'submit.sh']) {
      const r = spawnSync('bash', ['-n', example('slurm', f)], { encoding: 'utf8' });
      expect(r.stderr, f).toBe('');
      expect(r.status, f).toBe(0);
    }
  });

  it('the array script: --array 0..N-1 with --shards N, shard i into shards/<task id>, the index read from the state the index job writes', () => {
    const array = /^#SBATCH --array=0-(\d+)$/m.exec(sbatch);
    expect(array, '#SBATCH --array=0-<N-1>').not.toBeNull();
    const cmds = shellSnapshotCommands(sbatch, SHELL_ENV).map(({ line, argv }) => parseSnapshotArgs(argv, `snapshot.sbatch:${line}`));
    expect(cmds.map((c) => c.command)).toEqual(['build']);
    const [build] = cmds;
    expect(build!.flags.get('shard')).toBe('auto');
    expect(shardCount(build!)).toBe(Number(array![1]) + 1);
    expect(build!.flags.get('out')).toBe('/shared/work/shards/<task>');
    const [index] = shellSnapshotCommands(submit, SHELL_ENV).map(({ line, argv }) => parseSnapshotArgs(argv, `submit.sh:${line}`));
    expect(index!.command).toBe('index');
    expect(build!.flags.get('state')).toBe(index!.flags.get('state'));
  });

  it('the driver: index, then the array after it, then merge of every shard, verify and publish after the array', () => {
    const cmds = shellSnapshotCommands(submit, SHELL_ENV).map(({ line, argv }) => parseSnapshotArgs(argv, `submit.sh:${line}`));
    expect(cmds.map((c) => c.command)).toEqual(['index', 'merge', 'verify', 'publish']);
    const n = Number(/^#SBATCH --array=0-(\d+)$/m.exec(sbatch)![1]) + 1;
    const [, merge, verify, publish] = cmds;
    expect(merge!.positional).toEqual(Array.from({ length: n }, (_, i) => `/shared/work/shards/${i}`));
    expect([verify!.flags.get('dir'), publish!.flags.get('dir')]).toEqual([merge!.flags.get('out'), merge!.flags.get('out')]);
    // The order of the stages is the jobs' dependencies: afterok on the job before.
    expect(submit).toMatch(/--dependency="afterok:\$index" [^\n]*"\$here\/snapshot\.sbatch"/);
    expect(submit).toMatch(/--dependency="afterok:\$shards" --job-name=snapshot-merge/);
  });

  it('a command line with a flag the CLI lacks, or an undefined variable, is refused', () => {
    const [bad] = shellSnapshotCommands(sbatch.replace('--format pack', '--format zip'), SHELL_ENV);
    expect(() => parseSnapshotArgs(bad!.argv, 'snapshot.sbatch')).toThrow(/--format zip: not tree or pack/);
    const { SNAPSHOT_WORK: _, ...noWork } = SHELL_ENV;
    expect(() => shellSnapshotCommands(sbatch, noWork)).toThrow(/SNAPSHOT_WORK: unbound variable/);
  });
});

describe('examples/github-actions (checked by hand: no workflow schema or validator offline)', () => {
  const wf = () => yamlDocs('github-actions', 'snapshot.yml')[0]!;

  /**
   * The workflow's snapshot commands, per job, with `${{ matrix.shard }}` as `shard` and the other
   * GitHub expressions as `<expr>`. One bash for all of them: each step's script gets its lines
   * numbered apart (a gap of 1000) to tell the steps apart again.
   */
  function workflowCommands(w: Obj, shard: string): { job: string; cmd: SnapshotCommand }[] {
    const steps = Object.entries(w.jobs as Obj).flatMap(([job, j]) =>
      (j.steps as Obj[]).flatMap((step, i) => (typeof step.run === 'string' && /^\s*snapshot\s/m.test(step.run) ? [{ job, where: `snapshot.yml jobs.${job}.steps[${i}]`, run: step.run as string }] : [])),
    );
    const script = steps.map((s) => s.run.replace(/\$\{\{\s*([^}]*?)\s*\}\}/g, (_: string, e: string) => (e === 'matrix.shard' ? '@SHARD@' : '<expr>'))).join('\n'.repeat(1000));
    return shellSnapshotCommands(script, SHELL_ENV).map(({ line, argv }) => {
      const step = steps[Math.floor(line / 1000)]!;
      return { job: step.job, cmd: parseSnapshotArgs(argv.map((a) => a.replaceAll('@SHARD@', shard)), step.where) };
    });
  }

  /** What breaks the workflow's structure: the job order, the matrix against --shard i/N, the artifacts. */
  function workflowProblems(w: Obj): string[] {
    const problems: string[] = [];
    const jobs = w.jobs as Obj;
    const needs = Object.fromEntries(Object.entries(jobs).map(([k, j]) => [k, [j.needs ?? []].flat()]));
    if (JSON.stringify(needs) !== JSON.stringify({ index: [], shard: ['index'], merge: ['shard'], publish: ['merge'] })) problems.push(`needs: ${JSON.stringify(needs)}`);
    for (const [k, j] of Object.entries(jobs)) {
      if (typeof j['runs-on'] !== 'string' || !Array.isArray(j.steps)) problems.push(`jobs.${k}: no runs-on or steps`);
      for (const s of j.steps ?? []) if ((s.uses === undefined) === (s.run === undefined)) problems.push(`jobs.${k}: a step needs exactly one of uses and run`);
      for (const s of j.steps ?? []) if (s.uses !== undefined && !/^actions\/[a-z-]+@v\d+$/.test(s.uses)) problems.push(`jobs.${k}: ${s.uses} is not an actions/… at a major version`);
    }
    const matrix: unknown[] = jobs.shard?.strategy?.matrix?.shard ?? [];
    for (const value of matrix) {
      const builds = workflowCommands(w, String(value)).filter((c) => c.cmd.command === 'build');
      const shard = builds.map((b) => b.cmd.flags.get('shard'));
      if (builds.length !== 1 || builds[0]!.job !== 'shard' || shard[0] !== `${String(value)}/${matrix.length}`) problems.push(`matrix.shard ${String(value)}: the shard job builds --shard ${shard.join()}, not ${String(value)}/${matrix.length}`);
    }
    if (JSON.stringify(matrix) !== JSON.stringify(matrix.map((_, i) => i))) problems.push(`matrix.shard ${JSON.stringify(matrix)} is not 0 … N-1`);
    // Every artifact a job downloads was uploaded by a job it needs (directly or through others).
    const uploads = (k: string): string[] => [...(jobs[k].steps as Obj[]).filter((s) => s.uses?.startsWith('actions/upload-artifact')).map((s) => String(s.with.name)), ...needs[k]!.flatMap(uploads)];
    for (const [k, j] of Object.entries(jobs)) {
      for (const s of (j.steps as Obj[]).filter((s) => s.uses?.startsWith('actions/download-artifact'))) {
        const want = new RegExp(`^${String(s.with.name ?? s.with.pattern).replace('*', '.*')}$`);
        if (!needs[k]!.flatMap(uploads).some((u) => want.test(u.replace('${{ matrix.shard }}', '0')))) problems.push(`jobs.${k}: downloads ${s.with.name ?? s.with.pattern}, which no job before it uploads`);
      }
    }
    return problems;
  }

  it('index → shard matrix → merge → publish; the matrix is 0 … N-1 with --shard i/N; artifacts flow forward', () => {
    expect(workflowProblems(wf())).toEqual([]);
  });

  it('the structure check can fail: a matrix that misses a shard, a merge that does not wait for the shards', () => {
    const a = wf();
    a.jobs.shard.strategy.matrix.shard = [0, 1, 2];
    expect(workflowProblems(a)).toEqual(['matrix.shard 0: the shard job builds --shard 0/4, not 0/3', 'matrix.shard 1: the shard job builds --shard 1/4, not 1/3', 'matrix.shard 2: the shard job builds --shard 2/4, not 2/3']);
    const b = wf();
    b.jobs.merge.needs = 'index';
    expect(workflowProblems(b)).toEqual([
      'needs: {"index":[],"shard":["index"],"merge":["index"],"publish":["merge"]}',
      'jobs.merge: downloads shard-*, which no job before it uploads',
    ]);
  });

  it('every run step: real snapshot commands; the merge names every shard the matrix builds, in order', () => {
    const cmds = workflowCommands(wf(), '0');
    expect(cmds.map((c) => `${c.job} ${c.cmd.command}`)).toEqual(['index index', 'shard build', 'merge merge', 'merge verify', 'publish publish']);
    const n = wf().jobs.shard.strategy.matrix.shard.length;
    const build = cmds[1]!.cmd;
    const merge = cmds[2]!.cmd;
    expect(build.flags.get('state')).toBe(cmds[0]!.cmd.flags.get('state'));
    const outOf = (i: number) => posix.normalize((build.flags.get('out') as string).replace(/0$/, String(i)));
    expect(merge.positional).toEqual(Array.from({ length: n }, (_, i) => outOf(i)));
    expect(cmds[4]!.cmd.flags.get('dir')).toBe(merge.flags.get('out'));
  });
});

describe('the CLI surface the examples are checked against is the real CLI', () => {
  // Before the stage commands (index, merge, build --shard/--shards) are in the CLI this fails,
  // naming each flag the CLI lacks: the examples must not promise what the CLI does not do.
  it.each(Object.keys(SURFACE))('snapshot %s --help lists every flag of the table', (command) => {
    const r = spawnSync(process.execPath, [...nodeArgs('src/cli.ts'), command, '--help'], { encoding: 'utf8', cwd: REPO });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout, `snapshot ${command} is not a command of this CLI`).toContain(`snapshot ${command}`);
    const listed = new Set([...r.stdout.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]));
    expect(Object.keys(SURFACE[command]!.flags).filter((f) => !listed.has(f)), `flags missing from snapshot ${command} --help`).toEqual([]);
  });
});
