import { sha256d, sha256dParts, toDisplayHex } from '../chain/hash.js';
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
  witnessCommitmentScript,
  ZERO_HASH,
} from './serialize.js';

export interface GenerateOptions {
  network: Network;
  seed: number | string;
  /** Non-coinbase transactions to make (the chain has ~txCount / txPerBlock + 101 blocks). */
  txCount: number;
  /** Non-coinbase transactions per block (default 1000). */
  txPerBlock?: number;
  /** Merge-mined blocks (default: the network's auxpow). */
  auxpow?: boolean;
  /** Time of block 1 (default genesis + 600); blocks 600 s apart. */
  startTime?: number;
  /** Share of transactions that are name operations on Namecoin networks (default 0.02). */
  nameRate?: number;
  /** Coinbase outputs per block (default 10): they seed the spendable pool. */
  coinbaseOutputs?: number;
}

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
 * blocks, then `txPerBlock`-sized blocks of random spends of a realistic mix
 * of output types (P2PKH, P2WPKH, P2SH-P2WPKH, P2SH multisig, P2TR, P2WSH,
 * P2PK, bare multisig, OP_RETURN) with balanced values and, on Namecoin,
 * name_new → name_firstupdate (≥ 12 blocks) → name_update ops, some names
 * left to expire. Scripts and spending data are pre-built; each block is
 * serialized into reused buffers. Deterministic from the seed.
 */
