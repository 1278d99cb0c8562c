// What a build may treat as its own tree (README "Safety rules"): the whole tree is checked
// against its manifest before any work, nothing is written through a symlink, and one --state
// serves one build at a time.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { MANIFEST_PATH, STATS_PATH } from '../src/contract/layout.js';
import { buildSnapshot, type BuildHooks, type BuildOptions } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { memorySource } from '../src/source/memory.js';
import { framedBlocks, manifestMismatches, nodeArgs, readChain } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

const CLI = nodeArgs('src/cli.ts');
const STATE_CHILD = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'state-child.ts');
const HEIGHT = 3;

let root: string;
let n = 0;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'snapshot-ownership-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function caseDir(): string {
  const d = join(root, `c${n++}`);
  mkdirSync(d);
  return d;
}

function cli(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [...CLI, ...args], { cwd, encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

const build = (outDir: string, extra: Partial<BuildOptions> = {}, hooks?: BuildHooks) => buildSnapshot({ source: demoSource(), outDir, height: HEIGHT, hosts: [], ...extra }, hooks);

/** Every path below `dir` with its content (directories as `/`, symlinks as `-> target`). */
function treeOf(dir: string): Record<string, string> {
  const res: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isSymbolicLink()) res[r] = `-> ${readlinkSync(join(dir, r))}`;
      else if (e.isDirectory()) {
        res[r] = '/';
        walk(r);
      } else res[r] = readFileSync(join(dir, r), 'utf8');
    }
  };
  walk('');
  return res;
}

