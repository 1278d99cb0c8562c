import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { buildSnapshot, type BuildReport } from '../src/site/build.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { memorySource } from '../src/source/memory.js';
import { expectFullRebuildIdentical } from './support/determinism.js';
import { fixturePath, framedBlocks, readChain } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

// Bitcoin mainnet 0–599 (NBitcoin's blk00000/blk00001): facts from shared/reference/chaindata.md.
const KNOWN = {
  0: '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f',
  9: '000000008d9dc510f23c2657fc4f67bea30078cc05a90eb89e84cc475c080805',
  100: '000000007bc154e0fa7ea32218a72fe2c1bb9f86cf8c9ebf9a715ed27fdb229a',
  170: '00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee',
  599: '0000000042844571bc6bce8e1c0fbec99466971eaff89fef8c0d123582181d4d',
} as const;
const F4184 = 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16';

function nbitcoinSource() {
  const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
  return memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin blk files');
}

describeShared('chaindata')('build: Bitcoin mainnet 0–599', () => {
  let dir: string;
  let out: string;
  let report: BuildReport;
  const json = (rel: string) => JSON.parse(readFileSync(join(out, rel), 'utf8'));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-btc-'));
    out = join(dir, 'out');
    report = await buildSnapshot({ source: nbitcoinSource(), outDir: out });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports the chain', () => {
    expect(report.height).toBe(599);
    expect(report.tip).toBe(KNOWN[599]);
    expect(report.txs).toBe(616);
    expect(report.addresses).toBe(614);
  });

  it('writes every tx and block in three formats', () => {
    const manifest = readFileSync(join(out, MANIFEST_PATH), 'utf8').trim().split('\n');
    const paths = manifest.map((l) => l.split(' ')[2]!);
    for (const ext of ['json', 'bin', 'hex']) {
      expect(paths.filter((p) => p.startsWith('tx/') && p.endsWith('.' + ext))).toHaveLength(616);
      expect(paths.filter((p) => p.startsWith('block/') && p.endsWith('.' + ext))).toHaveLength(600);
    }
    for (const p of paths) expect(existsSync(join(out, p)), p).toBe(true);
  });

  it('tx f4184fc5… spends block 9’s coinbase and pays 10 + 40 BTC', () => {
    const tx = json(`tx/${F4184}.json`);
    expect(tx.out.map((o: { value: string; address: string }) => [o.value, o.address])).toEqual([
      ['10.00000000', '1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3'],
      ['40.00000000', '12cbQLTFMXRnSzktFkuoG3eHoMeFtpTu3S'],
    ]);
    expect(tx.block).toBe(KNOWN[170]);
    expect(tx.blocknumber).toBe(170);
    const block9 = json(`block/${KNOWN[9]}.json`);
    const coinbase = block9.tx[0];
    expect(tx.in[0].prev_out).toEqual({ hash: coinbase.hash, n: 0 });
    expect(coinbase.out[0].next_in).toEqual({ hash: F4184, n: 0 });
    expect(json(`tx/${coinbase.hash}.json`).out[0].next_in).toEqual({ hash: F4184, n: 0 });
    expect(readFileSync(join(out, `tx/${F4184}.bin`)).toString('hex')).toBe(readFileSync(join(out, `tx/${F4184}.hex`), 'utf8'));
  });

  it.each(['rawblock-0.json', 'rawblock-1.json', 'rawblock-9.json', 'rawblock-170.json'])(
    'block of bitcoin-ruby %s equals the fixture plus the documented extras',
    (file) => {
      const fixture = JSON.parse(readFileSync(fixturePath('bitcoin-ruby', 'spec', 'bitcoin', 'fixtures', file), 'utf8'));
      const ours = json(`block/${fixture.hash}.json`);
      const stripped = structuredClone(ours);
      delete stripped.next_block;
      for (const tx of stripped.tx) {
        expect(tx.nid).toMatch(/^[0-9a-f]{64}$/);
        delete tx.nid;
        for (const o of tx.out) {
          expect(o.address).toMatch(/^1/); // every output here is P2PK: the key's P2PKH address
          delete o.address;
          delete o.next_in;
        }
      }
      expect(stripped).toEqual(fixture);
      expect(Object.keys(ours)).toEqual([...Object.keys(fixture), 'next_block']);
      // next_block links to the block whose prev_block is this one.
      expect(json(`block/${ours.next_block}.json`).prev_block).toBe(fixture.hash);
    },
  );

  it('the tip block has no next_block', () => {
    expect(json(`block/${KNOWN[599]}.json`).next_block).toBeUndefined();
  });

  it('stats: 600 blocks, 616 txs, 627 P2PK outputs, 30,000 BTC', () => {
    const s = json('stats.json');
    expect(s.blocks).toEqual({ total: 600, main: 600, side: 0, orphan: 0, size: 68852 - 300 * 8 + 70449 - 300 * 8 });
    expect(s.txs).toBe(616);
    expect(s.txouts).toBe(627);
    expect(s.txins).toBe(600 + 25);
    expect(s.addrs).toBe(614);
    expect(s.coins).toBe(600 * 50 * 1e8);
    expect(s.script_types.pubkey).toBe(627);
    expect(Object.entries(s.script_types).filter(([k]) => k !== 'pubkey').every(([, v]) => v === 0)).toBe(true);
    expect(s.time).toBe(1232038030);
    expect(Object.keys(s)).toEqual(['blocks', 'txs', 'txins', 'txouts', 'addrs', 'coins', 'work', 'script_types', 'p2sh_types', 'time']);
  });

  it('work is the exact cumulative chain work (600 blocks at difficulty 1)', () => {
    const text = readFileSync(join(out, 'stats.json'), 'utf8');
    // Every block 0–599 has bits 0x1d00ffff: work per block = 2^256 / (0xffff·2^208 + 1) = 4295032833.
    expect(text).toContain(`"work":${600n * 4295032833n}`);
  });

  it.each([
    ['19QKDUJtx9n7Vaga6nX1bVHdsnT4Khfyi6', 250],
    ['1BBz9Z15YpELQ4QP5sEKb1SwxkcmPb5TMs', 61],
    ['1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', 50],
  ])('address %s has balance %i BTC', (address, btc) => {
    const a = json(`address/${address}.json`);
    expect(a.address).toBe(address);
    expect(a.balance).toBe(btc * 1e8);
    expect(a.coin_in - a.coin_out).toBe(a.balance);
    const unspentSum = a.unspent.reduce((s: number, u: { value: string }) => s + Math.round(Number(u.value) * 1e8), 0);
    expect(unspentSum).toBe(a.balance);
    expect(a.tx_sz).toBe(Object.keys(a.transactions).length);
  });

  it('address 12cbQLTF…: block 9 coinbase received, spent by f4184fc5…, which pays 40 BTC back', () => {
    const a = json('address/12cbQLTFMXRnSzktFkuoG3eHoMeFtpTu3S.json');
    expect(Object.keys(a)).toEqual(['address', 'hash160', 'tx_in_sz', 'tx_out_sz', 'coin_in', 'coin_out', 'balance', 'unspent', 'tx_sz', 'transactions']);
    const coinbase9 = json(`block/${KNOWN[9]}.json`).tx[0].hash;
    // First encounter order: the receiving tx, then its spender.
    expect(Object.keys(a.transactions).slice(0, 2)).toEqual([coinbase9, F4184]);
    expect(a.transactions[F4184]).toEqual(json(`tx/${F4184}.json`));
    // f4184fc5…:1 (40 BTC back to the same key) is spent later: its spender is in the document too.
    const next = json(`tx/${F4184}.json`).out[1].next_in;
    expect(a.transactions[next.hash].in[next.n].prev_out).toEqual({ hash: F4184, n: 1 });
    expect(a.coin_in).toBeGreaterThanOrEqual(90e8);
    expect(a.coin_out).toBeGreaterThanOrEqual(90e8);
    for (const u of a.unspent) {
      expect(u.address).toBe('12cbQLTFMXRnSzktFkuoG3eHoMeFtpTu3S');
      expect(u.next_in).toBeUndefined();
    }
  });

  it('is deterministic: a full rebuild into the same --out writes every file again and gives the same manifest', async () => {
    await expectFullRebuildIdentical(out, () => buildSnapshot({ source: nbitcoinSource(), outDir: out, full: true }));
  });

  it('a build at a lower height ends there', async () => {
    const out3 = join(dir, 'out3');
    const r = await buildSnapshot({ source: nbitcoinSource(), outDir: out3, height: 170 });
    expect(r.tip).toBe(KNOWN[170]);
    const b = JSON.parse(readFileSync(join(out3, `block/${KNOWN[170]}.json`), 'utf8'));
    expect(b.next_block).toBeUndefined();
    expect(JSON.parse(readFileSync(join(out3, 'stats.json'), 'utf8')).blocks.main).toBe(171);
    await expect(buildSnapshot({ source: nbitcoinSource(), outDir: out3, height: 600 })).rejects.toThrow(/tip .*height 599/);
    expect(existsSync(join(out3, `block/${KNOWN[170]}.json`))).toBe(true);
  });
});
