/**
 * Block validation: the context-free checks a node makes before it stores a block, so a
 * damaged or forged block is refused instead of published.
 *
 * - Proof of work: the header hash is at most the target its own bits encode, and that
 *   target is a valid one (not negative, zero, overflowing, or above the network's
 *   powLimit) — Bitcoin Core's CheckProofOfWork. On Namecoin networks, Namecoin Core's
 *   CheckProofOfWork(block): the chain ID in the version, and for merge-mined blocks the
 *   parent header's PoW against the child's bits plus every rule of CAuxPow::check (coinbase
 *   branch to the parent's merkle root, chain branch and index, the merged-mining marker and
 *   the position of the chain root in the parent coinbase).
 * - The body: the merkle root recomputed from the txids equals the header's, and the txid
 *   list is not mutated (CVE-2012-2459); a coinbase first and only first; no tx without
 *   inputs or outputs; the BIP141 witness commitment where segwit applies, and no witness
 *   data in a block that does not commit to it.
 *
 * Failures are values ({@link Invalid}) whose `kind` is Core's reject reason where Core has
 * one ('high-hash', 'bad-txnmrklroot', …), so callers can name them and tests can assert them.
 */
import { AUXPOW_VERSION_FLAG, parseBlock, parseBlockHead, type AuxPow, type Block, type BlockHeader } from './block.js';
import { ParseError } from './errors.js';
import { sha256d, toDisplayHex } from './hash.js';
import { computeMerkleRoot, foldBranch, txMerkleRoot } from './merkle.js';
import { CONSENSUS, type Consensus, type Network } from './networks.js';
import { isCoinbase, isCoinbaseInput, type Tx } from './tx.js';
import { decodeCompact } from './work.js';

export type InvalidKind =
  /** The bytes are not a block (a ParseError; `offset` is where, relative to the block). */
  | 'malformed'
  /** The header does not hash to the hash the source announced. */
  | 'bad-hash'
  /** Not the block the chain expects at its height (prev-hash or height discontinuity, wrong genesis). */
  | 'bad-prevblk'
  /** bits encode no valid target: negative, zero, overflowing, or above the network's powLimit. */
  | 'bad-diffbits'
  /** The header hash is above the target. */
  | 'high-hash'
  /** Namecoin: the version's chain ID is not the network's. */
  | 'bad-chain-id'
  /** Namecoin: a legacy (version 1) block after merge mining started. */
  | 'late-legacy-block'
  /** Namecoin: the merge-mining proof is wrong (the detail says which of CAuxPow::check's rules). */
  | 'bad-auxpow'
  /** Namecoin: the parent header's hash is above the child's target. */
  | 'auxpow-high-hash'
  | 'bad-txnmrklroot'
  | 'bad-txns-duplicate'
  | 'bad-blk-length'
  | 'bad-cb-missing'
  | 'bad-cb-multiple'
  | 'bad-cb-length'
  | 'bad-txns-vin-empty'
  | 'bad-txns-vout-empty'
  | 'bad-txns-prevout-null'
  | 'bad-witness-nonce-size'
  | 'bad-witness-merkle-match'
  | 'unexpected-witness';

export interface Invalid {
  kind: InvalidKind;
  /** What exactly is wrong, for the error message. */
  detail: string;
  /** For 'malformed': byte offset of the problem relative to the start of the block. */
  offset?: number;
}

const ZERO_HASH = Buffer.alloc(32);
/** Namecoin's pchMergedMiningHeader. */
const MERGED_MINING_HEADER = Buffer.from('fabe6d6d', 'hex');
const MAX_CHAIN_BRANCH = 30;
/** BIP141: OP_RETURN, push 36, 0xaa21a9ed, then the 32-byte commitment. */
const WITNESS_COMMITMENT_PREFIX = Buffer.from('6a24aa21a9ed', 'hex');
const MASK_64 = (1n << 64n) - 1n;

export function consensusOf(net: Network): Consensus {
  return CONSENSUS[net.name];
}

const hex32 = (n: number) => `0x${(n >>> 0).toString(16).padStart(8, '0')}`;

/** Hash (internal byte order) as the 256-bit number PoW compares. */
function hashValue(hash: Buffer): bigint {
  return BigInt(`0x${toDisplayHex(hash)}`);
}

