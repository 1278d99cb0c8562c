/** Target encoded by compact `bits` (negative or overflowing targets give 0n). */
export function bitsToTarget(bits: number): bigint {
  const exponent = bits >>> 24;
  const mantissa = bits & 0x007fffff;
  if (bits & 0x00800000) return 0n;
  return exponent <= 3 ? BigInt(mantissa >>> (8 * (3 - exponent))) : BigInt(mantissa) << BigInt(8 * (exponent - 3));
}

/** Work of one block as Bitcoin Core's GetBlockProof: 2^256 / (target + 1). */
export function blockWork(bits: number): bigint {
  const target = bitsToTarget(bits);
  if (target === 0n) return 0n;
  return (1n << 256n) / (target + 1n);
}
