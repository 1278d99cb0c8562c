// A shard build reads the index from a read-only mount, as a Kubernetes volume mounted
// `readOnly: true` gives it (examples/kubernetes/shard-job.yaml): LMDB opened read-only on a
// read-only file system keeps no reader table, so nothing in the state dir is needed writable.
// The mount is made in a user and mount namespace of the child's own (unshare -rm), so the test
// needs no privileges the CI run does not have.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO, nodeArgs } from './support/helpers.js';
import { tempDir } from './support/memory-builds.js';
import { cliOk, fileMap } from './support/shard-runs.js';

const tmp = tempDir('snapshot-shard-ro-');

/** Why a read-only bind mount cannot be made here, or undefined when it can. */
function cannotMount(): string | undefined {
  const src = tmp('probe-src');
  const ro = tmp('probe-ro');
  mkdirSync(src, { recursive: true });
  mkdirSync(ro, { recursive: true });
  try {
    execFileSync('unshare', ['-rm', 'sh', '-c', `mount --bind "${src}" "${ro}" && mount -o remount,bind,ro "${ro}" && ! touch "${ro}/x" 2>/dev/null`], { stdio: 'pipe' });
    return undefined;
  } catch (e) {
    return `unshare -rm with a read-only bind mount failed: ${String((e as { stderr?: Buffer }).stderr ?? e).trim()}`;
  }
}

const reason = cannotMount();
if (reason && process.env.CI === 'true') throw new Error(reason);

describe.skipIf(reason !== undefined)(`shard build on a read-only index${reason ? ` (skipped: ${reason})` : ''}`, { timeout: 300_000 }, () => {
  it('reads the index from a read-only mount and writes the same shard as from a writable one', async () => {
    const state = tmp('index');
    await cliOk(['index', '--state', state, '--height', '120']);
    const writable = tmp('shard-rw');
    await cliOk(['build', '--state', state, '--height', '120', '--shard', '1/2', '--out', writable]);

    const ro = tmp('index-ro');
    mkdirSync(ro, { recursive: true });
    const readonly = tmp('shard-ro');
    const node = [process.execPath, ...nodeArgs('src/cli.ts'), 'build', '--state', ro, '--height', '120', '--shard', '1/2', '--out', readonly];
    const script = `mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" && ! touch "$2/probe" 2>/dev/null && shift 2 && exec "$@"`;
    const run = await new Promise<{ code: number; stderr: string }>((ok) =>
      execFile('unshare', ['-rm', 'sh', '-c', script, 'sh', state, ro, ...node], { cwd: REPO, encoding: 'utf8' }, (err, _out, stderr) => ok({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr })),
    );
    expect(run.code, run.stderr).toBe(0);
    // The outputs name their own directories only in nginx.conf and in the manifest line for it.
    const a = fileMap(readonly);
    const b = fileMap(writable);
    expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
    for (const [p, bytes] of b) {
      if (p === 'nginx.conf' || p === '_manifest.json') continue;
      expect(a.get(p)!.equals(bytes), p).toBe(true);
    }
    expect(a.size).toBeGreaterThan(100);
  });
});
