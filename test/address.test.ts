import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeAddress, p2pkhAddress, p2shAddress, scriptAddress, segwitAddress } from '../src/chain/address.js';
import { parseBlock } from '../src/chain/block.js';
import { hash160, sha256d } from '../src/chain/hash.js';
import { NETWORKS, type Network } from '../src/chain/networks.js';
import { classifyScript, solveScript } from '../src/chain/script.js';
import type { Tx } from '../src/chain/tx.js';
import { chainPath, framedBlocks } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

const hex = (s: string) => Buffer.from(s, 'hex');
const { bitcoin, namecoin } = NETWORKS;
const testnet = NETWORKS['bitcoin-testnet'];
const regtest = NETWORKS['bitcoin-regtest'];

// ---------------------------------------------------------------------------
// Independent encoders (BIP173/BIP350 reference algorithm, base58check), so the
// expected strings do not come from the code under test.

const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

function polymod(values: number[]): number {
  const GEN = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= GEN[i]!;
  }
  return chk >>> 0;
}

function bech32Encode(hrp: string, version: number, program: Uint8Array, variant: 'bech32' | 'bech32m'): string {
  const words = [version];
  let acc = 0;
  let bits = 0;
  for (const b of program) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      words.push((acc >>> bits) & 31);
    }
  }
  if (bits > 0) words.push((acc << (5 - bits)) & 31);
  const hrpExpand = [...hrp].map((c) => c.charCodeAt(0) >> 5).concat([0], [...hrp].map((c) => c.charCodeAt(0) & 31));
  const constant = variant === 'bech32' ? 1 : 0x2bc830a3;
  const mod = polymod([...hrpExpand, ...words, 0, 0, 0, 0, 0, 0]) ^ constant;
  const checksum = Array.from({ length: 6 }, (_, i) => (mod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => BECH32_CHARSET[w]).join('')}`;
}

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function base58check(payload: Buffer): string {
  const data = Buffer.concat([payload, sha256d(payload).subarray(0, 4)]);
  let n = BigInt('0x' + (data.toString('hex') || '0'));
  let out = '';
  while (n > 0n) {
    out = B58[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of data) {
    if (b !== 0) break;
    out = '1' + out;
  }
  return out;
}

/** Expected address of an output script, from the encoders above. */
function expectedAddress(script: Buffer, net: Network): string | undefined {
  const { type, data } = solveScript(script);
  if (!data) return undefined;
  switch (type) {
    case 'pubkey_hash':
      return base58check(Buffer.concat([Buffer.from([net.pubKeyHash]), data]));
    case 'script_hash':
      return base58check(Buffer.concat([Buffer.from([net.scriptHash!]), data]));
    case 'pubkey':
      return base58check(Buffer.concat([Buffer.from([net.pubKeyHash]), hash160(data)]));
    case 'witness_v0_keyhash':
    case 'witness_v0_scripthash':
      return bech32Encode(net.bech32, 0, data, 'bech32');
    case 'witness_v1_taproot':
      return bech32Encode(net.bech32, 1, data, 'bech32m');
    default:
      return undefined;
  }
}

function flipChar(s: string, i: number, alphabet: string): string {
  const c = s[i]!;
  const alt = alphabet[(alphabet.indexOf(c) + 1) % alphabet.length]!;
  return s.slice(0, i) + alt + s.slice(i + 1);
}

// ---------------------------------------------------------------------------

describe('scriptAddress on synthetic scripts', () => {
  const h20 = hex('751e76e8199196d454941c45d1b3a323f1433bd6');
  const h32 = hex('1863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262');
  const x32 = hex('79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798');
  const rows: [string, string, Network, string | undefined][] = [
    ['P2WPKH (BIP173 vector)', `0014${h20.toString('hex')}`, bitcoin, 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4'],
    ['P2WSH testnet (BIP173 vector)', `0020${h32.toString('hex')}`, testnet, 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7'],
    ['P2TR (BIP350 vector)', `5120${x32.toString('hex')}`, bitcoin, 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0'],
    ['P2SH', `a914${h20.toString('hex')}87`, bitcoin, base58check(Buffer.concat([Buffer.from([5]), h20]))],
    ['P2SH on namecoin (version 0x0d)', `a914${h20.toString('hex')}87`, namecoin, base58check(Buffer.concat([Buffer.from([0x0d]), h20]))],
    ['multisig: no address', `5121${'02' + '11'.repeat(32)}51ae`, bitcoin, undefined],
    ['OP_RETURN: no address', '6a0401020304', bitcoin, undefined],
    ['witness v12: no address', `5c1b${'55'.repeat(27)}`, bitcoin, undefined],
    ['non-standard: no address', '52534b424c4f434b3a', bitcoin, undefined],
    ['empty script: no address', '', bitcoin, undefined],
    ['name script on bitcoin is non-standard', `5302aabb0105 6d75 76a914${h20.toString('hex')}88ac`, bitcoin, undefined],
    ['name_update → P2SH tail on namecoin', `5302aabb0105 6d75 a914${h20.toString('hex')}87`, namecoin, base58check(Buffer.concat([Buffer.from([0x0d]), h20]))],
    ['name_update → P2WPKH tail on namecoin', `5302aabb0105 6d75 0014${h20.toString('hex')}`, namecoin, bech32Encode('nc', 0, h20, 'bech32')],
  ];
  it.each(rows)('%s', (_name, script, net, addr) => {
    expect(scriptAddress(hex(script.replace(/ /g, '')), net)).toBe(addr);
  });

  it('helpers', () => {
    expect(p2pkhAddress(hex('62e907b15cbf27d5425399ebf6f0fb50ebb88f18'), bitcoin)).toBe('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa');
    expect(p2shAddress(h20, bitcoin)).toBe(base58check(Buffer.concat([Buffer.from([5]), h20])));
    expect(segwitAddress(x32, 1, bitcoin)).toBe('bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0');
  });

  it('the name doc example (namecoin testnet, webbtc _name_d_mysite.json) pays mw3MrjST…', () => {
    const script = hex(
      '5308642f6d79736974652d7b226970223a22302e302e302e30222c226d6170223a7b222a223a7b226970223a22302e302e302e30227d7d7d6d7576a914aa4a090daafe78897d9459b47ffdcc46ea065bc588ac',
    );
    expect(scriptAddress(script, NETWORKS['namecoin-testnet'])).toBe('mw3MrjSTETgLWP3x2Wro7bTx2QvdsL7idP');
  });
});

describe('decodeAddress', () => {
  const h20 = hex('751e76e8199196d454941c45d1b3a323f1433bd6');
  const x32 = hex('79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798');
  const ok: [string, string, Network, string, string][] = [
    ['genesis P2PKH', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', bitcoin, 'pubkey_hash', '62e907b15cbf27d5425399ebf6f0fb50ebb88f18'],
    ['P2SH', base58check(Buffer.concat([Buffer.from([5]), h20])), bitcoin, 'script_hash', h20.toString('hex')],
    ['testnet P2PKH', base58check(Buffer.concat([Buffer.from([0x6f]), h20])), testnet, 'pubkey_hash', h20.toString('hex')],
    ['Namecoin P2PKH', 'N1Gi2mS1VSp1wRj2RU3ZU7t1N1zdsRTuWg', namecoin, 'pubkey_hash', ''],
    ['Namecoin P2SH (0x0d)', base58check(Buffer.concat([Buffer.from([0x0d]), h20])), namecoin, 'script_hash', h20.toString('hex')],
    ['P2WPKH', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', bitcoin, 'witness_v0_keyhash', h20.toString('hex')],
    ['P2WPKH all upper case', 'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', bitcoin, 'witness_v0_keyhash', h20.toString('hex')],
    ['P2WSH', bech32Encode('bc', 0, x32, 'bech32'), bitcoin, 'witness_v0_scripthash', x32.toString('hex')],
    ['P2TR', 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', bitcoin, 'witness_v1_taproot', x32.toString('hex')],
    ['regtest P2WPKH', bech32Encode('bcrt', 0, h20, 'bech32'), regtest, 'witness_v0_keyhash', h20.toString('hex')],
    ['Namecoin P2WPKH', bech32Encode('nc', 0, h20, 'bech32'), namecoin, 'witness_v0_keyhash', h20.toString('hex')],
  ];
  it.each(ok)('accepts %s', (_name, addr, net, type, h) => {
    const d = decodeAddress(addr, net);
    expect(d?.type).toBe(type);
    if (h) expect(d?.hash160).toBe(h);
  });

  const bad: [string, string, Network][] = [
    ['empty string', '', bitcoin],
    ['junk', 'hello world', bitcoin],
    ['base58 alphabet violation (0OIl)', '1A1zP1eP5QGefi2DMPTfTL5SLmv7Div0Il', bitcoin],
    ['surrounding whitespace', ' 1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', bitcoin],
    ['base58 checksum flip', flipChar('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', 33, B58), bitcoin],
    ['base58 checksum flip inside the hash', flipChar('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', 10, B58), bitcoin],
    ['bitcoin address on namecoin', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', namecoin],
    ['namecoin address on bitcoin', 'N1Gi2mS1VSp1wRj2RU3ZU7t1N1zdsRTuWg', bitcoin],
    ['testnet address on mainnet', base58check(Buffer.concat([Buffer.from([0x6f]), h20])), bitcoin],
    ['mainnet address on testnet', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', testnet],
    ['unknown version byte', base58check(Buffer.concat([Buffer.from([0x01]), h20])), bitcoin],
    ['26-byte payload with a valid checksum', base58check(Buffer.concat([Buffer.from([0]), h20, Buffer.from([0])])), bitcoin],
    ['24-byte payload with a valid checksum', base58check(Buffer.concat([Buffer.from([0]), h20.subarray(1)])), bitcoin],
    ['tb address on mainnet', 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', bitcoin],
    ['bc address on namecoin', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', namecoin],
    ['bech32 checksum flip', flipChar('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 41, BECH32_CHARSET), bitcoin],
    ['bech32m checksum flip', flipChar('bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', 20, BECH32_CHARSET), bitcoin],
    ['v1 program with a bech32 checksum', bech32Encode('bc', 1, x32, 'bech32'), bitcoin],
    ['v0 program with a bech32m checksum', bech32Encode('bc', 0, h20, 'bech32m'), bitcoin],
    ['mixed case bech32', 'bc1qW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', bitcoin],
    ['v0 with a 25-byte program', bech32Encode('bc', 0, Buffer.alloc(25, 1), 'bech32'), bitcoin],
    ['v1 with a 20-byte program', bech32Encode('bc', 1, h20, 'bech32m'), bitcoin],
    ['v2 (no address type for it)', bech32Encode('bc', 2, h20, 'bech32m'), bitcoin],
    ['hrp only', 'bc1', bitcoin],
  ];
  it.each(bad)('rejects %s', (_name, addr, net) => {
    expect(() => decodeAddress(addr, net)).not.toThrow();
    expect(decodeAddress(addr, net)).toBeUndefined();
  });

  it('never throws on non-string input', () => {
    expect(decodeAddress(undefined as unknown as string, bitcoin)).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------
// Real chain data.

function allTxs(blocks: Buffer[], auxpow = false): Tx[] {
  return blocks.flatMap((b) => parseBlock(b, { auxpow }).txs);
}

/** Every output's address equals the independent encoding, and decodes back to its hash/program. */
function checkOutputs(txs: Tx[], net: Network, namecoinNet = false): Record<string, number> {
  const withAddress: Record<string, number> = {};
  for (const tx of txs) {
    for (const o of tx.outputs) {
      const addr = scriptAddress(o.script, net);
      const type = classifyScript(o.script, namecoinNet);
      if (namecoinNet && type.startsWith('name_')) continue; // covered by names.test.ts
      expect(addr, `${tx.txid} ${o.script.toString('hex')}`).toBe(expectedAddress(o.script, net));
      if (addr === undefined) continue;
      withAddress[type] = (withAddress[type] ?? 0) + 1;
      const d = decodeAddress(addr, net)!;
      expect(d).toBeDefined();
      const { data } = solveScript(o.script);
      if (type === 'pubkey') expect(d).toEqual({ type: 'pubkey_hash', hash160: hash160(data!).toString('hex') });
      else expect(d).toEqual({ type, hash160: data!.toString('hex') });
    }
  }
  return withAddress;
}

describeShared('chaindata')('addresses of real outputs', () => {
  it('block 170: the first spend pays 1Q2TWHE3… and 12cbQLTF…; genesis pays 1A1zP1eP…', () => {
    const txs = allTxs(framedBlocks(readFileSync(chainPath('nbitcoin', 'blk00000.dat'))));
    const spend = txs.find((t) => t.txid === 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16')!;
    expect(spend).toBeDefined();
    expect(spend.outputs.map((o) => scriptAddress(o.script, bitcoin))).toEqual([
      '1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3',
      '12cbQLTFMXRnSzktFkuoG3eHoMeFtpTu3S',
    ]);
    expect(spend.outputs.map((o) => o.value)).toEqual([1_000_000_000n, 4_000_000_000n]);
    expect(scriptAddress(txs[0]!.outputs[0]!.script, bitcoin)).toBe('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa');
  });

  it('nbitcoin blk00000/00001: 627 P2PK outputs, 614 distinct addresses', () => {
    const txs = ['blk00000.dat', 'blk00001.dat'].flatMap((f) => allTxs(framedBlocks(readFileSync(chainPath('nbitcoin', f)))));
    expect(checkOutputs(txs, bitcoin)).toEqual({ pubkey: 627 });
    const distinct = new Set(txs.flatMap((t) => t.outputs.map((o) => scriptAddress(o.script, bitcoin))));
    expect(distinct.size).toBe(614);
  });

  it('Namecoin genesis pays N1Gi2mS1…', () => {
    const [raw] = framedBlocks(readFileSync(chainPath('hadoopcryptoledger', 'namecoingenesis.blk')));
    const b = parseBlock(raw!, { auxpow: true });
    expect(b.header.id).toBe('000000000062b72c5e2ceb45fbc8587e807c155b0da735e6483dfba2f0a9c770');
    expect(scriptAddress(b.txs[0]!.outputs[0]!.script, namecoin)).toBe('N1Gi2mS1VSp1wRj2RU3ZU7t1N1zdsRTuWg');
    expect(decodeAddress('N1Gi2mS1VSp1wRj2RU3ZU7t1N1zdsRTuWg', namecoin)?.type).toBe('pubkey_hash');
  });

  const ELECTRUMX_TXS = readdirSync(chainPath('electrumx', 'transactions')).filter((f) => f.endsWith('.json'));
  it.each(ELECTRUMX_TXS)('%s: every output address equals namecoind’s', (file) => {
    const j = JSON.parse(readFileSync(chainPath('electrumx', 'transactions', file), 'utf8')) as {
      vout: { n: number; scriptPubKey: { hex: string; address?: string; addresses?: string[] } }[];
    };
    expect(j.vout.length).toBeGreaterThan(0);
    for (const o of j.vout) {
      const want = o.scriptPubKey.address ?? o.scriptPubKey.addresses?.[0];
      expect(want).toBeDefined();
      expect(scriptAddress(hex(o.scriptPubKey.hex), namecoin)).toBe(want);
      expect(decodeAddress(want!, namecoin)?.type).toBe('pubkey_hash');
      expect(decodeAddress(want!, bitcoin)).toBeUndefined();
    }
  });

  it('bitcoin_mainnet_951658.json: segwit and taproot addresses (the JSON lists txids only)', () => {
    const j = JSON.parse(readFileSync(chainPath('electrumx', 'blocks', 'bitcoin_mainnet_951658.json'), 'utf8')) as { block: string };
    expect(checkOutputs(allTxs([hex(j.block)]), bitcoin)).toEqual({
      witness_v0_keyhash: 347,
      witness_v1_taproot: 103,
      script_hash: 14,
      witness_v0_scripthash: 13,
      pubkey_hash: 7,
    });
  });

  it('block2019Jan.blk: P2PKH, P2SH, P2PK, P2WPKH, P2WSH addresses', () => {
    const txs = allTxs(framedBlocks(readFileSync(chainPath('hadoopcryptoledger', 'block2019Jan.blk'))));
    expect(checkOutputs(txs, bitcoin)).toEqual({
      pubkey_hash: 3698,
      script_hash: 2573,
      witness_v0_keyhash: 47,
      pubkey: 11,
      witness_v0_scripthash: 6,
    });
  });

  it('regtest chain (rpc_getblockstats.json): bcrt1 addresses', () => {
    const j = JSON.parse(readFileSync(chainPath('bitcoin-core', 'rpc_getblockstats.json'), 'utf8')) as { blocks: string[] };
    const txs = allTxs(j.blocks.map(hex));
    expect(checkOutputs(txs, regtest)).toEqual({ pubkey: 1, pubkey_hash: 107, witness_v0_keyhash: 5 });
    const segwit = txs.flatMap((t) => t.outputs).map((o) => scriptAddress(o.script, regtest)).filter((a) => a?.startsWith('bcrt1'));
    expect(segwit.length).toBe(5);
  });
});
