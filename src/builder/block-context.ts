// The block under construction: what a `ChainBuilder.block` callback adds transactions and
// name operations with (UTXO-checked inputs, wallet funding and change, Namecoin's name rules).
import { isNamecoin, type Network } from '../chain/networks.js';
import {
  DEFAULT_FEE,
  DUST,
  MAX_NAME_LENGTH,
  MAX_VALUE_LENGTH,
  MIN_FIRSTUPDATE_DEPTH,
  NAME_AMOUNT,
  NAMECOIN_TX_VERSION,
  refKey,
  type Coin,
  type InputSpec,
  type NameEntry,
  type NameNewHandle,
  type NameOpKind,
  type NameOpRecord,
  type Op,
  type OutputSpec,
  type OutRef,
  type TxHandle,
  type TxSpec,
} from './types.js';
import type { Key, Signer } from './keys.js';
import { locks, nameCommitment, unlock, type Lock } from './scripts.js';
import { serializeTx, type SerializedTx, type TxData, type TxInData } from './serialize.js';

const isRef = (x: OutRef | InputSpec): x is OutRef => 'txid' in x;

/** The sum of the outputs' fixed values, and how many outputs take a share of the rest. */
function fixedAndFree(outs: readonly OutputSpec[]): { fixed: bigint; free: number } {
  let fixed = 0n;
  let free = 0;
  for (const o of outs) {
    if (o.value === undefined) free++;
    else fixed += o.value;
  }
  return { fixed, free };
}

/** Splits `total` over outputs: fixed values first, the rest shared equally by the others. */
export function splitValues(outs: readonly OutputSpec[], total: bigint, what: string): bigint[] {
  const { fixed, free } = fixedAndFree(outs);
  const rest = total - fixed;
  if (rest < 0n || (free > 0 && rest < BigInt(free))) throw new Error(`${what}: outputs need ${fixed} + ${free} shares but only ${total} is available`);
  const share = free ? rest / BigInt(free) : 0n;
  let extra = free ? rest - share * BigInt(free) : 0n;
  return outs.map((o) => {
    if (o.value !== undefined) return o.value;
    const v = share + extra;
    extra = 0n;
    return v;
  });
}

/** What a block under construction needs of its chain (ChainBuilder provides it). */
export interface BlockHost {
  readonly network: Network;
  readonly coinbaseMaturity: number;
  readonly signer: Signer;
  key(): Key;
  randomBytes(n: number): Buffer;
  nextChangeLock(): Lock;
  coinByKey(key: string): Coin | undefined;
  walletCoins(): IterableIterator<[string, Coin]>;
  nameEntry(name: Buffer): NameEntry | undefined;
  applyAndLog(log: Op[], op: Op): void;
}

/** Adds transactions to the block being built (passed to `ChainBuilder.block`). */
export class BlockContext {
  readonly ops: Op[] = [];
  readonly txs: SerializedTx[] = [];
  readonly nameRecords: NameOpRecord[] = [];
  fees = 0n;

  constructor(
    private readonly cb: BlockHost,
    readonly height: number,
    readonly time: number,
  ) {}

  get network(): Network {
    return this.cb.network;
  }

  /** A transaction: explicit inputs/outputs, auto-funded from the wallet, change back to it. */
  tx(spec: TxSpec): TxHandle {
    return this.makeTx(spec, false);
  }

  /** Pays `value` to `lock` from the wallet. */
  pay(lock: Lock, value: bigint): TxHandle {
    return this.tx({ outputs: [{ lock, value }] });
  }

  /** Namecoin name_new: commits to hash160(rand ‖ name); the name stays hidden until firstupdate. */
  nameNew(name: string | Buffer, opts: { to?: Lock; rand?: Buffer } = {}): NameNewHandle {
    this.requireNamecoin();
    const nameBuf = toBytes(name);
    checkName(nameBuf);
    const rand = opts.rand ?? this.cb.randomBytes(20);
    if (rand.length > 20) throw new Error('name rand is at most 20 bytes');
    const commitment = nameCommitment(rand, nameBuf);
    const to = opts.to ?? locks.p2pkh(this.cb.key());
    const t = this.makeTx({ version: NAMECOIN_TX_VERSION, outputs: [{ lock: locks.nameNew(commitment, to), value: NAME_AMOUNT }] }, false);
    this.record('name_new', nameBuf, undefined, rand, commitment, t.txid, 0, false);
    return { ...t, name: nameBuf, rand, commitment, nameOut: t.out(0), height: this.height };
  }

