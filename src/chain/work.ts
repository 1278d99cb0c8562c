/** Target encoded by compact `bits` (negative or overflowing targets give 0n). */
export function bitsToTarget(bits: number): bigint {
  const { target, negative, overflow } = decodeCompact(bits);
  return negative || overflow ? 0n : target;
}

/**
 * Compact `bits` decoded exactly as Bitcoin Core's arith_uint256::SetCompact: a 3-byte
 * mantissa (sign bit 0x00800000) times 256^(exponent − 3). `negative` and `overflow` (more
 * than 256 bits) are Core's flags; a block whose bits set either has no valid target.
 */
export function decodeCompact(bits: number): { target: bigint; negative: boolean; overflow: boolean } {
  const size = bits >>> 24;
  let word = bits & 0x007fffff;
  let target: bigint;
  if (size <= 3) {
    word >>>= 8 * (3 - size);
    target = BigInt(word);
  } else target = BigInt(word) << BigInt(8 * (size - 3));
  const negative = word !== 0 && (bits & 0x00800000) !== 0;
  const overflow = word !== 0 && (size > 34 || (word > 0xff && size > 33) || (word > 0xffff && size > 32));
  return { target, negative, overflow };
}

/** Work of one block as Bitcoin Core's GetBlockProof: 2^256 / (target + 1). */
export function blockWork(bits: number): bigint {
  const target = bitsToTarget(bits);
  if (target === 0n) return 0n;
  return (1n << 256n) / (target + 1n);
}
