// A full disk under the output or under the index: one clear line naming the path and
// the errno, staging removed, the lock released, the published tree left as it was. Uses small
// tmpfs mounts (root in this sandbox); skipped with a message where mounting is not possible.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { MARKER_FILE } from '../src/publish/publish.js';
import { verifySnapshot } from '../src/verify/index.js';
import { nodeArgs } from './support/helpers.js';
import { writeBlocksDir } from '../src/builder/blkfiles.js';
import { generateChain } from '../src/builder/generate.js';
import { NETWORKS } from '../src/chain/networks.js';
import { constants } from 'node:os';
import { ioError } from '../src/runtime/io-error.js';
import { RowBatch } from '../src/index/row-batch.js';
import { isStoreError, openStore } from '../src/index/store.js';
import { IndexWriteThread } from '../src/index/commit-thread.js';

const CLI = nodeArgs('src/cli.ts');

let root: string;
const mounts: string[] = [];
function tmpfs(name: string, size: string): string | undefined {
  const dir = join(root, name);
  mkdirSync(dir);
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status !== 0) return undefined;
  mounts.push(dir);
  return dir;
}
const canMount = (() => {
  const d = mkdtempSync(join(tmpdir(), 'mount-probe-'));
  const ok = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', d]).status === 0;
  if (ok) spawnSync('umount', [d]);
  rmSync(d, { recursive: true, force: true });
  if (!ok) console.warn('cannot mount a tmpfs here: the full-disk tests are skipped');
  return ok;
})();

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'snapshot-diskfull-'));
});
afterAll(() => {
  for (const m of mounts) spawnSync('umount', [m]);
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!canMount)('a full disk', () => {
  it('under the output (the writer threads): one line with the file and ENOSPC; the previous tree and the index stay usable', async () => {
    const disk = tmpfs('out-disk', '2m')!;
    const out = join(disk, 'out');
    const state = join(root, 'out-state');
    await buildSnapshot({ source: demoSource(), outDir: out, stateDir: state, height: 3, hosts: [] });
    const before = readFileSync(join(out, MANIFEST_PATH), 'utf8');
    const release = readdirSync(join(disk, 'out.releases')).sort();
    const err = await buildSnapshot({ source: demoSource(), outDir: out, stateDir: state, hosts: [] }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(new RegExp(`^writing ${disk}/out\\.releases/\\d+-\\w{6}/\\S+: ENOSPC`));
    expect(err?.message.split('\n')).toHaveLength(1);
    expect(readFileSync(join(out, MANIFEST_PATH), 'utf8')).toBe(before);
    expect((await verifySnapshot(out)).ok).toBe(true);
    expect(readdirSync(join(disk, 'out.releases')).sort()).toEqual(release); // staging removed
    expect(readdirSync(disk).sort()).toEqual(['out', 'out.releases']); // lock released
    // With room again, the next build succeeds.
    spawnSync('mount', ['-o', 'remount,size=64m', disk]);
    const r = await buildSnapshot({ source: demoSource(), outDir: out, stateDir: state, hosts: [] });
    expect(r.height).toBe(150);
    expect((await verifySnapshot(out)).ok).toBe(true);
  });

  it('under the state dir (LMDB, block spill, scratch files): the CLI prints one line naming the path, exit 1, no staging left, the tree kept', async () => {
    const disk = tmpfs('state-disk', '400k')!;
    const state = join(disk, 'state');
    const cwd = join(root, 'state-case');
    mkdirSync(cwd);
    const run = (height?: number) =>
      spawnSync(process.execPath, [...CLI, 'build', '--out', 'out', '--state', state, '--hosts', 'netlify', ...(height !== undefined ? ['--height', String(height)] : [])], {
        cwd,
        encoding: 'utf8',
      });
    const first = run(3);
    expect(first.status, first.stderr).toBe(0);
    const before = readFileSync(join(cwd, 'out', MANIFEST_PATH), 'utf8');
    const r = run();
    expect(r.status).toBe(1);
    // Besides progress lines, liblmdb prints its own "Write error: …" diagnostic (not ours to silence).
    const lines = r.stderr.split('\n').filter((l) => l && !/^(build \d+%(, ETA \S+)? \| )?(\[\d+\/\d+\] )?(rollback|scan|staging|txs and blocks|addresses|names|site files|manifest)(: |$)|^Write error: /.test(l));
    expect(lines).toHaveLength(1);
    // Whichever fills the disk first: the index, the block spill, the tx text scratch files, the manifest rows.
    expect(lines[0]).toMatch(new RegExp(`^snapshot: (index ${state}/lmdb|block spill ${state}/blocks.spill|rendering height \\d+: tx text scratch file ${state}/tx-texts\\.tmp\\.\\d+|writing ${state}/manifest-rows\\.tmp/\\S+): .*(ENOSPC|EIO)`));
    expect(readFileSync(join(cwd, 'out', MANIFEST_PATH), 'utf8')).toBe(before);
    expect(readdirSync(join(cwd, 'out.releases')).filter((e) => e !== MARKER_FILE)).toHaveLength(1);
    expect(existsSync(join(cwd, 'out.lock'))).toBe(false);
  }, 60_000);

  it('the index write thread on a full disk: the batch and every later one fail with LMDB\'s errno, at once, and the thread still ends', async () => {
    const disk = tmpfs('write-thread-disk', '1m')!;
    const store = openStore(disk);
    const thread = IndexWriteThread.start(disk);
    const committed: Promise<void>[] = [];
    let thrown: unknown;
    // 64 KiB values: the 1 MiB filesystem is full within ~16 rows; a batch of 8 rows per transaction.
    for (let b = 0; b < 8 && thrown === undefined; b++) {
      const rows = new RowBatch();
      for (let i = 0; i < 8; i++) rows.put('txloc', Buffer.from(`${b}:${i}`.padEnd(32, '.')), Buffer.alloc(64 * 1024, b + 1));
      committed.push(thread.write(rows));
      await committed[committed.length - 1]!.catch(() => undefined);
      try {
        thread.check();
      } catch (e) {
        thrown = e;
      }
    }
    expect(thrown).toBeInstanceOf(Error);
    const code = (thrown as { code?: unknown }).code;
    expect([constants.errno.EIO, constants.errno.ENOSPC, -30792 /* MDB_MAP_FULL */]).toContain(code);
    expect(isStoreError(thrown)).toBe(true);
    expect(ioError(thrown, join(disk, 'lmdb'), 'index').message).toMatch(new RegExp(`^index ${disk}/lmdb: .*\\((EIO|ENOSPC)\\)`));
    // The failing batch rejects with the same error (settle waits on it), and so does any later one.
    await expect(committed[committed.length - 1]).rejects.toBe(thrown);
    await expect(thread.write(new RowBatch())).rejects.toBe(thrown);
    await thread.close(); // ends: a failed commit once left the thread's close waiting forever
    await store.close();
  }, 60_000);

  it('the index (LMDB) filling its disk during the scan: one line naming the file and the errno, exit 1, never a crash', () => {
    // A chain whose index outgrows 6 MiB soon after its block spill does: the index write thread's
    // commit fails (or, when main's spill write comes first, the spill's write does); either is reported
    // as the file and its errno, with no crash and no trace of ours.
    const blocks = join(root, 'index-full-blocks');
    writeBlocksDir(generateChain({ network: NETWORKS['namecoin-regtest'], seed: 'index-full', txCount: 20_000, txPerBlock: 1000, profile: 'real' }), blocks, { network: NETWORKS['namecoin-regtest'] });
    const disk = tmpfs('index-disk', '6m')!;
    const state = join(disk, 'state');
    const cwd = join(root, 'index-case');
    mkdirSync(cwd);
    const r = spawnSync(process.execPath, [...CLI, 'build', '--source', `blocks:${blocks}`, '--network', 'namecoin-regtest', '--out', 'out', '--state', state, '--hosts', 'netlify'], { cwd, encoding: 'utf8' });
    expect(r.signal).toBeNull();
    expect(r.status, r.stderr).toBe(1);
    const ours = r.stderr.split('\n').filter((l) => l.startsWith('snapshot: '));
    expect(ours, r.stderr).toHaveLength(1);
    expect(ours[0]).toMatch(new RegExp(`^snapshot: (index ${state}/lmdb|block spill ${state}/blocks\\.spill): .*(ENOSPC|EIO)`));
    // Nothing else may print a stack (lmdb-js' own print would be within node_modules/lmdb).
    expect(r.stderr).not.toMatch(/Commit failed|unhandled|Warning/i);
    expect(r.stderr.split('\n').filter((l) => /^\s+at /.test(l) && !l.includes('node_modules/lmdb/'))).toEqual([]);
    expect(existsSync(join(cwd, 'out'))).toBe(false); // nothing published
    expect(existsSync(join(cwd, 'out.lock'))).toBe(false);
  }, 60_000);
});
