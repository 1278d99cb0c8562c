// The block generateChain is making: its transactions written into reused buffers, then
// (last step) its coinbase, header and bytes.
import { toDisplayHex } from '../../chain/hash.js';
import { blockSubsidy } from '../../chain/networks.js';
import { ByteWriter } from '../bytes.js';
import type { Prng } from '../prng.js';
import { blockBytes, blockVersion, coinbaseTx, sealHeader } from '../seal.js';
import { REGTEST_BITS, txHashes, writeTx, type TxInData } from '../serialize.js';
import type { CoinPool, Utxo } from './coins.js';
import type { NameBook } from './name-ops.js';
import type { GeneratedBlock } from './options.js';
import type { Payees, Template } from './payees.js';
import { COINBASE_MATURITY, type ChainPlan } from './plan.js';

/** What the steps of one generated chain share. */
export interface ChainState {
  plan: ChainPlan;
  prng: Prng;
  payees: Payees;
  coins: CoinPool;
  names: NameBook;
  txs: BlockTxs;
}

const txIn = (u: Utxo): TxInData => ({ prevHash: u.hash, prevIndex: u.vout, script: u.tpl.scriptSig, sequence: 0xfffffffe, witness: u.tpl.witness });

/** The block's non-coinbase transactions, and the one being made. */
export class BlockTxs {
  /** The transactions, serialized back to back. */
  readonly writer = new ByteWriter(1 << 20);
  readonly coinbaseWriter = new ByteWriter(4096);
  /** txids and wtxids of the transactions, internal byte order (a tx without witness has the same Buffer in both). */
  readonly txids: Buffer[] = [];
  readonly wtxids: Buffer[] = [];
  /** Fees of the transactions, for the coinbase. */
  fees = 0;
  /** The transaction being made: the coins it spends and its outputs (tpl undefined: not spendable). */
  readonly ins: Utxo[] = [];
  readonly outScripts: Buffer[] = [];
  readonly outValues: number[] = [];
  readonly outTpls: (Template | undefined)[] = [];

  startBlock(): void {
    this.writer.reset();
    this.txids.length = 0;
    this.wtxids.length = 0;
    this.fees = 0;
  }

  startTx(): void {
    this.ins.length = 0;
    this.outScripts.length = 0;
    this.outValues.length = 0;
    this.outTpls.length = 0;
  }

  addOutput(script: Buffer, value: number, tpl: Template | undefined): void {
    this.outScripts.push(script);
    this.outValues.push(value);
    this.outTpls.push(tpl);
  }

  /** Writes the transaction being made (a name coin, when given, as its first input); returns its txid (internal order). */
  emit(version: number, fee: number, nameInput?: Utxo): Buffer {
    const inputs = (nameInput ? [nameInput, ...this.ins] : this.ins).map(txIn);
    const outputs = this.outScripts.map((script, i) => ({ value: BigInt(this.outValues[i]!), script }));
    const { hash, whash } = txHashes(this.writer.buf, writeTx(this.writer, { version, inputs, outputs, lockTime: 0 }));
    this.txids.push(hash);
    this.wtxids.push(whash);
    this.fees += fee;
    return hash;
  }
}

/**
 * Last step of a block: the coinbase (subsidy and fees shared by `coinbaseOutputs` payees, the
 * first taking the remainder; spendable after maturity), the header on `prevHash` sealed, the bytes.
 */
export function finishBlock(st: ChainState, height: number, prevHash: Buffer, time: number): { block: GeneratedBlock; hash: Buffer } {
  const { plan, prng, txs } = st;
  const cbw = txs.coinbaseWriter;
  cbw.reset();
  const anyWitness = txs.txids.some((h, i) => h !== txs.wtxids[i]);
  const reward = Number(blockSubsidy(plan.network, height)) + txs.fees;
  const n = plan.coinbaseOutputs;
  const tpls: Template[] = [];
  for (let i = 0; i < n; i++) tpls.push(st.payees.payee());
  const share = Math.floor(reward / n);
  const values = tpls.map((_, i) => (i === 0 ? reward - share * (n - 1) : share));
  const outputs = tpls.map((t, i) => ({ value: BigInt(values[i]!), script: t.script }));
  const cbHash = txHashes(cbw.buf, writeTx(cbw, coinbaseTx(height, prng.bytes(4), outputs, { any: anyWitness, wtxids: txs.wtxids }))).hash;
  const matured: Utxo[] = [];
  for (let i = 0; i < n; i++) if (values[i]! > 0) matured.push({ hash: cbHash, vout: i, value: values[i]!, tpl: tpls[i]! });
  st.coins.addMaturing(height + COINBASE_MATURITY, matured);

  const txids = [cbHash, ...txs.txids];
  const sealed = sealHeader({ version: blockVersion(plan.network, plan.auxpow), prevHash, txids, time, bits: REGTEST_BITS, auxpow: plan.auxpow, prng });
  const raw = blockBytes(sealed, txids.length, [cbw.view(), txs.writer.view()]);
  return { block: { height, hash: toDisplayHex(sealed.hash), raw, txCount: txids.length }, hash: sealed.hash };
}
