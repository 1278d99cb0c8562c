// Filesystem safety of `snapshot build`: what the build may replace, the releases
// layout and its atomic publish, the staging race, the lock, and recovery that only removes what
// it can prove it made.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot, type BuildHooks, type BuildOptions } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { MARKER_FILE, acquireLock, recoverInterrupted, releasesDir } from '../src/publish/publish.js';
import { verifySnapshot } from '../src/verify/index.js';
import { manifestMismatches, nodeArgs } from './support/helpers.js';

const CLI = nodeArgs('src/cli.ts'); // absolute paths: the CLI runs in other directories
const HEIGHT = 3;
const DEAD_PID = 2 ** 22 + 12345; // above Linux's pid_max default: never a live process

let root: string;
let n = 0;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'snapshot-safety-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A fresh directory for one case. */
function caseDir(): string {
  const d = join(root, `c${n++}`);
  mkdirSync(d);
  return d;
}

const build = (outDir: string, extra: Partial<BuildOptions> = {}, hooks?: BuildHooks) => buildSnapshot({ source: demoSource(), outDir, height: HEIGHT, hosts: [], ...extra }, hooks);

/** Every file below `dir` with its content (symlinks as `-> target`), for before/after comparisons. */
function snapshotOf(dir: string): Record<string, string> {
  const res: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isSymbolicLink()) res[r] = `-> ${readlinkSync(join(dir, r))}`;
      else if (e.isDirectory()) walk(r);
      else res[r] = readFileSync(join(dir, r), 'utf8');
    }
  };
  walk('');
  return res;
}

