const COIN = 100_000_000n;

/**
 * The original's `"%.8f" % (value / 1e8)` for an amount in base units, computed
 * with integer arithmetic so it stays exact for any 64-bit value.
 */
export function formatValue(v: bigint): string {
  const neg = v < 0n;
  const abs = neg ? -v : v;
  const frac = (abs % COIN).toString().padStart(8, '0');
  return `${neg ? '-' : ''}${abs / COIN}.${frac}`;
}
