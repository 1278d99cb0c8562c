/**
 * The site's JSON documents, one type per kind: what the renderers (src/render) build, what
 * `snapshot verify` and the UI read. The published JSON Schemas (docs/schemas/*.schema.json)
 * describe the same documents for clients; test/api-contract.test.ts proves each schema's
 * property set and required list equal the keys declared here (through the key tables at the
 * end, which the compiler keeps exhaustive) and that every document of real builds validates.
 *
 * Key order matters for the bytes: each type lists its keys in the order the renderer writes
 * them. Types only (and plain constant tables): this file is shared with the browser UI.
 */

/** 32-byte hash as lower-case display-order hex (txid, block hash). */
export type Hash = string;

/**
 * An integer that may exceed 2^53 (coin sums, chain work): the renderers write it from a
 * bigint as exact digits; JSON.parse reads it back as a number (see {@link Parsed}).
 */
export type BigInteger = number | bigint;

/** A document as JSON.parse returns it: big integers are numbers. */
export type Parsed<T> = T extends bigint
  ? number
  : T extends readonly (infer E)[]
    ? Parsed<E>[]
    : T extends object
      ? { [K in keyof T]: Parsed<T[K]> }
      : T;

/** An output (`next_in`, `tx` of an unspent entry) or the output an input spends (`prev_out`). */
export type OutPoint = { hash: Hash; n: number };

/** A tx input: `coinbase` (hex) on a coinbase input, else `scriptSig` (ASM); `witness` and `sequence` only when present / not 0xffffffff. */
export type TxIn = {
  prev_out: OutPoint;
  coinbase?: string;
  scriptSig?: string;
  witness?: string[];
  sequence?: number;
};

/** A tx output of the original's plain Tx#to_hash (the AuxPoW parent coinbase). */
export type PlainTxOut = { value: string; scriptPubKey: string };

/** A tx output: value "<coins>.<8 digits>", script ASM, address when standard, the main-chain spender. */
export type TxOut = PlainTxOut & { address?: string; next_in?: OutPoint };

/** The fields every tx object has, in order: hash, ver, vin_sz, vout_sz, lock_time, size, in, out. */
type TxCore<Out> = {
  hash: Hash;
  ver: number;
  vin_sz: number;
  vout_sz: number;
  lock_time: number;
  size: number;
  in: TxIn[];
  out: Out[];
};

/** The AuxPoW parent chain's coinbase: the plain tx (no nid, no output address or next_in). */
export type AuxCoinbaseTxDoc = TxCore<PlainTxOut>;

/** A tx inside a block document: the /tx document without block, blocknumber and time. */
export type BlockTxDoc = TxCore<TxOut> & { nid: Hash };

/** `/tx/<txid>.json`. */
export type TxDoc = BlockTxDoc & {
  block: Hash;
  blocknumber: number;
  /** Block header time in UTC, "YYYY-MM-DD HH:MM:SS". */
  time: string;
};

/** The header fields of a block document, in order. */
export type BlockHeaderDoc = {
  hash: Hash;
  ver: number;
  prev_block: Hash;
  mrkl_root: Hash;
  time: number;
  bits: number;
  nonce: number;
};

/** The AuxPoW parent block: its 80-byte header laid out as a block without transactions. */
export type ParentBlockDoc = BlockHeaderDoc & { n_tx: 0; size: 80; tx: never[]; mrkl_tree: never[] };

export type AuxPowDoc = {
  coinbase_tx: AuxCoinbaseTxDoc;
  /** Serialized (not display) order hex. */
  block_hash: string;
  coinbase_branch: Hash[];
  coinbase_index: number;
  chain_branch: Hash[];
  chain_index: number;
  parent_block: ParentBlockDoc;
};

/** `/block/<hash>.json`; `Tx` is the type of its embedded txs (the renderer may splice them as text). */
export type BlockDoc<Tx = BlockTxDoc> = BlockHeaderDoc & {
  n_tx: number;
  size: number;
  tx: Tx[];
  /** Leaves first, root last; [null] when the block's txids are not unique. */
  mrkl_tree: (Hash | null)[];
  aux_pow?: AuxPowDoc;
  next_block?: Hash;
};

/** `block-height/<h>.json`: the main-chain block at a height. */
export type BlockHeightDoc = { height: number; hash: Hash };

/** An unspent output of an address: `{"tx": {hash, n}, ...the output's fields}`. */
export type UnspentOutputDoc = { tx: OutPoint; value: string; scriptPubKey: string; address: string };

/** `/address/<address>.json` (status 200); `Tx` is the type of the embedded /tx documents (spliced as text by the renderer). */
export type AddressDoc<Tx = TxDoc> = {
  address: string;
  hash160: string;
  tx_in_sz: number;
  tx_out_sz: number;
  coin_in: BigInteger;
  coin_out: BigInteger;
  balance: BigInteger;
  unspent: UnspentOutputDoc[];
  tx_sz: number;
  /** txid → its /tx document, in first-encounter order. */
  transactions: Record<Hash, Tx>;
};

