import { toDisplayHex } from '../chain/hash.js';
import { blockSubsidy, type Network } from '../chain/networks.js';
import { blockWork } from '../chain/work.js';
import { BlockContext, splitValues } from './block-context.js';
import { KeyFactory, Signer, type Key } from './keys.js';
import { Prng } from './prng.js';
import { locks, type Lock } from './scripts.js';
import { blockBytes, blockVersion, coinbaseTx, sealHeader } from './seal.js';
import { REGTEST_BITS, regtestGenesis, serializeTx, type SerializedTx } from './serialize.js';
import {
  refKey,
  type BlockHandle,
  type BlockKind,
  type BlockOptions,
  type BuiltBlock,
  type BuiltChain,
  type ChainBuilderOptions,
  type Coin,
  type NameEntry,
  type NameOpRecord,
  type Op,
  type OutputSpec,
  type OutRef,
} from './types.js';

export { BlockContext } from './block-context.js';
export * from './types.js';

interface Node {
  handle: BlockHandle;
  hashBuf: Buffer;
  prev: Node | undefined;
  height: number;
  time: number;
  work: bigint;
  /** Ghost parents of orphans are never emitted; detached = ghost or descends from one. */
  ghost: boolean;
  detached: boolean;
  ops: Op[];
}

/**
 * Deterministic builder of valid-structure regtest chains (Bitcoin or
 * Namecoin): genesis identical to Core's, BIP34 coinbases, UTXO-tracked
 * spends with balanced values, witness commitments, correct merkle roots,
 * solved PoW (or AuxPoW on merge-mined Namecoin blocks), Namecoin name
 * operations with Core's rules enforced, side branches and orphans.
 *
 * ```ts
 * const cb = new ChainBuilder({ network: NETWORKS['namecoin-regtest'], seed: 1 });
 * cb.mine(101);
 * const k = cb.key();
 * cb.block((b) => { b.tx({ outputs: [{ lock: locks.p2wpkh(k), value: 100_000_000n }] }); });
 * const chain = cb.build();
 * ```
 */
export class ChainBuilder {
  readonly network: Network;
  readonly auxpow: boolean;
  readonly bits: number;
  readonly blockInterval: number;
  readonly coinbaseMaturity: number;
  readonly signer: Signer;
  private readonly keys: KeyFactory;
  private readonly prng: Prng;
  private readonly startTime: number | undefined;
  private readonly nodes: Node[] = [];
  private readonly byHash = new Map<string, Node>();
  private best: Node;
  private active: Node;
  private readonly utxo = new Map<string, Coin>();
  private readonly wallet = new Map<string, Coin>();
  private readonly nameState = new Map<string, NameEntry>();
  private readonly nameOps: NameOpRecord[] = [];
  /** The coinbase made last at each height (ghost blocks' aside), for BlockOptions.coinbaseOf. */
  private readonly coinbaseByHeight = new Map<number, { tx: SerializedTx; value: bigint }>();
  private readonly minerLock: Lock;
  private readonly changeLocks: Lock[];
  private changeIndex = 0;

  constructor(opts: ChainBuilderOptions) {
    this.network = opts.network;
    this.auxpow = opts.auxpow ?? opts.network.auxpow;
    if (this.auxpow && !opts.network.auxpow) throw new Error(`${opts.network.name} has no merge mining`);
    this.bits = opts.bits ?? REGTEST_BITS;
    this.blockInterval = opts.blockInterval ?? 600;
    this.coinbaseMaturity = opts.coinbaseMaturity ?? 100;
    this.startTime = opts.startTime;
    this.prng = new Prng(`${opts.seed}/misc`);
    this.keys = new KeyFactory(new Prng(`${opts.seed}/keys`));
    this.signer = new Signer(new Prng(`${opts.seed}/sigs`));
    const g = regtestGenesis();
    const id = toDisplayHex(g.hash);
    const genesis: Node = {
      handle: { hash: id, height: 0, time: g.header.readUInt32LE(68), prevHash: '0'.repeat(64), raw: g.raw, txids: [g.coinbase.txid] },
      hashBuf: g.hash,
      prev: undefined,
      height: 0,
      time: g.header.readUInt32LE(68),
      work: blockWork(g.header.readUInt32LE(72)),
      ghost: false,
      detached: false,
      ops: [],
    };
    if (id !== opts.network.genesis) throw new Error(`${opts.network.name} is not a regtest network: the builder only makes regtest chains`);
    this.nodes.push(genesis);
    this.byHash.set(id, genesis);
    this.best = genesis;
    this.active = genesis;
    this.minerLock = locks.p2pkh(this.keys.key());
    this.changeLocks = [locks.p2pkh(this.keys.key()), locks.p2wpkh(this.keys.key()), locks.p2pkh(this.keys.key())];
  }

  /** A fresh deterministic key (33-byte compressed, or 65-byte uncompressed). */
  key(opts: { uncompressed?: boolean } = {}): Key {
    return this.keys.key(opts);
  }

  /** Deterministic random bytes from the builder's stream. */
  randomBytes(n: number): Buffer {
    return this.prng.bytes(n);
  }