  /**
   * Namecoin name_firstupdate spending `nn`'s name_new output (which must be
   * ≥ 12 blocks deep); the name must be new or expired.
   */
  nameFirstUpdate(nn: NameNewHandle, value: string | Buffer, opts: { to?: Lock } = {}): TxHandle {
    this.requireNamecoin();
    const valueBuf = toBytes(value);
    checkValue(valueBuf);
    const coin = this.cb.coinByKey(refKey(nn.nameOut.txid, nn.nameOut.vout));
    if (!coin || coin.lock.kind !== 'name_new') throw new Error(`name_new ${nn.nameOut.txid}:${nn.nameOut.vout} is not unspent`);
    if (this.height - coin.height < MIN_FIRSTUPDATE_DEPTH) {
      throw new Error(`name_firstupdate of "${nn.name.toString('latin1')}" at height ${this.height}: its name_new at ${coin.height} is less than ${MIN_FIRSTUPDATE_DEPTH} blocks deep`);
    }
    const existing = this.cb.nameEntry(nn.name);
    if (existing && !this.expired(existing)) {
      throw new Error(`name_firstupdate of "${nn.name.toString('latin1')}" at height ${this.height}: the name is registered (height ${existing.height}) and not expired`);
    }
    const to = opts.to ?? coin.lock.inner ?? locks.p2pkh(this.cb.key());
    const t = this.makeTx({ version: NAMECOIN_TX_VERSION, inputs: [nn.nameOut], outputs: [{ lock: locks.nameFirstUpdate(nn.name, nn.rand, valueBuf, to), value: NAME_AMOUNT }] }, true);
    this.setName(nn.name, t.txid, existing);
    this.record('name_firstupdate', nn.name, valueBuf, nn.rand, undefined, t.txid, 0, existing !== undefined);
    return t;
  }

  /** Namecoin name_update of a registered, unexpired name (spends its current output). */
  nameUpdate(name: string | Buffer, value: string | Buffer, opts: { to?: Lock } = {}): TxHandle {
    this.requireNamecoin();
    const nameBuf = toBytes(name);
    const valueBuf = toBytes(value);
    checkValue(valueBuf);
    const e = this.cb.nameEntry(nameBuf);
    if (!e) throw new Error(`name_update of unregistered name "${nameBuf.toString('latin1')}"`);
    if (this.expired(e)) throw new Error(`name_update of "${nameBuf.toString('latin1')}" at height ${this.height}: expired (last update ${e.height})`);
    const coin = this.cb.coinByKey(e.key);
    if (!coin) throw new Error(`name "${nameBuf.toString('latin1')}": its output ${e.key} is not unspent`);
    const to = opts.to ?? coin.lock.inner!;
    const [txid, vout] = splitKey(e.key);
    const t = this.makeTx({ version: NAMECOIN_TX_VERSION, inputs: [{ txid, vout }], outputs: [{ lock: locks.nameUpdate(nameBuf, valueBuf, to), value: NAME_AMOUNT }] }, true);
    this.setName(nameBuf, t.txid, e);
    this.record('name_update', nameBuf, valueBuf, undefined, undefined, t.txid, 0, false);
    return t;
  }

  private expired(e: NameEntry): boolean {
    return e.height + this.cb.network.nameExpirationDepth!(this.height) <= this.height;
  }

  private setName(name: Buffer, txid: string, prev: NameEntry | undefined): void {
    this.cb.applyAndLog(this.ops, { t: 'name', name: name.toString('hex'), prev, next: { key: refKey(txid, 0), height: this.height } });
  }

  private record(op: NameOpKind, name: Buffer, value: Buffer | undefined, rand: Buffer | undefined, commitment: Buffer | undefined, txid: string, vout: number, rereg: boolean): void {
    this.nameRecords.push({ op, name, value, rand, commitment, height: this.height, block: '', txid, vout, reregistration: rereg });
  }

  private requireNamecoin(): void {
    if (!isNamecoin(this.cb.network)) throw new Error(`name operations need a Namecoin network, not ${this.cb.network.name}`);
  }

