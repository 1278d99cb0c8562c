import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { MANIFEST_PATH, SITE_INFO_PATH, addressPath, txPath } from '../src/contract/layout.js';
import { formatVerifyReport, verifySnapshot, type VerifyReport } from '../src/verify/index.js';
import { nodeArgs } from './support/helpers.js';
import { linkCopy, put, rewriteListed } from './support/tree-copy.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

interface TxDoc {
  hash: string;
  in: { prev_out: { hash: string; n: number }; coinbase?: string }[];
  out: { value: string; address?: string; next_in?: { hash: string; n: number } }[];
}

describe('snapshot verify', () => {
  let dir: string;
  let good: string;
  let copies = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-verify-'));
    good = join(dir, 'good');
    await buildSnapshot({ source: demoSource(), outDir: good });
  });
  afterAll(() => rm(dir, { recursive: true, force: true })); // fs/promises: parallel unlinks (~25k hard links)

  /** A fresh copy of the good tree to corrupt: hard links, so files must be changed through {@link put}. */
  const copy = (): string => linkCopy(good, join(dir, `bad-${++copies}`));
  const rewrite = rewriteListed;
  const readJson = <T>(d: string, rel: string): T => JSON.parse(readFileSync(join(d, rel), 'utf8')) as T;

  /** A main-chain tx with a spent output and a non-coinbase input. */
  function txWithLinks(d: string): TxDoc {
    for (const f of readdirSync(join(d, 'tx')).sort()) {
      if (!f.endsWith('.json')) continue;
      const doc = readJson<TxDoc>(d, `tx/${f}`);
      if (doc.out.some((o) => o.next_in) && doc.in.some((i) => i.coinbase === undefined)) return doc;
    }
    throw new Error('demo chain has no tx with both links');
  }

  function expectProblem(r: VerifyReport, file: string, pattern: RegExp): void {
    expect(r.ok).toBe(false);
    expect(r.problemCount).toBeGreaterThan(0);
    const hit = r.problems.find((p) => p.file === file && pattern.test(p.message));
    expect(hit, `no problem on ${file} matching ${pattern}; got ${JSON.stringify(r.problems, null, 1)}`).toBeDefined();
  }

  it('passes on a fresh build, with counts', async () => {
    const r = await verifySnapshot(good);
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.network).toBe('namecoin-regtest');
    const files = readFileSync(join(good, MANIFEST_PATH), 'utf8').trim().split('\n').length;
    expect(r.counts.manifestEntries).toBe(files);
    expect(r.counts.filesOnDisk).toBe(files);
    expect(r.counts.mainBlocks).toBe(r.height! + 1);
    expect(r.counts.offChainBlocks).toBe(3);
    expect(r.counts.txs).toBe(readJson<{ txs: number }>(good, 'stats.json').txs);
    expect(r.counts.links).toBeGreaterThan(0);
    expect(r.counts.names).toBeGreaterThan(0);
  });

  it('passes with pretty JSON and capped addresses', async () => {
    const out = join(dir, 'pretty');
    await buildSnapshot({ source: demoSource(), outDir: out, pretty: true, maxAddressTxouts: 5 });
    const r = await verifySnapshot(out);
    expect(r.problems).toEqual([]);
    expect(r.counts.cappedAddresses).toBeGreaterThan(0);
  });

  it('catches a flipped byte', async () => {
    const d = copy();
    const rel = txPath(txWithLinks(d).hash, 'bin');
    const buf = readFileSync(join(d, rel));
    buf[10]! ^= 0x01;
    put(d, rel, buf);
    const r = await verifySnapshot(d);
    expectProblem(r, rel, /sha256 differs from the manifest/);
  });

  it('catches a deleted file', async () => {
    const d = copy();
    const rel = txPath(txWithLinks(d).hash, 'hex');
    unlinkSync(join(d, rel));
    const r = await verifySnapshot(d);
    expectProblem(r, rel, /missing/);
    expect(r.problemCount).toBe(1); // reported once, though several checks look for it
  });

  it('catches an extra file and a duplicated manifest line', async () => {
    const d = copy();
    writeFileSync(join(d, 'tx', 'extra.json'), '{}');
    const r = await verifySnapshot(d);
    expectProblem(r, 'tx/extra.json', /not listed in the manifest/);
    expect(r.problemCount).toBe(1);

    const d2 = copy();
    const first = readFileSync(join(d2, MANIFEST_PATH), 'utf8').split('\n')[0]!;
    put(d2, MANIFEST_PATH, readFileSync(join(d2, MANIFEST_PATH), 'utf8') + first + '\n');
    const r2 = await verifySnapshot(d2);
    expectProblem(r2, first.split(' ')[2]!, /listed twice/);
  });

  it('accepts a manifest out of path order, and still names a duplicate that hides a stray file', async () => {
    // The writer lists paths sorted; any other order takes the slow stray-file check.
    const d = copy();
    const lines = readFileSync(join(d, MANIFEST_PATH), 'utf8').split('\n').filter((l) => l !== '');
    put(d, MANIFEST_PATH, [...lines].reverse().join('\n') + '\n');
    expect((await verifySnapshot(d)).problems).toEqual([]);

    // One line twice and one unlisted file: the file count matches the listed count.
    const d2 = copy();
    writeFileSync(join(d2, 'tx', 'extra.json'), '{}');
    put(d2, MANIFEST_PATH, [lines[0]!, ...[...lines].reverse()].join('\n') + '\n');
    const r = await verifySnapshot(d2);
    expectProblem(r, lines[0]!.split(' ')[2]!, /listed twice/);
    expectProblem(r, 'tx/extra.json', /not listed in the manifest/);
  });

  it('catches a tx whose next_in points nowhere (manifest fixed up)', async () => {
    const d = copy();
    const tx = txWithLinks(d);
    const j = tx.out.findIndex((o) => o.next_in);
    tx.out[j]!.next_in = { hash: 'ab'.repeat(32), n: 0 };
    const rel = txPath(tx.hash, 'json');
    rewrite(d, rel, JSON.stringify(tx));
    const r = await verifySnapshot(d);
    expectProblem(r, rel, new RegExp(`out\\[${j}\\]\\.next_in points to tx ${'ab'.repeat(32)}, which has no /tx document`));
    // and from the spender's side: its input's spent output no longer points back
    const spender = readJson<TxDoc>(good, rel).out[j]!.next_in!;
    expectProblem(r, txPath(spender.hash, 'json'), new RegExp(`in\\[${spender.n}\\] spends ${tx.hash}:${j}, but that output's next_in is ${'ab'.repeat(32)}`));
  });

  it('catches a next_in at the wrong input index (manifest fixed up)', async () => {
    const d = copy();
    const tx = txWithLinks(d);
    const j = tx.out.findIndex((o) => o.next_in);
    tx.out[j]!.next_in!.n += 7;
    const rel = txPath(tx.hash, 'json');
    rewrite(d, rel, JSON.stringify(tx));
    const r = await verifySnapshot(d);
    expectProblem(r, rel, new RegExp(`out\\[${j}\\]\\.next_in points to .* in\\[\\d+\\], which does not exist`));
  });

  it('catches a broken prev_out link (manifest fixed up)', async () => {
    const d = copy();
    const tx = txWithLinks(d);
    const i = tx.in.findIndex((x) => x.coinbase === undefined);
    const spent = tx.in[i]!.prev_out;
    // Drop the next_in of the output this input spends: the input now points at an output
    // that does not point back.
    const prev = readJson<TxDoc>(d, txPath(spent.hash, 'json'));
    delete prev.out[spent.n]!.next_in;
    const prevRel = txPath(spent.hash, 'json');
    rewrite(d, prevRel, JSON.stringify(prev));
    const r = await verifySnapshot(d);
    expectProblem(r, txPath(tx.hash, 'json'), new RegExp(`in\\[${i}\\] spends ${spent.hash}:${spent.n}, but that output's next_in is absent`));
  });

  it('catches a prev_out that disagrees with the .bin (manifest fixed up)', async () => {
    const d = copy();
    const tx = txWithLinks(d);
    const i = tx.in.findIndex((x) => x.coinbase === undefined);
    tx.in[i]!.prev_out.n += 1;
    const rel = txPath(tx.hash, 'json');
    rewrite(d, rel, JSON.stringify(tx));
    const r = await verifySnapshot(d);
    expectProblem(r, rel, new RegExp(`in\\[${i}\\]\\.prev_out differs from the \\.bin`));
  });

  it('catches an address whose balance is off (manifest fixed up)', async () => {
    const d = copy();
    const a = readdirSync(join(d, 'address')).sort()[0]!.replace(/\.json$/, '');
    const rel = addressPath(a);
    const text = readFileSync(join(d, rel), 'utf8');
    const m = /"balance":(\d+)/.exec(text)!;
    rewrite(d, rel, text.replace(m[0], `"balance":${BigInt(m[1]!) + 1n}`));
    const r = await verifySnapshot(d);
    expectProblem(r, rel, /coin_in − coin_out = \d+, but balance is \d+/);
    expectProblem(r, rel, /unspent outputs sum to \d+, but balance is \d+/);
  });

  it('catches a broken next_block chain and a wrong stats height', async () => {
    const d = copy();
    const site = readJson<{ tip: string; height: number }>(d, SITE_INFO_PATH);
    const tipDoc = readJson<{ prev_block: string }>(d, `block/${site.tip}.json`);
    const rel = `block/${tipDoc.prev_block}.json`;
    const doc = readJson<Record<string, unknown>>(d, rel);
    delete doc.next_block;
    rewrite(d, rel, JSON.stringify(doc));
    const stats = readJson<{ blocks: { main: number } }>(d, 'stats.json');
    stats.blocks.main += 1;
    rewrite(d, 'stats.json', JSON.stringify(stats));
    const r = await verifySnapshot(d);
    expectProblem(r, rel, new RegExp(`height ${site.height - 1}: next_block is undefined, expected ${site.tip}`));
    expectProblem(r, 'stats.json', /blocks\.main is \d+/);
  });

  it('catches a tx .bin that does not hash to its name (manifest fixed up)', async () => {
    const d = copy();
    const tx = txWithLinks(d);
    const foreign = readdirSync(join(d, 'tx')).find((f) => f.endsWith('.bin') && f !== `${tx.hash}.bin`)!;
    rewrite(d, txPath(tx.hash, 'bin'), readFileSync(join(d, 'tx', foreign)));
    const r = await verifySnapshot(d);
    expectProblem(r, txPath(tx.hash, 'bin'), /hashes to [0-9a-f]{64}, not to its name/);
  });

  it('a directory replaced by a file: the paths below it are named missing (no crash on ENOTDIR)', async () => {
    const d = copy();
    const variant = readFileSync(join(d, MANIFEST_PATH), 'utf8').split('\n').find((l) => l.includes(' v/'))!.split(' ')[2]!;
    rmSync(join(d, 'v'), { recursive: true });
    writeFileSync(join(d, 'v'), 'not a directory');
    const r = await verifySnapshot(d);
    expectProblem(r, variant, /missing/);
    expectProblem(r, 'v', /not listed in the manifest/);
  });

  it('left the good tree alone', async () => {
    expect((await verifySnapshot(good)).ok).toBe(true);
  });

  describe('CLI', () => {
    const run = (d: string, ...extra: string[]) =>
      spawnSync(process.execPath, [...nodeArgs('src/cli.ts'), 'verify', '--dir', d, ...extra], { cwd: ROOT, encoding: 'utf8' });

    it('exits 0 with a one-line summary on a good tree', () => {
      const p = run(good);
      expect(p.stderr).not.toMatch(/snapshot:/);
      expect(p.status).toBe(0);
      expect(p.stdout.trim().split('\n')).toHaveLength(1);
      expect(p.stdout).toMatch(/^verify .*: OK/);
    });

    it('exits 1 on a corrupted tree; verbose output lists the problems', async () => {
      const d = copy();
      writeFileSync(join(d, 'stray.txt'), 'x');
      const rel = txPath(txWithLinks(d).hash, 'hex');
      unlinkSync(join(d, rel));
      const p = run(d);
      expect(p.status).toBe(1);
      expect(p.stdout.trim().split('\n')).toHaveLength(1);
      expect(p.stdout).toMatch(/FAILED: 2 problems/);
      const text = formatVerifyReport(await verifySnapshot(d), true); // what --verbose prints
      expect(text.split('\n')[0]).toBe(p.stdout.trim().split('\n')[0]!.replace(/\S+ \(namecoin/, `${d} (namecoin`));
      expect(text).toMatch(new RegExp(`\n  ${rel}: is (listed in the manifest but )?missing`));
      expect(text).toContain('\n  stray.txt: is not listed in the manifest');
    });
  });
});
