/** Checks of `block/<hash>.json` against its raw bytes and the main chain. */
import { parseBlock, type Block } from '../chain/block.js';
import { toDisplayHex } from '../chain/hash.js';
import { validateBlock } from '../chain/validate.js';
import { blockPath, txPath } from '../contract/layout.js';
import { type Obj, HEX64, isObj, arr, same, type Verifier } from './verifier.js';

export function checkBlock(ver: Verifier, rel: string, hash: string, doc: unknown): void {
  if (!HEX64.test(hash)) {
    ver.problem(rel, 'is not named by a lowercase block hash');
    return;
  }
  if (!isObj(doc)) {
    ver.problem(rel, 'is not a JSON object');
    return;
  }
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
  if (doc.prev_block !== toDisplayHex(block.header.prevHash)) ver.problem(rel, `prev_block ${String(doc.prev_block)} differs from the .bin header`);
  if (doc.n_tx !== block.txs.length) ver.problem(rel, `n_tx is ${String(doc.n_tx)}, the .bin holds ${block.txs.length} transactions`);
  const docTxs = arr(doc.tx);
  block.txs.forEach((tx, i) => {
    const d = docTxs[i];
    if (!isObj(d) || d.hash !== tx.txid) ver.problem(rel, `tx[${i}] is not ${tx.txid}`);
  });
  if (height !== undefined) checkMainBlockTxs(ver, rel, hash, height, block, docTxs);
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
