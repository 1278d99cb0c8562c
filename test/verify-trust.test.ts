// `snapshot verify` trusts neither the tree's file types nor its block documents: a listed file
// that is a symlink (even to identical bytes) or anything else that is not a regular file or
// directory fails, naming the path; every block document is checked field by field against the
// block's own .bin, so a consistent edit (document and manifest line both updated) fails too.
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseBlock } from '../src/chain/block.js';
import { NETWORKS } from '../src/chain/networks.js';
import { SITE_INFO_PATH, blockPath, txPath } from '../src/contract/layout.js';
import { buildSnapshot } from '../src/site/build.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { memorySource } from '../src/source/memory.js';
import { verifySnapshot, type VerifyReport } from '../src/verify/index.js';
import { chainPath, framedBlocks, manifestMismatches, readChain } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';
import { linkCopy, rewriteListed } from './support/tree-copy.js';

// Bitcoin mainnet blocks 170 (the first with a payment tx: 2 txs) and 599 (the tip), from
// shared/reference/chaindata.md.
const BLOCK_170 = '00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee';
const TIP_599 = '0000000042844571bc6bce8e1c0fbec99466971eaff89fef8c0d123582181d4d';

function expectProblem(r: VerifyReport, file: string, pattern: RegExp): void {
  expect(r.ok).toBe(false);
  const hit = r.problems.find((p) => p.file === file && pattern.test(p.message));
  expect(hit, `no problem on ${file} matching ${pattern}; got ${JSON.stringify(r.problems.slice(0, 20), null, 1)}`).toBeDefined();
}

/** Replaces a file and its manifest line, then checks the manifest still matches the tree. */
function rewrite(d: string, rel: string, content: string | Buffer): void {
  rewriteListed(d, rel, content);
  expect(manifestMismatches(d)).toEqual([]);
}

/** `text` with its only occurrence of `from` replaced by `to`. */
function replaceOnce(text: string, from: string, to: string): string {
  expect(text.split(from).length, `${JSON.stringify(from)} occurs once`).toBe(2);
  return text.replace(from, to);
}

