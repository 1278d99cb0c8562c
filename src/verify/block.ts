/** Checks of `block/<hash>.json` against its raw bytes and the main chain. */
import { parseBlock, type AuxPow, type Block, type BlockHeader } from '../chain/block.js';
import { toDisplayHex } from '../chain/hash.js';
import { txMerkleLevels } from '../chain/merkle.js';
import { validateBlock } from '../chain/validate.js';
import { BLOCK_DOC_KEYS } from '../contract/documents.js';
import { blockPath, txPath } from '../contract/layout.js';
import { checkTxFields } from './tx.js';
import { type Obj, HEX64, isObj, arr, same, shown } from './values.js';
import { type Verifier } from './verifier.js';

/** The keys of a block document, in order; aux_pow and next_block when there is one. */
const BLOCK_KEYS = Object.keys(BLOCK_DOC_KEYS);

export function checkBlock(ver: Verifier, rel: string, hash: string, doc: unknown): void {
  if (!HEX64.test(hash)) {
    ver.problem(rel, 'is not named by a lowercase block hash');
    return;
  }
  if (!isObj(doc)) return; // shape problems are reported by the schema check (shape.ts)
  const height = ver.chain?.heightOf(hash);
  if (height === undefined) {
    ver.counts.offChainBlocks++;
    if (doc.next_block !== undefined && ver.chain?.complete) ver.problem(rel, `is not on the main chain but has next_block ${String(doc.next_block)}`);
  }
  // (main-chain blocks: hash, next_block and prev_block were checked by the walk)
  const binRel = blockPath(hash, 'bin');
  const bin = ver.readBytes(binRel, 'is missing (its .json exists)');
  const hex = ver.readBytes(blockPath(hash, 'hex'), 'is missing (its .json exists)');
  if (!bin) return;
  if (hex && hex.toString('latin1') !== bin.toString('hex')) ver.problem(blockPath(hash, 'hex'), 'is not the hex of the .bin');
  if (!ver.net) return;
  let block: Block;
  try {
    block = parseBlock(bin, { auxpow: ver.net.auxpow });
  } catch (e) {
    ver.problem(binRel, `is not a block (${(e as Error).message})`);
    return;
  }
  if (block.header.id !== hash) ver.problem(binRel, `hashes to ${block.header.id}, not to its name`);
  // The chain rules from the block's own bytes: PoW (AuxPoW) from the header, the merkle root from the txids, the witness commitment.
  const invalid = validateBlock(block, ver.net, height);
  if (invalid) ver.problem(binRel, `is an invalid block: ${invalid.kind}: ${invalid.detail}`);
  if (height === undefined && doc.hash !== hash) ver.problem(rel, `hash field is ${String(doc.hash)}`);
  checkBlockFields(ver, rel, doc, block);
  if (height !== undefined) checkMainBlockTxs(ver, rel, hash, height, block, arr(doc.tx));
}

/**
 * Every field of the block document that the block's bytes determine: the header fields, n_tx,
 * size, mrkl_tree, aux_pow, and each embedded tx by the tx checks of tx.ts (next_in aside: the
 * links are checked from the /tx documents, which the main-chain block's entries equal).
 */
function checkBlockFields(ver: Verifier, rel: string, doc: Obj, block: Block): void {
  const keys = Object.keys(doc);
  const want = BLOCK_KEYS.filter((k) => (k === 'aux_pow' ? block.auxpow !== undefined : k !== 'next_block' || doc.next_block !== undefined));
  if (keys.join() !== want.join()) ver.problem(rel, `has the fields ${keys.join(', ')}, not ${want.join(', ')}`);
  checkHeader(ver, rel, '', doc, block.header);
  if (doc.n_tx !== block.txs.length) ver.problem(rel, `n_tx is ${String(doc.n_tx)}, the .bin holds ${block.txs.length} transactions`);
  if (doc.size !== block.raw.length) ver.problem(rel, `size is ${String(doc.size)}, the .bin has ${block.raw.length} bytes`);
  const levels = txMerkleLevels(block.txs); // built by validateBlock
  const tree = levels ? levels.flatMap((l) => l.map(toDisplayHex)) : [null];
  if (!same(doc.mrkl_tree, tree)) ver.problem(rel, 'mrkl_tree differs from the merkle tree of the .bin\'s txids');
  if (block.auxpow) {
    if (isObj(doc.aux_pow)) checkAuxPow(ver, rel, doc.aux_pow, block.auxpow);
    else ver.problem(rel, 'aux_pow is not an object, the .bin has an AuxPoW');
  }
  const docTxs = arr(doc.tx);
  if (docTxs.length !== block.txs.length) ver.problem(rel, `tx holds ${docTxs.length} entries, the .bin ${block.txs.length} transactions`);
  block.txs.forEach((tx, i) => {
    const d = docTxs[i];
    if (!isObj(d) || d.hash !== tx.txid) ver.problem(rel, `tx[${i}] is not ${tx.txid}`);
    else checkTxFields(ver, rel, `tx[${i}].`, d, tx, true);
  });
}

