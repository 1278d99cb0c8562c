import { sha256d, toDisplayHex } from '../chain/hash.js';
import { merkleRoot } from '../chain/merkle.js';
import { blockSubsidy, isNamecoin, type Network } from '../chain/networks.js';
import { ByteWriter } from './bytes.js';
import { NAME_AMOUNT, NAMECOIN_TX_VERSION, MIN_FIRSTUPDATE_DEPTH } from './chain.js';
import { KeyFactory, Signer } from './keys.js';
import { Prng } from './prng.js';
import { locks, nameCommitment, nameFirstUpdateScript, nameNewScript, nameUpdateScript, unlock, type Lock } from './scripts.js';
import {
  AUXPOW_FLAG,
  buildAuxPow,
  coinbaseScriptSig,
  grindHeader,
  NAMECOIN_CHAIN_ID,
  REGTEST_BITS,
  regtestGenesis,
  serializeHeader,
  txHashes,
  witnessCommitmentScript,
  writeTx,
  ZERO_HASH,
  type TxInData,
} from './serialize.js';

export interface GenerateOptions {
  network: Network;
  seed: number | string;
  /** Non-coinbase transactions to make (the chain has ~txCount / txPerBlock + 101 blocks). */
  txCount: number;
  /** Non-coinbase transactions per block (default 1000), or a function of the height (growing blocks). */
  txPerBlock?: number | ((height: number) => number);
  /** Merge-mined blocks (default: the network's auxpow). */
  auxpow?: boolean;
  /** Time of block 1 (default genesis + 600); blocks 600 s apart. */
  startTime?: number;
  /** Share of transactions that are name operations on Namecoin networks (default {@link NAME_RATES} of the profile). */
  nameRate?: number;
  /** Coinbase outputs per block (default 10): they seed the spendable pool. */
  coinbaseOutputs?: number;
  /**
   * Shape of the chain (default `bench`):
   * - `bench`: full blocks from the start, 1–3 inputs and 1–5 outputs per tx, payees drawn
   *   from a fixed pool of 432 scripts over 64 keys (every address in a large share of all txs), name
   *   rate 2%;
   * - `real`: a real-world shape (see {@link RealWorldShape}): a growing address population with
   *   heavy-tailed reuse and exchange-like hubs, ~2.5 inputs and outputs per tx with hub
   *   consolidations and batch payouts of hundreds, blocks growing from nearly empty to
   *   `txPerBlock`, name rate 4%. The benchmarks' default (docs/benchmarks.md, "Chain profiles").
   */
  profile?: ChainProfile;
  /** Parameters of the `real` profile (defaults: {@link REAL_WORLD_DEFAULTS}). */
  real?: Partial<RealWorldShape>;
}

export type ChainProfile = 'bench' | 'real';

/** Parameters of the real-world profile. */
export interface RealWorldShape {
  /** Share of payees that are one of the `hubs` exchange-like addresses. */
  hubShare: number;
  /** How many hub addresses; hub k (from 1) is drawn with weight 1/k^zipf. */
  hubs: number;
  zipf: number;
  /** Share of payees that reuse an earlier ordinary address, in proportion to its uses so far; the other payees are new addresses. */
  reuseShare: number;
  /**
   * Share of txs that are a hub's consolidation (100–499 of its coins to itself) or batch payout
   * (1–3 of its coins to 100–500 payees and itself). Hub coins are spent only so, as an
   * exchange's wallet: the defaults keep the coins in and out of the hubs about balanced.
   */
  consolidationRate: number;
  batchRate: number;
  /**
   * Tx blocks grow as (n / rampBlocks)² × txPerBlock up to txPerBlock; rampBlocks = rampFactor ×
   * txCount / txPerBlock (1.5: half the txs in the ramp). Not when txPerBlock is a function.
   */
  rampFactor: number;
}

export const REAL_WORLD_DEFAULTS: RealWorldShape = {
  hubShare: 0.25,
  hubs: 50,
  zipf: 1,
  reuseShare: 0.15,
  consolidationRate: 0.0025,
  batchRate: 0.001,
  rampFactor: 1.5,
};

