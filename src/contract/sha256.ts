/**
 * SHA-256 in plain JS (FIPS 180-4), synchronous and dependency-free, so the router, the
 * name-path encoding and the pack's directory keys run unchanged in edge runtimes (Netlify,
 * Cloudflare) where node:crypto is absent and WebCrypto is async. Inputs here are short (paths,
 * names ≤ 255 bytes, addresses) and hashed by the hundred thousand when a pack is written: the
 * words are kept as int32 in preallocated arrays and the input is read in place (no padded copy
 * of it), which makes a short input cost well under a microsecond — less than a node:crypto call.
 */

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const INITIAL = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);

/** The running hash, the message schedule and the padded last block(s): reused by every call (no call is ever interleaved with another). */
const H = new Int32Array(8);
const W = new Int32Array(64);
const TAIL = new Uint8Array(128);

/** Mixes the 64-byte block of `b` at `at` into H. */
function compress(b: Uint8Array, at: number): void {
  for (let i = 0; i < 16; i++, at += 4) W[i] = (b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!;
  for (let i = 16; i < 64; i++) {
    const x = W[i - 15]!;
    const y = W[i - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0;
  }
  let a = H[0]!, b2 = H[1]!, c = H[2]!, d = H[3]!, e = H[4]!, f = H[5]!, g = H[6]!, h = H[7]!;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b2) ^ (a & c) ^ (b2 & c))) | 0;
    h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b2; b2 = a; a = (t1 + t2) | 0;
  }
  H[0] = (H[0]! + a) | 0; H[1] = (H[1]! + b2) | 0; H[2] = (H[2]! + c) | 0; H[3] = (H[3]! + d) | 0;
  H[4] = (H[4]! + e) | 0; H[5] = (H[5]! + f) | 0; H[6] = (H[6]! + g) | 0; H[7] = (H[7]! + h) | 0;
}

/** SHA-256 digest of `data` (32 bytes). */
export function sha256(data: Uint8Array): Uint8Array {
  H.set(INITIAL);
  const len = data.length;
  const whole = len - (len % 64);
  for (let at = 0; at < whole; at += 64) compress(data, at);
  // The rest, 0x80, zeros and the length in bits (big-endian, 64 bits): one block or two.
  const rest = len - whole;
  const tail = rest + 9 > 64 ? 128 : 64;
  TAIL.fill(0);
  TAIL.set(data.subarray(whole), 0);
  TAIL[rest] = 0x80;
  const hi = Math.floor(len / 0x20000000);
  const lo = (len * 8) >>> 0;
  for (let i = 0; i < 4; i++) {
    TAIL[tail - 8 + i] = hi >>> (24 - 8 * i);
    TAIL[tail - 4 + i] = lo >>> (24 - 8 * i);
  }
  compress(TAIL, 0);
  if (tail === 128) compress(TAIL, 64);
  const out = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    const v = H[i]!;
    out[i * 4] = v >>> 24;
    out[i * 4 + 1] = v >>> 16;
    out[i * 4 + 2] = v >>> 8;
    out[i * 4 + 3] = v;
  }
  return out;
}

/** Lowercase hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += (bytes[i]! < 16 ? '0' : '') + bytes[i]!.toString(16);
  return s;
}