function cli(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [...CLI, ...args], { cwd, encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

describe('the build never replaces what it did not make', () => {
  it('--out naming a directory with a user file: refused before any work, naming the path and the entry; nothing changes', async () => {
    const d = caseDir();
    const v = join(d, 'v');
    mkdirSync(join(v, 'src'), { recursive: true });
    writeFileSync(join(v, 'src', 'important.txt'), 'x\n');
    const before = snapshotOf(d);
    let scanned = false;
    const source = demoSource();
    const tip = source.tip.bind(source);
    source.tip = () => ((scanned = true), tip());
    await expect(buildSnapshot({ source, outDir: v, height: HEIGHT, hosts: [] })).rejects.toThrow(
      new RegExp(`${v}.*not empty.*"src".*--force`),
    );
    expect(scanned).toBe(false);
    expect(snapshotOf(d)).toEqual(before);
  });

  it('the CLI: exit 1, one line, important.txt kept (also for --out .)', () => {
    const d = caseDir();
    mkdirSync(join(d, 'v', 'src'), { recursive: true });
    writeFileSync(join(d, 'v', 'src', 'important.txt'), 'x\n');
    const before = snapshotOf(d);
    for (const out of ['v', '.']) {
      const r = cli(['build', '--height', String(HEIGHT), '--out', out], out === '.' ? join(d, 'v') : d);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^snapshot: refusing to replace .*(v|src)/);
      expect(snapshotOf(d)).toEqual(before);
    }
  }, 30_000);

  it('--out naming a regular file is refused (even with --force)', async () => {
    const d = caseDir();
    writeFileSync(join(d, 'out'), 'mine');
    for (const force of [false, true]) {
      await expect(build(join(d, 'out'), { force })).rejects.toThrow(/is a file, not a directory/);
    }
    expect(readFileSync(join(d, 'out'), 'utf8')).toBe('mine');
    expect(readdirSync(d)).toEqual(['out']);
  });

  it('--out / and a mount point are refused up front', async () => {
    await expect(build('/')).rejects.toThrow(/refusing to publish to \/ /);
    const d = caseDir();
    const mnt = join(d, 'mnt');
    mkdirSync(mnt);
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt]);
    if (m.status !== 0) return console.warn('mount not possible here: mount-point case skipped');
    try {
      await expect(build(mnt, { force: true })).rejects.toThrow(new RegExp(`${mnt}: it is a mount point`));
      expect(readdirSync(d)).toEqual(['mnt']);
    } finally {
      spawnSync('umount', [mnt]);
    }
  });

  it('an unwritable parent is refused up front', async () => {
    const d = caseDir();
    const ro = join(d, 'ro');
    mkdirSync(ro);
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', ro]);
    if (m.status !== 0) return console.warn('mount not possible here: read-only case skipped');
    try {
      await expect(build(join(ro, 'out'))).rejects.toThrow(new RegExp(`${ro}.*not writable`));
    } finally {
      spawnSync('umount', [ro]);
    }
  });

  it('--state naming a directory with other files is refused; with --force it is used and the files are kept', async () => {
    const d = caseDir();
    const state = join(d, 'st');
    mkdirSync(state);
    writeFileSync(join(state, 'notes.txt'), 'keep');
    await expect(build(join(d, 'out'), { stateDir: state })).rejects.toThrow(new RegExp(`--state ${state}.*"notes.txt"`));
    expect(readdirSync(d)).toEqual(['st']);
    await build(join(d, 'out'), { stateDir: state, force: true });
    await build(join(d, 'out'), { stateDir: state, full: true }); // a full build clears only the index's own files
    expect(readFileSync(join(state, 'notes.txt'), 'utf8')).toBe('keep');
    // Nor may the index live inside the output (it would be published, then deleted with a release).
    await expect(build(join(d, 'out2'), { stateDir: join(d, 'out2', 'state') })).rejects.toThrow(/must not contain each other/);
  });

  it('the CLI refuses a foreign --out before it opens the source (a blocks dir that does not exist is not even looked at)', () => {
    const d = caseDir();
    mkdirSync(join(d, 'v', 'src'), { recursive: true });
    writeFileSync(join(d, 'v', 'src', 'important.txt'), 'x\n');
    const r = cli(['build', '--source', `blocks:${join(d, 'no-such-blocks')}`, '--network', 'bitcoin', '--out', 'v'], d);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/^snapshot: refusing to replace .*v.*"src"/);
    expect(r.stderr).not.toMatch(/no-such-blocks/);
  }, 30_000);

  it('--force replaces a foreign directory', async () => {
    const d = caseDir();
    mkdirSync(join(d, 'out'));
    writeFileSync(join(d, 'out', 'junk'), 'x');
    await build(join(d, 'out'), { force: true });
    expect(existsSync(join(d, 'out', 'junk'))).toBe(false);
    expect(manifestMismatches(join(d, 'out'))).toEqual([]);
  });

  it('an empty directory and a tree made by an older version (a real directory) are replaced; the output becomes a symlink into <out>.releases', async () => {
    const d = caseDir();
    const out = join(d, 'out');
    mkdirSync(out);
    await build(out);
    expect(lstatSync(out).isSymbolicLink()).toBe(true);
    expect(readlinkSync(out)).toMatch(/^out\.releases\/\d+-[A-Za-z0-9]{6}$/);
    expect(existsSync(join(d, 'out.releases', MARKER_FILE))).toBe(true);
    // An older version's layout: a real directory holding a snapshot.
    const legacy = join(d, 'legacy');
    const real = realpathSync(out);
    spawnSync('cp', ['-a', real, legacy]);
    const before = readFileSync(join(legacy, MANIFEST_PATH), 'utf8');
    const r = await build(legacy, { height: HEIGHT + 1 });
    expect(r.height).toBe(HEIGHT + 1);
    expect(lstatSync(legacy).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(legacy, MANIFEST_PATH), 'utf8')).not.toBe(before);
    expect((await verifySnapshot(legacy)).problems).toEqual([]);
    expect(readdirSync(join(d, 'legacy.releases')).length).toBe(2); // the marker and the one release
  });

  it('a user symlink as --out stays a symlink: its target becomes the published output', async () => {
    const d = caseDir();
    mkdirSync(join(d, 'sites'));
    symlinkSync('sites/chain', join(d, 'out'));
    await build(join(d, 'out'));
    expect(readlinkSync(join(d, 'out'))).toBe('sites/chain');
    expect(readlinkSync(join(d, 'sites', 'chain'))).toMatch(/^chain\.releases\//);
    expect((await verifySnapshot(join(d, 'out'))).problems).toEqual([]);
    await build(join(d, 'out'), { height: HEIGHT + 1 });
    expect(readlinkSync(join(d, 'out'))).toBe('sites/chain');
    expect(readdirSync(join(d, 'sites')).sort()).toEqual(['chain', 'chain.releases', 'chain.state']);
  });
});