/**
 * Name operations per tx on Namecoin networks: `bench` 2%; `real` 4%, our assumption for
 * Namecoin mainnet (~7M txs, a few hundred thousand name operations: ~280k at 4%).
 */
export const NAME_RATES: Record<ChainProfile, number> = { bench: 0.02, real: 0.04 };

export interface GeneratedBlock {
  height: number;
  /** Display hex. */
  hash: string;
  raw: Buffer;
  /** Transactions in the block, coinbase included. */
  txCount: number;
}

interface Template {
  script: Buffer;
  scriptSig: Buffer;
  witness: Buffer[] | undefined;
  /** real profile: the hub's number when this is a hub address (its coins are kept apart). */
  hub?: number;
}

interface Utxo {
  hash: Buffer;
  vout: number;
  value: number;
  tpl: Template;
}

interface PendingName {
  name: Buffer;
  rand: Buffer;
  utxo: Utxo;
  height: number;
}

interface ActiveName {
  name: Buffer;
  utxo: Utxo;
  height: number;
}

const COINBASE_MATURITY = 100;

const DUST = 1000;
const FEE_PER_INPUT = 150;
const FEE_BASE = 250;

/**
 * Streams a large main chain fast (benchmarks): genesis, 100 coinbase-only
 * blocks, then blocks of up to `txPerBlock` random spends (shaped by `profile`) of a realistic mix
 * of output types (P2PKH, P2WPKH, P2SH-P2WPKH, P2SH multisig, P2TR, P2WSH,
 * P2PK, bare multisig, OP_RETURN) with balanced values and, on Namecoin,
 * name_new → name_firstupdate (≥ 12 blocks) → name_update ops, some names
 * left to expire. The `bench` profile's scripts and spending data are pre-built; each block is
 * serialized into reused buffers. Deterministic from the seed.
 */
