/**
 * The demo chain: a small Namecoin regtest chain (merge-mined, AuxPoW on every
 * block after genesis) that `snapshot build` uses when no source is given, and
 * that the build's tests assert against. Deterministic: every call returns
 * byte-identical blocks (seed {@link DEMO_SEED}).
 *
 * Contents (main chain, tip height 150; genesis = Core's regtest genesis):
 * - 1–100: coinbase-only blocks to the miner's P2PKH; coinbases at heights
 *   ≡ 3 (mod 10) pay a P2PK output; at heights ≡ 7 (mod 10) two outputs
 *   (P2PKH + P2WPKH). Later blocks' coinbases carry a BIP141 witness commitment
 *   whenever the block has witness transactions.
 * - 101: one "fan-out" tx paying every output type: P2PK (compressed and
 *   uncompressed key), P2PKH (address A, twice), P2SH-multisig 2-of-3 (twice),
 *   P2SH-P2PKH, P2SH-P2PK, P2SH-P2WPKH, P2SH-P2WSH(1-of-2), bare multisig 1-of-2
 *   (one uncompressed key), OP_RETURN, P2WPKH (address F, twice), P2WSH
 *   (2-of-2 multisig), P2WSH(P2PK), P2TR key path (twice), P2TR script path,
 *   non-standard SHA-256 hash lock, non-standard `OP_NOP OP_NOP OP_1`,
 *   witness v2 (unknown). See {@link DEMO_FANOUT_OUTPUTS} for vout → type.
 * - 102: spends of fan-out outputs of every spendable type (legacy, P2SH with
 *   the redeem script as the last scriptSig push, nested segwit, native
 *   segwit, taproot key and script path, hash lock), paying address A again;
 *   the second copies (vouts 2nd of each pair, and the OP_NOP script) stay unspent.
 *   Also the name_new of every name below.
 * - Names (tx version 0x7100; name_new at 102, name_firstupdate at 114):
 *   - `d/history`: firstupdate 114, updates 116, 120 (value with a newline),
 *     125 (JSON value, transferred to a new owner), 140.
 *   - `d/expiring`: firstupdate 114, never updated → expires at 144
 *     (114 + 30); new name_new at 132, re-registered (firstupdate) at 145.
 *   - `d/a/b`, `/lead`, `trail/` ('/' inside, leading, trailing): firstupdate
 *     114, update 138.
 *   - `..`, `d/100%`, `d/what?`, `d/with space`, `~tilde` (path-hostile bytes):
 *     firstupdate 114 only (expired at the tip).
 *   - `d/` + bytes ff fe (not UTF-8) with a non-UTF-8 value (fe ff 00 41):
 *     firstupdate 114, update 128 (value ff 80 0a).
 *   - `id/json`: firstupdate 114 with a multi-line JSON value.
 *   - `d/empty`: firstupdate 114 with the empty value.
 *   The full list with values is {@link DEMO_NAME_OPS} (main chain only).
 * - 146: two payments from address A (so A has spends and unspent outputs).
 * - Side branch: 2 blocks at heights 148 and 149 forking off main block 147
 *   (less work than the main chain); side block 148 holds a name_update of
 *   `d/history` (value "side-branch value") and a payment — neither is on the
 *   main chain.
 * - One orphan at height 150 whose parent (a block at 149 on main block 148)
 *   is not in the output.
 *
 * Get the hashes from the result: `demoChain().side` (2 blocks, heights 148,
 * 149), `demoChain().orphans` (1 block; its height field is the height it
 * would have had, 150), `demoChain().main[h]`.
 */
import { ChainBuilder, type BuiltChain, type NameNewHandle, type TxHandle } from './chain.js';
import { locks, script, type Lock } from './scripts.js';
import { NETWORKS, type Network } from '../chain/networks.js';

export const DEMO_SEED = 'chain-snapshot demo';
export const DEMO_TIP_HEIGHT = 150;
/** Time of block 1 (2023-11-14 22:13:20 UTC); blocks are 600 s apart. */
export const DEMO_START_TIME = 1_700_000_000;

/** Output types of the fan-out tx at height 101, by vout. */
export const DEMO_FANOUT_OUTPUTS = [
  'p2pk',
  'p2pk-uncompressed',
  'p2pkh',
  'p2sh-multisig',
  'p2sh-p2pkh',
  'p2sh-p2pk',
  'p2sh-p2wpkh',
  'p2sh-p2wsh',
  'multisig',
  'op_return',
  'p2wpkh',
  'p2wsh-multisig',
  'p2wsh-p2pk',
  'p2tr',
  'p2tr-script',
  'nonstandard-hashlock',
  'witness_unknown',
  'p2pkh',
  'p2sh-multisig',
  'p2wpkh',
  'p2tr',
  'nonstandard',
] as const;

