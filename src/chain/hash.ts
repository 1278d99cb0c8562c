import { hash } from 'node:crypto';

// crypto.hash (one call, no Hash object) is about twice as fast as createHash for the small inputs here.
export function sha256(data: Uint8Array): Buffer {
  return hash('sha256', data, 'buffer');
}

/** Double SHA-256, the hash of headers, transactions and merkle nodes. */
export function sha256d(data: Uint8Array): Buffer {
  return hash('sha256', hash('sha256', data, 'buffer'), 'buffer');
}

/** sha256d over several slices (concatenated first: cheaper than a streaming Hash object). */
export function sha256dParts(parts: readonly Uint8Array[]): Buffer {
  return sha256d(Buffer.concat(parts));
}

export function hash160(data: Uint8Array): Buffer {
  return hash('ripemd160', hash('sha256', data, 'buffer'), 'buffer');
}

/** Internal (little-endian) hash bytes → display hex (byte-reversed). */
export function toDisplayHex(hash: Uint8Array): string {
  return Buffer.from(hash).reverse().toString('hex');
}

/** Display hex → internal byte order. */
export function fromDisplayHex(hex: string): Buffer {
  return Buffer.from(hex, 'hex').reverse();
}