describe('a directory is ours only if its whole tree is listed in a well-formed manifest', () => {
  it('a directory holding only a _manifest.json that is not a manifest (JSON): refused, the file kept', () => {
    const d = caseDir();
    mkdirSync(join(d, 's'));
    writeFileSync(join(d, 's', MANIFEST_PATH), '{"mine":1}\n');
    const r = cli(['build', '--height', String(HEIGHT), '--out', 's'], d);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/refusing to replace .*\/s\b.*_manifest\.json.*line 1/);
    expect(treeOf(d)).toEqual({ s: '/', [`s/${MANIFEST_PATH}`]: '{"mine":1}\n' });
  }, 30_000);

  it('a _manifest.json of bare names beside the files it names: refused, nothing deleted', () => {
    const d = caseDir();
    mkdirSync(join(d, 's', 'src'), { recursive: true });
    writeFileSync(join(d, 's', MANIFEST_PATH), 'notes.txt\nsrc\n');
    writeFileSync(join(d, 's', 'notes.txt'), 'my notes\n');
    writeFileSync(join(d, 's', 'src', 'main.c'), 'int main(){}\n');
    const before = treeOf(d);
    const r = cli(['build', '--height', String(HEIGHT), '--out', 's'], d);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/refusing to replace .*\/s\b.*not "<sha256> <size> <path>"/);
    expect(treeOf(d)).toEqual(before);
  }, 30_000);

  it('an older version\'s real directory with user files below the top level: refused naming the first one; a clean copy is still replaced', async () => {
    const d = caseDir();
    await build(join(d, 'out'));
    for (const [plant, foreign] of [
      [(old: string) => writeFileSync(join(old, 'tx', 'NOTES.txt'), 'x\n'), 'tx/NOTES.txt'],
      [(old: string) => mkdirSync(join(old, 'block', 'mydir')), 'block/mydir'],
    ] as const) {
      const old = join(d, `old-${foreign.replace(/\W/g, '')}`);
      expect(spawnSync('cp', ['-rL', join(d, 'out'), old]).status).toBe(0);
      plant(old);
      const before = treeOf(old);
      const r = cli(['build', '--height', String(HEIGHT + 1), '--out', old], d);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain(`refusing to replace ${old}`);
      expect(r.stderr).toContain(`"${foreign}"`);
      expect(treeOf(old)).toEqual(before);
    }
    // Both planted together: the first foreign path in the tree's order is named.
    const old = join(d, 'old-both');
    spawnSync('cp', ['-rL', join(d, 'out'), old]);
    writeFileSync(join(old, 'tx', 'NOTES.txt'), 'x\n');
    mkdirSync(join(old, 'block', 'mydir'));
    await expect(build(old, { height: HEIGHT + 1 })).rejects.toThrow(/"block\/mydir"/);
    expect(readFileSync(join(old, 'tx', 'NOTES.txt'), 'utf8')).toBe('x\n');
    // --force keeps its meaning: the tree is replaced.
    await build(old, { height: HEIGHT + 1, force: true });
    expect(existsSync(join(old, 'tx', 'NOTES.txt'))).toBe(false);
    expect(manifestMismatches(old)).toEqual([]);
    const clean = join(d, 'clean');
    spawnSync('cp', ['-rL', join(d, 'out'), clean]);
    await build(clean, { height: HEIGHT + 1 });
    expect(manifestMismatches(clean)).toEqual([]);
  }, 60_000);

  it("the check again before the publish finds what appeared during the build (also when the first check's directory stamps are old enough to be trusted)", async () => {
    const d = caseDir();
    const out = join(d, 'out');
    await build(out);
    await new Promise((r) => setTimeout(r, 2100)); // older than a clock tick: the first check's stamps are trusted
    for (const [plant, found] of [
      [() => writeFileSync(join(out, 'tx', 'NOTES.txt'), 'mine\n'), /"tx\/NOTES.txt" is not listed/],
      [() => (unlinkSync(join(out, STATS_PATH)), symlinkSync('/etc/hostname', join(out, STATS_PATH))), /"stats.json" is a symbolic link/],
    ] as const) {
      let planted = false;
      const beforePublish = () => ((planted = true), plant());
      await expect(build(out, { height: HEIGHT + 1, full: true }, { beforePublish })).rejects.toThrow(found);
      expect(planted).toBe(true);
      if (existsSync(join(out, 'tx', 'NOTES.txt'))) {
        expect(readFileSync(join(out, 'tx', 'NOTES.txt'), 'utf8')).toBe('mine\n');
        unlinkSync(join(out, 'tx', 'NOTES.txt')); // the user's own removal: the tree is ours again
      }
    }
    expect(readlinkSync(join(out, STATS_PATH))).toBe('/etc/hostname');
  });

  it('a user file put into our published release (through the out symlink): refused, kept', async () => {
    const d = caseDir();
    const out = join(d, 'out');
    await build(out);
    writeFileSync(join(out, 'tx', 'NOTES.txt'), 'mine\n');
    await expect(build(out, { height: HEIGHT + 1, full: true })).rejects.toThrow(new RegExp(`refusing to replace ${out}.*"tx/NOTES.txt".*--force`));
    await expect(build(out, { height: HEIGHT + 1 })).rejects.toThrow(/"tx\/NOTES.txt"/);
    expect(readFileSync(join(out, 'tx', 'NOTES.txt'), 'utf8')).toBe('mine\n');
  });
});

function nbitcoinSource() {
  const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
  return memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin blk files');
}