/** `/address/<address>.json` (status 500) above the build's output cap. */
export type AddressCappedDoc = { error: string };

/** One name operation; the with_* query flags add block, height, tx_idx, rawtx, mrkl_branch in that order. */
export type NameRecordDoc = {
  name: string;
  value: string;
  txid: Hash;
  address: string | null;
  expires_in: number;
  block?: Hash;
  height?: number;
  tx_idx?: number;
  rawtx?: string;
  mrkl_branch?: readonly (Hash | null)[];
};

/** `/name/<name>.json`: the current record, or with ?history every record oldest first. */
export type NameDoc = NameRecordDoc | NameRecordDoc[];

export type NamesListEntryDoc = { name: string; path: string; height: number; expires_in: number };

/** `/names.json` (Namecoin networks). */
export type NamesListDoc = { height: number; count: number; names: NamesListEntryDoc[] };

/** Outputs (script_types) or P2SH-spending inputs (p2sh_types) by script type; the name types on Namecoin only. */
export type ScriptTypeCountsDoc = {
  unknown: number;
  pubkey: number;
  pubkey_hash: number;
  multisig: number;
  script_hash: number;
  op_return: number;
  witness_v0_keyhash: number;
  witness_v0_scripthash: number;
  witness_v1_taproot: number;
  witness_unknown: number;
  name_new?: number;
  name_firstupdate?: number;
  name_update?: number;
};

export type StatsBlocksDoc = { total: number; main: number; side: number; orphan: number; size: number };

/** `/stats.json`. */
export type StatsDoc = {
  blocks: StatsBlocksDoc;
  txs: number;
  txins: number;
  txouts: number;
  addrs: number;
  coins: BigInteger;
  work: BigInteger;
  script_types: ScriptTypeCountsDoc;
  p2sh_types: ScriptTypeCountsDoc;
  /** Namecoin networks only. */
  names?: number;
  /** Header time of the tip block, Unix seconds. */
  time: number;
};

/** `_site.json`: read by the routers and verify, not served. */
export type SiteInfoDoc = { network: string; height: number; tip: Hash; cappedAddresses: string[] };

/** A side-chain or orphan block of the snapshot (`/assets/site.json` `offchain`). */
export type OffChainBlockDoc = { hash: Hash; kind: 'side' | 'orphan'; height: number | null };

/** `/assets/site.json`: the public copy of the site info, with the off-chain blocks. */
export type PublicSiteInfoDoc = { network: string; height: number; tip: Hash; offchain?: OffChainBlockDoc[] };

/** The body of every 4xx answer and of `errors/<kind>.json`. */
export type ErrorDoc = { error: string };

// ---------------------------------------------------------------------------------------------
// Key tables: every key of each object type, and whether it is always present. `satisfies
// KeyTable<T>` makes the compiler reject a table that lacks a key of T, has one T does not
// declare, or marks a key the wrong way, so the tables are the types' keys at run time.

type IsOptional<T, K extends keyof T> = object extends Pick<T, K> ? 'optional' : 'required';
export type KeyTable<T> = { readonly [K in keyof T]-?: IsOptional<T, K> };
export type Presence = 'required' | 'optional';

