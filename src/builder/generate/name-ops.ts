// Namecoin name operations of generateChain: name_new → name_firstupdate (≥ 12 blocks later) →
// name_update, some names left to expire and registered again.
import { NAME_AMOUNT, NAMECOIN_TX_VERSION, MIN_FIRSTUPDATE_DEPTH } from '../types.js';
import { nameCommitment, nameFirstUpdateScript, nameNewScript, nameUpdateScript } from '../scripts.js';
import type { Prng } from '../prng.js';
import type { BlockTxs } from './block-txs.js';
import type { CoinPool, Utxo } from './coins.js';
import type { Payees } from './payees.js';
import { FEE_BASE, FEE_PER_INPUT, MIN_OUTPUT, type ChainPlan } from './plan.js';

/** What a name operation is made from: the generator's state for the block being made. */
export interface NameTxState {
  plan: ChainPlan;
  prng: Prng;
  payees: Payees;
  coins: CoinPool;
  txs: BlockTxs;
}

/** A name_new waiting for its name_firstupdate. */
interface PendingName {
  name: Buffer;
  rand: Buffer;
  utxo: Utxo;
  height: number;
}

/** A registered name: its current coin and the height of its last registration or update. */
interface ActiveName {
  name: Buffer;
  utxo: Utxo;
  height: number;
}

const NAME_VALUE = Number(NAME_AMOUNT);
const NAME_TX_FEE = FEE_BASE + FEE_PER_INPUT * 2;

/** The names made so far, by state. */
export class NameBook {
  /** name_news in the order made; those before `pendingHead` are used or dropped. */
  private readonly pending: PendingName[] = [];
  private pendingHead = 0;
  private active: ActiveName[] = [];
  /** Names in `active`, as latin1 strings. */
  private readonly activeSet = new Set<string>();
  /** Expired names, free to be registered again. */
  readonly expired: Buffer[] = [];
  /** Names updated in the current block (one update per name and block). */
  private updatedInBlock = new Set<ActiveName>();
  private counter = 0;

  /** At the start of the block at `height`: names last updated `depth` (the expiration depth) or more blocks ago expire. */
  startBlock(height: number, depth: number): void {
    this.active = this.active.filter((n) => {
      if (n.height + depth > height) return true;
      this.expired.push(n.name);
      this.activeSet.delete(n.name.toString('latin1'));
      return false;
    });
    this.updatedInBlock = new Set();
  }

  /**
   * The oldest name_new that can be firstupdated at `height`, if any. A commitment whose name
   * was registered by another one meanwhile is dropped (its output stays unspent).
   */
  private nextPending(height: number): PendingName | undefined {
    let pend = this.pending[this.pendingHead];
    while (pend && height - pend.height >= MIN_FIRSTUPDATE_DEPTH && this.activeSet.has(pend.name.toString('latin1'))) pend = this.pending[++this.pendingHead];
    return pend;
  }

  /**
   * Makes one name operation paid by a random coin into `st.txs`; false (and nothing made) when
   * no coin that can pay for it was found.
   */
  nameTx(st: NameTxState, height: number, inBlock: number): boolean {
    const { prng, coins, txs, payees, plan } = st;
    let funding = coins.takeRandom();
    // real: look a little further for a coin that can fund it, so the name rate is met.
    for (let tries = 0; plan.real && tries < 30 && funding.value < NAME_VALUE + NAME_TX_FEE + MIN_OUTPUT; tries++) {
      coins.putBack(funding);
      funding = coins.takeRandom();
    }
    if (funding.value < NAME_VALUE + NAME_TX_FEE + MIN_OUTPUT) {
      coins.putBack(funding);
      return false;
    }
    txs.ins.push(funding);
    const owner = payees.nameOwner();
    const pend = this.nextPending(height);
    const cand = this.active.length ? this.active[prng.int(this.active.length)]! : undefined;
    let nameInput: Utxo | undefined;
    let script: Buffer;
    let made: (u: Utxo) => void;
    const roll = prng.float();
    if (pend && height - pend.height >= MIN_FIRSTUPDATE_DEPTH && roll < 0.45) {
      this.pendingHead++;
      nameInput = pend.utxo;
      script = nameFirstUpdateScript(pend.name, pend.rand, Buffer.from(`{"ip":"10.${height & 255}.${inBlock & 255}.1"}`), owner.script);
      made = (u) => {
        this.active.push({ name: pend.name, utxo: u, height });
        this.activeSet.add(pend.name.toString('latin1'));
      };
    } else if (cand && cand.height < height && !this.updatedInBlock.has(cand) && roll < 0.8) {
      nameInput = cand.utxo;
      this.updatedInBlock.add(cand);
      script = nameUpdateScript(cand.name, Buffer.from(`value ${height}/${inBlock}`), owner.script);
      made = (u) => {
        cand.utxo = u;
        cand.height = height;
      };
    } else {
      const reuse = this.expired.length > 0 && prng.chance(0.2);
      const name = reuse ? this.expired.splice(prng.int(this.expired.length), 1)[0]! : Buffer.from(`d/gen${this.counter++}`);
      const rand = prng.bytes(20);
      script = nameNewScript(nameCommitment(rand, name), owner.script);
      made = (u) => this.pending.push({ name, rand, utxo: u, height });
    }
    const change = funding.value + (nameInput?.value ?? 0) - NAME_VALUE - NAME_TX_FEE;
    const changeTpl = payees.payee();
    txs.addOutput(script, NAME_VALUE, undefined);
    txs.addOutput(changeTpl.script, change, changeTpl);
    const hash = txs.emit(NAMECOIN_TX_VERSION, NAME_TX_FEE, nameInput);
    made({ hash, vout: 0, value: NAME_VALUE, tpl: owner });
    coins.keep({ hash, vout: 1, value: change, tpl: changeTpl });
    return true;
  }
}
