import { address as btcAddress } from 'bitcoinjs-lib';
import bs58 from 'bs58';
import { hash160, sha256d } from './hash.js';
import { parseNameScript } from './name-script.js';
import { isNamecoin, type Network } from './networks.js';
import { solveScript } from './script.js';
import { TwoGenerationCache } from './two-gen-cache.js';

export type AddressType = 'pubkey_hash' | 'script_hash' | 'witness_v0_keyhash' | 'witness_v0_scripthash' | 'witness_v1_taproot';

export interface DecodedAddress {
  /** Lowercase hex of the hash160 or witness program. */
  hash160: string;
  type: AddressType;
}

/**
 * version ‖ hash ‖ the first 4 bytes of its sha256d, in base58: bitcoinjs-lib's
 * `toBase58Check` with Node's native sha256 in place of its pure-JS one (most of its ~8 µs).
 */
function toBase58Check(hash: Uint8Array, version: number): string {
  const n = hash.length + 1;
  const payload = Buffer.allocUnsafe(n + 4);
  payload[0] = version;
  payload.set(hash, 1);
  sha256d(payload.subarray(0, n)).copy(payload, n, 0, 4);
  return bs58.encode(payload);
}

export function p2pkhAddress(hash: Uint8Array, net: Network): string {
  return toBase58Check(hash, net.pubKeyHash);
}

export function p2shAddress(hash: Uint8Array, net: Network): string | undefined {
  return net.scriptHash === undefined ? undefined : toBase58Check(hash, net.scriptHash);
}

/** bech32 for version 0, bech32m for 1..16 (BIP350). */
export function segwitAddress(program: Uint8Array, version: number, net: Network): string {
  return btcAddress.toBech32(program, version, net.bech32);
}

/** P2PKH address of a public key (what explorers show for a P2PK output). */
export function pubkeyAddress(pubkey: Uint8Array, net: Network): string {
  return p2pkhAddress(hash160(pubkey), net);
}

function plainScriptAddress(script: Uint8Array, net: Network): string | undefined {
  const { type, data } = solveScript(script);
  if (!data) return undefined;
  switch (type) {
    case 'pubkey_hash':
      return p2pkhAddress(data, net);
    case 'script_hash':
      return p2shAddress(data, net);
    case 'pubkey':
      return pubkeyAddress(data, net);
    case 'witness_v0_keyhash':
    case 'witness_v0_scripthash':
      return segwitAddress(data, 0, net);
    case 'witness_v1_taproot':
      return segwitAddress(data, 1, net);
    default:
      return undefined;
  }
}

/**
 * The "standard form" address of an output script (decisions.md): P2PKH, P2SH,
 * P2PK (as the key's P2PKH address), P2WPKH, P2WSH, P2TR; on Namecoin a name
 * script's address is that of the script after the name prefix (stripped
 * once, as Namecoin Core's Solver does). Undefined for multisig, OP_RETURN,
 * unknown witness versions and non-standard scripts.
 */
export function scriptAddress(script: Uint8Array, net: Network): string | undefined {
  // Encoding (base58check) costs a few µs, and the same
  // scripts come back again and again (each output is indexed and rendered,
  // addresses are reused): a bounded cache keyed by network and script.
  if (script.length > 100) return uncachedScriptAddress(script, net);
  const key = net.name + Buffer.from(script.buffer, script.byteOffset, script.byteLength).toString('latin1');
  const hit = addressCache.get(key);
  if (hit !== undefined) return hit === NONE ? undefined : hit;
  const address = uncachedScriptAddress(script, net);
  addressCache.set(key, address ?? NONE);
  return address;
}

function uncachedScriptAddress(script: Uint8Array, net: Network): string | undefined {
  const b = script[0];
  if (b !== undefined && b >= 0x51 && b <= 0x53 && isNamecoin(net)) {
    const ns = parseNameScript(script);
    if (ns) return plainScriptAddress(ns.addressScript, net);
  }
  return plainScriptAddress(script, net);
}

const NONE = '';
const addressCache = new TwoGenerationCache<string, string>(65536);

/**
 * bitcoinjs-lib's `fromBase58Check` (a 21-byte payload under a valid 4-byte sha256d checksum)
 * with Node's native sha256 in place of its pure-JS one, ~5% of the address documents' CPU.
 */
function fromBase58Check(addr: string): { version: number; hash: Buffer } | undefined {
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(addr);
  } catch {
    return undefined;
  }
  if (bytes.length !== 25) return undefined;
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (!sha256d(b.subarray(0, 21)).subarray(0, 4).equals(b.subarray(21))) return undefined;
  return { version: b[0]!, hash: b.subarray(1, 21) };
}

function decodeBase58(addr: string, net: Network): DecodedAddress | undefined {
  const decoded = fromBase58Check(addr);
  if (!decoded) return undefined;
  const hash160 = decoded.hash.toString('hex');
  if (decoded.version === net.pubKeyHash) return { hash160, type: 'pubkey_hash' };
  if (net.scriptHash !== undefined && decoded.version === net.scriptHash) return { hash160, type: 'script_hash' };
  return undefined;
}

function decodeSegwit(addr: string, net: Network): DecodedAddress | undefined {
  let decoded: { version: number; prefix: string; data: Uint8Array };
  try {
    // Rejects a bech32 checksum on version ≥ 1 and a bech32m checksum on version 0.
    decoded = btcAddress.fromBech32(addr);
  } catch {
    return undefined;
  }
  if (decoded.prefix !== net.bech32) return undefined;
  const hash160 = Buffer.from(decoded.data).toString('hex');
  const len = decoded.data.length;
  if (decoded.version === 0 && len === 20) return { hash160, type: 'witness_v0_keyhash' };
  if (decoded.version === 0 && len === 32) return { hash160, type: 'witness_v0_scripthash' };
  if (decoded.version === 1 && len === 32) return { hash160, type: 'witness_v1_taproot' };
  return undefined;
}

/**
 * Validates and decodes an address of `net`: base58check with the network's
 * P2PKH/P2SH version (exactly 25 bytes), or bech32/bech32m with its HRP.
 * Undefined for anything else; never throws.
 */
export function decodeAddress(addr: string, net: Network): DecodedAddress | undefined {
  if (typeof addr !== 'string' || addr.length === 0 || addr.length > 90) return undefined;
  const sep = addr.lastIndexOf('1');
  const segwit = sep > 0 && addr.slice(0, sep).toLowerCase() === net.bech32 ? decodeSegwit(addr, net) : undefined;
  return segwit ?? decodeBase58(addr, net);
}
