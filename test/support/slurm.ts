/**
 * A single-node Slurm cluster for the tests, in a temporary directory, as the current user: a
 * munged with a key of its own, slurmctld and slurmd in the foreground (-D) on free ports, a
 * generated slurm.conf (no cgroups, no accounting database). `startSlurm` gives the cluster, or
 * the reason it cannot start here (Slurm or munge not installed, a daemon that dies, a node that
 * never comes up idle) for the test to skip with; with CI=true it throws instead (.ci/run
 * installs Slurm, so on CI it must run).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './helpers.js';
import { ON_CI } from './shared-data.js';

/** One task of a job (a plain job is one task with `task` undefined). */
export interface SlurmTask {
  task: number | undefined;
  state: string;
  /** `<exit code>:<signal>`, as scontrol prints it. */
  exitCode: string;
}

export interface SlurmCluster {
  dir: string;
  /** The environment for Slurm's commands and the jobs: SLURM_CONF and the daemons' PATH. */
  env: NodeJS.ProcessEnv;
  /** Runs a Slurm command (sbatch, squeue, scontrol…); throws with its output if it fails. */
  run(cmd: string, args: readonly string[], opts?: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string }): string;
  /** Waits until every task of job `id` has ended; their states and exit codes. */
  waitJob(id: string, timeoutMs: number): Promise<SlurmTask[]>;
  stop(): Promise<void>;
}

const SBIN = ['/usr/sbin', '/usr/bin', '/sbin', '/bin'];
const ENDED = /^(COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|PREEMPTED|BOOT_FAIL|DEADLINE)/;

function which(cmd: string, path: string): string | undefined {
  return path
    .split(':')
    .map((d) => join(d, cmd))
    .find((p) => existsSync(p));
}

