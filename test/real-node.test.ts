// The real-node comparison: ../shared/chaindata/namecoin-core-regtest holds a Namecoin Core
// regtest datadir (xor.dat, fastprune, 7 blk files, 3 stale blocks, 14 names) and the node's own
// answers about that chain (rawtx.json, chain.json, names.json, utxo.json, getblockstats.json,
// gettxoutsetinfo.json; see its README.md). One `blocks:` build in beforeAll, then every tx,
// block, address, name (current, history, with_ fields) and stats figure is compared with the
// node, field by field; then the tree is served and every name is fetched by its natural URL.
// Every comparison counts as one check; the differences are listed together at the end.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import * as bitcoin from 'bitcoinjs-lib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { scriptToAsm } from '../src/chain/script.js';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { buildSnapshot, type BuildReport } from '../src/site/build.js';
import { ALL_NAME_VARIANTS, namePath, variantKey, type NameVariant } from '../src/contract/layout.js';
import { Progress } from '../src/runtime/progress.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { rawRequest } from './support/http-raw.js';
import { chainPath } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

const DIR = chainPath('namecoin-core-regtest');
const NET = NETWORKS['namecoin-regtest'];
const ZERO = '0'.repeat(64);
const REGTEST = { messagePrefix: '\x18Namecoin Signed Message:\n', bech32: 'ncrt', bip32: { public: 0x043587cf, private: 0x04358394 }, pubKeyHash: 111, scriptHash: 196, wif: 0xef };

/* eslint-disable @typescript-eslint/no-explicit-any */
type Any = any;

const load = (f: string): Any => JSON.parse(readFileSync(join(DIR, f), 'utf8'));
const sha256d = (b: Buffer): Buffer => createHash('sha256').update(createHash('sha256').update(b).digest()).digest();
const displayHex = (b: Buffer): string => Buffer.from(b).reverse().toString('hex');
/** Node amounts (JSON numbers in coins) → satoshis. */
const sats = (v: number): bigint => BigInt(Math.round(v * 1e8));
/** Our amounts ("0.08964300" strings, or integers in satoshis). */
const oursSats = (v: string | number): bigint => (typeof v === 'number' ? BigInt(v) : BigInt(v.replace('.', '')));
const utcTime = (t: number): string => new Date(t * 1000).toISOString().replace('T', ' ').slice(0, 19);
/** A string field of ours stands for these bytes: UTF-8, or one char per byte when they are not UTF-8. */
const sameBytes = (text: string, bytes: Buffer): boolean =>
  isUtf8(bytes) ? Buffer.from(text, 'utf8').equals(bytes) : Buffer.from(text, 'latin1').equals(bytes) && [...text].every((c) => c.charCodeAt(0) < 256);
const p2pkhOfKey = (pubkey: Buffer): string => bitcoin.payments.p2pkh({ pubkey, network: REGTEST }).address!;
/** The key of a P2PK script (`<33|65 bytes> OP_CHECKSIG`), else undefined. */
function p2pkKey(hex: string): Buffer | undefined {
  const s = Buffer.from(hex, 'hex');
  if ((s.length === 35 && s[0] === 33) || (s.length === 67 && s[0] === 65)) return s[s.length - 1] === 0xac ? s.subarray(1, -1) : undefined;
  return undefined;
}
/** Hash or witness program of an address, decoded by bitcoinjs (not by our code). */
function hash160Of(address: string): string {
  try {
    return Buffer.from(bitcoin.address.fromBase58Check(address).hash).toString('hex');
  } catch {
    return Buffer.from(bitcoin.address.fromBech32(address).data).toString('hex');
  }
}
const silent = new Progress({ write: () => true } as unknown as NodeJS.WriteStream, false);