const outPoint = { hash: 'required', n: 'required' } as const satisfies KeyTable<OutPoint>;
const txIn = { prev_out: 'required', coinbase: 'optional', scriptSig: 'optional', witness: 'optional', sequence: 'optional' } as const satisfies KeyTable<TxIn>;
const plainTxOut = { value: 'required', scriptPubKey: 'required' } as const satisfies KeyTable<PlainTxOut>;
const txOut = { ...plainTxOut, address: 'optional', next_in: 'optional' } as const satisfies KeyTable<TxOut>;
const auxCoinbaseTx = {
  hash: 'required', ver: 'required', vin_sz: 'required', vout_sz: 'required', lock_time: 'required', size: 'required', in: 'required', out: 'required',
} as const satisfies KeyTable<AuxCoinbaseTxDoc>;
const blockTx = { ...auxCoinbaseTx, nid: 'required' } as const satisfies KeyTable<BlockTxDoc>;
const tx = { ...blockTx, block: 'required', blocknumber: 'required', time: 'required' } as const satisfies KeyTable<TxDoc>;
const blockHeader = {
  hash: 'required', ver: 'required', prev_block: 'required', mrkl_root: 'required', time: 'required', bits: 'required', nonce: 'required',
} as const satisfies KeyTable<BlockHeaderDoc>;
const parentBlock = { ...blockHeader, n_tx: 'required', size: 'required', tx: 'required', mrkl_tree: 'required' } as const satisfies KeyTable<ParentBlockDoc>;
const auxPow = {
  coinbase_tx: 'required', block_hash: 'required', coinbase_branch: 'required', coinbase_index: 'required', chain_branch: 'required', chain_index: 'required', parent_block: 'required',
} as const satisfies KeyTable<AuxPowDoc>;
/** A block document's keys in the renderer's order (verify checks the order: the schema cannot). */
export const BLOCK_DOC_KEYS = {
  ...blockHeader, n_tx: 'required', size: 'required', tx: 'required', mrkl_tree: 'required', aux_pow: 'optional', next_block: 'optional',
} as const satisfies KeyTable<BlockDoc>;
const blockHeight = { height: 'required', hash: 'required' } as const satisfies KeyTable<BlockHeightDoc>;
const unspentOutput = { tx: 'required', value: 'required', scriptPubKey: 'required', address: 'required' } as const satisfies KeyTable<UnspentOutputDoc>;
const address = {
  address: 'required', hash160: 'required', tx_in_sz: 'required', tx_out_sz: 'required', coin_in: 'required', coin_out: 'required', balance: 'required',
  unspent: 'required', tx_sz: 'required', transactions: 'required',
} as const satisfies KeyTable<AddressDoc>;
const error = { error: 'required' } as const satisfies KeyTable<ErrorDoc>;
const nameRecord = {
  name: 'required', value: 'required', txid: 'required', address: 'required', expires_in: 'required',
  block: 'optional', height: 'optional', tx_idx: 'optional', rawtx: 'optional', mrkl_branch: 'optional',
} as const satisfies KeyTable<NameRecordDoc>;
const namesEntry = { name: 'required', path: 'required', height: 'required', expires_in: 'required' } as const satisfies KeyTable<NamesListEntryDoc>;
const names = { height: 'required', count: 'required', names: 'required' } as const satisfies KeyTable<NamesListDoc>;
const scriptTypes = {
  unknown: 'required', pubkey: 'required', pubkey_hash: 'required', multisig: 'required', script_hash: 'required', op_return: 'required',
  witness_v0_keyhash: 'required', witness_v0_scripthash: 'required', witness_v1_taproot: 'required', witness_unknown: 'required',
  name_new: 'optional', name_firstupdate: 'optional', name_update: 'optional',
} as const satisfies KeyTable<ScriptTypeCountsDoc>;
const statsBlocks = { total: 'required', main: 'required', side: 'required', orphan: 'required', size: 'required' } as const satisfies KeyTable<StatsBlocksDoc>;
const stats = {
  blocks: 'required', txs: 'required', txins: 'required', txouts: 'required', addrs: 'required', coins: 'required', work: 'required',
  script_types: 'required', p2sh_types: 'required', names: 'optional', time: 'required',
} as const satisfies KeyTable<StatsDoc>;
const siteInfo = { network: 'required', height: 'required', tip: 'required', cappedAddresses: 'required' } as const satisfies KeyTable<SiteInfoDoc>;
const publicSiteInfo = { network: 'required', height: 'required', tip: 'required', offchain: 'optional' } as const satisfies KeyTable<PublicSiteInfoDoc>;
const offChainBlock = { hash: 'required', kind: 'required', height: 'required' } as const satisfies KeyTable<OffChainBlockDoc>;

/**
 * Each object type's key table under the JSON Schema (file and JSON pointer) that describes the
 * same object: the contract test compares the schema's `properties` and `required` with it.
 */
export const DOCUMENT_KEYS: Readonly<Record<string, Readonly<Record<string, Presence>>>> = {
  'tx.schema.json': tx,
  'tx.schema.json#/$defs/outpoint': outPoint,
  'tx.schema.json#/$defs/input': txIn,
  'tx.schema.json#/$defs/output': txOut,
  'tx.schema.json#/$defs/plainOutput': plainTxOut,
  'tx.schema.json#/$defs/blockTx': blockTx,
  'tx.schema.json#/$defs/auxCoinbaseTx': auxCoinbaseTx,
  'block.schema.json': BLOCK_DOC_KEYS,
  'block.schema.json#/$defs/auxPow': auxPow,
  'block.schema.json#/$defs/parentBlock': parentBlock,
  'block-height.schema.json': blockHeight,
  'address.schema.json': address,
  'address.schema.json#/$defs/unspentOutput': unspentOutput,
  'address-capped.schema.json': error,
  'error.schema.json': error,
  'name.schema.json#/$defs/record': nameRecord,
  'names.schema.json': names,
  'names.schema.json#/properties/names/items': namesEntry,
  'stats.schema.json': stats,
  'stats.schema.json#/properties/blocks': statsBlocks,
  'stats.schema.json#/$defs/scriptTypes': scriptTypes,
  'site-info.schema.json#/$defs/internal': siteInfo,
  'site-info.schema.json#/$defs/public': publicSiteInfo,
  'site-info.schema.json#/$defs/public/properties/offchain/items': offChainBlock,
};