export function* generateChain(opts: GenerateOptions): Generator<GeneratedBlock> {
  const net = opts.network;
  const auxpow = opts.auxpow ?? net.auxpow;
  const txPerBlock = opts.txPerBlock ?? 1000;
  const names = isNamecoin(net);
  const nameRate = names ? (opts.nameRate ?? 0.02) : 0;
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
  const pickTpl = () => prng.pick(prng.pick(weighted));
  const opReturn = locks.opReturn(Buffer.from('generated', 'utf8')).script;
  const nameAddr = Array.from({ length: 32 }, () => mk(locks.p2pkh(kp())));

  // ---- state ------------------------------------------------------------------
  const spendable: Utxo[] = [];
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
  const legacy = new ByteWriter(4096);
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

  /** Serializes one tx from ins/outs into txw; returns created Utxos (with the txid). */
  const writeTx = (txVersion: number, nameInput: Utxo | undefined): Buffer => {
    const start = txw.pos;
    const allIns = nameInput ? [nameInput, ...ins] : ins;
    let witness = false;
    for (const u of allIns) if (u.tpl.witness) witness = true;
    txw.u32(txVersion);
    if (witness) {
      txw.u8(0);
      txw.u8(1);
    }
    const bodyStart = txw.pos;
    txw.varint(allIns.length);
    for (const u of allIns) {
      txw.bytes(u.hash);
      txw.u32(u.vout);
      txw.varBytes(u.tpl.scriptSig);
      txw.u32(0xfffffffe);
    }
    txw.varint(outScripts.length);
    for (let i = 0; i < outScripts.length; i++) {
      txw.u64(outValues[i]!);
      txw.varBytes(outScripts[i]!);
    }
    const bodyEnd = txw.pos;
    if (witness) {
      for (const u of allIns) {
        const items = u.tpl.witness ?? [];
        txw.varint(items.length);
        for (const it of items) txw.varBytes(it);
      }
    }
    txw.u32(0);
    const buf = txw.buf;
    let hash: Buffer;
    if (witness) {
      legacy.reset();
      legacy.bytes(buf.subarray(start, start + 4));
      legacy.bytes(buf.subarray(bodyStart, bodyEnd));
      legacy.bytes(buf.subarray(txw.pos - 4, txw.pos));
      hash = sha256d(legacy.view());
      whashes.push(sha256d(buf.subarray(start, txw.pos)));
    } else {
      hash = sha256d(buf.subarray(start, txw.pos));
      whashes.push(hash);
    }
    hashes.push(hash);
    return hash;
  };

  for (let height = 1; made < opts.txCount || height <= COINBASE_MATURITY; height++) {
    txw.reset();
    hashes.length = 0;
    whashes.length = 0;
    let fees = 0;
    while (maturing.length && maturing[0]!.height <= height) for (const u of maturing.shift()!.utxos) spendable.push(u);
    if (names) {
      const depth = net.nameExpirationDepth!(height);
      activeNames = activeNames.filter((n) => {
        if (n.height + depth > height) return true;
        expiredNames.push(n.name);
        activeSet.delete(n.name.toString('latin1'));
        return false;
      });
    }

    const target = height <= COINBASE_MATURITY ? 0 : Math.min(txPerBlock, opts.txCount - made);
    let inBlock = 0;
    const nameUsed = new Set<ActiveName>();
    while (inBlock < target && spendable.length > 0) {
      ins.length = 0;
      outScripts.length = 0;
      outValues.length = 0;
      outTpls.length = 0;
      // Namecoin name operation?
      if (nameRate > 0 && prng.float() < nameRate) {
        const funding = takeRandom();
        const fee = FEE_BASE + FEE_PER_INPUT * 2;
        if (funding.value < Number(NAME_AMOUNT) + fee + DUST) {
          spendable.push(funding); // too small to fund a name op: make a plain tx instead
        } else {
          ins.push(funding);
          const addr = prng.pick(nameAddr);
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
          const hash = writeTx(NAMECOIN_TX_VERSION, nameInput);
          after({ hash, vout: 0, value: Number(NAME_AMOUNT), tpl: addr });
          spendable.push({ hash, vout: 1, value: change, tpl: ct });
          fees += fee;
          inBlock++;
          made++;
          continue;
        }
      }
      // Plain spend.
      const r = prng.float();
      let nIn = r < 0.7 ? 1 : r < 0.95 ? 2 : 3;
      if (spendable.length > 400_000) nIn++;
      let total = 0;
      for (let i = 0; i < nIn && spendable.length > 0; i++) {
        const u = takeRandom();
        ins.push(u);
        total += u.value;
      }
      const r2 = prng.float();
      let nOut = r2 < 0.2 ? 1 : r2 < 0.85 ? 2 : 3 + prng.int(3);
      const fee = FEE_BASE + FEE_PER_INPUT * ins.length + 40 * nOut;
      while (nOut > 1 && total - fee < nOut * DUST * 10) nOut--;
      if (total - fee < DUST) {
        // dust: burn it all as fee into an OP_RETURN-free 1-output tx is impossible; pay everything as fee instead
        outScripts.push(opReturn);
        outValues.push(0);
        outTpls.push(undefined);
        writeTx(2, undefined);
        fees += total;
        inBlock++;
        made++;
        continue;
      }
      let left = total - fee;
      for (let i = 0; i < nOut; i++) {
        const t = pickTpl();
        const rest = nOut - 1 - i;
        const v = rest === 0 ? left : Math.min(left - rest * DUST, Math.max(DUST, Math.floor(left * (0.2 + 0.6 * prng.float()))));
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
      const hash = writeTx(2, undefined);
      for (let i = 0; i < outTpls.length; i++) {
        const t = outTpls[i];
        if (t) spendable.push({ hash, vout: i, value: outValues[i]!, tpl: t });
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
    cbw.u32(2);
    if (anyWitness) {
      cbw.u8(0);
      cbw.u8(1);
    }
    const bodyStart = cbw.pos;
    cbw.varint(1);
    cbw.bytes(ZERO_HASH);
    cbw.u32(0xffffffff);
    cbw.varBytes(coinbaseScriptSig(height, prng.bytes(4)));
    cbw.u32(0xffffffff);
    cbw.varint(cbOuts + (anyWitness ? 1 : 0));
    const share = Math.floor(reward / cbOuts);
    const cbValues: number[] = [];
    for (let i = 0; i < cbOuts; i++) {
      const v = i === 0 ? reward - share * (cbOuts - 1) : share;
      cbValues.push(v);
      cbw.u64(v);
      cbw.varBytes(cbTpls[i]!.script);
    }
    if (anyWitness) {
      cbw.u64(0);
      cbw.varBytes(witnessCommitmentScript([ZERO_HASH, ...whashes]));
    }
    const bodyEnd = cbw.pos;
    if (anyWitness) {
      cbw.varint(1);
      cbw.varBytes(ZERO_HASH);
    }
    cbw.u32(0);
    const cbHash = anyWitness
      ? sha256dParts([cbw.view(0, 4), cbw.view(bodyStart, bodyEnd), cbw.view(cbw.pos - 4, cbw.pos)])
      : sha256d(cbw.view());
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
