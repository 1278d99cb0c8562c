import type { AuxPow, Block, BlockHeader } from '../chain/block.js';
import { toDisplayHex } from '../chain/hash.js';
import { merkleTree } from '../chain/merkle.js';
import type { Network } from '../chain/networks.js';
import type { AuxCoinbaseTxDoc, AuxPowDoc, BlockDoc, BlockHeaderDoc, BlockTxDoc } from '../contract/documents.js';
import { toPlainJson } from './json.js';
import { txObject, type Spender, type TxRenderOptions } from './tx.js';

function headerFields(h: BlockHeader): BlockHeaderDoc {
  return {
    hash: h.id,
    ver: h.version,
    prev_block: toDisplayHex(h.prevHash),
    mrkl_root: toDisplayHex(h.merkleRoot),
    time: h.time,
    bits: h.bits,
    nonce: h.nonce,
  };
}

function auxPowObject(aux: AuxPow, net: Network): AuxPowDoc {
  return {
    coinbase_tx: txObject(aux.coinbaseTx, net, [], undefined, { extras: false }),
    block_hash: aux.blockHash.toString('hex'),
    coinbase_branch: aux.coinbaseBranch.map(toDisplayHex),
    coinbase_index: aux.coinbaseIndex,
    chain_branch: aux.chainBranch.map(toDisplayHex),
    chain_index: aux.chainIndex,
    parent_block: { ...headerFields(aux.parentHeader), n_tx: 0, size: 80, tx: [], mrkl_tree: [] },
  };
}

/**
 * The block document: hash, ver, prev_block, mrkl_root, time, bits, nonce,
 * n_tx, size, tx[], mrkl_tree[, aux_pow][, next_block]. `spenders[i][j]` is
 * the main-chain spender of output j of tx i. Without extras, the txs are the
 * original's plain Tx#to_hash (no nid, address, next_in).
 */
export function blockObject(
  block: Block,
  net: Network,
  spenders: readonly (readonly (Spender | undefined)[])[],
  nextBlock: string | undefined,
  opts?: { extras: true },
  txs?: BlockTxDoc[],
): BlockDoc;
export function blockObject(
  block: Block,
  net: Network,
  spenders: readonly (readonly (Spender | undefined)[])[],
  nextBlock: string | undefined,
  opts: { extras: false },
): BlockDoc<AuxCoinbaseTxDoc>;
export function blockObject(
  block: Block,
  net: Network,
  spenders: readonly (readonly (Spender | undefined)[])[],
  nextBlock: string | undefined,
  opts: TxRenderOptions = { extras: true },
  txs: (BlockTxDoc | AuxCoinbaseTxDoc)[] = block.txs.map((tx, i) => txObject(tx, net, spenders[i] ?? [], undefined, opts)),
): BlockDoc<BlockTxDoc | AuxCoinbaseTxDoc> {
  const obj: BlockDoc<BlockTxDoc | AuxCoinbaseTxDoc> = {
    ...headerFields(block.header),
    n_tx: block.txs.length,
    size: block.raw.length,
    tx: txs,
    mrkl_tree: merkleTree(block.txs.map((t) => t.hash)),
  };
  if (block.auxpow) obj.aux_pow = auxPowObject(block.auxpow, net);
  if (nextBlock !== undefined) obj.next_block = nextBlock;
  return obj;
}

/** `/block/<hash>.json` */
export function renderBlock(
  block: Block,
  net: Network,
  spenders: readonly (readonly (Spender | undefined)[])[],
  nextBlock: string | undefined,
  pretty = false,
): string {
  return toPlainJson(blockObject(block, net, spenders, nextBlock), pretty);
}

const EMPTY_TXS = '"tx":[]';

/**
 * The compact block document around its `tx` array: the text up to and including `"tx":[`,
 * and from its closing `]` on. The header fields come first, so the first `"tx":[]` is the
 * block's own (the AuxPoW parent block's empty one comes later).
 */
export function blockFrame(block: Block, net: Network, nextBlock: string | undefined): [string, string] {
  const text = JSON.stringify(blockObject(block, net, [], nextBlock, { extras: true }, []));
  const at = text.indexOf(EMPTY_TXS) + EMPTY_TXS.length - 1;
  return [text.slice(0, at), text.slice(at)];
}