  private makeTx(spec: TxSpec, nameInputsAllowed: boolean): TxHandle {
    const cb = this.cb;
    const version = spec.version ?? 2;
    const fee = spec.fee ?? DEFAULT_FEE;
    const used = new Set<string>();
    const ins: { coin: Coin; key: string; spec: InputSpec | undefined }[] = [];
    for (const x of spec.inputs ?? []) {
      const ref = isRef(x) ? x : x.ref;
      const key = refKey(ref.txid, ref.vout);
      const coin = cb.coinByKey(key);
      if (!coin) throw new Error(`height ${this.height}: input ${key} is not an unspent output`);
      if (used.has(key)) throw new Error(`height ${this.height}: input ${key} spent twice`);
      if (coin.coinbase && this.height - coin.height < cb.coinbaseMaturity) {
        throw new Error(`height ${this.height}: coinbase output ${key} from height ${coin.height} is immature`);
      }
      if (coin.lock.kind.startsWith('name_') && (!nameInputsAllowed || version !== NAMECOIN_TX_VERSION)) {
        throw new Error(`height ${this.height}: ${key} is a name output; spend it with nameFirstUpdate/nameUpdate`);
      }
      if (!coin.lock.satisfy && (isRef(x) || (!x.scriptSig && !x.witness))) throw new Error(`height ${this.height}: ${key} (${coin.lock.kind}) is not spendable`);
      used.add(key);
      ins.push({ coin, key, spec: isRef(x) ? undefined : x });
    }
    const outs = spec.outputs ?? [];
    let sumIn = ins.reduce((s, i) => s + i.coin.value, 0n);
    const { fixed, free } = fixedAndFree(outs);
    const need = fixed + fee + BigInt(free) * DUST;
    if (sumIn < need && spec.fund !== false) {
      for (const [key, coin] of cb.walletCoins()) {
        if (sumIn >= need + (free ? 0n : DUST)) break;
        if (used.has(key) || (coin.coinbase && this.height - coin.height < cb.coinbaseMaturity)) continue;
        used.add(key);
        ins.push({ coin, key, spec: undefined });
        sumIn += coin.value;
      }
    }
    if (sumIn < need) throw new Error(`height ${this.height}: inputs ${sumIn} do not cover outputs ${fixed} + fee ${fee}${spec.fund === false ? '' : ' (wallet has no more mature coins)'}`);
    if (ins.length === 0) throw new Error(`height ${this.height}: a transaction needs an input`);
    const finalOuts: OutputSpec[] = [...outs];
    if (free === 0 && spec.change !== false) {
      const surplus = sumIn - fixed - fee;
      if (surplus >= DUST) finalOuts.push({ lock: spec.change ?? cb.nextChangeLock(), value: surplus, wallet: spec.change === undefined });
    }
    const values = splitValues(finalOuts, sumIn - fee, 'tx');
    const realFee = sumIn - values.reduce((s, v) => s + v, 0n);
    const txIns: TxInData[] = ins.map(({ coin, spec: s }) => {
      const [prevHash, prevIndex] = [coin.hash, coin.vout];
      let scriptSig = s?.scriptSig;
      let witness = s?.witness;
      if (scriptSig === undefined && witness === undefined) ({ scriptSig, witness } = unlock(coin.lock, cb.signer));
      return { prevHash, prevIndex, script: scriptSig ?? Buffer.alloc(0), sequence: s?.sequence ?? 0xfffffffe, witness };
    });
    const data: TxData = { version, inputs: txIns, outputs: finalOuts.map((o, i) => ({ value: values[i]!, script: o.lock.script })), lockTime: spec.lockTime ?? 0 };
    const st = serializeTx(data);
    const spent: Coin[] = [];
    for (const { coin, key } of ins) {
      cb.applyAndLog(this.ops, { t: 'del', key, coin });
      spent.push(coin);
    }
    const refs: OutRef[] = [];
    finalOuts.forEach((o, i) => {
      refs.push({ txid: st.txid, vout: i });
      if (!o.lock.satisfy) return; // unspendable: never enters the UTXO set
      const coin: Coin = { hash: st.hash, txid: st.txid, vout: i, value: values[i]!, lock: o.lock, height: this.height, coinbase: false, wallet: o.wallet ?? false };
      cb.applyAndLog(this.ops, { t: 'add', key: refKey(st.txid, i), coin });
    });
    this.txs.push(st);
    this.fees += realFee;
    return {
      txid: st.txid,
      hash: st.hash,
      raw: st.raw,
      fee: realFee,
      outputs: refs,
      spent,
      out(vout: number): OutRef {
        const r = refs[vout];
        if (!r) throw new Error(`tx ${st.txid} has no output ${vout}`);
        return r;
      },
    };
  }
}

function splitKey(key: string): [string, number] {
  const i = key.lastIndexOf(':');
  return [key.slice(0, i), Number(key.slice(i + 1))];
}

function toBytes(x: string | Buffer): Buffer {
  return typeof x === 'string' ? Buffer.from(x, 'utf8') : x;
}

function checkName(name: Buffer): void {
  if (name.length > MAX_NAME_LENGTH) throw new Error(`name longer than ${MAX_NAME_LENGTH} bytes`);
}

function checkValue(value: Buffer): void {
  if (value.length > MAX_VALUE_LENGTH) throw new Error(`name value longer than ${MAX_VALUE_LENGTH} bytes`);
}