export function* generateChain(opts: GenerateOptions): Generator<GeneratedBlock> {
  const net = opts.network;
  const auxpow = opts.auxpow ?? net.auxpow;
  const perBlock = opts.txPerBlock ?? 1000;
  const txPerBlock = typeof perBlock === 'number' ? () => perBlock : perBlock;
  const names = isNamecoin(net);
  const real = opts.profile === 'real';
  const shape: RealWorldShape = { ...REAL_WORLD_DEFAULTS, ...opts.real };
  const nameRate = names ? (opts.nameRate ?? NAME_RATES[real ? 'real' : 'bench']) : 0;
  const cbOuts = opts.coinbaseOutputs ?? 10;
  const prng = new Prng(`${opts.seed}/generate`);
  const keys = new KeyFactory(new Prng(`${opts.seed}/generate-keys`));
  const signer = new Signer(new Prng(`${opts.seed}/generate-sigs`));

  // ---- pre-built output templates ------------------------------------------------
  const pool = Array.from({ length: 64 }, () => keys.key());
  const kp = () => prng.pick(pool);
  const mk = (lock: Lock): Template => {
    const u = unlock(lock, signer);
    return { script: lock.script, scriptSig: u.scriptSig, witness: u.witness };
  };
  const kinds: [number, () => Lock][] = [
    [34, () => locks.p2pkh(kp())],
    [28, () => locks.p2wpkh(kp())],
    [8, () => locks.p2sh(locks.p2wpkh(kp()))],
    [7, () => locks.p2sh(locks.multisig(2, [kp(), kp(), kp()]))],
    [10, () => locks.p2tr(kp())],
    [4, () => locks.p2wsh(locks.multisig(2, [kp(), kp()]))],
    [3, () => locks.p2pk(kp())],
    [2, () => locks.p2sh(locks.p2pkh(kp()))],
    [1, () => locks.multisig(1, [kp(), keys.key({ uncompressed: true })])],
  ];
  const weighted: Template[][] = [];
  for (const [w, make] of kinds) {
    const inst = Array.from({ length: 48 }, () => mk(make()));
    for (let i = 0; i < w; i++) weighted.push(inst);
  }
  const opReturn = locks.opReturn(Buffer.from('generated', 'utf8')).script;
  const nameAddr = Array.from({ length: 32 }, () => mk(locks.p2pkh(kp())));
  // bench: a template from the fixed pool; real: a payee (hub, reused or new address).
  const payees = real ? realPayees(shape, prng, keys, mk) : undefined;
  const pickTpl = payees ? payees.payee : () => prng.pick(prng.pick(weighted));
  const nameTpl = real ? pickTpl : () => prng.pick(nameAddr);
  const maxPerBlock = typeof perBlock === 'number' ? perBlock : undefined;
  const rampBlocks = real && maxPerBlock !== undefined ? Math.max(1, Math.ceil((shape.rampFactor * opts.txCount) / maxPerBlock)) : undefined;

  // ---- state ------------------------------------------------------------------
  const spendable: Utxo[] = [];
  // real: each hub's coins, spent only by its consolidations and batch payouts (as an exchange's wallet).
  const hubCoins: Utxo[][] = Array.from({ length: payees ? shape.hubs : 0 }, () => []);
  const keep = (u: Utxo) => (u.tpl.hub === undefined ? spendable.push(u) : hubCoins[u.tpl.hub]!.push(u));
  const maturing: { height: number; utxos: Utxo[] }[] = [];
  const pendingNames: PendingName[] = [];
  let pendingHead = 0;
  let activeNames: ActiveName[] = [];
  const activeSet = new Set<string>();
  const expiredNames: Buffer[] = [];
  let nameCounter = 0;

  const g = regtestGenesis();
  yield { height: 0, hash: toDisplayHex(g.hash), raw: g.raw, txCount: 1 };
  let prevHash = g.hash;
  let time = opts.startTime ?? g.header.readUInt32LE(68) + 600;
  let made = 0;
  const txw = new ByteWriter(1 << 20);
  const cbw = new ByteWriter(4096);
    const hashes: Buffer[] = [];
  const whashes: Buffer[] = [];
  const ins: Utxo[] = [];
  const outScripts: Buffer[] = [];
  const outValues: number[] = [];
  const outTpls: (Template | undefined)[] = [];
  const version = net.auxpow ? (NAMECOIN_CHAIN_ID << 16) | 4 | (auxpow ? AUXPOW_FLAG : 0) : 0x20000000;

  const takeRandom = (): Utxo => {
    const i = prng.int(spendable.length);
    const u = spendable[i]!;
    spendable[i] = spendable[spendable.length - 1]!;
    spendable.pop();
    return u;
  };

  const txIn = (u: Utxo): TxInData => ({ prevHash: u.hash, prevIndex: u.vout, script: u.tpl.scriptSig, sequence: 0xfffffffe, witness: u.tpl.witness });

  /** Serializes one tx from ins/outs into txw; returns its txid (internal order). */
  const emitTx = (version: number, nameInput: Utxo | undefined): Buffer => {
    const inputs = (nameInput ? [nameInput, ...ins] : ins).map(txIn);
    const outputs = outScripts.map((script, i) => ({ value: BigInt(outValues[i]!), script }));
    const { hash, whash } = txHashes(txw.buf, writeTx(txw, { version, inputs, outputs, lockTime: 0 }));
    hashes.push(hash);
    whashes.push(whash);
    return hash;
  };

  for (let height = 1; made < opts.txCount || height <= COINBASE_MATURITY; height++) {
    txw.reset();
    hashes.length = 0;
    whashes.length = 0;
    let fees = 0;
    while (maturing.length && maturing[0]!.height <= height) for (const u of maturing.shift()!.utxos) keep(u);
    if (names) {
      const depth = net.nameExpirationDepth!(height);
      activeNames = activeNames.filter((n) => {
        if (n.height + depth > height) return true;
        expiredNames.push(n.name);
        activeSet.delete(n.name.toString('latin1'));
        return false;
      });
    }

    const n = height - COINBASE_MATURITY; // tx block number, from 1
    // real (with a number txPerBlock): (n / rampBlocks)² of it during the ramp
    const size = rampBlocks !== undefined && n < rampBlocks ? Math.max(1, Math.round(maxPerBlock! * (n / rampBlocks) ** 2)) : Math.floor(txPerBlock(height));
    const target = n <= 0 ? 0 : Math.min(size, opts.txCount - made);
    let inBlock = 0;
    const nameUsed = new Set<ActiveName>();
    while (inBlock < target && spendable.length > 0) {
      ins.length = 0;
      outScripts.length = 0;
      outValues.length = 0;
      outTpls.length = 0;
      // Namecoin name operation?
      if (nameRate > 0 && prng.float() < nameRate) {
        let funding = takeRandom();
        const fee = FEE_BASE + FEE_PER_INPUT * 2;
        // real: look a little further for a coin that can fund it, so the name rate is met.
        for (let tries = 0; real && tries < 30 && funding.value < Number(NAME_AMOUNT) + fee + DUST; tries++) {
          spendable.push(funding);
          funding = takeRandom();
        }
        if (funding.value < Number(NAME_AMOUNT) + fee + DUST) {
          spendable.push(funding); // too small to fund a name op: make a plain tx instead
        } else {
          ins.push(funding);
          const addr = nameTpl();
          let pend = pendingNames[pendingHead];
          // A commitment whose name was re-registered by another one meanwhile is dropped (its output stays unspent).
          while (pend && height - pend.height >= MIN_FIRSTUPDATE_DEPTH && activeSet.has(pend.name.toString('latin1'))) pend = pendingNames[++pendingHead];
          const cand = activeNames.length ? activeNames[prng.int(activeNames.length)]! : undefined;
          let nameInput: Utxo | undefined;
          let script: Buffer;
          let after: (u: Utxo) => void;
          const roll = prng.float();
          if (pend && height - pend.height >= MIN_FIRSTUPDATE_DEPTH && roll < 0.45) {
            const p = pend;
            pendingHead++;
            nameInput = p.utxo;
            script = nameFirstUpdateScript(p.name, p.rand, Buffer.from(`{"ip":"10.${height & 255}.${inBlock & 255}.1"}`), addr.script);
            after = (u) => {
              activeNames.push({ name: p.name, utxo: u, height });
              activeSet.add(p.name.toString('latin1'));
            };
          } else if (cand && cand.height < height && !nameUsed.has(cand) && roll < 0.8) {
            nameInput = cand.utxo;
            nameUsed.add(cand);
            script = nameUpdateScript(cand.name, Buffer.from(`value ${height}/${inBlock}`), addr.script);
            after = (u) => {
              cand.utxo = u;
              cand.height = height;
            };
          } else {
            const reuse = expiredNames.length > 0 && prng.chance(0.2);
            const name = reuse ? expiredNames.splice(prng.int(expiredNames.length), 1)[0]! : Buffer.from(`d/gen${nameCounter++}`);
            const rand = prng.bytes(20);
            script = nameNewScript(nameCommitment(rand, name), addr.script);
            after = (u) => pendingNames.push({ name, rand, utxo: u, height });
          }
          const change = funding.value + (nameInput?.value ?? 0) - Number(NAME_AMOUNT) - fee;
          const ct = pickTpl();
          outScripts.push(script, ct.script);
          outValues.push(Number(NAME_AMOUNT), change);
          const hash = emitTx(NAMECOIN_TX_VERSION, nameInput);
          after({ hash, vout: 0, value: Number(NAME_AMOUNT), tpl: addr });
          keep({ hash, vout: 1, value: change, tpl: ct });
          fees += fee;
          inBlock++;
          made++;
          continue;
        }
      }
      // Plain spend; real: or a hub's consolidation (100–499 of its coins to itself) or batch payout (to 100–499 payees, change to itself).
      let nIn: number;
      let nOut: number;
      let hub: Template | undefined; // real: the hub paid by the last output
      let total = 0;
      const r0 = real ? prng.float() : 1;
      // Too few coins outside the hubs for ordinary spends: the richest hub pays out a batch.
      const starved = real && spendable.length < 50;
      const hubIndex = starved ? richest(hubCoins) : r0 < shape.consolidationRate + shape.batchRate ? payees!.pickHub() : -1;
      if (hubIndex >= 0 && hubCoins[hubIndex]!.length >= (starved ? 1 : 2)) {
        const coins = hubCoins[hubIndex]!;
        hub = payees!.hubs[hubIndex]!;
        const batch = starved || r0 >= shape.consolidationRate;
        nIn = batch ? 1 + prng.int(3) : 100 + prng.int(400);
        nOut = batch ? 101 + prng.int(400) : 1;
        for (let i = 0; i < nIn && coins.length > 0; i++) {
          const j = prng.int(coins.length);
          const u = coins[j]!;
          coins[j] = coins[coins.length - 1]!;
          coins.pop();
          ins.push(u);
          total += u.value;
        }
      } else {
        if (real) nIn = smallCount(prng, 0.55, 0.83);
        else {
          const r = prng.float();
          nIn = r < 0.7 ? 1 : r < 0.95 ? 2 : 3;
          if (spendable.length > 400_000) nIn++;
        }
        for (let i = 0; i < nIn && spendable.length > 0; i++) {
          const u = takeRandom();
          ins.push(u);
          total += u.value;
        }
        if (real) nOut = smallCount(prng, 0.25, 0.87);
        else {
          const r2 = prng.float();
          nOut = r2 < 0.2 ? 1 : r2 < 0.85 ? 2 : 3 + prng.int(3);
        }
      }
      const fee = FEE_BASE + FEE_PER_INPUT * ins.length + 40 * nOut;
      while (nOut > 1 && total - fee < nOut * DUST * 10) nOut--;
      if (total - fee < DUST) {
        // dust: burn it all as fee into an OP_RETURN-free 1-output tx is impossible; pay everything as fee instead
        outScripts.push(opReturn);
        outValues.push(0);
        outTpls.push(undefined);
        emitTx(2, undefined);
        fees += total;
        inBlock++;
        made++;
        continue;
      }
      let left = total - fee;
      for (let i = 0; i < nOut; i++) {
        const rest = nOut - 1 - i;
        const t = hub && rest === 0 ? hub : pickTpl();
        // bench: 20–80% of what is left; real: 50–150% of an equal share (batch payouts stay above dust).
        const want = () => (real ? (left / (rest + 1)) * (0.5 + prng.float()) : left * (0.2 + 0.6 * prng.float()));
        const v = rest === 0 ? left : Math.min(left - rest * DUST, Math.max(DUST, Math.floor(want())));
        left -= v;
        outScripts.push(t.script);
        outValues.push(v);
        outTpls.push(t);
      }
      if (prng.float() < 0.01) {
        outScripts.push(opReturn);
        outValues.push(0);
        outTpls.push(undefined);
      }
      const hash = emitTx(2, undefined);
      for (let i = 0; i < outTpls.length; i++) {
        const t = outTpls[i];
        if (t) keep({ hash, vout: i, value: outValues[i]!, tpl: t });
      }
      fees += fee;
      inBlock++;
      made++;
    }

    // Coinbase.
    cbw.reset();
    const anyWitness = hashes.some((h, i) => h !== whashes[i]);
    const reward = Number(blockSubsidy(net, height)) + fees;
    const cbTpls: Template[] = [];
    for (let i = 0; i < cbOuts; i++) cbTpls.push(pickTpl());
    const share = Math.floor(reward / cbOuts);
    const cbValues: number[] = [];
    for (let i = 0; i < cbOuts; i++) cbValues.push(i === 0 ? reward - share * (cbOuts - 1) : share);
    const cbOutputs = cbTpls.map((t, i) => ({ value: BigInt(cbValues[i]!), script: t.script }));
    if (anyWitness) cbOutputs.push({ value: 0n, script: witnessCommitmentScript([ZERO_HASH, ...whashes]) });
    const cbInput = { prevHash: ZERO_HASH, prevIndex: 0xffffffff, script: coinbaseScriptSig(height, prng.bytes(4)), sequence: 0xffffffff, witness: anyWitness ? [ZERO_HASH] : undefined };
    const cbHash = txHashes(cbw.buf, writeTx(cbw, { version: 2, inputs: [cbInput], outputs: cbOutputs, lockTime: 0 })).hash;
    const matured: Utxo[] = [];
    for (let i = 0; i < cbOuts; i++) if (cbValues[i]! > 0) matured.push({ hash: cbHash, vout: i, value: cbValues[i]!, tpl: cbTpls[i]! });
    maturing.push({ height: height + COINBASE_MATURITY, utxos: matured });

    // Header, PoW / AuxPoW, assembly.
    const header = serializeHeader({ version, prevHash, merkleRoot: merkleRoot([cbHash, ...hashes]), time, bits: REGTEST_BITS, nonce: 0 });
    let hash: Buffer;
    let aux: Buffer | undefined;
    if (auxpow) {
      hash = sha256d(header);
      aux = buildAuxPow(hash, REGTEST_BITS, time, prng).bytes;
    } else {
      hash = grindHeader(header);
    }
    const nTx = hashes.length + 1;
    const countW = new ByteWriter(9);
    countW.varint(nTx);
    const raw = Buffer.concat([header, ...(aux ? [aux] : []), countW.view(), cbw.view(), txw.view()]);
    yield { height, hash: toDisplayHex(hash), raw, txCount: nTx };
    prevHash = hash;
    time += 600;
  }
}

