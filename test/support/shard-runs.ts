// Sharded builds for the tests (test/shards.test.ts): the CLI run as a child, the file maps of
// outputs and state dirs, and the comparison of a merged tree with a single build's.
import { execFile } from 'node:child_process';
import { lstatSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { MANIFEST_PATH } from '../../src/contract/layout.js';
import { REPO, nodeArgs } from './helpers.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `snapshot <args>` in a child process (`env` added to this one's). */
export function cli(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((ok) => {
    const clean = { ...process.env };
    for (const v of ['JOB_COMPLETION_INDEX', 'AWS_BATCH_JOB_ARRAY_INDEX', 'SLURM_ARRAY_TASK_ID', 'SLURM_ARRAY_TASK_MIN']) delete clean[v];
    execFile(process.execPath, [...nodeArgs('src/cli.ts'), ...args], { cwd: REPO, encoding: 'utf8', env: { ...clean, ...env }, maxBuffer: 1 << 24 }, (err, stdout, stderr) =>
      ok({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

/** A run that must succeed: its stdout. */
export async function cliOk(args: readonly string[], env: Record<string, string> = {}): Promise<string> {
  const r = await cli(args, env);
  if (r.code !== 0) throw new Error(`snapshot ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** A run that must fail with exit 1 and one line on stderr (progress lines aside): that line. */
export async function cliError(args: readonly string[], env: Record<string, string> = {}): Promise<string> {
  const r = await cli(args, env);
  expect(r.code, r.stderr).toBe(1);
  const lines = r.stderr.split('\n').filter((l) => l.startsWith('snapshot: '));
  expect(lines, r.stderr).toHaveLength(1);
  return lines[0]!;
}

/** Every regular file below `dir` (symlinks followed at the top only) → its bytes. */
export function fileMap(dir: string, rel = ''): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) for (const [k, v] of fileMap(dir, p)) out.set(k, v);
    else if (e.isFile()) out.set(p, readFileSync(join(dir, p)));
  }
  return out;
}

/** Every entry below `dir` with its size, mtime and (files) bytes: what a reader must leave as it is. */
export function stamps(dir: string, rel = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    const st = lstatSync(join(dir, p));
    out.set(p, `${st.size} ${st.mtimeMs}${e.isFile() ? ` ${readFileSync(join(dir, p)).toString('base64')}` : ''}`);
    if (e.isDirectory()) for (const [k, v] of stamps(dir, p)) out.set(k, v);
  }
  return out;
}

/**
 * The merged tree at `merged` holds exactly the single build's paths with the same bytes; the one
 * file that names its own directory (nginx.conf) is compared with that directory replaced, and
 * the manifest without that file's line.
 */
export function expectSameTree(merged: string, single: string): void {
  const a = fileMap(merged);
  const b = fileMap(single);
  expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
  const mismatched: string[] = [];
  for (const [p, bytes] of b) {
    let got = a.get(p)!;
    let want = bytes;
    if (p === 'nginx.conf') [got, want] = [Buffer.from(got.toString().replaceAll(merged, '<out>')), Buffer.from(want.toString().replaceAll(single, '<out>'))];
    if (p === MANIFEST_PATH) [got, want] = [withoutNginx(got), withoutNginx(want)];
    if (!got.equals(want)) mismatched.push(p);
  }
  expect(mismatched).toEqual([]);
}

const withoutNginx = (b: Buffer) => Buffer.from(b.toString().replace(/^.* nginx\.conf\n/m, ''));
