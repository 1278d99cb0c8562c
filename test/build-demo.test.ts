import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoChain, DEMO_BAD_UTF8_NAME, DEMO_NAME_OPS, DEMO_TIP_HEIGHT } from '../src/builder/demo.js';
import { sha256d } from '../src/chain/hash.js';
import { rootFromBranch } from '../src/chain/merkle.js';
import { buildSnapshot, type BuildReport } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { ALL_NAME_VARIANTS, MANIFEST_PATH, namePath, variantKey } from '../src/contract/layout.js';
import { expectFullRebuildIdentical } from './support/determinism.js';

const DEPTH = 30; // namecoin-regtest name expiration depth
const FIELDS = ['block', 'height', 'tx_idx', 'rawtx', 'mrkl_branch'] as const;

interface NameDoc {
  name: string;
  value: string;
  txid: string;
  address: string;
  expires_in: number;
  block?: string;
  height?: number;
  tx_idx?: number;
  rawtx?: string;
  mrkl_branch?: string[];
}

describe('build: the demo chain (Namecoin regtest)', () => {
  let dir: string;
  let out: string;
  let report: BuildReport;
  const chain = demoChain();
  const read = (rel: string) => readFileSync(join(out, rel), 'utf8');
  const json = (rel: string) => JSON.parse(read(rel));
  const opsOf = (name: Buffer) => DEMO_NAME_OPS.filter((o) => o.nameHex === name.toString('hex'));
  const names = [...new Set(DEMO_NAME_OPS.map((o) => o.nameHex))].map((h) => Buffer.from(h, 'hex'));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-demo-'));
    out = join(dir, 'out');
    report = await buildSnapshot({ source: demoSource(), outDir: out });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports blocks, side branch, orphan, names', () => {
    expect(report.height).toBe(DEMO_TIP_HEIGHT);
    expect(report.tip).toBe(chain.main[DEMO_TIP_HEIGHT]!.hash);
    expect(report.blocks).toEqual({ main: DEMO_TIP_HEIGHT + 1, side: chain.side.length, orphan: chain.orphans.length });
    expect(report.names).toBe(names.length);
    expect(report.nonUtf8Names).toBe(opsOf(DEMO_BAD_UTF8_NAME).length);
  });

  it.each(names.map((n) => [n.toString('latin1'), n] as const))('name %j: history in chain order with every op', (_label, name) => {
    const ops = opsOf(name);
    const history: NameDoc[] = json(namePath(name, { history: true, with: new Set(['height']) }));
    expect(history.map((r) => r.height)).toEqual(ops.map((o) => o.height));
    for (const [i, r] of history.entries()) {
      const value = Buffer.from(ops[i]!.valueHex, 'hex');
      const utf8 = Buffer.from(value.toString('utf8'), 'utf8').equals(value);
      expect(r.value).toBe(utf8 ? value.toString('utf8') : value.toString('latin1'));
      expect(r.expires_in).toBe(ops[i]!.height + DEPTH - DEMO_TIP_HEIGHT);
    }
    const current: NameDoc = json(namePath(name, { history: false, with: new Set() }));
    const { height: _height, ...last } = history.at(-1)!;
    expect(current).toEqual(last);
  });

  it('a name with ≥ 3 operations: all 64 variants, field by field', () => {
    const name = Buffer.from('d/history');
    const full: NameDoc[] = json(namePath(name, { history: true, with: new Set(FIELDS) }));
    expect(full.length).toBeGreaterThanOrEqual(3);
    for (const r of full) {
      // Independent checks of every extra field against the block files and the tx bytes.
      const block = json(`block/${r.block}.json`);
      expect(block.tx[r.tx_idx!].hash).toBe(r.txid);
      expect(json(`tx/${r.txid}.json`).blocknumber).toBe(r.height);
      expect(sha256d(Buffer.from(r.rawtx!, 'hex')).reverse().toString('hex')).toBe(r.txid);
      expect(read(`tx/${r.txid}.hex`)).toBe(r.rawtx);
      const leaf = Buffer.from(r.txid, 'hex').reverse();
      expect(rootFromBranch(leaf, r.mrkl_branch!, r.tx_idx!).reverse().toString('hex')).toBe(block.mrkl_root);
      expect(json(`tx/${r.txid}.json`).out.some((o: { address?: string }) => o.address === r.address)).toBe(true);
    }
    expect(ALL_NAME_VARIANTS).toHaveLength(64);
    for (const v of ALL_NAME_VARIANTS) {
      const pick = (r: NameDoc) => {
        const o: Record<string, unknown> = { name: r.name, value: r.value, txid: r.txid, address: r.address, expires_in: r.expires_in };
        for (const f of FIELDS) if (v.with.has(f)) o[f] = r[f];
        return o;
      };
      const doc = json(namePath(name, v));
      const expected = v.history ? full.map(pick) : pick(full.at(-1)!);
      expect(doc, variantKey(v)).toEqual(expected);
      // Key order: name, value, txid, address, expires_in, then the with_ fields in the original's order.
      const keys = Object.keys(v.history ? doc[0] : doc);
      expect(keys).toEqual(['name', 'value', 'txid', 'address', 'expires_in', ...FIELDS.filter((f) => v.with.has(f))]);
    }
  });

  it('an expired name re-registered: both registrations in history, the new one current', () => {
    const name = Buffer.from('d/expiring');
    const history: NameDoc[] = json(namePath(name, { history: true, with: new Set(['height']) }));
    expect(history.map((r) => [r.height, r.value])).toEqual([
      [114, 'first registration'],
      [145, 'registered again'],
    ]);
    expect(history[0]!.expires_in).toBe(114 + DEPTH - DEMO_TIP_HEIGHT);
    expect(history[0]!.expires_in).toBeLessThan(0);
    expect(json(namePath(name, { history: false, with: new Set() })).expires_in).toBe(145 + DEPTH - DEMO_TIP_HEIGHT);
  });

  it('names with / in several places, path-hostile and non-UTF-8 bytes map to safe files', () => {
    expect(existsSync(join(out, 'name/d/a/b.json'))).toBe(true);
    expect(json('name/~2Flead.json').name).toBe('/lead');
    expect(json('name/trail~2F.json').name).toBe('trail/');
    expect(json('name/~2E..json').name).toBe('..');
    expect(json('name/d/100~25.json').name).toBe('d/100%');
    expect(json('name/d/~FF~FE.json').name).toBe(DEMO_BAD_UTF8_NAME.toString('latin1'));
    for (const f of readdirSync(join(out, 'name'), { recursive: true }) as string[]) {
      expect(f).toMatch(/^[A-Za-z0-9._~/-]+$/);
    }
  });

  it('a name update in a side block is not in the history', () => {
    const history: NameDoc[] = json(namePath(Buffer.from('d/history'), { history: true, with: new Set() }));
    expect(history.map((r) => r.value)).not.toContain('side-branch value');
  });

  it('side and orphan blocks are written without next_block; main blocks link', () => {
    for (const b of [...chain.side, ...chain.orphans]) {
      const doc = json(`block/${b.hash}.json`);
      expect(doc.next_block).toBeUndefined();
      expect(doc.hash).toBe(b.hash);
    }
    const forkParent = json(`block/${chain.side[0]!.prevHash}.json`);
    expect(forkParent.next_block).toBe(chain.main[chain.side[0]!.height]!.hash);
    // Side-only transactions are not in /tx.
    const sideOnly = chain.side.flatMap((b) => b.txids).filter((t) => !chain.main.some((m) => m.txids.includes(t)));
    expect(sideOnly.length).toBeGreaterThan(0);
    for (const t of sideOnly) expect(existsSync(join(out, `tx/${t}.json`))).toBe(false);
  });

  it('stats: P2SH redeem types of the five P2SH spends at height 102, every script type', () => {
    const s = json('stats.json');
    expect(s.blocks).toMatchObject({ main: 151, side: 2, orphan: 1, total: 154 });
    expect(s.p2sh_types).toMatchObject({ multisig: 1, pubkey_hash: 1, pubkey: 1, witness_v0_keyhash: 1, witness_v0_scripthash: 1, script_hash: 0 });
    for (const k of ['pubkey', 'pubkey_hash', 'multisig', 'script_hash', 'op_return', 'unknown', 'witness_v0_keyhash', 'witness_v0_scripthash', 'witness_v1_taproot', 'witness_unknown', 'name_new', 'name_firstupdate', 'name_update']) {
      expect(s.script_types[k], k).toBeGreaterThan(0);
    }
    expect(s.script_types.name_firstupdate).toBe(DEMO_NAME_OPS.filter((o) => o.op === 'name_firstupdate').length);
    expect(s.script_types.name_update).toBe(DEMO_NAME_OPS.filter((o) => o.op === 'name_update').length);
    expect(s.txs).toBe(chain.main.reduce((n, b) => n + b.txids.length, 0));
  });

  it('every address document is consistent with the tx documents', () => {
    const files = readdirSync(join(out, 'address'));
    expect(files.length).toBe(report.addresses);
    let withBoth = 0;
    for (const f of files) {
      const a = json(`address/${f}`);
      const unspentSum = a.unspent.reduce((s: bigint, u: { value: string }) => s + BigInt(u.value.replace('.', '')), 0n);
      expect(BigInt(a.balance), f).toBe(unspentSum);
      expect(a.coin_in - a.coin_out).toBe(a.balance);
      expect(a.tx_sz).toBe(Object.keys(a.transactions).length);
      for (const u of a.unspent) {
        const tx = json(`tx/${u.tx.hash}.json`);
        expect(tx.out[u.tx.n].next_in).toBeUndefined();
        expect(tx.out[u.tx.n].address).toBe(a.address);
      }
      if (a.unspent.length > 0 && a.tx_out_sz > 0) withBoth++;
    }
    expect(withBoth).toBeGreaterThan(0);
  });

  it('every next_in points at an input that spends the output back', () => {
    const txs = readdirSync(join(out, 'tx')).filter((f) => f.endsWith('.json'));
    let links = 0;
    for (const f of txs) {
      const tx = json(`tx/${f}`);
      tx.out.forEach((o: { next_in?: { hash: string; n: number } }, n: number) => {
        if (!o.next_in) return;
        links++;
        expect(json(`tx/${o.next_in.hash}.json`).in[o.next_in.n].prev_out).toEqual({ hash: tx.hash, n });
      });
    }
    expect(links).toBeGreaterThan(10);
  });

  it('is deterministic: a full rebuild into the same --out writes every file again and gives a byte-identical manifest', async () => {
    await expectFullRebuildIdentical(out, () => buildSnapshot({ source: demoSource(), outDir: out, full: true }));
  });

  it('only nginx.conf depends on the --out path', async () => {
    const out2 = join(dir, 'out2');
    await buildSnapshot({ source: demoSource(), outDir: out2 });
    const differing = (m: string) => new Set(m.trim().split('\n'));
    const a = differing(read(MANIFEST_PATH));
    const b = differing(readFileSync(join(out2, MANIFEST_PATH), 'utf8'));
    expect([...a].filter((l) => !b.has(l)).map((l) => l.split(' ')[2])).toEqual(['nginx.conf']);
  });
});
