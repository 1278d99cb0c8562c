/**
 * The Range and If-Range request headers (RFC 9110 §14.1.2, §14.2, §13.1.5) for a GET of a file
 * of known length: pure functions, no I/O.
 *
 * - Only the `bytes` unit (case-insensitive) is understood; any other unit is ignored.
 * - Invalid syntax (including an int-range whose last-pos is below its first-pos) is ignored:
 *   the whole file is sent, as §14.2 permits ("MAY ignore").
 * - One satisfiable range → that range (206). `bytes=0-0` is the first byte, `bytes=-5` the last
 *   five (the whole file when shorter), a last-pos past the end is clamped.
 * - Several ranges → the whole file (200) when at least one is satisfiable: multipart/byteranges
 *   is never sent (simplest correct answer; the files are small and immutable).
 * - No satisfiable range (`bytes=-0`, a first-pos at or past the end) → 416.
 * - An empty file has no byte to send in a 206: a suffix range on it is answered with the whole
 *   (empty) file; an int-range on it is unsatisfiable.
 */

export type RangeDecision =
  /** No Range, or one to ignore: the whole file (200). */
  | { kind: 'whole' }
  /** Bytes `start`..`end` inclusive (206, `Content-Range: bytes start-end/size`). */
  | { kind: 'partial'; start: number; end: number }
  /** 416; its Content-Range gives only the size. */
  | { kind: 'unsatisfiable' };

const WHOLE: RangeDecision = { kind: 'whole' };
const UNSATISFIABLE: RangeDecision = { kind: 'unsatisfiable' };

const INT_RANGE = /^([0-9]+)-([0-9]*)$/;
const SUFFIX_RANGE = /^-([0-9]+)$/;
/** OWS around list elements (RFC 9110 §5.6.1). */
const OWS = /^[ \t]+|[ \t]+$/g;

/** a < b for decimal digit strings of any length (Number() would round long ones to equal values). */
function digitsLess(a: string, b: string): boolean {
  a = a.replace(/^0+/, '');
  b = b.replace(/^0+/, '');
  return a.length !== b.length ? a.length < b.length : a < b;
}

/**
 * What to send for `range` (the Range header's value; undefined when absent) of a file of `size`
 * bytes. Digit strings of any length are accepted: a huge first-pos is past the end, a huge
 * last-pos or suffix-length is clamped to the file.
 */
export function decideRange(range: string | undefined, size: number): RangeDecision {
  if (range === undefined) return WHOLE;
  const eq = range.indexOf('=');
  if (eq < 0 || range.slice(0, eq).toLowerCase() !== 'bytes') return WHOLE;
  let count = 0;
  let first: RangeDecision | undefined;
  let satisfiable = false;
  for (const element of range.slice(eq + 1).split(',')) {
    const spec = element.replace(OWS, '');
    if (spec === '') continue; // empty list elements are allowed (§5.6.1)
    let d: RangeDecision;
    const int = INT_RANGE.exec(spec);
    if (int) {
      if (int[2] !== '' && digitsLess(int[2]!, int[1]!)) return WHOLE; // invalid (§14.1.2)
      const start = Number(int[1]);
      const last = int[2] === '' ? Infinity : Number(int[2]);
      d = start < size ? { kind: 'partial', start, end: Math.min(last, size - 1) } : UNSATISFIABLE;
    } else {
      const suffix = SUFFIX_RANGE.exec(spec);
      if (!suffix) return WHOLE;
      const n = Number(suffix[1]);
      d = n === 0 ? UNSATISFIABLE : size === 0 ? WHOLE : { kind: 'partial', start: Math.max(0, size - n), end: size - 1 };
    }
    if (d.kind !== 'unsatisfiable') satisfiable = true;
    first ??= d;
    count++;
  }
  if (count === 0) return WHOLE; // `bytes=` or `bytes=,`: no range-spec, invalid
  if (!satisfiable) return UNSATISFIABLE;
  return count === 1 ? first! : WHOLE;
}

/**
 * Whether If-Range (§13.1.5) lets the Range be applied: true when absent; an entity-tag must
 * match `etag` strongly (a weak ETag never does); an HTTP-date must equal `lastModified` exactly
 * and that date must be strong, i.e. at least a second before `now` (§8.8.2.2).
 */
export function ifRangeAllows(ifRange: string | undefined, etag: string, lastModified: string, mtimeMs: number, now: number): boolean {
  if (ifRange === undefined) return true;
  const v = ifRange.trim();
  if (v.startsWith('"') || v.startsWith('W/')) return !etag.startsWith('W/') && v === etag;
  return v === lastModified && now - mtimeMs >= 1000;
}