describeShared('chaindata/nbitcoin')('nothing is written through a symlink (Bitcoin mainnet 0–599)', () => {
  it('stats.json replaced by a symlink to a file outside: the next builds refuse it, the file keeps its bytes', async () => {
    const d = caseDir();
    const site = join(d, 'site');
    const victim = join(d, 'victim.txt');
    writeFileSync(victim, 'victim bytes\n');
    const b = (height: number) => buildSnapshot({ source: nbitcoinSource(), outDir: site, height, hosts: [] });
    await b(250);
    await b(300);
    unlinkSync(join(site, STATS_PATH));
    symlinkSync(victim, join(site, STATS_PATH));
    for (const height of [400, 500]) {
      await expect(b(height)).rejects.toThrow(new RegExp(`refusing to replace ${site}.*"${STATS_PATH}" is a symbolic link`));
      expect(readFileSync(victim, 'utf8')).toBe('victim bytes\n');
    }
  }, 120_000);

  it('a symlink planted in the spare release: the build fails naming it, the file outside keeps its bytes', async () => {
    const d = caseDir();
    const site = join(d, 'site');
    const victim = join(d, 'victim.txt');
    writeFileSync(victim, 'victim bytes\n');
    const b = (height: number) => buildSnapshot({ source: nbitcoinSource(), outDir: site, height, hosts: [] });
    await b(250);
    await b(300);
    await b(400); // the 300 release is now the spare, stats.json one of its stale paths
    const rel = `${site}.releases`;
    const spare = readdirSync(rel).find((e) => e.endsWith('.spare'))!.slice(0, -'.spare'.length);
    unlinkSync(join(rel, spare, STATS_PATH));
    symlinkSync(victim, join(rel, spare, STATS_PATH));
    await expect(b(500)).rejects.toThrow(new RegExp(`refusing to use the spare release ${rel}/${spare}: "${STATS_PATH}" is a symbolic link.*remove ${rel}/${spare}\\.spare`));
    expect(readFileSync(victim, 'utf8')).toBe('victim bytes\n');
    // As the message says: without the record the spare is not used (the published tree is linked), and is cleared.
    rmSync(join(rel, `${spare}.spare`));
    await b(500);
    expect(readFileSync(victim, 'utf8')).toBe('victim bytes\n');
    expect(existsSync(join(rel, spare))).toBe(false);
    expect(manifestMismatches(site)).toEqual([]);
  }, 120_000);
});

/** Starts fixtures/state-child.ts (paused at `pause` until `goFile` exists). */
function startChild(out: string, state: string, pause = '', goFile = '') {
  const child = spawn(process.execPath, [...nodeArgs(STATE_CHILD), out, state, pause, goFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const printed = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => (stdout.includes(text) ? resolve() : undefined);
      child.stdout.on('data', check);
      void exited.then(() => (stdout.includes(text) ? resolve() : reject(new Error(`child exited before printing ${text}: ${stdout}${stderr}`))));
      check();
    });
  return { child, exited, printed, out: () => stdout, err: () => stderr };
}

describe('one --state serves one build at a time', () => {
  it('two builds with different --out and one --state: the second fails at once naming the state dir, the first (paused meanwhile) succeeds', async () => {
    const d = caseDir();
    const state = join(d, 'shared-state');
    const go = join(d, 'go');
    const first = startChild(join(d, 'a'), state, 'scan@half', go);
    await first.printed('paused scan@half\n');
    const second = startChild(join(d, 'b'), state);
    const code2 = await second.exited;
    expect(code2).toBe(1);
    expect(second.err()).toMatch(new RegExp(`--state ${state} is in use by another build \\(pid ${first.child.pid}, lock ${state}/\\.lock\\)`));
    expect(existsSync(join(d, 'b'))).toBe(false);
    // The same index by another path (a symlink to it): the same lock.
    symlinkSync(state, join(d, 'state-link'));
    const third = startChild(join(d, 'c'), join(d, 'state-link'));
    expect(await third.exited).toBe(1);
    expect(third.err()).toContain(`--state ${join(d, 'state-link')} is in use by another build (pid ${first.child.pid}`);
    // The first was still paused while the second ran: it resumes only now, and succeeds.
    expect(first.out()).not.toContain('done');
    writeFileSync(go, '');
    expect(await first.exited, first.err()).toBe(0);
    expect(first.out()).toContain('done');
    expect(manifestMismatches(join(d, 'a'))).toEqual([]);
  }, 60_000);

  it('--state given as a symlink to <out>.releases (or to out) is refused: paths are compared resolved', async () => {
    const d = caseDir();
    const out = join(d, 'out');
    await build(out);
    symlinkSync(`${out}.releases`, join(d, 'st'));
    await expect(build(out, { stateDir: join(d, 'st'), height: HEIGHT + 1 })).rejects.toThrow(/must not contain each other/);
    symlinkSync(d, join(d, 'up'));
    await expect(build(out, { stateDir: join(d, 'up', 'out.releases', 'x'), height: HEIGHT + 1 })).rejects.toThrow(/must not contain each other/);
    await expect(build(join(d, 'up', 'out'), { stateDir: join(d, 'out.state', 'x'), height: HEIGHT + 1 })).resolves.toBeDefined();
    expect(manifestMismatches(out)).toEqual([]);
  });
});
