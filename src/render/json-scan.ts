/**
 * Byte ranges inside compact JSON documents this program rendered, found without parsing: the
 * splicing of tx, block and address documents (render/tx.ts outElementRanges,
 * pipeline/block-document.ts, pipeline/address-previous.ts) cuts entries out of rendered or
 * previously published bytes. The scan knows JSON strings (a bracket, comma or escaped quote
 * inside a string is skipped) and nothing else: callers check the layout around the ranges.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The end (after its closing bracket) of the object or array that opens at `start`; -1 if cut. */
export function valueEnd(b: Buffer, start: number): number {
  let depth = 0;
  for (let i = start; i < b.length; i++) {
    const c = b[i]!;
    if (c === QUOTE) {
      // Jump to the closing quote: the next quote not escaped by an odd run of backslashes.
      for (;;) {
        i = b.indexOf(QUOTE, i + 1);
        if (i < 0) return -1;
        let k = i - 1;
        while (b[k] === BACKSLASH) k--;
        if ((i - 1 - k) % 2 === 0) break;
      }
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) return i + 1;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

/**
 * [start, end) of each element of the array of objects or arrays whose first element (or `]`)
 * is at `from` (just after its `[`), one pair per element; undefined when the array is cut or an
 * element is not an object or array.
 */
export function arrayElementRanges(b: Buffer, from: number): number[] | undefined {
  const ranges: number[] = [];
  let p = from;
  if (b[p] === 0x5d) return ranges;
  for (;;) {
    if (b[p] !== 0x7b && b[p] !== 0x5b) return undefined;
    const end = valueEnd(b, p);
    if (end < 0) return undefined;
    ranges.push(p, end);
    if (b[end] === 0x5d) return ranges;
    if (b[end] !== 0x2c) return undefined;
    p = end + 1;
  }
}
