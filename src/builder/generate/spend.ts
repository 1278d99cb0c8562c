// A plain spend of generateChain: random coins to 1–5 (bench) or 1–8 (real) payees; real: or a
// hub's consolidation (100–499 of its coins to itself) or batch payout (1–3 of its coins to
// 101–500 payees and itself).
import type { Prng } from '../prng.js';
import type { ChainState } from './block.js';
import type { Template } from './payees.js';
import { FEE_BASE, FEE_PER_INPUT, MIN_OUTPUT } from './plan.js';

/** How many outputs a spend gets, and the hub it pays back (the last output), if any. */
interface SpendShape {
  nOut: number;
  hub: Template | undefined;
}

/** Makes one spend into `st.txs` (the pool of ordinary coins must not be empty). */
export function spendTx(st: ChainState): void {
  const { prng, txs, payees, plan } = st;
  const { nOut: wanted, hub } = takeInputs(st);
  let nOut = wanted;
  let total = 0;
  for (const u of txs.ins) total += u.value;
  const fee = FEE_BASE + FEE_PER_INPUT * txs.ins.length + 40 * nOut;
  while (nOut > 1 && total - fee < nOut * MIN_OUTPUT * 10) nOut--;
  if (total - fee < MIN_OUTPUT) {
    // Too little for any output: all of it goes to the fee, with an OP_RETURN as the one output.
    txs.addOutput(payees.opReturn, 0, undefined);
    txs.emit(2, total);
    return;
  }
  let left = total - fee;
  for (let i = 0; i < nOut; i++) {
    const rest = nOut - 1 - i;
    const t = hub && rest === 0 ? hub : payees.payee();
    // bench: 20–80% of what is left; real: 50–150% of an equal share (batch payouts stay above the minimum).
    const want = () => (plan.real ? (left / (rest + 1)) * (0.5 + prng.float()) : left * (0.2 + 0.6 * prng.float()));
    const v = rest === 0 ? left : Math.min(left - rest * MIN_OUTPUT, Math.max(MIN_OUTPUT, Math.floor(want())));
    left -= v;
    txs.addOutput(t.script, v, t);
  }
  if (prng.float() < 0.01) txs.addOutput(payees.opReturn, 0, undefined);
  const hash = txs.emit(2, fee);
  for (let i = 0; i < txs.outTpls.length; i++) {
    const t = txs.outTpls[i];
    if (t) st.coins.keep({ hash, vout: i, value: txs.outValues[i]!, tpl: t });
  }
}

/** Takes the spend's coins into `st.txs.ins` and decides how many outputs it gets. */
function takeInputs(st: ChainState): SpendShape {
  const { prng, coins, txs, payees, plan } = st;
  const { shape } = plan;
  const r0 = plan.real ? prng.float() : 1;
  // Too few coins outside the hubs for ordinary spends: the richest hub pays out a batch.
  const starved = plan.real && coins.spendable.length < 50;
  const hubIndex = !plan.real ? -1 : starved ? coins.richestHub() : r0 < shape.consolidationRate + shape.batchRate ? payees.pickHub() : -1;
  if (hubIndex >= 0 && coins.hubCoins[hubIndex]!.length >= (starved ? 1 : 2)) {
    const batch = starved || r0 >= shape.consolidationRate;
    const nIn = batch ? 1 + prng.int(3) : 100 + prng.int(400);
    const nOut = batch ? 101 + prng.int(400) : 1;
    for (let i = 0; i < nIn && coins.hubCoins[hubIndex]!.length > 0; i++) txs.ins.push(coins.takeHubCoin(hubIndex));
    return { nOut, hub: payees.hubs[hubIndex]! };
  }
  let nIn: number;
  if (plan.real) nIn = smallCount(prng, 0.55, 0.83);
  else {
    const r = prng.float();
    nIn = r < 0.7 ? 1 : r < 0.95 ? 2 : 3;
    if (coins.spendable.length > 400_000) nIn++;
  }
  for (let i = 0; i < nIn && coins.spendable.length > 0; i++) txs.ins.push(coins.takeRandom());
  let nOut: number;
  if (plan.real) nOut = smallCount(prng, 0.25, 0.87);
  else {
    const r2 = prng.float();
    nOut = r2 < 0.2 ? 1 : r2 < 0.85 ? 2 : 3 + prng.int(3);
  }
  return { nOut, hub: undefined };
}

/** 1 below `p1`, 2 below `p2`, else 3–8. */
function smallCount(prng: Prng, p1: number, p2: number): number {
  const r = prng.float();
  return r < p1 ? 1 : r < p2 ? 2 : 3 + prng.int(6);
}