/** Header fields (ver, prev_block, mrkl_root, time, bits, nonce; hash where `at` is a nested header's). */
function checkHeader(ver: Verifier, rel: string, at: string, doc: Obj, h: BlockHeader): void {
  const want: [string, unknown][] = [
    ['ver', h.version],
    ['prev_block', toDisplayHex(h.prevHash)],
    ['mrkl_root', toDisplayHex(h.merkleRoot)],
    ['time', h.time],
    ['bits', h.bits],
    ['nonce', h.nonce],
  ];
  if (at !== '') want.unshift(['hash', h.id]);
  for (const [k, v] of want) if (doc[k] !== v) ver.problem(rel, `${at}${k} is ${shown(doc[k])}, the .bin header says ${shown(v)}`);
}

function checkAuxPow(ver: Verifier, rel: string, doc: Obj, aux: AuxPow): void {
  const field = (k: string, want: unknown) => {
    if (!same(doc[k], want)) ver.problem(rel, `aux_pow.${k} is ${shown(doc[k])}, the .bin says ${shown(want)}`);
  };
  if (isObj(doc.coinbase_tx)) checkTxFields(ver, rel, 'aux_pow.coinbase_tx.', doc.coinbase_tx, aux.coinbaseTx, false);
  field('block_hash', aux.blockHash.toString('hex'));
  field('coinbase_branch', aux.coinbaseBranch.map(toDisplayHex));
  field('coinbase_index', aux.coinbaseIndex);
  field('chain_branch', aux.chainBranch.map(toDisplayHex));
  field('chain_index', aux.chainIndex);
  // The parent block is its header alone (n_tx 0, size 80, no txs: the schema's constants).
  if (isObj(doc.parent_block)) checkHeader(ver, rel, 'aux_pow.parent_block.', doc.parent_block, aux.parentHeader);
}

/** Every tx of a main-chain block has its three /tx files, the same bytes, and the same document. */
export function checkMainBlockTxs(ver: Verifier, rel: string, hash: string, height: number, block: Block, docTxs: unknown[]): void {
  block.txs.forEach((tx, i) => {
    const t = tx.txid;
    const bin = ver.readBytes(txPath(t, 'bin'), `is missing: tx ${i} of main-chain block ${hash}`);
    if (bin && !bin.equals(tx.raw)) ver.problem(txPath(t, 'bin'), `differs from tx ${i} of block ${hash}`);
    if (!ver.exists(txPath(t, 'hex'))) ver.missingProblem(txPath(t, 'hex'), `is missing: tx ${i} of main-chain block ${hash}`);
    const text = ver.txText(t);
    if (text === null) {
      ver.missingProblem(txPath(t, 'json'), `is missing: tx ${i} of main-chain block ${hash}`);
      return;
    }
    let txDoc: Obj;
    try {
      const d: unknown = JSON.parse(text);
      if (!isObj(d)) return;
      txDoc = d;
    } catch {
      return; // reported where the file itself is checked
    }
    if (txDoc.block === hash && txDoc.blocknumber === height) {
      ver.ownedTxs++;
      const { block: _b, blocknumber: _n, time: _t, ...inBlock } = txDoc;
      if (isObj(docTxs[i]) && !same(docTxs[i], inBlock)) ver.problem(rel, `tx[${i}] differs from tx/${t}.json (stale next_in?)`);
    } else {
      // A duplicate txid (BIP30) is served as its later occurrence.
      const later = typeof txDoc.block === 'string' ? ver.chain!.heightOf(txDoc.block) : undefined;
      if (later === undefined || later <= height) ver.problem(txPath(t, 'json'), `names block ${String(txDoc.block)} at ${String(txDoc.blocknumber)}, but it is tx ${i} of main-chain block ${hash} at height ${height}`);
    }
  });
}
