import { createHash } from 'node:crypto';

export function sha256(data: Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

/** Double SHA-256, the hash of headers, transactions and merkle nodes. */
export function sha256d(data: Uint8Array): Buffer {
  return createHash('sha256').update(createHash('sha256').update(data).digest()).digest();
}

/** sha256d over several slices without concatenating them first. */
export function sha256dParts(parts: readonly Uint8Array[]): Buffer {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return createHash('sha256').update(h.digest()).digest();
}

export function hash160(data: Uint8Array): Buffer {
  return createHash('ripemd160').update(createHash('sha256').update(data).digest()).digest();
}

/** Internal (little-endian) hash bytes → display hex (byte-reversed). */
export function toDisplayHex(hash: Uint8Array): string {
  return Buffer.from(hash).reverse().toString('hex');
}

/** Display hex → internal byte order. */
export function fromDisplayHex(hex: string): Buffer {
  return Buffer.from(hex, 'hex').reverse();
}
