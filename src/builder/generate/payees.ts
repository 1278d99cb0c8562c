// Step 2 of generateChain: the addresses it pays, as output templates with their spending data
// made once (a template's scriptSig and witness serve every coin paid to it).
import type { KeyFactory } from '../keys.js';
import type { Prng } from '../prng.js';
import { locks, unlock, type Lock } from '../scripts.js';
import type { RealWorldShape } from './options.js';
import type { ChainPlan, RandomStreams } from './plan.js';

/** An output script with the scriptSig and witness that spend it. */
export interface Template {
  script: Buffer;
  scriptSig: Buffer;
  witness: Buffer[] | undefined;
  /** real profile: the hub's number when this is a hub address (its coins are kept apart). */
  hub?: number;
}

export interface Payees {
  /** The next payee: `bench`, a template of the fixed pool; `real`, a hub, an earlier or a new address. */
  payee(): Template;
  /** The owner of a name operation's output. */
  nameOwner(): Template;
  /** real profile: the hub addresses (index = hub number), and a Zipf draw of one. */
  hubs: Template[];
  pickHub(): number;
  /** The OP_RETURN output some transactions carry. */
  opReturn: Buffer;
}

/**
 * The fixed pool (432 templates of a realistic mix of output types over 64 keys, and 32 P2PKH
 * name owners) is made for both profiles, so the random streams stay the same; `real` then adds
 * its growing population.
 */
export function makePayees(plan: ChainPlan, { prng, keys, signer }: RandomStreams): Payees {
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
  // 48 templates of each kind, listed `weight` times: a kind is drawn in proportion to its weight.
  const weighted: Template[][] = [];
  for (const [w, make] of kinds) {
    const inst = Array.from({ length: 48 }, () => mk(make()));
    for (let i = 0; i < w; i++) weighted.push(inst);
  }
  const opReturn = locks.opReturn(Buffer.from('generated', 'utf8')).script;
  const nameOwners = Array.from({ length: 32 }, () => mk(locks.p2pkh(kp())));
  if (!plan.real) {
    const payee = () => prng.pick(prng.pick(weighted));
    const pickHub = () => {
      throw new Error('the bench profile has no hubs');
    };
    return { payee, nameOwner: () => prng.pick(nameOwners), hubs: [], pickHub, opReturn };
  }
  const real = realPayees(plan.shape, prng, keys, mk);
  return { ...real, nameOwner: real.payee, opReturn };
}

/**
 * Payees of the real-world profile: a hub (Zipf over `hubs` addresses), an earlier ordinary
 * address in proportion to its uses (preferential attachment: a heavy tail), or a new address.
 * Keys are key-shaped PRNG bytes (KeyFactory.fakeKey): a real key costs ~0.3 ms.
 */
function realPayees(shape: RealWorldShape, prng: Prng, keys: KeyFactory, mk: (lock: Lock) => Template): Pick<Payees, 'payee' | 'pickHub' | 'hubs'> {
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