/** 1 below `p1`, 2 below `p2`, else 3–8. */
function smallCount(prng: Prng, p1: number, p2: number): number {
  const r = prng.float();
  return r < p1 ? 1 : r < p2 ? 2 : 3 + prng.int(6);
}

/**
 * Payees of the real-world profile: a hub (Zipf over `hubs` addresses), an earlier ordinary
 * address in proportion to its uses (preferential attachment: a heavy tail), or a new address.
 * Keys are key-shaped PRNG bytes (KeyFactory.fakeKey): a real key costs ~0.3 ms.
 */
function realPayees(shape: RealWorldShape, prng: Prng, keys: KeyFactory, mk: (lock: Lock) => Template): { payee: () => Template; pickHub: () => number; hubs: Template[] } {
  const kinds: [number, () => Lock][] = [
    [45, () => locks.p2pkh(keys.fakeKey())],
    [33, () => locks.p2wpkh(keys.fakeKey())],
    [10, () => locks.p2sh(locks.p2wpkh(keys.fakeKey()))],
    [8, () => locks.p2tr(keys.fakeKey())],
    [2, () => locks.p2sh(locks.multisig(2, [keys.fakeKey(), keys.fakeKey(), keys.fakeKey()]))],
    [1, () => locks.p2wsh(locks.multisig(2, [keys.fakeKey(), keys.fakeKey()]))],
    [1, () => locks.p2pk(keys.fakeKey())],
  ];
  const totalWeight = kinds.reduce((a, [w]) => a + w, 0);
  const fresh = (): Template => {
    let r = prng.int(totalWeight);
    for (const [w, make] of kinds) {
      if (r < w) return mk(make());
      r -= w;
    }
    throw new Error('unreachable');
  };
  const hubs = Array.from({ length: shape.hubs }, (_, hub) => ({ ...fresh(), hub }));
  const cdf: number[] = [];
  let acc = 0;
  for (let k = 1; k <= shape.hubs; k++) cdf.push((acc += 1 / k ** shape.zipf));
  const urn: Template[] = []; // one entry per use of an ordinary address
  const pickHub = (): number => {
    const x = prng.float() * acc;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  const payee = (): Template => {
    const r = prng.float();
    if (r < shape.hubShare) return hubs[pickHub()]!;
    const t = r < shape.hubShare + shape.reuseShare && urn.length > 0 ? prng.pick(urn) : fresh();
    urn.push(t);
    return t;
  };
  return { payee, pickHub, hubs };
}

/** The hub holding the most coins (the lowest number on a tie). */
function richest(hubCoins: readonly Utxo[][]): number {
  let best = 0;
  for (let h = 1; h < hubCoins.length; h++) if (hubCoins[h]!.length > hubCoins[best]!.length) best = h;
  return best;
}
