/**
 * Pure formatting helpers of the browsing UI (no DOM): amounts, counts, times, sizes, and text
 * made safe to show. Unit-tested under node (test/ui-helpers.test.ts).
 */

const HEX = '0123456789ABCDEF';

/** "1234567" → "1,234,567" (digits only; no sign handling). */
export function group(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function fmtInt(n: number | bigint | string): string {
  const s = String(n);
  return s.startsWith('-') ? '-' + group(s.slice(1)) : group(s);
}

/** Base units (integer, number or digit string) → "12.34500000". */
export function unitsToDecimal(n: number | bigint | string): string {
  let s = String(n);
  const neg = s.startsWith('-');
  if (neg) s = s.slice(1);
  s = s.padStart(9, '0');
  return `${neg ? '-' : ''}${s.slice(0, -8)}.${s.slice(-8)}`;
}

/** "12.34500000" → base units (a Number; exact below 2^53, which every real amount is). */
export function decimalToUnits(v: string): number {
  const neg = v.startsWith('-');
  const s = neg ? v.slice(1) : v;
  const [ip = '0', fp = ''] = s.split('.');
  const n = Number(ip || '0') * 1e8 + Number((fp + '00000000').slice(0, 8));
  return neg ? -n : n;
}

/** The pieces an amount is shown with: sign, grouped integer part, significant fraction, trailing zeros. */
export interface AmountParts {
  neg: boolean;
  int: string;
  /** Fraction digits up to the last non-zero one ('' when the fraction is all zeros). */
  frac: string;
  /** The fraction's trailing zeros (shown faint). */
  zeros: string;
}

/** A decimal amount ("-5575.00460000") → its display pieces; every digit is kept. */
export function amountParts(v: string): AmountParts {
  const neg = v.startsWith('-');
  const s = neg ? v.slice(1) : v;
  const dot = s.indexOf('.');
  const ip = dot < 0 ? s : s.slice(0, dot);
  const fp = dot < 0 ? '' : s.slice(dot + 1);
  const frac = fp.replace(/0+$/, '');
  return { neg, int: group(ip || '0'), frac, zeros: fp.slice(frac.length) };
}

/** Whole-coin style (overview tiles): trailing fractional zeros dropped, "21,000,000" or "0.5". */
export function amountShortText(units: number | bigint | string): string {
  const { neg, int, frac } = amountParts(unitsToDecimal(units));
  return (neg ? '\u2212' : '') + int + (frac ? '.' + frac : '');
}

/** Coin unit of a network name. */
export function unitOf(network: string): string {
  return network.startsWith('namecoin') ? 'NMC' : network.startsWith('bitcoin') ? 'BTC' : '';
}

/** Confirmations of a main-chain block or tx at `height` in a snapshot whose tip is at `tipHeight`. */
export function confirmations(tipHeight: number, height: number): number {
  return tipHeight - height + 1;
}

function pad2(n: number): string {
  return (n < 10 ? '0' : '') + n;
}

/** "YYYY-MM-DD HH:MM:SS" in UTC (the API's own time format). */
export function utcText(d: Date): string {
  return `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
}

/** "5 min ago", "in 2 h", "3.1 y ago". */
export function relative(ms: number, now: number): string {
  let s = Math.round((now - ms) / 1000);
  const future = s < 0;
  s = Math.abs(s);
  const t =
    s < 60 ? `${s} s` : s < 3600 ? `${Math.round(s / 60)} min` : s < 86400 ? `${Math.round(s / 3600)} h` : s < 86400 * 365 ? `${Math.round(s / 86400)} d` : `${(s / (86400 * 365.25)).toFixed(1)} y`;
  return future ? `in ${t}` : `${t} ago`;
}

/** Unix seconds or the API's "YYYY-MM-DD HH:MM:SS" (UTC) → a Date (invalid when neither). */
export function parseTime(v: number | string): Date {
  return typeof v === 'number' ? new Date(v * 1000) : new Date(String(v).replace(' ', 'T') + 'Z');
}

/** 1234 → "1.23 kB" (decimal units). */
export function bytesHuman(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let i = -1;
  do {
    n /= 1000;
    i++;
  } while (n >= 1000 && i < units.length - 1);
  return `${n.toFixed(n < 10 ? 2 : 1)} ${units[i]}`;
}

/** A big integer as digits → grouped when short, else "1.234 × 10^20". */
export function bigHuman(digits: string): string {
  if (digits.length <= 15) return group(digits);
  return `${digits.charAt(0)}.${digits.slice(1, 4)} \u00d7 10^${digits.length - 1}`;
}

/** Control characters made visible as \xNN (names and values may hold any bytes). */
export function visible(s: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point here
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => {
    const n = c.charCodeAt(0);
    return '\\x' + HEX[n >> 4]! + HEX[n & 15]!;
  });
}

/** A name as a one-line label. */
export function showName(s: string): string {
  return s === '' ? '(empty name)' : visible(s).replace(/\n/g, '\\n');
}