describeShared('chaindata/nbitcoin')('verify: Bitcoin mainnet 0–599 against the blocks’ own bytes and the tree’s file types', () => {
  let dir: string;
  let good: string;
  let copies = 0;
  let raw170: Buffer;
  const copy = () => linkCopy(good, join(dir, `bad-${++copies}`));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-verify-trust-'));
    const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
    const out = join(dir, 'out');
    await buildSnapshot({ source: memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin blk files'), outDir: out, hosts: [] });
    good = realpathSync(out); // the published name is a symlink to the release
    raw170 = raws[170]!;
    expect(parseBlock(raw170, { auxpow: false }).header.id).toBe(BLOCK_170);
  }, 120_000);
  afterAll(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

  it('the untouched tree verifies (through the published symlink too)', async () => {
    const r = await verifySnapshot(join(dir, 'out'));
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.height).toBe(599);
    expect(r.tip).toBe(TIP_599);
    expect(r.counts.mainBlocks).toBe(600);
  }, 60_000);

  it('a listed file replaced by a symlink to an identical copy outside the tree fails, naming it', async () => {
    const d = copy();
    const rel = blockPath(BLOCK_170, 'bin');
    const outside = join(dir, 'outside-170.bin');
    copyFileSync(join(good, rel), outside);
    expect(readFileSync(outside).equals(raw170)).toBe(true); // identical bytes: the manifest line still matches
    rmSync(join(d, rel));
    symlinkSync(outside, join(d, rel));
    expect(manifestMismatches(d)).toEqual([]);
    const r = await verifySnapshot(d);
    expectProblem(r, rel, /symbolic link/);
  });

  it('a tx document replaced by a symlink to an identical copy outside the tree fails too', async () => {
    const d = copy();
    const block = JSON.parse(readFileSync(join(good, blockPath(BLOCK_170, 'json')), 'utf8')) as { tx: { hash: string }[] };
    const rel = txPath(block.tx[1]!.hash, 'json');
    copyFileSync(join(good, rel), join(dir, 'outside-tx.json'));
    rmSync(join(d, rel));
    symlinkSync(join(dir, 'outside-tx.json'), join(d, rel));
    expect(manifestMismatches(d)).toEqual([]);
    const r = await verifySnapshot(d);
    expectProblem(r, rel, /symbolic link/);
  });

  it('a directory replaced by a symlink to an identical copy outside the tree fails, naming it', async () => {
    const d = copy();
    const outside = join(dir, 'outside-address');
    cpSync(join(good, 'address'), outside, { recursive: true });
    rmSync(join(d, 'address'), { recursive: true });
    symlinkSync(outside, join(d, 'address'));
    expect(manifestMismatches(d)).toEqual([]);
    const r = await verifySnapshot(d);
    expectProblem(r, 'address', /symbolic link/);
  });

  it.skipIf(spawnSync('mkfifo', ['--version']).status !== 0)('a listed file replaced by a FIFO fails at once, naming it (no blocking read)', async () => {
    const d = copy();
    const rel = txPath(
      (JSON.parse(readFileSync(join(good, blockPath(BLOCK_170, 'json')), 'utf8')) as { tx: { hash: string }[] }).tx[1]!.hash,
      'hex',
    );
    rmSync(join(d, rel));
    expect(spawnSync('mkfifo', [join(d, rel)]).status).toBe(0);
    writeFileSync(join(d, 'stray.fifo.json'), ''); // an ordinary stray file beside it still reported as such
    const r = await verifySnapshot(d);
    expectProblem(r, rel, /not a regular file/);
    expectProblem(r, 'stray.fifo.json', /not listed in the manifest/);
  }, 30_000);

  // Each header field of block 170's document edited consistently (manifest line updated): the
  // expected value comes from the raw block in blk00000.dat, parsed by the test itself.
  const headerEdits: [field: string, edit: (text: string, raw: Buffer) => string][] = [
    ['size', (t, raw) => replaceOnce(t, `"n_tx":2,"size":${raw.length},`, `"n_tx":2,"size":${raw.length + 1},`)],
    ['nonce', (t, raw) => replaceOnce(t, `"nonce":${raw.readUInt32LE(76)},`, `"nonce":${raw.readUInt32LE(76) + 1},`)],
    ['time', (t, raw) => replaceOnce(t, `"time":${raw.readUInt32LE(68)},`, `"time":${raw.readUInt32LE(68) - 600},`)],
    ['bits', (t, raw) => replaceOnce(t, `"bits":${raw.readUInt32LE(72)},`, `"bits":${raw.readUInt32LE(72) + 1},`)],
    ['ver', (t, raw) => replaceOnce(t, `{"hash":"${BLOCK_170}","ver":${raw.readUInt32LE(0)},`, `{"hash":"${BLOCK_170}","ver":${raw.readUInt32LE(0) + 1},`)],
    ['mrkl_root', (t, raw) => {
      const root = Buffer.from(raw.subarray(36, 68)).reverse().toString('hex');
      return replaceOnce(t, `"mrkl_root":"${root}"`, `"mrkl_root":"${root.slice(0, 63)}${root[63] === '0' ? '1' : '0'}"`);
    }],
    ['mrkl_tree', (t) => {
      const at = t.indexOf('"mrkl_tree":["') + 14;
      return t.slice(0, at) + (t[at] === '0' ? '1' : '0') + t.slice(at + 1);
    }],
  ];
  it.each(headerEdits)('a block document’s %s edited with its manifest line: verify fails naming the block and the field', async (field, edit) => {
    const d = copy();
    const rel = blockPath(BLOCK_170, 'json');
    const text = readFileSync(join(good, rel), 'utf8');
    const edited = edit(text, raw170);
    expect(edited).not.toBe(text);
    rewrite(d, rel, edited);
    const r = await verifySnapshot(d);
    expectProblem(r, rel, new RegExp(`^${field} `));
  });

  it('a block document’s embedded tx edited with its manifest line (and its /tx document too): verify fails naming the block and tx field', async () => {
    const d = copy();
    const rel = blockPath(BLOCK_170, 'json');
    const doc = JSON.parse(readFileSync(join(good, rel), 'utf8')) as { tx: { hash: string; lock_time: number }[] };
    const txid = doc.tx[1]!.hash;
    // lock_time is bytes [size − 4, size) of the tx: the last tx of block 170 ends the block.
    expect(doc.tx[1]!.lock_time).toBe(raw170.readUInt32LE(raw170.length - 4));
    const txRel = txPath(txid, 'json');
    const txText = readFileSync(join(good, txRel), 'utf8');
    rewrite(d, txRel, replaceOnce(txText, `"lock_time":${doc.tx[1]!.lock_time},`, `"lock_time":${doc.tx[1]!.lock_time + 1},`));
    // In the block document: the lock_time after tx[1]'s hash (tx[0] has one too).
    const text = readFileSync(join(good, rel), 'utf8');
    const from = text.indexOf(`{"hash":"${txid}",`);
    expect(from).toBeGreaterThan(0);
    rewrite(d, rel, text.slice(0, from) + replaceOnce(text.slice(from), `"lock_time":${doc.tx[1]!.lock_time},`, `"lock_time":${doc.tx[1]!.lock_time + 1},`));
    const r = await verifySnapshot(d);
    expectProblem(r, rel, /^tx\[1\]\.lock_time /);
    expectProblem(r, txRel, /^lock_time /);
  });

  it('left the good tree alone', async () => {
    expect((await verifySnapshot(good)).problems).toEqual([]);
  }, 60_000);
});