/** Bitcoin Core's CheckProofOfWork(hash, bits): a valid target from `bits`, and hash ≤ target. */
export function checkPow(hash: Buffer, bits: number, consensus: Consensus, kind: 'high-hash' | 'auxpow-high-hash' = 'high-hash'): Invalid | undefined {
  const { target, negative, overflow } = decodeCompact(bits);
  if (negative) return { kind: 'bad-diffbits', detail: `bits ${hex32(bits)} encode a negative target` };
  if (overflow) return { kind: 'bad-diffbits', detail: `bits ${hex32(bits)} encode a target above 2^256` };
  if (target === 0n) return { kind: 'bad-diffbits', detail: `bits ${hex32(bits)} encode a zero target` };
  if (target > consensus.powLimit) return { kind: 'bad-diffbits', detail: `bits ${hex32(bits)} encode a target above the network's limit` };
  if (hashValue(hash) > target) {
    const what = kind === 'high-hash' ? 'header hash' : 'AuxPoW parent header hash';
    return { kind, detail: `${what} ${toDisplayHex(hash)} is above the target of bits ${hex32(bits)}` };
  }
  return undefined;
}

/** int32 version → Namecoin's GetChainId (nVersion / 2^16, C++ integer division). */
function chainIdOf(version: number): number {
  return Math.trunc((version | 0) / 0x10000);
}

function isAuxpowVersion(version: number): boolean {
  return (version & AUXPOW_VERSION_FLAG) !== 0;
}

/** Namecoin's chain-ID rule (strict networks): every block but a legacy version-1 one carries the chain's ID. */
function checkChainId(header: Pick<BlockHeader, 'version'>, consensus: Consensus): Invalid | undefined {
  const aux = consensus.auxpow;
  if (!aux || !aux.strictChainId || (header.version | 0) === 1) return undefined;
  const id = chainIdOf(header.version);
  if (id !== aux.chainId) return { kind: 'bad-chain-id', detail: `version ${hex32(header.version)} has chain ID ${id}, expected ${aux.chainId}` };
  return undefined;
}

/**
 * The proof-of-work checks a block's head allows before its transactions are read (a blocks
 * dir's first pass, so that a damaged header never takes part in choosing the chain): the
 * header's own PoW or, for a merge-mined header, its AuxPoW, which follows the header in
 * `head` (the block's first bytes; the transactions may be cut off). The header's hash is
 * returned with the verdict.
 */
export function checkBlockHead(head: Buffer, net: Network): { hash: Buffer; invalid: Invalid | undefined } {
  let parsed;
  try {
    parsed = parseBlockHead(head, { auxpow: net.auxpow });
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    return { hash: sha256d(head.subarray(0, 80)), invalid: { kind: 'malformed', detail: e.what, offset: e.offset } };
  }
  const { header, auxpow } = parsed;
  return { hash: header.hash, invalid: checkBlockPow({ header, auxpow, txs: [], raw: head }, net) };
}

/** Namecoin Core's CAuxPow::getExpectedIndex (64-bit unsigned arithmetic). */
export function expectedChainIndex(nonce: number, chainId: number, h: number): number {
  const mod = 1n << BigInt(h);
  let rand = BigInt(nonce >>> 0);
  rand = (rand * 1103515245n + 12345n) & MASK_64;
  rand %= mod;
  rand = (rand + BigInt.asUintN(64, BigInt(chainId))) & MASK_64;
  rand = (rand * 1103515245n + 12345n) & MASK_64;
  rand %= mod;
  return Number(rand);
}

const auxFail = (detail: string): Invalid => ({ kind: 'bad-auxpow', detail });

