// The transactions of the block generateChain is making, serialized as they are made.
import { ByteWriter } from '../bytes.js';
import { txHashes, writeTx, type TxInData } from '../serialize.js';
import type { Utxo } from './coins.js';
import type { Template } from './payees.js';

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
