import { scriptAddress } from '../chain/address.js';
import { parseBlock, type Block } from '../chain/block.js';
import { merkleBranch } from '../chain/merkle.js';
import { nameOutputs } from '../chain/names.js';
import { blockSubsidy, isNamecoin, type Network } from '../chain/networks.js';
import { classifyScript, redeemScriptType } from '../chain/script.js';
import { isCoinbase, isCoinbaseInput } from '../chain/tx.js';
import { blockWork } from '../chain/work.js';
import type { ChainSource } from '../source/types.js';
import type { AddressSpill } from './address-spill.js';
import type { BlocksSpill, SpilledBlock } from './blocks-spill.js';
import { emptyCounters, type ChainCounters } from './stats.js';
import { nameKey, outpointKey, type Store } from './store.js';

export interface MainBlockRef extends SpilledBlock {
  height: number;
  hash: string;
}

export interface OffChainRef extends SpilledBlock {
  kind: 'side' | 'orphan';
  hash: string;
}

export interface ScanResult {
  counters: ChainCounters;
  main: MainBlockRef[];
  offChain: OffChainRef[];
  /** Coinbase txids seen in more than one main-chain block (BIP30); the later one wins /tx. */
  duplicateTxids: string[];
}

export interface ScanContext {
  source: ChainSource;
  height: number;
  store: Store;
  blocks: BlocksSpill;
  addresses: AddressSpill;
  onBlock?: (height: number) => void;
}

/** Where the scan was when a block failed: the error names the height and hash. */
function atBlock(e: unknown, height: number, hash: string): Error {
  const msg = e instanceof Error ? e.message : String(e);
  return new Error(`block ${hash} at height ${height}: ${msg}`, { cause: e });
}

/**
 * Pass 1: walks the main chain once, in height order, and records what later
 * passes need from the future (spends, name history, address outputs) plus
 * the chain-wide counters.
 */
export async function scanChain(ctx: ScanContext): Promise<ScanResult> {
  const net = ctx.source.network;
  const namecoin = isNamecoin(net);
  const counters = emptyCounters(namecoin);
  const main: MainBlockRef[] = [];
  const duplicateTxids: string[] = [];
  let nameSeq = 0;
  let expected = 0;

  for await (const sb of ctx.source.mainChain(ctx.height)) {
    if (sb.height !== expected) throw new Error(`source delivered height ${sb.height}, expected ${expected}`);
    expected++;
    let block: Block;
    try {
      block = parseBlock(sb.raw, { auxpow: net.auxpow });
    } catch (e) {
      throw atBlock(e, sb.height, sb.hash);
    }
    if (block.header.id !== sb.hash) throw atBlock(new Error(`header hashes to ${block.header.id}`), sb.height, sb.hash);
    const at = ctx.blocks.append(sb.raw);
    main.push({ ...at, height: sb.height, hash: sb.hash });

    counters.mainBlocks++;
    counters.mainSize += sb.raw.length;
    counters.coins += blockSubsidy(net, sb.height);
    counters.work += blockWork(block.header.bits);
    counters.tipTime = block.header.time;
    const duplicate = indexBlock(ctx, net, namecoin, block, sb.height, counters, () => nameSeq++);
    if (duplicate) duplicateTxids.push(duplicate);
    ctx.onBlock?.(sb.height);
  }
  if (expected !== ctx.height + 1) throw new Error(`source stopped at height ${expected - 1}, before ${ctx.height}`);

  const offChain: OffChainRef[] = [];
  for await (const ob of ctx.source.offChain(ctx.height)) {
    const at = ctx.blocks.append(ob.raw);
    offChain.push({ ...at, kind: ob.kind, hash: ob.hash });
    if (ob.kind === 'side') counters.sideBlocks++;
    else counters.orphanBlocks++;
  }
  offChain.sort((a, b) => (a.hash < b.hash ? -1 : 1));
  await ctx.store.root.flushed;
  return { counters, main, offChain, duplicateTxids };
}

function indexBlock(
  ctx: ScanContext,
  net: Network,
  namecoin: boolean,
  block: Block,
  height: number,
  c: ChainCounters,
  nextNameSeq: () => number,
): string | undefined {
  const { store } = ctx;
  let branchHashes: Buffer[] | undefined;
  let duplicate: string | undefined;
  store.root.transactionSync(() => {
    // Only coinbases can repeat (BIP30): a repeated spending tx would be a double spend.
    const cb = block.txs[0];
    if (cb && isCoinbase(cb)) {
      if (store.coinbases.get(cb.hash) !== undefined) duplicate = cb.txid;
      else store.coinbases.put(cb.hash, Buffer.alloc(0));
    }
    for (let ti = 0; ti < block.txs.length; ti++) {
      const tx = block.txs[ti]!;
      c.txs++;
      c.txins += tx.inputs.length;
      c.txouts += tx.outputs.length;
      for (let vin = 0; vin < tx.inputs.length; vin++) {
        const input = tx.inputs[vin]!;
        if (isCoinbaseInput(input)) continue;
        const key = outpointKey(input.prevHash, input.prevIndex);
        const spender = Buffer.allocUnsafe(36);
        tx.hash.copy(spender, 0);
        spender.writeUInt32LE(vin, 32);
        store.spent.put(key, spender);
        if (store.p2sh.get(key) !== undefined) {
          const t = redeemScriptType(input.script, namecoin) ?? 'unknown';
          c.p2shTypes[t] = (c.p2shTypes[t] ?? 0) + 1;
        }
      }
      for (let vout = 0; vout < tx.outputs.length; vout++) {
        const out = tx.outputs[vout]!;
        const type = classifyScript(out.script, namecoin);
        c.scriptTypes[type] = (c.scriptTypes[type] ?? 0) + 1;
        if (type === 'script_hash') store.p2sh.put(outpointKey(tx.hash, vout), Buffer.alloc(0));
        const address = scriptAddress(out.script, net);
        if (address !== undefined) {
          ctx.addresses.add({ address, height, txIndex: ti, vout, value: out.value, txHash: tx.hash });
        }
      }
      if (namecoin) {
        for (const { vout, op } of nameOutputs(tx)) {
          c.nameOps++;
          if (op.op === 'name_new' || !op.name || !op.value) continue;
          branchHashes ??= block.txs.map((t) => t.hash);
          store.names.put(nameKey(op.name, nextNameSeq()), {
            op: op.op,
            name: Buffer.from(op.name),
            value: Buffer.from(op.value),
            txid: tx.txid,
            vout,
            address: scriptAddress(op.addressScript, net) ?? null,
            height,
            block: block.header.id,
            txIndex: ti,
            rawtx: tx.raw.toString('hex'),
            mrklBranch: merkleBranch(branchHashes, ti),
          });
        }
      }
    }
  });
  return duplicate;
}