describeShared('chaindata/namecoin-core-regtest')('verify: the Namecoin Core regtest tree (AuxPoW, stale blocks) against its blocks’ bytes', () => {
  let dir: string;
  let good: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-verify-trust-nmc-'));
    const src = await openBlocksDir(chainPath('namecoin-core-regtest', 'blocks'), NETWORKS['namecoin-regtest']);
    try {
      await buildSnapshot({ source: src, outDir: join(dir, 'out'), hosts: [] });
    } finally {
      await src.close();
    }
    good = realpathSync(join(dir, 'out'));
  }, 180_000);
  afterAll(() => (dir ? rm(dir, { recursive: true, force: true }) : undefined));

  /** Stale (off-chain) blocks of the node's recorded chain.json: no /tx documents stand behind their embedded txs. */
  const staleHashes = (): string[] => {
    const chain = JSON.parse(readFileSync(chainPath('namecoin-core-regtest', 'chain.json'), 'utf8')) as { stale: { hash: string }[] };
    return chain.stale.map((s) => s.hash);
  };

  it('the untouched tree verifies', async () => {
    const r = await verifySnapshot(good);
    expect(r.problems).toEqual([]);
    expect(r.counts.offChainBlocks).toBe(staleHashes().length);
  }, 60_000);

  it('a stale block’s embedded tx output value edited with its manifest line: verify fails naming the block and the field', async () => {
    const d = linkCopy(good, join(dir, 'bad-stale'));
    const hash = staleHashes()[0]!;
    const rel = blockPath(hash, 'json');
    expect(existsSync(join(good, rel))).toBe(true);
    const doc = JSON.parse(readFileSync(join(good, rel), 'utf8')) as { tx: { out: { value: string }[] }[] };
    const value = doc.tx[0]!.out[0]!.value;
    const text = readFileSync(join(good, rel), 'utf8');
    const at = text.indexOf(`"value":"${value}"`);
    expect(at).toBeGreaterThan(0);
    const bumped = value.replace(/\d$/, (c) => String((Number(c) + 1) % 10));
    rewrite(d, rel, text.slice(0, at) + `"value":"${bumped}"` + text.slice(at + value.length + 10));
    const r = await verifySnapshot(d);
    expectProblem(r, rel, /^tx\[0\]\.out\[0\]\.value /);
  }, 60_000);

  it('an AuxPoW field of a block document edited with its manifest line: verify fails naming the block and the field', async () => {
    const d = linkCopy(good, join(dir, 'bad-aux'));
    const site = JSON.parse(readFileSync(join(good, SITE_INFO_PATH), 'utf8')) as { tip: string };
    const rel = blockPath(site.tip, 'json');
    const text = readFileSync(join(good, rel), 'utf8');
    const m = /"chain_index":(\d+)/.exec(text);
    expect(m, 'the tip is merge-mined (its document has an aux_pow)').not.toBeNull();
    rewrite(d, rel, replaceOnce(text, m![0], `"chain_index":${Number(m![1]) + 1}`));
    const r = await verifySnapshot(d);
    expectProblem(r, rel, /^aux_pow\.chain_index /);
  }, 60_000);
});
