/**
 * Synchronous, dependency-free address validation for the router (edge runtimes included):
 * base58check with the network's P2PKH/P2SH versions, and bech32 (witness v0) / bech32m
 * (v1..16) segwit addresses with the network's HRP (BIP 173 / BIP 350).
 */
import { sha256 } from './sha256.js';

export interface AddressParams {
  pubKeyHash: number;
  scriptHash: number | undefined;
  bech32: string;
}

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B58_MAP = (() => {
  const m = new Int8Array(128).fill(-1);
  for (let i = 0; i < B58.length; i++) m[B58.charCodeAt(i)] = i;
  return m;
})();

/** base58 → bytes (leading '1' → 0x00), or undefined on a character outside the alphabet. */
export function base58Decode(s: string): Uint8Array | undefined {
  if (s.length === 0 || s.length > 128) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const v = c < 128 ? B58_MAP[c]! : -1;
    if (v < 0) return undefined;
    let carry = v;
    for (let j = 0; j < bytes.length; j++) {
      carry += bytes[j]! * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  let zeros = 0;
  while (zeros < s.length && s[zeros] === '1') zeros++;
  const out = new Uint8Array(zeros + bytes.length);
  for (let i = 0; i < bytes.length; i++) out[out.length - 1 - i] = bytes[i]!;
  return out;
}

function isBase58Address(addr: string, net: AddressParams): boolean {
  const b = base58Decode(addr);
  if (!b || b.length !== 25) return false;
  if (b[0] !== net.pubKeyHash && (net.scriptHash === undefined || b[0] !== net.scriptHash)) return false;
  const check = sha256(sha256(b.subarray(0, 21)));
  for (let i = 0; i < 4; i++) if (check[i] !== b[21 + i]) return false;
  return true;
}

const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const GEN = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
const BECH32_CONST = 1;
const BECH32M_CONST = 0x2bc830a3;

function polymod(values: number[]): number {
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= GEN[i]!;
  }
  return chk >>> 0;
}

function convertBits(data: number[], from: number, to: number): number[] | undefined {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  const maxv = (1 << to) - 1;
  for (const v of data) {
    acc = (acc << from) | v;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((acc >>> bits) & maxv);
    }
  }
  if (bits >= from || ((acc << (to - bits)) & maxv) !== 0) return undefined;
  return out;
}

/** Segwit address check (BIP 173/350); `addr` may be all lower or all upper case. */
function isSegwitAddress(addr: string, hrp: string): boolean {
  if (addr.length < 8 || addr.length > 90) return false;
  const lower = addr.toLowerCase();
  if (addr !== lower && addr !== addr.toUpperCase()) return false;
  const sep = lower.lastIndexOf('1');
  if (sep < 1 || sep + 7 > lower.length) return false;
  if (lower.slice(0, sep) !== hrp) return false;
  const data: number[] = [];
  for (let i = sep + 1; i < lower.length; i++) {
    const v = BECH32_CHARSET.indexOf(lower[i]!);
    if (v < 0) return false;
    data.push(v);
  }
  const hrpExp: number[] = [];
  for (let i = 0; i < hrp.length; i++) hrpExp.push(hrp.charCodeAt(i) >> 5);
  hrpExp.push(0);
  for (let i = 0; i < hrp.length; i++) hrpExp.push(hrp.charCodeAt(i) & 31);
  const pm = polymod([...hrpExp, ...data]);
  const version = data[0]!;
  if (version > 16) return false;
  if (pm !== (version === 0 ? BECH32_CONST : BECH32M_CONST)) return false;
  const prog = convertBits(data.slice(1, -6), 5, 8);
  if (!prog || prog.length < 2 || prog.length > 40) return false;
  if (version === 0 && prog.length !== 20 && prog.length !== 32) return false;
  return true;
}

/**
 * The form of `addr` the build writes files under (bech32 lower-cased), or undefined if the
 * address is not valid for the network.
 */
export function canonicalAddress(addr: string, net: AddressParams): string | undefined {
  if (isBase58Address(addr, net)) return addr;
  if (isSegwitAddress(addr, net.bech32)) return addr.toLowerCase();
  return undefined;
}
