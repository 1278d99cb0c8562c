// The coins generateChain can spend: ordinary ones, each hub's apart (real profile: spent only
// by the hub's own consolidations and batch payouts, as an exchange's wallet), and coinbase
// outputs until they mature.
import type { Prng } from '../prng.js';
import type { Template } from './payees.js';

export interface Utxo {
  /** txid, internal byte order. */
  hash: Buffer;
  vout: number;
  value: number;
  tpl: Template;
}

export class CoinPool {
  /** Ordinary coins, in no order (spends take a random one). */
  readonly spendable: Utxo[] = [];
  /** real profile: each hub's coins, by hub number. */
  readonly hubCoins: Utxo[][];
  private readonly maturing: { height: number; utxos: Utxo[] }[] = [];

  constructor(
    private readonly prng: Prng,
    hubs: number,
  ) {
    this.hubCoins = Array.from({ length: hubs }, () => []);
  }

  /** A new coin: a hub's or an ordinary one. */
  keep(u: Utxo): void {
    if (u.tpl.hub === undefined) this.spendable.push(u);
    else this.hubCoins[u.tpl.hub]!.push(u);
  }

  /** Coinbase outputs, spendable from `height` on. */
  addMaturing(height: number, utxos: Utxo[]): void {
    this.maturing.push({ height, utxos });
  }

  /** Makes the coinbase outputs spendable at `height` so. */
  mature(height: number): void {
    while (this.maturing.length && this.maturing[0]!.height <= height) for (const u of this.maturing.shift()!.utxos) this.keep(u);
  }

  /** Takes a random ordinary coin (the pool must not be empty). */
  takeRandom(): Utxo {
    return takeAt(this.spendable, this.prng.int(this.spendable.length));
  }

  /** Gives back an ordinary coin taken but not spent. */
  putBack(u: Utxo): void {
    this.spendable.push(u);
  }

  /** Takes a random coin of hub `hub` (it must have one). */
  takeHubCoin(hub: number): Utxo {
    const coins = this.hubCoins[hub]!;
    return takeAt(coins, this.prng.int(coins.length));
  }

  /** The hub holding the most coins (the lowest number on a tie). */
  richestHub(): number {
    let best = 0;
    for (let h = 1; h < this.hubCoins.length; h++) if (this.hubCoins[h]!.length > this.hubCoins[best]!.length) best = h;
    return best;
  }
}

/** Removes and returns `list[i]`, moving the last element into its place. */
function takeAt<T>(list: T[], i: number): T {
  const u = list[i]!;
  list[i] = list[list.length - 1]!;
  list.pop();
  return u;
}