/** Namecoin Core's CAuxPow::check: the AuxPoW commits to the child block `childHash` (internal order). */
export function checkAuxPowProof(aux: AuxPow, childHash: Buffer, chainId: number, consensus: Consensus): Invalid | undefined {
  if (consensus.auxpow?.strictChainId && chainIdOf(aux.parentHeader.version) === chainId) return auxFail('the parent block has our chain ID');
  if (aux.chainBranch.length > MAX_CHAIN_BRANCH) return auxFail(`chain merkle branch too long (${aux.chainBranch.length} > ${MAX_CHAIN_BRANCH})`);
  const chainIndex = aux.chainIndex | 0;
  const chainRoot = chainIndex === -1 ? ZERO_HASH : foldBranch(childHash, aux.chainBranch, chainIndex);
  const rootInScript = Buffer.from(chainRoot).reverse();
  // The serialized coinbase index is ignored: the parent coinbase is always at index 0.
  if (!foldBranch(aux.coinbaseTx.hash, aux.coinbaseBranch, 0).equals(aux.parentHeader.merkleRoot)) {
    return auxFail("the coinbase merkle branch does not lead to the parent block's merkle root");
  }
  if (aux.coinbaseTx.inputs.length === 0) return auxFail('the parent coinbase has no inputs');
  const script = aux.coinbaseTx.inputs[0]!.script;
  const head = script.indexOf(MERGED_MINING_HEADER);
  let pc = script.indexOf(rootInScript);
  if (pc === -1) return auxFail('the chain merkle root is not in the parent coinbase');
  if (head !== -1) {
    if (script.indexOf(MERGED_MINING_HEADER, head + 1) !== -1) return auxFail('several merged-mining headers in the parent coinbase');
    if (head + MERGED_MINING_HEADER.length !== pc) return auxFail('the merged-mining header is not just before the chain merkle root');
  } else if (pc > 20) {
    return auxFail('without a merged-mining header the chain merkle root must start in the first 20 bytes of the parent coinbase');
  }
  pc += rootInScript.length;
  if (script.length - pc < 8) return auxFail('no chain merkle tree size and nonce after the chain merkle root');
  const size = script.readUInt32LE(pc);
  const height = aux.chainBranch.length;
  if (size !== 2 ** height) return auxFail(`chain merkle tree size ${size} does not match the branch length ${height}`);
  const nonce = script.readUInt32LE(pc + 4);
  const expected = expectedChainIndex(nonce, chainId, height);
  if (chainIndex !== expected) return auxFail(`chain index ${chainIndex} is not the expected ${expected}`);
  return undefined;
}

/**
 * Namecoin Core's CheckProofOfWork(block) (Bitcoin networks: the header hash against its
 * bits), plus the legacy-block rule when the height is known.
 */
export function checkBlockPow(block: Block, net: Network, height?: number): Invalid | undefined {
  const consensus = consensusOf(net);
  const { header, auxpow } = block;
  const aux = consensus.auxpow;
  if (aux && height !== undefined && height > 0 && (header.version | 0) === 1 && aux.legacyBlocksBefore >= 0 && height >= aux.legacyBlocksBefore) {
    return { kind: 'late-legacy-block', detail: `version 1 block at height ${height}, after merge mining started at ${aux.legacyBlocksBefore}` };
  }
  const bad = checkChainId(header, consensus);
  if (bad) return bad;
  if (!auxpow) {
    if (net.auxpow && isAuxpowVersion(header.version)) return auxFail('the version announces an AuxPoW but the block has none');
    return checkPow(header.hash, header.bits, consensus);
  }
  if (!isAuxpowVersion(header.version)) return auxFail('an AuxPoW on a block whose version lacks the AuxPoW flag');
  if (isAuxpowVersion(auxpow.parentHeader.version)) return auxFail('the parent block has the AuxPoW version flag');
  const pow = checkPow(auxpow.parentHeader.hash, header.bits, consensus, 'auxpow-high-hash');
  if (pow) return pow;
  return checkAuxPowProof(auxpow, header.hash, chainIdOf(header.version), consensus);
}

/** Core's HasWitness: some input carries a non-empty witness stack. */
function hasWitnessData(tx: Tx): boolean {
  for (const input of tx.inputs) if (input.witness) return true;
  return false;
}

/** Core's GetWitnessCommitmentIndex: the last coinbase output that is a witness commitment, or -1. */
function witnessCommitmentIndex(coinbase: Tx): number {
  let at = -1;
  coinbase.outputs.forEach((o, i) => {
    if (o.script.length >= 38 && o.script.subarray(0, 6).equals(WITNESS_COMMITMENT_PREFIX)) at = i;
  });
  return at;
}

/**
 * Core's CheckWitnessMalleation. With an unknown height (an orphan) the commitment is
 * checked when the block carries witness data.
 */
