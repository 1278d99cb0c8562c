// The block generateChain is making: its transactions written into reused buffers, then
// (last step) its coinbase, header and bytes.
import { toDisplayHex } from '../../chain/hash.js';
import { blockSubsidy } from '../../chain/networks.js';
import { blockBytes, blockVersion, coinbaseTx, sealHeader } from '../seal.js';
import { REGTEST_BITS, txHashes, writeTx } from '../serialize.js';
import type { Utxo } from './coins.js';
import type { NameBook, NameTxState } from './name-ops.js';
import type { GeneratedBlock } from './options.js';
import type { Template } from './payees.js';
import { COINBASE_MATURITY } from './plan.js';

/** What the steps of one generated chain share. */
export interface ChainState extends NameTxState {
  names: NameBook;
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