describe('publishing: releases, staging race, lock, recovery', () => {
  it('a symlink planted at the old staging name (out.tmp-<pid>) is never followed', async () => {
    const d = caseDir();
    const victim = join(d, 'victim');
    mkdirSync(victim);
    writeFileSync(join(victim, 'keep'), 'v');
    symlinkSync(victim, join(d, `out.tmp-${process.pid}`));
    symlinkSync(victim, join(d, `out.work-${process.pid}`));
    await build(join(d, 'out'));
    expect(snapshotOf(victim)).toEqual({ keep: 'v' });
    expect(realpathSync(join(d, 'out')).startsWith(join(d, 'out.releases'))).toBe(true);
    expect(lstatSync(join(d, `out.tmp-${process.pid}`)).isSymbolicLink()).toBe(true); // not ours: left alone
  });

  it('staging directories get a random exclusive name inside <out>.releases; a second release replaces the first, which is kept as the one spare (with its record)', async () => {
    const d = caseDir();
    const out = join(d, 'out');
    const seen: string[] = [];
    const onPublishStep: BuildHooks['onPublishStep'] = (step) => {
      if (step === 'swapped') seen.push(readlinkSync(out));
    };
    await build(out, {}, { onPublishStep });
    await build(out, { height: HEIGHT + 1 }, { onPublishStep });
    expect(seen).toHaveLength(2);
    expect(seen[0]).not.toBe(seen[1]);
    const [first, second] = seen.map((s) => s.split('/')[1]!);
    expect(readdirSync(join(d, 'out.releases')).sort()).toEqual([MARKER_FILE, second, first, `${first}.spare`].sort());
    expect(readdirSync(d).sort()).toEqual(['out', 'out.releases', 'out.state']);
    // Not mkdtemp's 0700: readable like the directories around it (web servers run as other users).
    expect(statSync(realpathSync(out)).mode & 0o777).toBe(statSync(join(d, 'out.releases')).mode & 0o777);
    expect(statSync(realpathSync(out)).mode & 0o005).toBe(0o005);
  });

  it('a second build on the same output is refused while the first holds the lock, naming its pid', async () => {
    const d = caseDir();
    const out = join(d, 'out');
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const atPublish = new Promise<void>((r) => (reached = r));
    const first = build(out, {}, { beforePublish: () => (reached(), held) });
    await atPublish;
    await expect(build(out)).rejects.toThrow(new RegExp(`another build \\(pid ${process.pid}\\) is writing ${out}`));
    release();
    await first;
    expect(manifestMismatches(out)).toEqual([]);
  });

  it('a stale lock of a dead process is taken over', async () => {
    const d = caseDir();
    writeFileSync(join(d, 'out.lock'), `${DEAD_PID}\n`);
    await build(join(d, 'out'));
    expect(existsSync(join(d, 'out.lock'))).toBe(false);
    const lock = acquireLock(join(d, 'out'));
    expect(() => acquireLock(join(d, 'out'))).toThrow(/another build/);
    lock.release();
  });

  it('recovery removes only what it can prove it made (marker + dead pid), never other files', async () => {
    const d = caseDir();
    const out = join(d, 'out');
    await build(out);
    const rel = releasesDir(out);
    const current = readlinkSync(out).split('/')[1]!;
    mkdirSync(join(rel, `${DEAD_PID}-AbC123`)); // a dead build's staging
    mkdirSync(join(rel, `${process.pid}-XyZ789`)); // a failed build of this process
    mkdirSync(join(rel, 'user-notes'));
    writeFileSync(join(rel, 'user-notes', 'f'), 'x');
    mkdirSync(join(d, `out.tmp-${DEAD_PID}`)); // an older version's leftover: no marker, left alone
    recoverInterrupted(out);
    expect(readdirSync(rel).sort()).toEqual([MARKER_FILE, current, 'user-notes'].sort());
    expect(existsSync(join(d, `out.tmp-${DEAD_PID}`))).toBe(true);
    // Without the marker nothing is removed.
    rmSync(join(rel, MARKER_FILE));
    mkdirSync(join(rel, `${DEAD_PID}-AbC123`));
    recoverInterrupted(out);
    expect(existsSync(join(rel, `${DEAD_PID}-AbC123`))).toBe(true);
  });
});