export interface DemoNameOp {
  op: 'name_firstupdate' | 'name_update';
  /** Name bytes as hex (some are not UTF-8). */
  nameHex: string;
  height: number;
  valueHex: string;
}

const hex = (s: string | Buffer) => (typeof s === 'string' ? Buffer.from(s, 'utf8') : s).toString('hex');

export const DEMO_BAD_UTF8_NAME = Buffer.from([0x64, 0x2f, 0xff, 0xfe]);
const BAD_VALUE_1 = Buffer.from([0xfe, 0xff, 0x00, 0x41]);
const BAD_VALUE_2 = Buffer.from([0xff, 0x80, 0x0a]);
const JSON_VALUE = '{\n  "name": "demo",\n  "list": [1, 2, "three"],\n  "nested": {"k": "v"}\n}';
const HISTORY = [
  '{"ip":"10.0.0.1"}',
  '{"ip":"10.0.0.2"}',
  'line one\nline two',
  '{"ip":"10.0.0.3","map":{"www":{"ip":"10.0.0.4"}}}',
  '{"ip":"10.0.0.5"}',
];
const PLAIN_NAMES = ['d/a/b', '/lead', 'trail/', '..', 'd/100%', 'd/what?', 'd/with space', '~tilde'];

/** Every main-chain name_firstupdate / name_update of the demo chain, in order. */
export const DEMO_NAME_OPS: readonly DemoNameOp[] = (() => {
  const ops: DemoNameOp[] = [];
  const fu = (name: string | Buffer, value: string | Buffer) => ops.push({ op: 'name_firstupdate', nameHex: hex(name), height: 114, valueHex: hex(value) });
  fu('d/history', HISTORY[0]!);
  fu('d/expiring', 'first registration');
  for (const n of PLAIN_NAMES) fu(n, `value of ${n}`);
  fu(DEMO_BAD_UTF8_NAME, BAD_VALUE_1);
  fu('id/json', JSON_VALUE);
  fu('d/empty', '');
  const up = (name: string | Buffer, height: number, value: string | Buffer) => ops.push({ op: 'name_update', nameHex: hex(name), height, valueHex: hex(value) });
  up('d/history', 116, HISTORY[1]!);
  up('d/history', 120, HISTORY[2]!);
  up('d/history', 125, HISTORY[3]!);
  up(DEMO_BAD_UTF8_NAME, 128, BAD_VALUE_2);
  for (const n of ['d/a/b', '/lead', 'trail/']) up(n, 138, `updated ${n}`);
  up('d/history', 140, HISTORY[4]!);
  ops.push({ op: 'name_firstupdate', nameHex: hex('d/expiring'), height: 145, valueHex: hex('registered again') });
  return ops;
})();

export interface DemoChain extends BuiltChain {
  network: Network;
}

