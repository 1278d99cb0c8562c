/** The JSON value helpers the checks share: field tests, amounts, outpoints, comparison. */

export type Obj = Record<string, unknown>;
export const HEX64 = /^[0-9a-f]{64}$/;
export const ZERO_HASH = '0'.repeat(64);
export const COINBASE_N = 0xffffffff;
export const CAPPED = /^Too many outputs for this address \((\d+)\)$/;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** "50.00000000" → 5000000000n; undefined when malformed. */
export function parseValue(v: unknown): bigint | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^(-?)(\d+)\.(\d{8})$/.exec(v);
  if (!m) return undefined;
  const abs = BigInt(m[2]!) * 100_000_000n + BigInt(m[3]!);
  return m[1] ? -abs : abs;
}

/** An integer field exactly: from the parsed number when safe, else from the document's text. */
export function exactInt(parsed: unknown, text: string, key: string): bigint | undefined {
  if (typeof parsed !== 'number' || !Number.isInteger(parsed)) return undefined;
  if (Number.isSafeInteger(parsed)) return BigInt(parsed);
  const m = new RegExp(`"${key}"\\s*:\\s*(-?\\d+)`).exec(text);
  return m ? BigInt(m[1]!) : undefined;
}

export function outpoint(v: unknown): { hash: string; n: number } | undefined {
  if (!isObj(v) || typeof v.hash !== 'string' || typeof v.n !== 'number') return undefined;
  return { hash: v.hash, n: v.n };
}

export function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A JSON value in a message ('absent' for none). */
export function shown(v: unknown): string {
  return v === undefined ? 'absent' : JSON.stringify(v);
}

/** `a` equals the JSON document `text` (which may be indented). */
export function sameAsText(a: unknown, text: string): boolean {
  try {
    return same(a, JSON.parse(text));
  } catch {
    return false;
  }
}