const tail = (file: string, n = 15) => (existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n') : `(no ${file})`);

/** Starts the cluster; `{ reason }` when it cannot start here (never on CI: it throws there). */
export async function startSlurm(): Promise<{ cluster: SlurmCluster; reason?: undefined } | { cluster?: undefined; reason: string }> {
  const r = await tryStart();
  if ('reason' in r && ON_CI) throw new Error(`CI=true but the Slurm cluster of the tests did not start: ${r.reason}`);
  return r;
}

async function tryStart(): Promise<{ cluster: SlurmCluster } | { reason: string }> {
  const PATH = [...new Set([...(process.env.PATH ?? '').split(':'), ...SBIN])].filter(Boolean).join(':');
  const missing = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'sinfo', 'scontrol', 'scancel'].filter((c) => !which(c, PATH));
  if (missing.length > 0) return { reason: `not installed: ${missing.join(', ')} (Debian: apt-get install slurm-wlm munge)` };

  const dir = mkdtempSync(join(tmpdir(), 'snapshot-slurm-'));
  // munged refuses a socket directory others cannot traverse, and a key others can read.
  chmodSync(dir, 0o755);
  for (const d of ['munge', 'state', 'spool', 'log']) mkdirSync(join(dir, d), { mode: 0o755 });
  const key = join(dir, 'munge', 'munge.key');
  writeFileSync(key, randomBytes(1024), { mode: 0o600 });
  const socket = join(dir, 'munge', 'munge.socket');
  const [ctldPort, dPort] = [await freePort(), await freePort()];
  const user = userInfo().username;
  const conf = join(dir, 'slurm.conf');
  writeFileSync(
    conf,
    [
      'ClusterName=snapshot-test',
      'SlurmctldHost=localhost',
      `SlurmctldPort=${ctldPort}`,
      `SlurmdPort=${dPort}`,
      `SlurmUser=${user}`,
      `SlurmdUser=${user}`,
      'AuthType=auth/munge',
      'CredType=cred/munge',
      `AuthInfo=socket=${socket}`,
      `StateSaveLocation=${join(dir, 'state')}`,
      `SlurmdSpoolDir=${join(dir, 'spool')}`,
      `SlurmctldPidFile=${join(dir, 'slurmctld.pid')}`,
      `SlurmdPidFile=${join(dir, 'slurmd.pid')}`,
      `SlurmctldLogFile=${join(dir, 'log', 'slurmctld.log')}`,
      `SlurmdLogFile=${join(dir, 'log', 'slurmd.log')}`,
      // No cgroups: processes are tracked by their parent, tasks are not confined.
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_Core',
      'JobAcctGatherType=jobacct_gather/none',
      'AccountingStorageType=accounting_storage/none',
      'JobCompType=jobcomp/none',
      'MpiDefault=none',
      'MailProg=/bin/true',
      'ReturnToService=2',
      // Ended jobs stay visible to scontrol for 10 minutes (no accounting database for sacct).
      'MinJobAge=600',
      'NodeName=localhost NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN',
      'PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP',
      '',
    ].join('\n'),
  );
  const env: NodeJS.ProcessEnv = { ...process.env, PATH, SLURM_CONF: conf };

  const children: { name: string; child: ChildProcess; log: string }[] = [];
  const daemon = (name: string, args: string[]) => {
    const log = join(dir, 'log', `${name}.out`);
    const fd = openSync(log, 'a');
    const child = spawn(which(name, PATH)!, args, { env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    child.on('error', () => {}); // an exit is seen by the checks below
    children.push({ name, child, log });
  };
  const dead = () => children.find((c) => c.child.exitCode !== null || c.child.signalCode !== null);

  const stop = async () => {
    if (children.some((c) => c.child.exitCode === null && c.child.signalCode === null)) spawnSync(which('scancel', PATH)!, ['--user', user, '--quiet'], { env, timeout: 10_000 });
    for (const c of [...children].reverse()) await stopChild(c.name, c.child);
    rmSync(dir, { recursive: true, force: true });
  };
  const fail = async (why: string) => {
    const logs = children.map((c) => `${c.name}: ${tail(c.log)}`).join('\n');
    await stop();
    return { reason: `${why}\n${logs}` };
  };

  const mungedArgs = ['-F', '--force', `--key-file=${key}`, `--socket=${socket}`, `--pid-file=${join(dir, 'munge', 'munged.pid')}`, `--seed-file=${join(dir, 'munge', 'munged.seed')}`, `--log-file=${join(dir, 'log', 'munged.log')}`];
  daemon('munged', mungedArgs);
  if (!(await until(() => existsSync(socket) || dead() !== undefined, 10_000)) || dead()) return fail(`munged did not start (its socket ${socket})`);
  daemon('slurmctld', ['-D', '-i', '-f', conf]);
  await sleep(500);
  daemon('slurmd', ['-D', '-N', 'localhost', '-f', conf]);
  const sinfo = () => spawnSync(which('sinfo', PATH)!, ['-h', '-N', '-o', '%T'], { env, encoding: 'utf8', timeout: 10_000 }).stdout?.trim();
  if (!(await until(() => sinfo() === 'idle' || dead() !== undefined, 30_000)) || dead()) {
    const d = dead();
    return fail(d ? `${d.name} exited (${d.child.exitCode ?? d.child.signalCode})` : `the node did not come up idle in 30 s (sinfo: ${JSON.stringify(sinfo())})`);
  }

  const run: SlurmCluster['run'] = (cmd, args, opts = {}) => {
    const r = spawnSync(which(cmd, PATH) ?? cmd, args, { env: opts.env ?? env, cwd: opts.cwd, input: opts.input, encoding: 'utf8', timeout: 30_000 });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status ?? r.signal}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const waitJob: SlurmCluster['waitJob'] = async (id, timeoutMs) => {
    let tasks: SlurmTask[] = [];
    const ended = await until(() => {
      tasks = jobTasks(run('scontrol', ['show', 'job', '-o', id]));
      return tasks.length > 0 && tasks.every((t) => ENDED.test(t.state));
    }, timeoutMs);
    if (!ended) throw new Error(`job ${id} did not end in ${timeoutMs / 1000} s: ${JSON.stringify(tasks)}\n${tail(join(dir, 'log', 'slurmctld.log'))}`);
    return tasks.sort((a, b) => (a.task ?? -1) - (b.task ?? -1));
  };
  return { cluster: { dir, env, run, waitJob, stop } };
}

/** The tasks of `scontrol show job -o` output (one line per task of an array). */
function jobTasks(out: string): SlurmTask[] {
  return out
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('JobId='))
    .map((l) => {
      const field = (k: string) => new RegExp(`(?:^| )${k}=(\\S*)`).exec(l)?.[1];
      const task = field('ArrayTaskId');
      return { task: task !== undefined && /^\d+$/.test(task) ? Number(task) : undefined, state: field('JobState') ?? '?', exitCode: field('ExitCode') ?? '?' };
    });
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (check()) return true;
    await sleep(250);
  }
  return check();
}

/** SIGTERM, then SIGKILL after 10 s; throws unless the process is gone. */
async function stopChild(name: string, child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  if (await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)])) return;
  child.kill('SIGKILL');
  await Promise.race([exited, sleep(5_000)]);
  if (child.exitCode === null && child.signalCode === null) throw new Error(`${name} (pid ${child.pid}) did not stop`);
}