describeShared('chaindata/namecoin-core-regtest/blocks/xor.dat')('real Namecoin Core regtest node: blocks: build compared with the node’s answers', () => {
  let root: string;
  let out: string;
  let report: BuildReport;
  let checks = 0;
  const diffs: string[] = [];
  const exceptions = new Map<string, number>();
  /** One check: `got` must deep-equal `want`. */
  const eq = (where: string, got: unknown, want: unknown): void => {
    checks++;
    if (!isDeepStrictEqual(got, want)) diffs.push(`${where}: got ${JSON.stringify(got, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))?.slice(0, 300)}, node ${JSON.stringify(want, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))?.slice(0, 300)}`);
  };
  /** A documented exception (docs/api.md, "Checked against a real node"): counted, not a difference. */
  const exception = (why: string): void => {
    exceptions.set(why, (exceptions.get(why) ?? 0) + 1);
  };
  const doc = (rel: string): Any => JSON.parse(readFileSync(join(out, rel), 'utf8'));
  const has = (rel: string): boolean => existsSync(join(out, rel));

  // The node's answers.
  let chain: Any;
  let rawtx: Any;
  let names: Any;
  let utxo: Any;
  let blockstats: Any[];
  let txoutset: Any;
  /** Every main-chain tx as the node decodes it (getblock 2 + getrawtransaction), by txid. */
  const mainTx = new Map<string, Any>();
  const heightOfTx = new Map<string, number>();
  /** "txid:n" → spender {hash, n} on the main chain. */
  const spentBy = new Map<string, { hash: string; n: number }>();

  beforeAll(async () => {
    // A changed checkout fails loudly, not as a thousand differences.
    const manifest = load('blocks-manifest.json');
    for (const [name, f] of Object.entries<Any>(manifest.files)) {
      expect(createHash('sha256').update(readFileSync(join(DIR, 'blocks', name))).digest('hex'), `blocks/${name}`).toBe(f.sha256);
    }
    chain = load('chain.json');
    rawtx = load('rawtx.json');
    names = load('names.json');
    utxo = load('utxo.json');
    blockstats = load('getblockstats.json');
    txoutset = load('gettxoutsetinfo.json');
    for (const m of chain.main) {
      for (const t of m.block.tx) {
        const r = rawtx.main[t.txid];
        mainTx.set(t.txid, r && !r.error ? r : { ...t, blockhash: m.hash, blocktime: m.block.time });
        heightOfTx.set(t.txid, m.height);
        t.vin.forEach((v: Any, n: number) => {
          if (v.txid) spentBy.set(`${v.txid}:${v.vout}`, { hash: t.txid, n });
        });
      }
    }

    root = mkdtempSync(join(tmpdir(), 'real-node-'));
    out = join(root, 'out');
    const source = await openBlocksDir(join(DIR, 'blocks'), NET);
    try {
      report = await buildSnapshot({ source, outDir: out, progress: silent, hosts: [] });
    } finally {
      await source.close();
    }
  }, 180_000);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('the build: 261 main and 3 side blocks, 848 txs, no source warning', () => {
    eq('report.height', report.height, chain.getblockchaininfo.blocks);
    eq('report.tip', report.tip, chain.getblockchaininfo.bestblockhash);
    eq('report.blocks', report.blocks, { main: chain.main.length, side: chain.stale.length, orphan: 0 });
    eq('report.txs', report.txs, mainTx.size);
    eq('report.warnings', report.warnings, []);
  });

  it('blocks: header fields, size, tx list, next_block links, AuxPoW, raw bytes', () => {
    const check = (b: Any, main: boolean) => {
      const at = `block ${b.height} ${b.hash.slice(0, 12)}${main ? '' : ' (stale)'}`;
      const d = doc(`block/${b.hash}.json`);
      eq(`${at} hash`, d.hash, b.hash);
      eq(`${at} ver`, d.ver, b.version);
      eq(`${at} prev_block`, d.prev_block, b.previousblockhash ?? ZERO);
      eq(`${at} mrkl_root`, d.mrkl_root, b.merkleroot);
      eq(`${at} time`, d.time, b.time);
      eq(`${at} bits`, d.bits, parseInt(b.bits, 16));
      eq(`${at} nonce`, d.nonce, b.nonce);
      eq(`${at} n_tx`, d.n_tx, b.nTx);
      eq(`${at} size`, d.size, b.size);
      eq(`${at} tx list`, d.tx.map((t: Any) => t.hash), b.tx.map((t: Any) => t.txid));
      eq(`${at} mrkl_tree leaves`, d.mrkl_tree.slice(0, b.nTx), b.tx.map((t: Any) => t.txid));
      eq(`${at} mrkl_tree root`, d.mrkl_tree[d.mrkl_tree.length - 1], b.merkleroot);
      // Core gives nextblockhash only on the active chain.
      eq(`${at} next_block`, d.next_block, main ? b.nextblockhash : undefined);
      const bin = readFileSync(join(out, `block/${b.hash}.bin`));
      eq(`${at} .bin size`, bin.length, b.size);
      eq(`${at} .bin header hash`, displayHex(sha256d(bin.subarray(0, 80))), b.hash);
      eq(`${at} .hex`, readFileSync(join(out, `block/${b.hash}.hex`), 'utf8'), bin.toString('hex'));
      const a = b.auxpow;
      if (b.height === 0) {
        eq(`${at} no aux_pow`, d.aux_pow, undefined);
        return;
      }
      eq(`${at} aux_pow coinbase txid`, d.aux_pow.coinbase_tx.hash, a.tx.txid);
      eq(`${at} aux_pow coinbase script`, d.aux_pow.coinbase_tx.in[0].coinbase, a.tx.vin[0].coinbase);
      eq(`${at} aux_pow coinbase outputs`, d.aux_pow.coinbase_tx.out.map((o: Any) => oursSats(o.value)), a.tx.vout.map((o: Any) => sats(o.value)));
      eq(`${at} aux_pow coinbase_branch`, d.aux_pow.coinbase_branch, a.merklebranch);
      eq(`${at} aux_pow chain_branch`, d.aux_pow.chain_branch, a.chainmerklebranch);
      eq(`${at} aux_pow chain_index`, d.aux_pow.chain_index, a.chainindex);
      const p = a.parentblock;
      const pd = d.aux_pow.parent_block;
      eq(`${at} parent hash`, pd.hash, p.hash);
      eq(`${at} parent ver`, pd.ver, p.version);
      eq(`${at} parent prev_block`, pd.prev_block, p.previousblockhash ?? ZERO);
      eq(`${at} parent mrkl_root`, pd.mrkl_root, p.merkleroot);
      eq(`${at} parent time`, pd.time, p.time);
      eq(`${at} parent bits`, pd.bits, parseInt(p.bits, 16));
      eq(`${at} parent nonce`, pd.nonce, p.nonce);
    };
    for (const m of chain.main) {
      eq(`block ${m.height} getblockhash`, m.block.hash, m.hash);
      check(m.block, true);
    }
    for (const s of chain.stale) check(s.block, false);
    // Height and main/side: the next_block chain from genesis runs through exactly the node's main
    // chain; stale blocks are documents, but their txs' /tx documents name the main block.
    const walked: string[] = [];
    for (let h: string | undefined = NET.genesis; h; h = doc(`block/${h}.json`).next_block) walked.push(h);
    eq('main chain by next_block', walked, chain.main.map((m: Any) => m.hash));
    for (const s of chain.stale) {
      for (const t of s.block.tx) {
        const onMain = mainTx.get(t.txid);
        eq(`stale ${s.hash.slice(0, 12)} tx ${t.txid.slice(0, 12)} /tx`, has(`tx/${t.txid}.json`) ? doc(`tx/${t.txid}.json`).block : null, onMain ? onMain.blockhash : null);
      }
    }
  });

  it('transactions: every field of every main-chain tx, raw bytes, spend links', () => {
    for (const [txid, t] of mainTx) {
      const at = `tx ${txid.slice(0, 12)}`;
      const d = doc(`tx/${txid}.json`);
      eq(`${at} hash`, d.hash, txid);
      eq(`${at} ver`, d.ver, t.version);
      eq(`${at} vin_sz`, d.vin_sz, t.vin.length);
      eq(`${at} vout_sz`, d.vout_sz, t.vout.length);
      eq(`${at} lock_time`, d.lock_time, t.locktime);
      eq(`${at} size`, d.size, t.size);
      eq(`${at} block`, d.block, t.blockhash);
      eq(`${at} blocknumber`, d.blocknumber, heightOfTx.get(txid));
      eq(`${at} time`, d.time, utcTime(t.blocktime));
      eq(`${at} .hex`, readFileSync(join(out, `tx/${txid}.hex`), 'utf8'), t.hex);
      eq(`${at} .bin`, readFileSync(join(out, `tx/${txid}.bin`)).toString('hex'), t.hex);
      t.vin.forEach((v: Any, i: number) => {
        const di = d.in[i];
        const ai = `${at} in ${i}`;
        if (v.coinbase !== undefined) {
          eq(`${ai} prev_out`, di.prev_out, { hash: ZERO, n: 0xffffffff });
          eq(`${ai} coinbase`, di.coinbase, v.coinbase);
        } else {
          eq(`${ai} prev_out`, di.prev_out, { hash: v.txid, n: v.vout });
          eq(`${ai} scriptSig`, di.scriptSig, scriptToAsm(Buffer.from(v.scriptSig.hex, 'hex')));
        }
        eq(`${ai} witness`, di.witness, v.txinwitness);
        eq(`${ai} sequence`, di.sequence, v.sequence === 0xffffffff ? undefined : v.sequence);
      });
      t.vout.forEach((o: Any, n: number) => {
        const dout = d.out[n];
        const ao = `${at} out ${n}`;
        eq(`${ao} value`, oursSats(dout.value), sats(o.value));
        eq(`${ao} scriptPubKey`, dout.scriptPubKey, scriptToAsm(Buffer.from(o.scriptPubKey.hex, 'hex')));
        const key = p2pkKey(o.scriptPubKey.hex);
        if (o.scriptPubKey.address !== undefined) eq(`${ao} address`, dout.address, o.scriptPubKey.address);
        else if (key) {
          // docs/api.md ("Checked against a real node"): P2PK outputs are shown under the key's P2PKH address; the node gives none.
          eq(`${ao} address (P2PK → P2PKH of the key)`, dout.address, p2pkhOfKey(key));
          exception('P2PK output shown under the P2PKH address of its key (node: no address)');
        } else eq(`${ao} no address`, dout.address, undefined);
        eq(`${ao} next_in`, dout.next_in, spentBy.get(`${txid}:${n}`));
        // The node's UTXO set agrees: in it unless spent, except expired names' coins (removed by the node).
        const inSet = utxo.gettxout[`${txid}:${n}`] !== false && utxo.gettxout[`${txid}:${n}`] !== null;
        const unspendable = o.scriptPubKey.type === 'nulldata' || txid === chain.main[0].block.tx[0].txid;
        if (!unspendable && !inSet && dout.next_in === undefined && o.scriptPubKey.nameOp) exception('expired name coin: unspent on the chain, dropped from the node’s UTXO set');
        else if (!unspendable) eq(`${ao} in the node's UTXO set`, dout.next_in === undefined, inSet);
      });
    }
    // No /tx document for a tx that is only in a stale block.
    for (const s of chain.stale) for (const t of s.block.tx) if (!mainTx.has(t.txid)) eq(`stale-only tx ${t.txid.slice(0, 12)} has no /tx`, has(`tx/${t.txid}.json`), false);
  });

  it('addresses: every address paid on the main chain; txs, sums, hash160, unspent outputs vs the node’s UTXO scans', () => {
    interface Acc {
      receivers: Set<string>;
      spenders: Set<string>;
      txs: Set<string>;
      coinIn: bigint;
      coinOut: bigint;
      unspentNames: Map<string, bigint>;
    }
    const acc = new Map<string, Acc>();
    const get = (a: string): Acc => {
      let x = acc.get(a);
      if (!x) acc.set(a, (x = { receivers: new Set(), spenders: new Set(), txs: new Set(), coinIn: 0n, coinOut: 0n, unspentNames: new Map() }));
      return x;
    };
    /** Address of an output as our documents show it (node address, or the P2PK key's P2PKH). */
    const addrOf = (o: Any): string | undefined => o.scriptPubKey.address ?? (p2pkKey(o.scriptPubKey.hex) ? p2pkhOfKey(p2pkKey(o.scriptPubKey.hex)!) : undefined);
    const p2pkAddrOfScript = new Map<string, string>();
    for (const [txid, t] of mainTx) {
      t.vout.forEach((o: Any, n: number) => {
        const a = addrOf(o);
        if (!a) return;
        if (p2pkKey(o.scriptPubKey.hex)) p2pkAddrOfScript.set(o.scriptPubKey.hex, a);
        const x = get(a);
        x.receivers.add(txid);
        x.txs.add(txid);
        x.coinIn += sats(o.value);
        const sp = spentBy.get(`${txid}:${n}`);
        if (sp) {
          x.spenders.add(sp.hash);
          x.txs.add(sp.hash);
          x.coinOut += sats(o.value);
        } else if (o.scriptPubKey.nameOp) x.unspentNames.set(`${txid}:${n}`, sats(o.value));
      });
    }
    const files = readdirNames(join(out, 'address'));
    eq('address documents', files.sort(), [...acc.keys()].map((a) => `${a}.json`).sort());
    eq('stats addrs', doc('stats.json').addrs, acc.size);
    for (const [a, x] of acc) {
      const at = `address ${a}`;
      const d = doc(`address/${a}.json`);
      eq(`${at} address`, d.address, a);
      eq(`${at} hash160`, d.hash160, hash160Of(a));
      eq(`${at} tx_in_sz`, d.tx_in_sz, x.receivers.size);
      eq(`${at} tx_out_sz`, d.tx_out_sz, x.spenders.size);
      eq(`${at} coin_in`, BigInt(d.coin_in), x.coinIn);
      eq(`${at} coin_out`, BigInt(d.coin_out), x.coinOut);
      eq(`${at} balance`, BigInt(d.balance), x.coinIn - x.coinOut);
      eq(`${at} tx_sz`, d.tx_sz, x.txs.size);
      eq(`${at} transactions`, Object.keys(d.transactions).sort(), [...x.txs].sort());
      // The node's UTXO: scantxoutset addr(A), the raw(P2PK) scans of its key, and its name coins
      // (which scantxoutset never matches) not spent on the main chain.
      const want = new Map<string, bigint>();
      let scanned = 0n;
      const scans = [utxo.scantxoutset_addr[a], ...Object.entries<Any>(utxo.scantxoutset_raw).filter(([s]) => p2pkAddrOfScript.get(s) === a).map(([, v]) => v)];
      for (const s of scans) {
        if (!s) continue;
        scanned += sats(s.total_amount);
        for (const u of s.unspents) want.set(`${u.txid}:${u.vout}`, sats(u.amount));
      }
      for (const [k, v] of x.unspentNames) want.set(k, v);
      const genesisOut = `${chain.main[0].block.tx[0].txid}:0`;
      let genesis = 0n;
      if (d.unspent.some((u: Any) => `${u.tx.hash}:${u.tx.n}` === genesisOut)) {
        // decisions.md: the genesis coinbase output counts as received and unspent (as explorers
        // show it); the node never adds it to its UTXO set.
        exception('genesis coinbase output listed as unspent (decisions.md); not in the node’s UTXO set');
        genesis = sats(mainTx.get(chain.main[0].block.tx[0].txid).vout[0].value);
        want.set(genesisOut, genesis);
      }
      const got = new Map<string, bigint>(d.unspent.map((u: Any) => [`${u.tx.hash}:${u.tx.n}`, oursSats(u.value)]));
      eq(`${at} unspent outputs`, [...got].sort(), [...want].sort());
      eq(`${at} balance = node UTXO total + name coins`, BigInt(d.balance), scanned + genesis + [...x.unspentNames.values()].reduce((s, v) => s + v, 0n));
      for (const u of d.unspent) {
        const o = mainTx.get(u.tx.hash).vout[u.tx.n];
        eq(`${at} unspent ${u.tx.hash.slice(0, 12)}:${u.tx.n} scriptPubKey`, u.scriptPubKey, scriptToAsm(Buffer.from(o.scriptPubKey.hex, 'hex')));
        eq(`${at} unspent ${u.tx.hash.slice(0, 12)}:${u.tx.n} address`, u.address, a);
      }
    }
    // Every address the node scanned is one of ours.
    for (const a of Object.keys(utxo.scantxoutset_addr)) eq(`node-scanned address ${a} has a document`, acc.has(a), true);
  });

  it('names: current record, history and every with_ field vs name_show / name_history', () => {
    const FULL: NameVariant = { history: true, with: new Set(['block', 'height', 'mrkl_branch', 'rawtx', 'tx_idx']) };
    let withDocs = 0;
    for (const [hex, n] of Object.entries<Any>(names.names)) {
      const bytes = Buffer.from(hex, 'hex');
      const at = `name ${bytes.toString('latin1')}`;
      if (n.name_show_error) {
        // x/abandoned: name_new only ("name never existed").
        eq(`${at} has no document`, has(namePath(bytes, ALL_NAME_VARIANTS[0]!)), false);
        continue;
      }
      withDocs++;
      const show = n.name_show;
      const cur = doc(namePath(bytes, ALL_NAME_VARIANTS[0]!));
      eq(`${at} name`, sameBytes(cur.name, bytes), true);
      eq(`${at} value`, sameBytes(cur.value, Buffer.from(show.value, 'hex')), true);
      eq(`${at} txid`, cur.txid, show.txid);
      eq(`${at} address`, cur.address, show.address);
      eq(`${at} expires_in`, cur.expires_in, show.expires_in);
      eq(`${at} expired (name_show default refuses it)`, cur.expires_in <= 0, n.name_show_default_error !== undefined);
      if (n.name_show_utf8?.value_error !== undefined || n.name_show_utf8_error !== undefined) eq(`${at} value not UTF-8`, isUtf8(Buffer.from(show.value, 'hex')), false);

      const full: Any[] = doc(namePath(bytes, FULL));
      const hist: Any[] = n.name_history;
      eq(`${at} history length`, full.length, hist.length);
      hist.forEach((h, i) => {
        const r = full[i];
        const ai = `${at} history ${i}`;
        if (!r) return;
        eq(`${ai} name`, sameBytes(r.name, bytes), true);
        eq(`${ai} value`, sameBytes(r.value, Buffer.from(h.value, 'hex')), true);
        eq(`${ai} txid`, r.txid, h.txid);
        eq(`${ai} address`, r.address, h.address);
        eq(`${ai} expires_in`, r.expires_in, h.expires_in);
        eq(`${ai} height`, r.height, h.height);
        const t = mainTx.get(h.txid);
        eq(`${ai} block`, r.block, t?.blockhash);
        eq(`${ai} block at height`, r.block, chain.main[h.height].hash);
        const txids: string[] = chain.main[h.height].block.tx.map((x: Any) => x.txid);
        eq(`${ai} tx_idx`, r.tx_idx, txids.indexOf(h.txid));
        eq(`${ai} rawtx`, r.rawtx, t?.hex);
        // The branch folds the txid up to the node's merkle root.
        let cur2: Buffer = Buffer.from(h.txid, 'hex').reverse();
        r.mrkl_branch.forEach((sib: string, j: number) => {
          const s = Buffer.from(sib, 'hex').reverse();
          cur2 = (r.tx_idx >> j) & 1 ? sha256d(Buffer.concat([s, cur2])) : sha256d(Buffer.concat([cur2, s]));
        });
        eq(`${ai} mrkl_branch → merkle root`, displayHex(cur2), chain.main[h.height].block.merkleroot);
        eq(`${ai} mrkl_branch length`, r.mrkl_branch.length, Math.ceil(Math.log2(txids.length)));
        // The tx's name output (the node's decoded nameOp) carries this name and value.
        const op = t.vout.map((o: Any) => o.scriptPubKey.nameOp).find((x: Any) => x && x.op !== 'name_new');
        // Encoding 'ascii' answers `<field>_error` for bytes it cannot show: then they must hold a byte outside printable ASCII.
        const opField = (f: 'name' | 'value', bytes: string): boolean | string =>
          op?.[`${f}_error`] !== undefined ? [...Buffer.from(bytes, 'hex')].some((b) => b < 0x20 || b > 0x7e) : Buffer.from(op?.[f] ?? '', op?.[`${f}_encoding`] === 'hex' ? 'hex' : 'utf8').toString('hex');
        eq(`${ai} name op`, op && [op.op, opField('name', hex)], [i === 0 ? 'name_firstupdate' : op?.op === 'name_firstupdate' ? 'name_firstupdate' : 'name_update', op?.name_error !== undefined ? true : hex]);
        eq(`${ai} name op value`, opField('value', h.value), op?.value_error !== undefined ? true : h.value);
      });
      eq(`${at} current = last history item`, cur, pick(full[full.length - 1], ['name', 'value', 'txid', 'address', 'expires_in']));
      // Every one of the 64 variants is the full record with only its fields.
      for (const v of ALL_NAME_VARIANTS) {
        const keys = ['name', 'value', 'txid', 'address', 'expires_in', ...['block', 'height', 'tx_idx', 'rawtx', 'mrkl_branch'].filter((k) => v.with.has(k as never))];
        const want = v.history ? full.map((r) => pick(r, keys)) : pick(full[full.length - 1], keys);
        eq(`${at} variant ${variantKey(v) || 'base'}`, doc(namePath(bytes, v)), want);
      }
    }
    // name_scan lists every registered name (expired ones flagged): the names with documents.
    for (const x of names.name_scan) {
      const d = doc(namePath(Buffer.from(x.name, 'hex'), ALL_NAME_VARIANTS[0]!));
      eq(`name_scan ${x.name} txid`, d.txid, x.txid);
      eq(`name_scan ${x.name} expired`, d.expires_in <= 0, x.expired);
    }
    eq('name_scan count', names.name_scan.length, withDocs);
    eq('names with documents', withDocs, readNameDocs(out).length);
  });

  it('stats: counts, coin supply and script types vs the node (getblockstats, gettxoutsetinfo, decoded txs)', () => {
    const s = doc('stats.json');
    const all = [...mainTx.values()];
    const outs = all.flatMap((t) => t.vout);
    eq('stats txs', s.txs, all.length);
    eq('stats txins', s.txins, all.reduce((n, t) => n + t.vin.length, 0));
    eq('stats txouts', s.txouts, outs.length);
    eq('stats blocks', { total: s.blocks.total, main: s.blocks.main, side: s.blocks.side, orphan: s.blocks.orphan }, { total: chain.main.length + chain.stale.length, main: chain.main.length, side: chain.stale.length, orphan: 0 });
    eq('stats blocks.size (main chain)', s.blocks.size, chain.main.reduce((n: number, m: Any) => n + m.block.size, 0));
    const tip = chain.main[chain.main.length - 1].block;
    eq('stats time', s.time, tip.time);
    eq('stats work', BigInt(s.work), BigInt(`0x${tip.chainwork}`));
    const subsidies = blockstats.reduce((n: bigint, b: Any) => n + BigInt(b.subsidy), 0n);
    eq('stats coins = Σ getblockstats subsidy', BigInt(s.coins), subsidies);
    eq('stats coins = UTXO total + unspendable (gettxoutsetinfo muhash)', BigInt(s.coins), sats(txoutset.tip_muhash.amount.total) + sats(txoutset.tip_muhash.total_unspendable_amount));
    const byType = (t: string) => outs.filter((o) => !o.scriptPubKey.nameOp && o.scriptPubKey.type === t).length;
    const nameOps = (op: string) => outs.filter((o) => o.scriptPubKey.nameOp?.op === op).length;
    eq('stats script_types', s.script_types, {
      unknown: byType('nonstandard'),
      pubkey: byType('pubkey'),
      pubkey_hash: byType('pubkeyhash'),
      multisig: byType('multisig'),
      script_hash: byType('scripthash'),
      op_return: byType('nulldata'),
      witness_v0_keyhash: byType('witness_v0_keyhash'),
      witness_v0_scripthash: byType('witness_v0_scripthash'),
      witness_v1_taproot: byType('witness_v1_taproot'),
      witness_unknown: byType('witness_unknown'),
      name_new: nameOps('name_new'),
      name_firstupdate: nameOps('name_firstupdate'),
      name_update: nameOps('name_update'),
    });
    eq('stats names', s.names, outs.filter((o) => o.scriptPubKey.nameOp).length);
    // Spends of plain P2SH outputs (a name output with a P2SH tail counts as a name op, as in script_types).
    const p2shSpends = all.flatMap((t) => t.vin).filter((v) => v.txid && mainTx.get(v.txid).vout[v.vout].scriptPubKey.type === 'scripthash' && !mainTx.get(v.txid).vout[v.vout].scriptPubKey.nameOp).length;
    eq('stats p2sh_types total = inputs spending P2SH', Object.values<number>(s.p2sh_types).reduce((a, b) => a + b, 0), p2shSpends);

    // Per block: getblockstats figures from our documents.
    for (const b of blockstats) {
      const at = `getblockstats ${b.height}`;
      const d = doc(`block/${b.blockhash}.json`);
      eq(`${at} blockhash`, b.blockhash, chain.main[b.height].hash);
      const txs = d.tx.map((t: Any) => doc(`tx/${t.hash}.json`));
      eq(`${at} txs`, d.n_tx, b.txs);
      eq(`${at} outs`, txs.reduce((n: number, t: Any) => n + t.out.length, 0), b.outs);
      eq(`${at} ins`, txs.slice(1).reduce((n: number, t: Any) => n + t.in.length, 0), b.ins);
      eq(`${at} total_out`, txs.slice(1).reduce((n: bigint, t: Any) => n + t.out.reduce((m: bigint, o: Any) => m + oursSats(o.value), 0n), 0n), BigInt(b.total_out));
      eq(`${at} total_size`, txs.slice(1).reduce((n: number, t: Any) => n + t.size, 0), b.total_size);
      eq(`${at} swtxs`, txs.slice(1).filter((t: Any) => t.in.some((i: Any) => i.witness)).length, b.swtxs);
      if (b.height > 0) eq(`${at} coinbase = subsidy + fees`, txs[0].out.reduce((m: bigint, o: Any) => m + oursSats(o.value), 0n), BigInt(b.subsidy) + BigInt(b.totalfee));
    }

    // UTXO set per height (coinstatsindex, which keeps expired name coins) from our next_in links.
    const created: { h: number; spentAt: number; value: bigint }[] = [];
    for (const m of chain.main) {
      for (const t of m.block.tx) {
        if (m.height === 0) continue; // the genesis output is not spendable
        const d = doc(`tx/${t.txid}.json`);
        d.out.forEach((o: Any, n: number) => {
          if (t.vout[n].scriptPubKey.hex.startsWith('6a')) return; // OP_RETURN: unspendable
          const spentAt = o.next_in ? doc(`tx/${o.next_in.hash}.json`).blocknumber : Infinity;
          created.push({ h: m.height, spentAt, value: oursSats(o.value) });
        });
      }
    }
    for (const p of txoutset.per_height_none) {
      const live = created.filter((c) => c.h <= p.height && c.spentAt > p.height);
      eq(`gettxoutsetinfo ${p.height} txouts`, live.length, p.txouts);
      eq(`gettxoutsetinfo ${p.height} amount`, live.reduce((n, c) => n + c.value, 0n), sats(p.amount.total));
    }
  });

  it('serve: every name by its natural URL (percent-encoded name) answers 200 and its document', async () => {
    let server: RunningServer | undefined;
    try {
      server = await startServer({ dir: out, port: 0, host: '127.0.0.1' });
      const enc = (b: Buffer) => [...b].map((c) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(c)) ? String.fromCharCode(c) : `%${c.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
      for (const hex of Object.keys(names.names)) {
        const bytes = Buffer.from(hex, 'hex');
        const exists = has(namePath(bytes, ALL_NAME_VARIANTS[0]!));
        // Every byte escaped but unreserved ones; and, when no segment is '.' or '..', with raw slashes as a browser sends them.
        const spellings = [enc(bytes)];
        if (!bytes.toString('latin1').split('/').some((x) => x === '.' || x === '..')) spellings.push(enc(bytes).replaceAll('%2F', '/'));
        for (const [sp, q, v] of spellings.flatMap((sp) => [[sp, '', ALL_NAME_VARIANTS[0]!], [sp, '?history&with_all', { history: true, with: new Set(['block', 'height', 'mrkl_branch', 'rawtx', 'tx_idx']) }]] as const)) {
          const target = `/name/${sp}.json${q}`;
          const r = await rawRequest(server.url, target);
          if (exists) {
            eq(`GET ${target} status`, r.status, 200);
            eq(`GET ${target} body`, r.body.equals(readFileSync(join(out, namePath(bytes, v as NameVariant)))), true);
          } else {
            eq(`GET ${target} status`, r.status, 404);
            eq(`GET ${target} body`, JSON.parse(r.body.toString('utf8')), { error: `Name ${bytes.toString('utf8')} not found.` });
          }
        }
      }
    } finally {
      await server?.close();
    }
  });

  it('0 differences from the node', () => {
    console.log(`real-node comparison: ${checks} checks, ${diffs.length} differences; documented exceptions: ${[...exceptions].map(([k, v]) => `${v} × ${k}`).join('; ') || 'none'}`);
    expect(checks).toBeGreaterThan(40_000);
    expect(diffs.slice(0, 400)).toEqual([]);
  });
});

function pick(o: Any, keys: string[]): Any {
  const r: Any = {};
  for (const k of keys) if (k in o) r[k] = o[k];
  return r;
}

function readdirNames(dir: string): string[] {
  return readdirSync(dir);
}

function readNameDocs(out: string): string[] {
  return (readdirSync(join(out, 'name'), { recursive: true }) as string[]).filter((f) => f.endsWith('.json'));
}