function checkWitness(block: Block, net: Network, height: number | undefined): Invalid | undefined {
  const txs = block.txs;
  const anyWitness = txs.some(hasWitnessData);
  const expect = height !== undefined ? height >= consensusOf(net).segwitHeight : anyWitness;
  if (expect) {
    const coinbase = txs[0]!;
    const at = witnessCommitmentIndex(coinbase);
    if (at !== -1) {
      const leaves = txs.map((tx, i) => (i === 0 ? ZERO_HASH : hasWitnessData(tx) ? sha256d(tx.raw) : tx.hash));
      const stack = coinbase.inputs[0]!.witness ?? [];
      if (stack.length !== 1 || stack[0]!.length !== 32) {
        return { kind: 'bad-witness-nonce-size', detail: `the coinbase witness is ${stack.length} item(s), not one 32-byte reserved value` };
      }
      const commitment = sha256d(Buffer.concat([computeMerkleRoot(leaves).root, stack[0]!]));
      if (!commitment.equals(coinbase.outputs[at]!.script.subarray(6, 38))) {
        return { kind: 'bad-witness-merkle-match', detail: `the witness commitment in coinbase output ${at} does not match the wtxids` };
      }
      return undefined;
    }
  }
  const i = txs.findIndex(hasWitnessData);
  if (i !== -1) return { kind: 'unexpected-witness', detail: `tx ${i} (${txs[i]!.txid}) has witness data but the block commits to none` };
  return undefined;
}

/** Core's CheckBlock body rules (merkle root, mutation, coinbase placement) and the witness commitment. */
export function checkBlockBody(block: Block, net: Network, height?: number): Invalid | undefined {
  const txs = block.txs;
  if (txs.length === 0) return { kind: 'bad-blk-length', detail: 'the block has no transactions' };
  for (let i = 0; i < txs.length; i++) {
    // Core refuses to deserialize a witness flag with only empty witnesses.
    if (txs[i]!.hasWitness && !hasWitnessData(txs[i]!)) return { kind: 'malformed', detail: `tx ${i} (${txs[i]!.txid}) has a witness flag but no witness data` };
  }
  const { root, mutated } = txMerkleRoot(txs);
  if (!root.equals(block.header.merkleRoot)) {
    return { kind: 'bad-txnmrklroot', detail: `the merkle root of the ${txs.length} txids is ${toDisplayHex(root)}, the header says ${toDisplayHex(block.header.merkleRoot)}` };
  }
  if (mutated) return { kind: 'bad-txns-duplicate', detail: 'the txid list repeats a pair of hashes at some merkle level (CVE-2012-2459 mutation)' };
  if (!isCoinbase(txs[0]!)) return { kind: 'bad-cb-missing', detail: 'the first transaction is not a coinbase' };
  for (let i = 1; i < txs.length; i++) {
    if (isCoinbase(txs[i]!)) return { kind: 'bad-cb-multiple', detail: `tx ${i} (${txs[i]!.txid}) is a second coinbase` };
  }
  for (let i = 0; i < txs.length; i++) {
    const tx = txs[i]!;
    if (tx.inputs.length === 0) return { kind: 'bad-txns-vin-empty', detail: `tx ${i} (${tx.txid}) has no inputs` };
    if (tx.outputs.length === 0) return { kind: 'bad-txns-vout-empty', detail: `tx ${i} (${tx.txid}) has no outputs` };
    if (i > 0 && tx.inputs.some(isCoinbaseInput)) return { kind: 'bad-txns-prevout-null', detail: `tx ${i} (${tx.txid}) spends the null outpoint` };
  }
  const cbScript = txs[0]!.inputs[0]!.script.length;
  if (cbScript < 2 || cbScript > 100) return { kind: 'bad-cb-length', detail: `the coinbase scriptSig is ${cbScript} bytes (2–100 allowed)` };
  return checkWitness(block, net, height);
}

/** Every check of this module on a parsed block. */
export function validateBlock(block: Block, net: Network, height?: number): Invalid | undefined {
  return checkBlockPow(block, net, height) ?? checkBlockBody(block, net, height);
}

/** Parses and validates raw block bytes: the block, or why it is invalid. */
export function parseValidBlock(raw: Buffer, net: Network, height?: number): { block: Block; invalid?: undefined } | { block?: undefined; invalid: Invalid } {
  let block: Block;
  try {
    block = parseBlock(raw, { auxpow: net.auxpow });
  } catch (e) {
    if (e instanceof ParseError) return { invalid: { kind: 'malformed', detail: e.what, offset: e.offset } };
    throw e;
  }
  const invalid = validateBlock(block, net, height);
  return invalid ? { invalid } : { block };
}
