// The scan on threads (src/source/scan-pool.ts): blocks parsed, hashed and validated on scan
// threads must give the same bytes as on the main thread (the demo chain, Bitcoin 0–599 through
// the in-memory and the blocks-dir source, the Namecoin Core regtest datadir), the same error
// for a corrupt block (file, absolute offset, height, hash, found from the blk files' record
// layout), and a scan thread that dies must fail the build (exit 1, a line naming the thread)
// and leave the published snapshot as it was.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBlocksDir } from '../src/builder/blkfiles.js';
import { generateChain } from '../src/builder/generate.js';
import { NETWORKS } from '../src/chain/networks.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { buildSnapshot, type BuildOptions, type BuildReport } from '../src/site/build.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { demoSource } from '../src/source/demo.js';
import { memorySource } from '../src/source/memory.js';
import { chainPath, framedBlocks, manifestMismatches, nodeArgs, readChain } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

const CHILD = join('test', 'fixtures', 'scan-crash-child.ts');
/** The manifest without nginx.conf, which names the output dir. */
const manifestOf = (out: string) => readFileSync(join(out, MANIFEST_PATH), 'utf8').replace(/^.* nginx\.conf\n/m, '');
/** Scan threads from the first block (a test chain is far below the default 4 MiB). */
const THREADS = { scanThreadsAbove: 0 };

/** Builds `source()` into `out` on the main thread and into `out`-2 on two scan threads; expects the same manifest. */
async function expectSameOnThreads(source: () => BuildOptions['source'], out: string, extra: Partial<BuildOptions> = {}): Promise<[BuildReport, BuildReport]> {
  const one = await buildSnapshot({ source: source(), outDir: out, scanThreads: 1, hosts: [], ...extra }, THREADS);
  const two = await buildSnapshot({ source: source(), outDir: `${out}-2`, scanThreads: 2, hosts: [], ...extra }, THREADS);
  expect(one.scanThreads).toBe(0);
  expect(two.scanThreads).toBe(2);
  expect(two.txs).toBe(one.txs);
  expect(manifestOf(`${out}-2`)).toBe(manifestOf(out));
  return [one, two];
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'snapshot-scan-threads-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('scan threads: the demo chain', () => {
  it('1 and 2 scan threads give the same bytes, full and incremental', async () => {
    await expectSameOnThreads(() => demoSource(), join(dir, 'demo'));
    // An incremental build on threads from a snapshot built on the main thread at a lower height.
    const out = join(dir, 'demo-inc');
    await buildSnapshot({ source: demoSource(), outDir: out, height: 100, scanThreads: 1, hosts: [] });
    const next = await buildSnapshot({ source: demoSource(), outDir: out, scanThreads: 2, hosts: [] }, THREADS);
    expect(next.mode).toBe('incremental');
    expect(next.scanThreads).toBe(2);
    expect(manifestOf(out)).toBe(manifestOf(join(dir, 'demo')));
  });

  it('a small chain does not start scan threads by default', async () => {
    const r = await buildSnapshot({ source: demoSource(), outDir: join(dir, 'demo-default'), scanThreads: 4, hosts: [] });
    expect(r.scanThreads).toBe(0);
  });
});

describe('scan threads: large blocks from a blocks dir', () => {
  it('blocks of their own memory (moved to the threads, not copied): the same bytes', async () => {
    const net = NETWORKS['namecoin-regtest'];
    const blocks = join(dir, 'big-blocks');
    const { records } = writeBlocksDir(generateChain({ network: net, seed: 'scan-threads', txCount: 2000, txPerBlock: 200, profile: 'bench' }), blocks, { network: net });
    // Node's Buffer pool serves reads under 4 KiB from shared memory: these are read into buffers of their own.
    expect(records.filter((r) => r.size > 4096).length).toBeGreaterThan(4);
    await expectSameOnThreads(() => () => openBlocksDir(blocks, net), join(dir, 'big'));
  });
});

