import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptAddress } from '../src/chain/address.js';
import { parseBlock, type Block } from '../src/chain/block.js';
import { hash160, sha256d, toDisplayHex } from '../src/chain/hash.js';
import { merkleRoot } from '../src/chain/merkle.js';
import { parseNameScript } from '../src/chain/name-script.js';
import { blockSubsidy, NETWORKS, type Network } from '../src/chain/networks.js';
import { classifyScript, redeemScriptType } from '../src/chain/script.js';
import { isCoinbase, type Tx } from '../src/chain/tx.js';
import { bitsToTarget } from '../src/chain/work.js';
import { writeBlocksDir } from '../src/builder/blkfiles.js';
import { ChainBuilder, type BuiltBlock, type BuiltChain, type NameNewHandle, type TxHandle } from '../src/builder/chain.js';
import { generateChain, NAME_RATES, REAL_WORLD_DEFAULTS, type GeneratedBlock } from '../src/builder/generate.js';
import { ShapeMeter, type ChainShape } from '../src/builder/shape.js';
import { locks } from '../src/builder/scripts.js';
import { regtestGenesis } from '../src/builder/serialize.js';
import { DEMO_BAD_UTF8_NAME, DEMO_NAME_OPS, DEMO_TIP_HEIGHT, demoChain } from '../src/builder/demo.js';

const REGTEST_GENESIS = '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206';
const BTC = NETWORKS['bitcoin-regtest'];
const NMC = NETWORKS['namecoin-regtest'];
const MARKER = Buffer.from('fabe6d6d', 'hex');