  /** The best (most-work, first-seen) block. */
  get tip(): BlockHandle {
    return this.best.handle;
  }

  /** The UTXO set after the last built block (or the block being built). */
  coin(ref: OutRef): Coin | undefined {
    return this.utxo.get(refKey(ref.txid, ref.vout));
  }

  unspent(): Coin[] {
    return [...this.utxo.values()];
  }

  /** Builds one block on `opts.parent` (default the best tip); `fn` adds transactions. */
  block(fn?: (b: BlockContext) => void, opts: BlockOptions = {}): BlockHandle {
    return this.buildBlock(fn, opts, false).handle;
  }

  /** `n` blocks with only a coinbase. */
  mine(n: number, opts: Omit<BlockOptions, 'time'> = {}): BlockHandle[] {
    const out: BlockHandle[] = [];
    let parent = opts.parent;
    for (let i = 0; i < n; i++) {
      const h = this.block(undefined, { ...opts, parent });
      out.push(h);
      if (parent !== undefined) parent = h;
    }
    return out;
  }

  /**
   * An orphan: a block whose parent (built on `opts.parent`, default the tip,
   * but never emitted) is unknown to anyone reading the output.
   */
  orphan(fn?: (b: BlockContext) => void, opts: BlockOptions = {}): BlockHandle {
    const ghost = this.buildBlock(undefined, { ...opts, time: undefined }, true);
    return this.buildBlock(fn, { ...opts, parent: ghost.handle }, false).handle;
  }

  /** The blocks built so far, classified against the current best chain. */
  build(): BuiltChain {
    const mainSet = new Set<Node>();
    for (let n: Node | undefined = this.best; n; n = n.prev) mainSet.add(n);
    const kindOf = (n: Node): BlockKind => (mainSet.has(n) ? 'main' : n.detached ? 'orphan' : 'side');
    const blocks: BuiltBlock[] = [];
    const byNode = new Map<Node, BuiltBlock>();
    for (const n of this.nodes) {
      if (n.ghost) continue;
      const b: BuiltBlock = { ...n.handle, kind: kindOf(n) };
      blocks.push(b);
      byNode.set(n, b);
    }
    const main: BuiltBlock[] = [];
    for (let n: Node | undefined = this.best; n; n = n.prev) main[n.height] = byNode.get(n)!;
    return {
      network: this.network,
      blocks,
      main,
      side: blocks.filter((b) => b.kind === 'side'),
      orphans: blocks.filter((b) => b.kind === 'orphan'),
      tip: byNode.get(this.best)!,
      names: this.nameOps.filter((r) => !this.byHash.get(r.block)!.ghost).map((r) => ({ ...r })),
    };
  }

  // ---- internals ---------------------------------------------------------------

  private nodeOf(ref: BlockHandle | string): Node {
    const id = typeof ref === 'string' ? ref : ref.hash;
    const n = this.byHash.get(id);
    if (!n) throw new Error(`unknown block ${id}`);
    return n;
  }

  /** @internal applies an op to the live state and appends it to `log` (the block's undo log). */
  applyAndLog(log: Op[], op: Op): void {
    this.applyOp(op, true);
    log.push(op);
  }

  private applyOp(op: Op, forward: boolean): void {
    if (op.t === 'name') {
      const v = forward ? op.next : op.prev;
      if (v) this.nameState.set(op.name, v);
      else this.nameState.delete(op.name);
      return;
    }
    const add = (op.t === 'add') === forward;
    if (add) {
      this.utxo.set(op.key, op.coin);
      if (op.coin.wallet) this.wallet.set(op.key, op.coin);
    } else {
      this.utxo.delete(op.key);
      this.wallet.delete(op.key);
    }
  }

  private undo(ops: readonly Op[]): void {
    for (let i = ops.length - 1; i >= 0; i--) this.applyOp(ops[i]!, false);
  }

  /** Moves the live UTXO/name state to "after `target`". */
  private activate(target: Node): void {
    if (target === this.active) return;
    let a: Node = this.active;
    let b: Node = target;
    const forward: Node[] = [];
    while (a.height > b.height) {
      this.undo(a.ops);
      a = a.prev!;
    }
    while (b.height > a.height) {
      forward.push(b);
      b = b.prev!;
    }
    while (a !== b) {
      this.undo(a.ops);
      a = a.prev!;
      forward.push(b);
      b = b.prev!;
    }
    for (let i = forward.length - 1; i >= 0; i--) for (const op of forward[i]!.ops) this.applyOp(op, true);
    this.active = target;
  }

  private buildBlock(fn: ((b: BlockContext) => void) | undefined, opts: BlockOptions, ghost: boolean): Node {
    const parent = opts.parent === undefined ? this.best : this.nodeOf(opts.parent);
    this.activate(parent);
    const height = parent.height + 1;
    const time = opts.time ?? (parent.height === 0 && this.startTime !== undefined ? this.startTime : parent.time + this.blockInterval);
    const ctx = new BlockContext(this, height, time);
    try {
      fn?.(ctx);
      return this.finish(ctx, parent, opts, ghost);
    } catch (e) {
      this.undo(ctx.ops);
      throw e;
    }
  }