describe('scan threads: a thread that dies', () => {
  let out: string;
  let manifest: string;
  beforeAll(async () => {
    out = join(dir, 'crash');
    await buildSnapshot({ source: demoSource(), outDir: out, height: 120 });
    manifest = readFileSync(join(out, MANIFEST_PATH), 'utf8');
  });

  it.each([
    ['throws', 'throw', /^snapshot: scan thread [01]: injected fault at height 130$/m],
    ['exits', 'exit', /^snapshot: scan thread [01] exited \(code 3\) before the end of the scan$/m],
  ])('a scan thread that %s: exit 1 naming it, the published snapshot kept', async (_what, how, line) => {
    // The child ends by itself (no process.exit): a thread left running would keep it alive.
    const child = spawn(process.execPath, [...nodeArgs(CHILD), out, how as string, '130'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toMatch(line as RegExp);
    expect(readFileSync(join(out, MANIFEST_PATH), 'utf8')).toBe(manifest);
    expect(manifestMismatches(out)).toEqual([]);
  });

  it('the next build goes on from the published snapshot', async () => {
    const r = await buildSnapshot({ source: demoSource(), outDir: out, scanThreads: 2 }, THREADS);
    expect({ height: r.height, mode: r.mode, scanThreads: r.scanThreads }).toEqual({ height: 150, mode: 'incremental', scanThreads: 2 });
    expect(manifestMismatches(out)).toEqual([]);
  });
});

describe('scan threads: the CLI option', () => {
  it('--scan-threads 0 is refused with the reason', () => {
    const r = spawnSync(process.execPath, [...nodeArgs('src/cli.ts'), 'build', '--out', join(dir, 'cli'), '--scan-threads', '0'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('--scan-threads 0: give at least 1 (1: the main thread parses the blocks)');
  });
});

describeShared('chaindata')('scan threads: Bitcoin mainnet 0–599', () => {
  const nbitcoin = () => {
    const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
    return memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin blk files');
  };

  it('in-memory source (blocks copied to the threads): the same bytes', async () => {
    const [, two] = await expectSameOnThreads(nbitcoin, join(dir, 'btc-mem'));
    expect({ height: two.height, txs: two.txs }).toEqual({ height: 599, txs: 616 });
  });

  it('blocks dir (blocks moved to the threads): the same bytes', async () => {
    await expectSameOnThreads(() => () => openBlocksDir(chainPath('nbitcoin'), NETWORKS.bitcoin), join(dir, 'btc-dir'));
    expect(manifestOf(join(dir, 'btc-dir'))).toBe(manifestOf(join(dir, 'btc-mem')));
  });

  /** The blk files copied into a dir of their own, with the records and their absolute data offsets. */
  function copyBlocks(name: string): { blocks: string; recs: { file: string; offset: number; len: number }[] } {
    const blocks = join(dir, name);
    mkdirSync(blocks);
    const recs: { file: string; offset: number; len: number }[] = [];
    for (const file of ['blk00000.dat', 'blk00001.dat']) {
      copyFileSync(chainPath('nbitcoin', file), join(blocks, file));
      const buf = readFileSync(join(blocks, file));
      for (let pos = 0; pos + 8 <= buf.length; pos += 8 + buf.readUInt32LE(pos + 4)) recs.push({ file, offset: pos + 8, len: buf.readUInt32LE(pos + 4) });
    }
    return { blocks, recs };
  }

  /** Runs a build of `blocks` on 1 and on 2 scan threads; both must fail with the same message, which is returned. */
  async function sameFailure(blocks: string, name: string): Promise<string> {
    const messages: string[] = [];
    for (const scanThreads of [1, 2]) {
      const build = buildSnapshot({ source: () => openBlocksDir(blocks, NETWORKS.bitcoin), outDir: join(dir, `${name}-${scanThreads}`), scanThreads, hosts: [] }, THREADS);
      messages.push(await build.then(() => 'built', (e: Error) => e.message));
    }
    expect(messages[1]).toBe(messages[0]);
    return messages[0]!;
  }

  it('a tx changed in block 170: bad-txnmrklroot, naming the file and the offset of its record', async () => {
    const { blocks, recs } = copyBlocks('corrupt-170');
    const r = recs[170]!;
    const path = join(blocks, r.file);
    const bytes = readFileSync(path);
    bytes[r.offset + r.len - 1]! ^= 0x01; // the last tx's lock_time: its txid, and so the merkle root, changes
    writeFileSync(path, bytes);
    const msg = await sameFailure(blocks, 'corrupt-170');
    expect(msg).toMatch(new RegExp(`^${r.file} offset ${r.offset}: block 00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee at height 170 is invalid: bad-txnmrklroot: `));
  });

  it('a tx count one too high in block 300: malformed at the absolute offset where the block ends', async () => {
    const { blocks, recs } = copyBlocks('corrupt-300');
    const r = recs[300]!;
    const path = join(blocks, r.file);
    const bytes = readFileSync(path);
    expect(bytes[r.offset + 80]).toBe(1); // one tx: its count is the byte after the header
    bytes[r.offset + 80] = 2;
    writeFileSync(path, bytes);
    const msg = await sameFailure(blocks, 'corrupt-300');
    expect(msg).toMatch(new RegExp(`^${r.file} offset ${r.offset + r.len}: block [0-9a-f]{64} at height 300 is invalid: malformed: .* \\(the block starts at offset ${r.offset}\\)$`));
  });

  it('--skip-invalid: the same snapshot, stopped below the invalid block', async () => {
    const { blocks, recs } = copyBlocks('skip-170');
    const r = recs[170]!;
    const path = join(blocks, r.file);
    const bytes = readFileSync(path);
    bytes[r.offset + r.len - 1]! ^= 0x01;
    writeFileSync(path, bytes);
    const [one, two] = await expectSameOnThreads(() => () => openBlocksDir(blocks, NETWORKS.bitcoin), join(dir, 'skip-170-out'), { skipInvalid: true });
    expect(two.height).toBe(169);
    expect(two.skippedInvalid.map((s) => s.message)).toEqual(one.skippedInvalid.map((s) => s.message));
  });
});

describeShared('chaindata/namecoin-core-regtest/blocks/xor.dat')('scan threads: the Namecoin Core regtest datadir', () => {
  it('1 and 2 scan threads give the same bytes (AuxPoW, names, stale blocks)', async () => {
    const [one] = await expectSameOnThreads(() => () => openBlocksDir(chainPath('namecoin-core-regtest', 'blocks'), NETWORKS['namecoin-regtest']), join(dir, 'nmc'));
    expect(one.names).toBeGreaterThan(0);
  });
});