/** Builds the demo chain (≈ 60 ms). */
export function demoChain(): DemoChain {
  const network = NETWORKS['namecoin-regtest'];
  const cb = new ChainBuilder({ network, seed: DEMO_SEED, auxpow: true, startTime: DEMO_START_TIME });
  const miner = cb.key();
  const miner2 = cb.key();
  for (let h = 1; h <= 100; h++) {
    const coinbase =
      h % 10 === 3
        ? [{ lock: locks.p2pk(miner), wallet: true }]
        : h % 10 === 7
          ? [
              { lock: locks.p2pkh(miner), wallet: true },
              { lock: locks.p2wpkh(miner2), wallet: true, value: 100_000_000n },
            ]
          : undefined;
    cb.block(undefined, coinbase ? { coinbase } : {});
  }

  const k = () => cb.key();
  const keyA = k();
  const keyF = k();
  const uncompressed = cb.key({ uncompressed: true });
  const ms3 = [k(), k(), k()];
  const preimage = Buffer.from('chain-snapshot preimage', 'utf8');
  const fanoutLocks: Lock[] = [
    locks.p2pk(k()),
    locks.p2pk(uncompressed),
    locks.p2pkh(keyA),
    locks.p2sh(locks.multisig(2, ms3)),
    locks.p2sh(locks.p2pkh(k())),
    locks.p2sh(locks.p2pk(k())),
    locks.p2sh(locks.p2wpkh(k())),
    locks.p2sh(locks.p2wsh(locks.multisig(1, [k(), k()]))),
    locks.multisig(1, [k(), cb.key({ uncompressed: true })]),
    locks.opReturn(Buffer.from('chain-snapshot demo', 'utf8')),
    locks.p2wpkh(keyF),
    locks.p2wsh(locks.multisig(2, [k(), k()])),
    locks.p2wsh(locks.p2pk(k())),
    locks.p2tr(k()),
    locks.p2trScriptPath(k(), k(), k()),
    locks.hashlock(preimage),
    locks.witnessUnknown(2, Buffer.from('00112233445566778899aabbccddeeff', 'hex')),
    locks.p2pkh(keyA),
    locks.p2sh(locks.multisig(2, ms3)),
    locks.p2wpkh(keyF),
    locks.p2tr(k()),
    locks.nonstandard(script(0x61, 0x61, 0x51), []),
  ];
  let fanout!: TxHandle;
  cb.block((b) => {
    fanout = b.tx({ outputs: fanoutLocks.map((lock, i) => ({ lock, value: i === 9 ? 0n : 100_000_000n })) });
  });

  const addrA = locks.p2pkh(keyA);
  const nameNews = new Map<string, NameNewHandle>();
  const allNames: (string | Buffer)[] = ['d/history', 'd/expiring', ...PLAIN_NAMES, DEMO_BAD_UTF8_NAME, 'id/json', 'd/empty'];
  cb.block((b) => {
    const o = (v: number) => fanout.out(v);
    b.tx({ inputs: [o(0), o(1), o(2)], outputs: [{ lock: addrA, value: 150_000_000n }] });
    b.tx({ inputs: [o(3), o(4), o(5)], outputs: [{ lock: locks.p2pkh(k()), value: 250_000_000n }] });
    b.tx({ inputs: [o(6), o(7)], outputs: [{ lock: locks.p2wpkh(k()), value: 150_000_000n }] });
    b.tx({ inputs: [o(8)], outputs: [{ lock: addrA, value: 50_000_000n }] });
    b.tx({ inputs: [o(10), o(11), o(12)], outputs: [{ lock: locks.p2sh(locks.p2wpkh(k())), value: 200_000_000n }] });
    b.tx({ inputs: [o(13), o(14)], outputs: [{ lock: locks.p2tr(k()), value: 150_000_000n }] });
    b.tx({ inputs: [o(15)], outputs: [{ lock: addrA }] });
    for (const n of allNames) nameNews.set(hex(n), b.nameNew(n));
  });
  cb.mine(11); // 103–113

  const nn = (n: string | Buffer) => nameNews.get(hex(n))!;
  cb.block((b) => {
    // 114: every first registration, values as in DEMO_NAME_OPS
    for (const op of DEMO_NAME_OPS.filter((x) => x.height === 114)) {
      b.nameFirstUpdate(nn(Buffer.from(op.nameHex, 'hex')), Buffer.from(op.valueHex, 'hex'));
    }
  });
  const updatesAt = (h: number) => DEMO_NAME_OPS.filter((x) => x.height === h && x.op === 'name_update');
  let reNew!: NameNewHandle;
  while (cb.tip.height < 145) {
    const h = cb.tip.height + 1;
    cb.block((b) => {
      for (const op of updatesAt(h)) {
        const to = op.height === 125 ? locks.p2pkh(k()) : undefined;
        b.nameUpdate(Buffer.from(op.nameHex, 'hex'), Buffer.from(op.valueHex, 'hex'), to ? { to } : {});
      }
      if (h === 132) reNew = b.nameNew('d/expiring');
      if (h === 145) b.nameFirstUpdate(reNew, 'registered again', { to: locks.p2pkh(k()) });
    });
  }
  cb.block((b) => {
    // 146: address A spends
    const aCoins = cb.unspent().filter((c) => c.lock === addrA).sort((x, y) => x.height - y.height || x.txid.localeCompare(y.txid) || x.vout - y.vout);
    b.tx({ inputs: [aCoins[0]!], outputs: [{ lock: locks.p2wpkh(keyF), value: 40_000_000n }] });
    b.tx({ inputs: [aCoins[1]!], outputs: [{ lock: locks.p2pkh(k()), value: 10_000_000n }] });
  });
  const [, m148] = cb.mine(4); // 147–150
  const m147 = cb.build().main[147]!;
  cb.block(
    (b) => {
      b.nameUpdate('d/history', 'side-branch value');
      b.pay(locks.p2pkh(k()), 5_000_000n);
    },
    { parent: m147 },
  );
  cb.block(undefined, { parent: cb.build().side[0]! });
  cb.orphan(undefined, { parent: m148! });
  const chain = cb.build();
  if (chain.tip.height !== DEMO_TIP_HEIGHT || chain.side.length !== 2 || chain.orphans.length !== 1) {
    throw new Error('demo chain shape changed');
  }
  return chain;
}