  /** The coinbase made at height `of` again (BlockOptions.coinbaseOf): its unspent outputs become this block's. */
  private repeatCoinbase(ctx: BlockContext, of: number, total: bigint): SerializedTx {
    const earlier = this.coinbaseByHeight.get(of);
    if (!earlier || ctx.txs.length > 0 || earlier.value !== total) {
      throw new Error(`block ${ctx.height}: coinbaseOf ${of} needs a block with only its coinbase, of the same value, over a coinbase this builder made`);
    }
    const cb = earlier.tx;
    for (let i = 0; ; i++) {
      const coin = this.utxo.get(refKey(cb.txid, i));
      if (!coin) break;
      this.applyAndLog(ctx.ops, { t: 'del', key: refKey(cb.txid, i), coin });
      this.applyAndLog(ctx.ops, { t: 'add', key: refKey(cb.txid, i), coin: { ...coin, height: ctx.height } });
    }
    return cb;
  }

  private finish(ctx: BlockContext, parent: Node, opts: BlockOptions, ghost: boolean): Node {
    const { height, time } = ctx;
    // Coinbase: subsidy + fees to the requested outputs.
    const total = blockSubsidy(this.network, height) + ctx.fees;
    const cbOuts: OutputSpec[] = opts.coinbase === undefined ? [{ lock: this.minerLock, wallet: true }] : Array.isArray(opts.coinbase) ? opts.coinbase : [{ lock: opts.coinbase }];
    const values = splitValues(cbOuts, total, 'coinbase');
    const outputs = cbOuts.map((o, i) => ({ value: values[i]!, script: o.lock.script }));
    const witness = { any: ctx.txs.some((t) => t.hasWitness), wtxids: ctx.txs.map((t) => t.whash) };
    const cb = opts.coinbaseOf !== undefined ? this.repeatCoinbase(ctx, opts.coinbaseOf, total) : serializeTx(coinbaseTx(height, this.prng.bytes(4), outputs, witness));
    if (opts.coinbaseOf === undefined) {
      if (!ghost) this.coinbaseByHeight.set(height, { tx: cb, value: total });
      cbOuts.forEach((o, i) => {
        const coin: Coin = { hash: cb.hash, txid: cb.txid, vout: i, value: values[i]!, lock: o.lock, height, coinbase: true, wallet: o.wallet ?? opts.coinbase === undefined };
        if (o.lock.satisfy) this.applyAndLog(ctx.ops, { t: 'add', key: refKey(cb.txid, i), coin });
      });
    }
    // Namecoin: names last updated `depth` blocks ago expire now; their coins become unspendable.
    const depth = this.network.nameExpirationDepth?.(height);
    if (depth !== undefined) {
      for (const e of this.nameState.values()) {
        if (e.height + depth <= height) {
          const coin = this.utxo.get(e.key);
          if (coin) this.applyAndLog(ctx.ops, { t: 'del', key: e.key, coin });
        }
      }
    }
    const auxpow = opts.auxpow ?? this.auxpow;
    if (auxpow && !this.network.auxpow) throw new Error(`${this.network.name} has no merge mining`);
    const txids = [cb.hash, ...ctx.txs.map((t) => t.hash)];
    const sealed = sealHeader({ version: blockVersion(this.network, auxpow), prevHash: parent.hashBuf, txids, time, bits: this.bits, auxpow, prng: this.prng });
    const hash = sealed.hash;
    const raw = blockBytes(sealed, txids.length, [cb.raw, ...ctx.txs.map((t) => t.raw)]);
    const id = toDisplayHex(hash);
    const node: Node = {
      handle: { hash: id, height, time, prevHash: parent.handle.hash, raw, txids: [cb.txid, ...ctx.txs.map((t) => t.txid)] },
      hashBuf: hash,
      prev: parent,
      height,
      time,
      work: parent.work + blockWork(this.bits),
      ghost,
      detached: ghost || parent.detached,
      ops: ctx.ops,
    };
    for (const r of ctx.nameRecords) r.block = id;
    this.nameOps.push(...ctx.nameRecords);
    this.nodes.push(node);
    this.byHash.set(id, node);
    this.active = node;
    if (!node.detached && node.work > this.best.work) this.best = node;
    return node;
  }

  /** @internal the next change lock of the wallet (they take turns). */
  nextChangeLock(): Lock {
    const l = this.changeLocks[this.changeIndex % this.changeLocks.length]!;
    this.changeIndex++;
    return l;
  }

  /** @internal an unspent coin by its {@link refKey}. */
  coinByKey(key: string): Coin | undefined {
    return this.utxo.get(key);
  }

  /** @internal the coins automatic funding may spend, oldest first. */
  walletCoins(): IterableIterator<[string, Coin]> {
    return this.wallet.entries();
  }

  /** @internal a registered name's current coin. */
  nameEntry(name: Buffer): NameEntry | undefined {
    return this.nameState.get(name.toString('hex'));
  }
}