const tmpDirs: string[] = [];
afterAll(() => {
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

function hashBelow(hash: Buffer, bits: number): boolean {
  return BigInt(`0x${toDisplayHex(hash)}`) <= bitsToTarget(bits);
}

/** BIP34 height from a coinbase scriptSig (OP_N for 1..16, else a minimal push). */
function bip34Height(scriptSig: Buffer): number {
  const op = scriptSig[0]!;
  if (op === 0) return 0;
  if (op >= 0x51 && op <= 0x60) return op - 0x50;
  expect(op).toBeGreaterThan(0);
  expect(op).toBeLessThanOrEqual(8);
  return scriptSig.subarray(1, 1 + op).readUIntLE(0, op);
}

/** Structure checks of one block against the parser: merkle, PoW/AuxPoW, BIP34, witness commitment. */
function checkBlock(b: BuiltBlock, net: Network, auxpow: boolean): Block {
  const blk = parseBlock(b.raw, { auxpow: net.auxpow });
  expect(blk.header.id).toBe(b.hash);
  expect(toDisplayHex(blk.header.prevHash)).toBe(b.prevHash);
  expect(blk.header.time).toBe(b.time);
  expect(blk.txs.map((t) => t.txid)).toEqual(b.txids);
  expect(blk.header.merkleRoot.equals(merkleRoot(blk.txs.map((t) => t.hash)))).toBe(true);
  expect(isCoinbase(blk.txs[0]!)).toBe(true);
  expect(blk.txs.slice(1).some(isCoinbase)).toBe(false);
  if (b.height === 0) return blk;
  expect(bip34Height(blk.txs[0]!.inputs[0]!.script)).toBe(b.height);
  expect(blk.header.bits).toBe(0x207fffff);
  if (auxpow) {
    const ap = blk.auxpow!;
    expect(ap).toBeDefined();
    expect(blk.header.version & 0x100).toBe(0x100);
    expect(blk.header.version >>> 16).toBe(1);
    // PoW is on the parent header; the parent's merkle root commits to the parent coinbase.
    expect(hashBelow(ap.parentHeader.hash, blk.header.bits)).toBe(true);
    let h = ap.coinbaseTx.hash;
    ap.coinbaseBranch.forEach((sib, j) => {
      h = (ap.coinbaseIndex >> j) & 1 ? sha256d(Buffer.concat([sib, h])) : sha256d(Buffer.concat([h, sib]));
    });
    expect(h.equals(ap.parentHeader.merkleRoot)).toBe(true);
    expect(ap.chainBranch).toHaveLength(0);
    const script = ap.coinbaseTx.inputs[0]!.script;
    const at = script.indexOf(MARKER);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(script.subarray(at + 4, at + 36).equals(Buffer.from(blk.header.hash).reverse())).toBe(true);
    expect(script.readUInt32LE(at + 36)).toBe(1); // merkle size 2^0
    expect(ap.parentHeader.version >>> 16).not.toBe(1); // parent is not a Namecoin block
  } else {
    expect(blk.auxpow).toBeUndefined();
    expect(hashBelow(blk.header.hash, blk.header.bits)).toBe(true);
  }
  // BIP141: commitment in the coinbase when any tx has witness data.
  const cb = blk.txs[0]!;
  if (blk.txs.some((t) => t.hasWitness && !isCoinbase(t))) {
    const wroot = merkleRoot([Buffer.alloc(32), ...blk.txs.slice(1).map((t) => sha256d(t.raw))]);
    const commitment = sha256d(Buffer.concat([wroot, cb.inputs[0]!.witness![0]!]));
    const out = cb.outputs.find((o) => o.script.subarray(0, 6).toString('hex') === '6a24aa21a9ed');
    expect(out?.script.subarray(6).equals(commitment)).toBe(true);
  }
  return blk;
}

interface Coin {
  value: bigint;
  script: Buffer;
  height: number;
  coinbase: boolean;
}

interface NameState {
  key: string;
  height: number;
}

interface NameOpSeen {
  op: string;
  nameHex: string;
  height: number;
  valueHex: string;
}

/**
 * Replays a branch from genesis like a (signature-less) node: inputs exist and
 * are unspent, values balance, coinbase ≤ subsidy + fees and matures after 100
 * blocks, Namecoin name rules (0x7100, ≥ 12 blocks, commitment, expiry 30).
 */
function replay(path: Block[], heights: number[], net: Network): { names: NameOpSeen[]; utxo: Map<string, Coin> } {
  const utxo = new Map<string, Coin>();
  const names = new Map<string, NameState>();
  const seen: NameOpSeen[] = [];
  const namecoin = net.nameExpirationDepth !== undefined;
  path.forEach((blk, i) => {
    const height = heights[i]!;
    let fees = 0n;
    blk.txs.forEach((tx: Tx, ti) => {
      if (ti === 0) return;
      let inSum = 0n;
      const spent: (Coin & { key: string })[] = [];
      for (const input of tx.inputs) {
        const key = `${toDisplayHex(input.prevHash)}:${input.prevIndex}`;
        const coin = utxo.get(key);
        expect(coin, `height ${height} tx ${tx.txid} spends missing/spent ${key}`).toBeDefined();
        if (coin!.coinbase) expect(height - coin!.height).toBeGreaterThanOrEqual(100);
        utxo.delete(key);
        inSum += coin!.value;
        spent.push({ ...coin!, key });
      }
      const outSum = tx.outputs.reduce((s, o) => s + o.value, 0n);
      expect(inSum).toBeGreaterThanOrEqual(outSum);
      fees += inSum - outSum;
      if (namecoin) {
        const nameIns = spent.filter((c) => parseNameScript(c.script));
        const nameOuts = tx.outputs.map((o) => parseNameScript(o.script)).filter((x) => x !== undefined);
        if (tx.version !== 0x7100) {
          expect(nameIns).toHaveLength(0);
        } else {
          expect(nameIns.length).toBeLessThanOrEqual(1);
          expect(nameOuts.length).toBe(1);
          const op = nameOuts[0]!;
          const vout = tx.outputs.findIndex((o) => parseNameScript(o.script));
          const depth = net.nameExpirationDepth!(height);
          if (op.op === 'name_new') {
            expect(op.hash).toHaveLength(20);
            expect(nameIns).toHaveLength(0);
          } else if (op.op === 'name_firstupdate') {
            const prev = parseNameScript(nameIns[0]!.script)!;
            expect(prev.op).toBe('name_new');
            expect(height - nameIns[0]!.height).toBeGreaterThanOrEqual(12);
            expect(hash160(Buffer.concat([op.rand!, op.name!])).equals(prev.hash!)).toBe(true);
            const existing = names.get(op.name!.toString('hex'));
            if (existing) expect(existing.height + depth).toBeLessThanOrEqual(height);
            names.set(op.name!.toString('hex'), { key: `${tx.txid}:${vout}`, height });
          } else {
            const prev = parseNameScript(nameIns[0]!.script)!;
            expect(['name_firstupdate', 'name_update']).toContain(prev.op);
            expect(prev.name!.equals(op.name!)).toBe(true);
            const e = names.get(op.name!.toString('hex'))!;
            expect(e.height + depth).toBeGreaterThan(height);
            expect(nameIns[0]!.key).toBe(e.key);
            names.set(op.name!.toString('hex'), { key: `${tx.txid}:${vout}`, height });
          }
          if (op.op !== 'name_new') seen.push({ op: op.op, nameHex: op.name!.toString('hex'), height, valueHex: op.value!.toString('hex') });
        }
      }
      tx.outputs.forEach((o, vout) => utxo.set(`${tx.txid}:${vout}`, { value: o.value, script: o.script, height, coinbase: false }));
    });
    const cb = blk.txs[0]!;
    if (height > 0) {
      const cbOut = cb.outputs.reduce((s, o) => s + o.value, 0n);
      expect(cbOut).toBeLessThanOrEqual(blockSubsidy(net, height) + fees);
      cb.outputs.forEach((o, vout) => utxo.set(`${cb.txid}:${vout}`, { value: o.value, script: o.script, height, coinbase: true }));
    }
    // Expire names: their coins become unspendable.
    if (namecoin) {
      for (const e of names.values()) if (e.height + net.nameExpirationDepth!(height) <= height) utxo.delete(e.key);
    }
  });
  return { names: seen, utxo };
}

/** Parses and checks every block; replays the main chain and every side block's branch. */
function checkChain(chain: BuiltChain, auxpow: boolean): { parsed: Map<string, Block>; names: NameOpSeen[]; utxo: Map<string, Coin> } {
  const net = chain.network;
  const parsed = new Map<string, Block>();
  const byHash = new Map(chain.blocks.map((b) => [b.hash, b]));
  for (const b of chain.blocks) parsed.set(b.hash, checkBlock(b, net, auxpow));
  expect(chain.main[0]!.hash).toBe(REGTEST_GENESIS);
  chain.main.forEach((b, h) => {
    expect(b.height).toBe(h);
    expect(b.kind).toBe('main');
    if (h > 0) {
      expect(b.prevHash).toBe(chain.main[h - 1]!.hash);
      expect(b.time).toBeGreaterThan(chain.main[h - 1]!.time);
    }
  });
  expect(chain.tip).toBe(chain.main[chain.main.length - 1]);
  for (const s of chain.side) {
    const parent = byHash.get(s.prevHash)!;
    expect(parent).toBeDefined();
    expect(s.height).toBe(parent.height + 1);
    expect(s.height).toBeLessThan(chain.tip.height + 1); // less work than the main chain
    const path: BuiltBlock[] = [];
    for (let x: BuiltBlock | undefined = s; x; x = x.height > 0 ? byHash.get(x.prevHash) : undefined) path.unshift(x);
    expect(path[0]!.hash).toBe(REGTEST_GENESIS);
    replay(path.map((p) => parsed.get(p.hash)!), path.map((p) => p.height), net);
  }
  for (const o of chain.orphans) expect(byHash.has(o.prevHash)).toBe(false);
  const main = replay(chain.main.map((b) => parsed.get(b.hash)!), chain.main.map((b) => b.height), net);
  return { parsed, ...main };
}

describe('builder: genesis', () => {
  it('builds the regtest genesis exactly as Core', () => {
    const g = regtestGenesis();
    expect(toDisplayHex(g.hash)).toBe(REGTEST_GENESIS);
    const blk = parseBlock(g.raw, { auxpow: false });
    expect(blk.txs[0]!.txid).toBe('4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b');
    expect(blk.header.nonce).toBe(2);
    expect(blk.header.time).toBe(1296688602);
    for (const net of [BTC, NMC]) {
      const chain = new ChainBuilder({ network: net, seed: 1 }).build();
      expect(chain.main[0]!.hash).toBe(net.genesis);
      expect(chain.main[0]!.raw.equals(g.raw)).toBe(true);
    }
  });

  it('refuses non-regtest networks', () => {
    expect(() => new ChainBuilder({ network: NETWORKS.bitcoin, seed: 1 })).toThrow(/regtest/);
  });
});

/** A Bitcoin regtest chain with every output type, P2SH redeem variety, a side branch and an orphan. */
function bitcoinChain(seed: number | string): BuiltChain {
  const cb = new ChainBuilder({ network: BTC, seed });
  cb.mine(101);
  const k = () => cb.key();
  const redeemLocks = [
    locks.p2sh(locks.multisig(2, [k(), k(), k()])),
    locks.p2sh(locks.p2pkh(k())),
    locks.p2sh(locks.p2pk(cb.key({ uncompressed: true }))),
    locks.p2sh(locks.p2wpkh(k())),
    locks.p2sh(locks.p2wsh(locks.multisig(1, [k(), k()]))),
  ];
  const others = [locks.p2pk(k()), locks.p2pkh(k()), locks.multisig(1, [k(), k()]), locks.p2wpkh(k()), locks.p2wsh(locks.p2pk(k())), locks.p2tr(k()), locks.hashlock(Buffer.from('x'))];
  let fan!: TxHandle;
  cb.block((b) => {
    fan = b.tx({ outputs: [...redeemLocks, ...others, locks.opReturn(Buffer.from('hi'))].map((lock, i) => ({ lock, value: i === 12 ? 0n : 10_000_000n })) });
  });
  cb.block((b) => {
    b.tx({ inputs: [0, 1, 2, 3, 4].map((i) => fan.out(i)), outputs: [{ lock: locks.p2pkh(k()), value: 30_000_000n }] });
    b.tx({ inputs: [5, 6, 7, 8, 9, 10, 11].map((i) => fan.out(i)), outputs: [{ lock: locks.p2tr(k()) }, { lock: locks.p2wpkh(k()) }] });
  });
  const fork = cb.mine(3)[0]!;
  cb.block((b) => b.pay(locks.p2pkh(k()), 1_000_000n), { parent: fork });
  cb.orphan((b) => b.pay(locks.p2wpkh(k()), 1_000_000n));
  cb.mine(1);
  return cb.build();
}

describe('builder: Bitcoin regtest chain', () => {
  const chain = bitcoinChain('btc');

  it('every block parses, PoW solved on the header, merkle/prev/BIP34/witness commitment correct; spends valid', () => {
    const { parsed, utxo } = checkChain(chain, false);
    expect(chain.tip.height).toBe(107);
    expect(chain.side).toHaveLength(1);
    expect(chain.orphans).toHaveLength(1);
    // P2SH spends carry several redeem types as the last scriptSig push.
    const redeemTypes = new Set<string>();
    for (const b of chain.main) {
      for (const tx of parsed.get(b.hash)!.txs.slice(1)) for (const i of tx.inputs) {
        const t = redeemScriptType(i.script, false);
        if (t && i.script.length > 0 && tx.inputs.length === 5) redeemTypes.add(t);
      }
    }
    expect([...redeemTypes].sort()).toEqual(['multisig', 'pubkey', 'pubkey_hash', 'witness_v0_keyhash', 'witness_v0_scripthash']);
    expect(utxo.size).toBeGreaterThan(100);
  });

  it('is deterministic from the seed', () => {
    const again = bitcoinChain('btc');
    expect(again.blocks.map((b) => b.raw.toString('hex'))).toEqual(chain.blocks.map((b) => b.raw.toString('hex')));
    const other = bitcoinChain('other');
    expect(other.tip.hash).not.toBe(chain.tip.hash);
    expect(other.main[1]!.raw.equals(chain.main[1]!.raw)).toBe(false);
  });
});

describe('builder: rules enforced', () => {
  const setup = () => {
    const cb = new ChainBuilder({ network: NMC, seed: 'rules' });
    cb.mine(101);
    let nn!: NameNewHandle;
    cb.block((b) => {
      nn = b.nameNew('d/rule');
    });
    return { cb, nn };
  };

  it('name_firstupdate needs 12 blocks', () => {
    const { cb, nn } = setup();
    cb.mine(10);
    expect(() => cb.block((b) => b.nameFirstUpdate(nn, 'v'))).toThrow(/less than 12 blocks/);
    const tipBefore = cb.tip.hash;
    cb.mine(1);
    expect(cb.tip.hash).not.toBe(tipBefore);
    cb.block((b) => b.nameFirstUpdate(nn, 'v')); // 12 blocks after the name_new
  });

  it('expiry: no update at +30, re-registration allowed only after expiry', () => {
    const { cb, nn } = setup();
    cb.mine(11);
    cb.block((b) => b.nameFirstUpdate(nn, 'v')); // height 114
    let nn2!: NameNewHandle;
    cb.block((b) => {
      nn2 = b.nameNew('d/rule');
    }); // 115
    cb.mine(12); // 116..127
    expect(() => cb.block((b) => b.nameFirstUpdate(nn2, 'again'))).toThrow(/not expired/);
    cb.mine(15); // ..142
    cb.block((b) => b.nameUpdate('d/rule', 'last')); // 143 = 114 + 29: still valid
    cb.mine(29); // 144..172
    expect(() => cb.block((b) => b.nameUpdate('d/rule', 'late'))).toThrow(/expired/); // 173 = 143 + 30
    cb.block((b) => b.nameFirstUpdate(nn2, 'again'));
    const chain = cb.build();
    const { names } = checkChain(chain, true);
    expect(names.map((n) => [n.op, n.height])).toEqual([
      ['name_firstupdate', 114],
      ['name_update', 143],
      ['name_firstupdate', 173],
    ]);
    expect(chain.names.filter((r) => r.op === 'name_firstupdate').map((r) => r.reregistration)).toEqual([false, true]);
  });

  it('spends must reference unspent, mature outputs', () => {
    const cb = new ChainBuilder({ network: BTC, seed: 'spends' });
    const early = cb.mine(2)[0]!;
    cb.mine(50);
    expect(() => cb.block((b) => b.tx({ inputs: [{ txid: early.txids[0]!, vout: 0 }], outputs: [{ lock: locks.p2pkh(cb.key()) }] }))).toThrow(/immature/);
    cb.mine(60);
    let t!: { txid: string };
    cb.block((b) => {
      t = b.tx({ inputs: [{ txid: early.txids[0]!, vout: 0 }], outputs: [{ lock: locks.p2pkh(cb.key()) }] });
    });
    expect(() => cb.block((b) => b.tx({ inputs: [{ txid: early.txids[0]!, vout: 0 }], outputs: [] }))).toThrow(/not an unspent output/);
    expect(() => cb.block((b) => b.tx({ inputs: [{ txid: t.txid, vout: 7 }], outputs: [] }))).toThrow(/not an unspent output/);
    expect(() => cb.block((b) => b.nameNew('x'))).toThrow(/Namecoin/);
    checkChain(cb.build(), false);
  });
});

describe('builder: demo chain', () => {
  const chain = demoChain();
  const { parsed, names, utxo } = checkChain(chain, true);
  const mainTxs = chain.main.flatMap((b) => parsed.get(b.hash)!.txs);

  it('has the documented shape', () => {
    expect(chain.network).toBe(NMC);
    expect(chain.tip.height).toBe(DEMO_TIP_HEIGHT);
    expect(chain.side.map((b) => b.height)).toEqual([148, 149]);
    expect(chain.side[0]!.prevHash).toBe(chain.main[147]!.hash);
    expect(chain.side[1]!.prevHash).toBe(chain.side[0]!.hash);
    expect(chain.orphans.map((b) => b.height)).toEqual([150]);
    expect(chain.blocks).toHaveLength(DEMO_TIP_HEIGHT + 1 + 3);
  });

  it('main-chain name operations are exactly DEMO_NAME_OPS (parsed with parseNameScript)', () => {
    expect(names).toEqual(DEMO_NAME_OPS);
    const byName = new Map<string, number>();
    for (const n of names) byName.set(n.nameHex, (byName.get(n.nameHex) ?? 0) + 1);
    expect(byName.get(Buffer.from('d/history').toString('hex'))).toBe(5);
    expect(byName.get(DEMO_BAD_UTF8_NAME.toString('hex'))).toBe(2);
    // the side branch's name_update is not on the main chain
    const sideOps = parsed.get(chain.side[0]!.hash)!.txs.flatMap((t) => t.outputs.map((o) => parseNameScript(o.script))).filter((x) => x);
    expect(sideOps.map((o) => [o!.op, o!.value!.toString()])).toEqual([['name_update', 'side-branch value']]);
  });

  it('names: re-registration after expiry, odd bytes, name_new commitments', () => {
    const expiring = names.filter((n) => n.nameHex === Buffer.from('d/expiring').toString('hex'));
    expect(expiring.map((n) => [n.op, n.height])).toEqual([
      ['name_firstupdate', 114],
      ['name_firstupdate', 145],
    ]);
    const all = new Set(names.map((n) => Buffer.from(n.nameHex, 'hex').toString('latin1')));
    for (const n of ['d/a/b', '/lead', 'trail/', '..', 'd/100%', 'd/what?', 'd/with space', '~tilde', 'id/json', 'd/empty']) expect(all.has(n)).toBe(true);
    expect(names.some((n) => Buffer.from(n.valueHex, 'hex').toString('utf8').includes('\n'))).toBe(true);
    const bad = Buffer.from(names.find((n) => n.nameHex === DEMO_BAD_UTF8_NAME.toString('hex'))!.valueHex, 'hex');
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(bad)).toThrow();
    // builder's records agree with the chain
    for (const r of chain.names.filter((r) => r.op === 'name_new')) {
      expect(hash160(Buffer.concat([r.rand!, r.name])).equals(r.commitment!)).toBe(true);
    }
  });

  it('has every script type and P2SH redeem variety; addresses with spends and unspent outputs', () => {
    const types = new Set<string>();
    for (const tx of mainTxs) for (const o of tx.outputs) types.add(classifyScript(o.script, true));
    expect([...types].sort()).toEqual(
      ['multisig', 'name_firstupdate', 'name_new', 'name_update', 'op_return', 'pubkey', 'pubkey_hash', 'script_hash', 'unknown', 'witness_unknown', 'witness_v0_keyhash', 'witness_v0_scripthash', 'witness_v1_taproot'].sort(),
    );
    const redeem = new Set<string>();
    const witnessKinds = new Set<number>();
    for (const tx of mainTxs.filter((t) => !isCoinbase(t))) {
      for (const i of tx.inputs) {
        const t = i.script.length ? redeemScriptType(i.script, true) : undefined;
        if (t && t !== 'unknown') redeem.add(t);
        if (i.witness) witnessKinds.add(i.witness.length);
      }
    }
    for (const t of ['multisig', 'pubkey', 'pubkey_hash', 'witness_v0_keyhash', 'witness_v0_scripthash']) expect(redeem.has(t)).toBe(true);
    expect(witnessKinds).toEqual(new Set([1, 2, 3, 4])); // taproot key path, p2wpkh, script path / p2wsh, multisig p2wsh
    // An address that received several outputs, spent some and still holds some.
    const received = new Map<string, number>();
    for (const tx of mainTxs) for (const o of tx.outputs) {
      const a = scriptAddress(o.script, NMC);
      if (a) received.set(a, (received.get(a) ?? 0) + 1);
    }
    const unspentByAddr = new Map<string, number>();
    for (const c of utxo.values()) {
      const a = scriptAddress(c.script, NMC);
      if (a) unspentByAddr.set(a, (unspentByAddr.get(a) ?? 0) + 1);
    }
    const mixed = [...received].filter(([a, n]) => (unspentByAddr.get(a) ?? 0) > 0 && (unspentByAddr.get(a) ?? 0) < n && n >= 3);
    expect(mixed.length).toBeGreaterThan(0);
    // keys: compressed (02/03) and uncompressed (04) P2PK outputs
    const pks = mainTxs.flatMap((t) => t.outputs).filter((o) => classifyScript(o.script, true) === 'pubkey').map((o) => o.script[1]!);
    expect(pks.some((p) => p === 0x02 || p === 0x03)).toBe(true);
    expect(pks).toContain(0x04);
  });

  it('is deterministic and fast', () => {
    const t0 = performance.now();
    const again = demoChain();
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(again.blocks.map((b) => b.raw.toString('hex'))).toEqual(chain.blocks.map((b) => b.raw.toString('hex')));
  });
});

/** generateChain's blocks as a BuiltChain (main chain only), for checkChain. */
function generatedChain(net: Network, blocks: GeneratedBlock[]): BuiltChain {
  const built: BuiltBlock[] = blocks.map((b) => {
    const blk = parseBlock(b.raw, { auxpow: net.auxpow });
    return { hash: b.hash, height: b.height, time: blk.header.time, prevHash: toDisplayHex(blk.header.prevHash), raw: b.raw, txids: blk.txs.map((t) => t.txid), kind: 'main' as const };
  });
  return { network: net, blocks: built, main: built, side: [], orphans: [], tip: built[built.length - 1]!, names: [] };
}

describe('builder: generateChain', () => {
  for (const net of [BTC, NMC]) {
    it(`${net.name}: valid, deterministic, seed-dependent`, () => {
      const opts = { network: net, seed: 7, txCount: 3000, txPerBlock: 150, nameRate: 0.2 };
      const blocks = [...generateChain(opts)];
      expect(blocks[0]!.hash).toBe(REGTEST_GENESIS);
      expect(blocks.reduce((s, b) => s + b.txCount, 0)).toBe(3000 + blocks.length);
      const { names, parsed } = checkChain(generatedChain(net, blocks), net.auxpow);
      if (net === NMC) {
        expect(names.filter((n) => n.op === 'name_firstupdate').length).toBeGreaterThan(10);
        expect(names.filter((n) => n.op === 'name_update').length).toBeGreaterThan(10);
      }
      const types = new Set<string>();
      for (const blk of parsed.values()) for (const tx of blk.txs) for (const o of tx.outputs) types.add(classifyScript(o.script, net === NMC));
      for (const t of ['pubkey', 'pubkey_hash', 'multisig', 'script_hash', 'witness_v0_keyhash', 'witness_v0_scripthash', 'witness_v1_taproot']) expect(types.has(t)).toBe(true);
      const again = [...generateChain(opts)];
      expect(again.map((b) => b.hash)).toEqual(blocks.map((b) => b.hash));
      expect(again.every((b, i) => b.raw.equals(blocks[i]!.raw))).toBe(true);
      const other = [...generateChain({ ...opts, seed: 8 })];
      expect(other[other.length - 1]!.hash).not.toBe(blocks[blocks.length - 1]!.hash);
    });
  }
});

describe('builder: generateChain, real-world profile', () => {
  const TX = 4000;
  const PER_BLOCK = 100;
  const opts = { network: NMC, seed: 'shape', txCount: TX, txPerBlock: PER_BLOCK, profile: 'real' as const };
  const measure = (blocks: GeneratedBlock[]) => {
    const meter = new ShapeMeter(NMC);
    for (const b of blocks) meter.add(b.raw);
    return meter.result();
  };
  let blocks: GeneratedBlock[];
  let shape: ChainShape;
  beforeAll(() => {
    blocks = [...generateChain(opts)];
    shape = measure(blocks);
  });

  it('is valid (spends of unspent outputs, merkle, AuxPoW) and deterministic', () => {
    expect(blocks.reduce((s, b) => s + b.txCount, 0)).toBe(TX + blocks.length);
    const { names } = checkChain(generatedChain(NMC, blocks), true);
    expect(names.filter((n) => n.op === 'name_firstupdate').length).toBeGreaterThan(10);
    const again = [...generateChain(opts)];
    expect(again.every((b, i) => b.raw.equals(blocks[i]!.raw))).toBe(true);
    expect(again.length).toBe(blocks.length);
  });

  it('reuses addresses with a heavy tail: most in one or two txs, a few hubs in a large share', () => {
    const { hubShare, hubs, zipf } = REAL_WORLD_DEFAULTS;
    expect(shape.addresses).toBeGreaterThan(TX); // a growing population, not a fixed pool
    expect(shape.txsPerAddress.p50).toBeLessThanOrEqual(2);
    expect(shape.addressesInAtMostTwoTxs).toBeGreaterThan(0.6);
    // every tx has a payee; a share hubShare of payees are hubs, and the hubs are within the top 1%
    expect(hubs).toBeLessThanOrEqual(shape.addresses / 100);
    expect(shape.top1PercentTxShare).toBeGreaterThan(hubShare);
    // the first hub takes 1 / H(hubs, zipf) of the hub payees
    let h = 0;
    for (let k = 1; k <= hubs; k++) h += 1 / k ** zipf;
    expect(shape.topAddressTxShare).toBeGreaterThan(hubShare / h);
    expect(shape.txsPerAddress.max).toBeGreaterThan(TX * (hubShare / h));
  });

  it('has ~2.5 inputs and outputs per tx with a long tail', () => {
    expect(Math.abs(shape.inputs.mean - 2.5)).toBeLessThan(0.5);
    expect(Math.abs(shape.outputs.mean - 2.5)).toBeLessThan(0.5);
    expect(shape.inputs.p50).toBe(1);
    expect(shape.outputs.p50).toBe(2);
    expect(shape.inputs.max).toBeGreaterThanOrEqual(100);
    expect(shape.outputs.max).toBeGreaterThanOrEqual(100);
  });

  it('grows blocks from nearly empty to full', () => {
    const d = shape.blockTxsByDecile;
    expect(d[0]!).toBeLessThan(PER_BLOCK * 0.05);
    expect(d[8]!).toBe(PER_BLOCK);
    for (let i = 1; i < 8; i++) expect(d[i]!).toBeGreaterThan(d[i - 1]!);
  });

  it('has names at the assumed Namecoin density', () => {
    expect(Math.abs(shape.nameOpShare - NAME_RATES.real)).toBeLessThan(NAME_RATES.real * 0.3);
  });

  it('follows its options: no hubs, no heavy head; the bench profile reuses a fixed pool', () => {
    const noHubs = measure([...generateChain({ ...opts, txCount: 2000, real: { hubShare: 0 } })]);
    expect(noHubs.topAddressTxShare).toBeLessThan(0.05);
    const bench = measure([...generateChain({ ...opts, txCount: 2000, profile: 'bench' })]);
    expect(bench.addresses).toBeLessThan(500);
    expect(bench.inputs.max).toBeLessThanOrEqual(3);
  });
});

describe('builder: writeBlocksDir', () => {
  /** Reads a blocks dir back: de-XOR every file, walk magic|len|block records (stop at zero padding). */
  function readBack(dir: string, magic: string): { file: string; raw: Buffer }[] {
    const files = readdirSync(dir).filter((f) => /^blk\d{5}\.dat$/.test(f)).sort();
    const key = readdirSync(dir).includes('xor.dat') ? readFileSync(join(dir, 'xor.dat')) : undefined;
    const out: { file: string; raw: Buffer }[] = [];
    for (const f of files) {
      const data = readFileSync(join(dir, f));
      if (key) for (let i = 0; i < data.length; i++) data[i]! ^= key[i % 8]!;
      let pos = 0;
      while (pos + 8 <= data.length) {
        if (data.subarray(pos, pos + 4).toString('hex') !== magic) break;
        const len = data.readUInt32LE(pos + 4);
        expect(pos + 8 + len).toBeLessThanOrEqual(data.length);
        out.push({ file: f, raw: Buffer.from(data.subarray(pos + 8, pos + 8 + len)) });
        pos += 8 + len;
      }
    }
    return out;
  }

  const chain = demoChain();

  it('writes framed, XOR-obfuscated, shuffled files that read back to the same blocks', () => {
    const dir = mkdtempSync(join(tmpdir(), 'builder-blk-'));
    tmpDirs.push(dir);
    const key = Buffer.from('0123456789abcdef', 'hex');
    const res = writeBlocksDir(chain.blocks, dir, { network: NMC, maxFileSize: 40_000, xorKey: key, shuffle: true, seed: 3 });
    expect(res.files.length).toBeGreaterThan(2);
    expect(readFileSync(join(dir, 'xor.dat')).equals(key)).toBe(true);
    // Obfuscated on disk: the first file does not start with the magic.
    expect(readFileSync(join(dir, 'blk00000.dat')).subarray(0, 4).toString('hex')).not.toBe(NMC.magic);
    const back = readBack(dir, NMC.magic);
    expect(back).toHaveLength(chain.blocks.length);
    for (const r of back) checkBlock({ ...chain.blocks.find((b) => b.hash === parseBlock(r.raw, { auxpow: true }).header.id)! }, NMC, true);
    const hashes = back.map((r) => parseBlock(r.raw, { auxpow: true }).header.id);
    expect(new Set(hashes)).toEqual(new Set(chain.blocks.map((b) => b.hash)));
    const order = hashes.map((h) => chain.blocks.findIndex((b) => b.hash === h));
    expect(order).not.toEqual([...order].sort((a, b) => a - b)); // out of order
    // Out of order across files too: some block sits in an earlier file than its parent.
    const fileOf = new Map(back.map((r, i) => [hashes[i]!, r.file]));
    expect(chain.main.slice(1).some((b) => fileOf.get(b.hash)! < fileOf.get(b.prevHash)!)).toBe(true);
    for (const f of res.files) expect(readFileSync(join(dir, f)).length).toBeLessThanOrEqual(40_000);
    // Same seed → same bytes.
    const dir2 = mkdtempSync(join(tmpdir(), 'builder-blk-'));
    tmpDirs.push(dir2);
    writeBlocksDir(chain.blocks, dir2, { network: NMC, maxFileSize: 40_000, xorKey: key, shuffle: true, seed: 3 });
    for (const f of res.files) expect(readFileSync(join(dir2, f)).equals(readFileSync(join(dir, f)))).toBe(true);
  });

  it('plain in-order files with zero pre-allocation padding', () => {
    const dir = mkdtempSync(join(tmpdir(), 'builder-blk-'));
    tmpDirs.push(dir);
    const res = writeBlocksDir(chain.main, dir, { network: BTC, maxFileSize: 100_000, chunkSize: 65_536 });
    for (const f of res.files) expect(readFileSync(join(dir, f)).length % 65_536).toBe(0);
    const back = readBack(dir, BTC.magic);
    expect(back.map((r) => r.raw.toString('hex'))).toEqual(chain.main.map((b) => b.raw.toString('hex')));
    expect(res.records.map((r) => r.hash)).toEqual(chain.main.map((b) => b.hash));
  });
});

describe('builder: source layout', () => {
  it('no source file under src/builder is over 400 lines (one generator split into steps)', () => {
    const root = fileURLToPath(new URL('../src/builder/', import.meta.url));
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files).toContain('chain.ts');
    const long = files.map((f) => ({ f, lines: readFileSync(join(root, f), 'utf8').trimEnd().split('\n').length })).filter((x) => x.lines > 400);
    expect(long).toEqual([]);
  });
});
