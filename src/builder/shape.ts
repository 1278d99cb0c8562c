import { scriptAddress } from '../chain/address.js';
import { parseBlock } from '../chain/block.js';
import { nameOutputs } from '../chain/name-script.js';
import type { Network } from '../chain/networks.js';
import { isCoinbase } from '../chain/tx.js';

/** Count statistics: mean, percentiles, max. */
export interface Spread {
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** The realised shape of a chain, measured by parsing its blocks (not from the generator's own counters). */
export interface ChainShape {
  blocks: number;
  /** All transactions, coinbases included. */
  txs: number;
  addresses: number;
  /** Transactions an address appears in (as payee or spender), over all addresses. */
  txsPerAddress: Spread;
  /** Share of addresses that appear in one or two transactions. */
  addressesInAtMostTwoTxs: number;
  /** Share of all transactions that touch one of the top 1% addresses (by transactions). */
  top1PercentTxShare: number;
  /** Share of all transactions that touch the busiest address. */
  topAddressTxShare: number;
  /** Inputs and outputs per non-coinbase transaction. */
  inputs: Spread;
  outputs: Spread;
  /** Mean non-coinbase transactions per block, in ten equal slices of the blocks after the first `skip` (coinbase-only) blocks. */
  blockTxsByDecile: number[];
  nameOps: number;
  /** Name operations per non-coinbase transaction. */
  nameOpShare: number;
}

function spread(values: number[] | Uint32Array): Spread {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  if (n === 0) return { mean: 0, p50: 0, p90: 0, p99: 0, max: 0 };
  const at = (q: number) => sorted[Math.min(n - 1, Math.floor(q * n))]!;
  let sum = 0;
  for (const v of sorted) sum += v;
  return { mean: sum / n, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[n - 1]! };
}

/**
 * Measures a chain's shape block by block (feed blocks in height order, main chain only).
 * Addresses are those of `scriptAddress` (name scripts count for their owner's address).
 */
export class ShapeMeter {
  private readonly ids = new Map<string, number>();
  private readonly outAddr = new Map<string, number>();
  private readonly txAddrs: number[][] = [];
  private readonly ins: number[] = [];
  private readonly outs: number[] = [];
  private readonly blockTxs: number[] = [];
  private nameOps = 0;

  constructor(
    private readonly net: Network,
    /** Leading blocks left out of the block-size deciles (the coinbase-only maturity blocks). */
    private readonly skip = 101,
  ) {}

  add(raw: Buffer): void {
    const block = parseBlock(raw, { auxpow: this.net.auxpow });
    this.blockTxs.push(block.txs.length - 1);
    for (const tx of block.txs) {
      const seen = new Set<number>();
      if (!isCoinbase(tx)) {
        this.ins.push(tx.inputs.length);
        this.outs.push(tx.outputs.length);
        this.nameOps += nameOutputs(tx).length;
        for (const i of tx.inputs) {
          const key = i.prevHash.toString('latin1') + i.prevIndex;
          const id = this.outAddr.get(key);
          if (id !== undefined) {
            seen.add(id);
            this.outAddr.delete(key);
          }
        }
      }
      tx.outputs.forEach((o, vout) => {
        const addr = scriptAddress(o.script, this.net);
        if (addr === undefined) return;
        let id = this.ids.get(addr);
        if (id === undefined) this.ids.set(addr, (id = this.ids.size));
        seen.add(id);
        this.outAddr.set(tx.hash.toString('latin1') + vout, id);
      });
      this.txAddrs.push([...seen]);
    }
  }

  result(): ChainShape {
    const perAddress = new Uint32Array(this.ids.size);
    for (const list of this.txAddrs) for (const id of list) perAddress[id]!++;
    const order = Array.from(perAddress.keys()).sort((a, b) => perAddress[b]! - perAddress[a]! || a - b);
    const top = new Set(order.slice(0, Math.max(1, Math.floor(order.length / 100))));
    const busiest = order[0];
    let touchTop = 0;
    let touchBusiest = 0;
    for (const list of this.txAddrs) {
      if (list.some((id) => top.has(id))) touchTop++;
      if (list.includes(busiest!)) touchBusiest++;
    }
    let atMostTwo = 0;
    for (const c of perAddress) if (c <= 2) atMostTwo++;
    const sized = this.blockTxs.slice(this.skip);
    const deciles: number[] = [];
    for (let d = 0; d < 10; d++) {
      const part = sized.slice(Math.floor((d * sized.length) / 10), Math.floor(((d + 1) * sized.length) / 10));
      deciles.push(part.length ? part.reduce((a, b) => a + b, 0) / part.length : 0);
    }
    const txs = this.txAddrs.length;
    return {
      blocks: this.blockTxs.length,
      txs,
      addresses: this.ids.size,
      txsPerAddress: spread(perAddress),
      addressesInAtMostTwoTxs: atMostTwo / Math.max(1, this.ids.size),
      top1PercentTxShare: touchTop / Math.max(1, txs),
      topAddressTxShare: touchBusiest / Math.max(1, txs),
      inputs: spread(this.ins),
      outputs: spread(this.outs),
      blockTxsByDecile: deciles,
      nameOps: this.nameOps,
      nameOpShare: this.nameOps / Math.max(1, this.ins.length),
    };
  }
}

/** A few lines for a benchmark's log. */
export function formatShape(s: ChainShape): string {
  const f = (x: Spread) => `mean ${x.mean.toFixed(2)}, p50 ${x.p50}, p90 ${x.p90}, p99 ${x.p99}, max ${x.max}`;
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  return [
    `chain shape: ${s.blocks} blocks, ${s.txs} txs, ${s.addresses} addresses`,
    `  txs per address: ${f(s.txsPerAddress)}; ${pct(s.addressesInAtMostTwoTxs)} of addresses in ≤ 2 txs`,
    `  txs touching the top 1% addresses: ${pct(s.top1PercentTxShare)}; the busiest address: ${pct(s.topAddressTxShare)}`,
    `  inputs per tx: ${f(s.inputs)}`,
    `  outputs per tx: ${f(s.outputs)}`,
    `  txs per block by tenth of the chain: ${s.blockTxsByDecile.map((x) => x.toFixed(0)).join(' ')}`,
    `  name operations: ${s.nameOps} (${pct(s.nameOpShare)} of non-coinbase txs)`,
  ].join('\n');
}
