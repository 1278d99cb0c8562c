/**
 * Name → path encoding (docs/api.md, "Sending a name"): the canonical file path of a name below
 * `name/`. Pure and dependency-free (no Buffer, no node: imports) so that the router, the
 * edge-runtime bundles and the browsing UI in the browser all run this one implementation.
 */
import { sha256, toHex } from './sha256.js';

/** Longest segment (before `.json`) and whole path (before `.json`) the plain encoding may produce. */
const MAX_SEGMENT = 250 - '.json'.length;
const MAX_PATH = 900 - '.json'.length;
const HEX_UPPER = '0123456789ABCDEF';

function isCopied(b: number): boolean {
  return (
    (b >= 0x30 && b <= 0x39) || // 0-9
    (b >= 0x41 && b <= 0x5a) || // A-Z
    (b >= 0x61 && b <= 0x7a) || // a-z
    b === 0x5f || // _
    b === 0x2d // -
  );
}

function escapeByte(b: number): string {
  return '~' + HEX_UPPER[b >> 4]! + HEX_UPPER[b & 15]!;
}

/**
 * Canonical path (without `.json`) of a name below `name/`: `[A-Za-z0-9._~-]` and `/` only, no
 * empty or dot-leading segments, no non-final `*.json` segment, injective. Long names use
 * `~x/<sha256[0:2]>/<sha256 hex>`.
 */
export function encodeNamePath(name: Uint8Array): string {
  if (name.length === 0) return '~';
  const segments: string[] = [];
  let seg = '';
  for (let i = 0; i < name.length; i++) {
    const b = name[i]!;
    if (b === 0x2f) {
      // '/' separates only after a non-empty segment and when it is not the last byte.
      if (seg !== '' && i !== name.length - 1) {
        segments.push(seg);
        seg = '';
      } else {
        seg += '~2F';
      }
    } else if (isCopied(b)) {
      seg += String.fromCharCode(b);
    } else if (b === 0x2e) {
      seg += seg === '' ? '~2E' : '.';
    } else {
      seg += escapeByte(b);
    }
  }
  segments.push(seg);
  for (let i = 0; i < segments.length - 1; i++) {
    const s = segments[i]!;
    if (s.endsWith('.json')) segments[i] = s.slice(0, -5) + '~2Ejson';
  }
  const p = segments.join('/');
  if (p.length > MAX_PATH || segments.some((s) => s.length > MAX_SEGMENT)) {
    const h = toHex(sha256(name));
    return `~x/${h.slice(0, 2)}/${h}`;
  }
  return p;
}

/** The long-name form `~x/<sha256[0:2]>/<sha256 hex>`. */
export const HASH_FORM = /^~x\/([0-9a-f]{2})\/([0-9a-f]{64})$/;

function hexVal(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1; // lowercase hex is not canonical
}

/**
 * Decodes a plain canonical-charset path back to name bytes (no canonicity check; the
 * `~x/...` hash form is not reversible → undefined). Dependency-free (no Buffer).
 */
export function decodeNamePathBytes(p: string): Uint8Array | undefined {
  if (p === '~') return new Uint8Array(0);
  if (p === '' || HASH_FORM.test(p)) return undefined;
  const out = new Uint8Array(p.length);
  let n = 0;
  for (let i = 0; i < p.length; i++) {
    const c = p.charCodeAt(i);
    if (c === 0x7e) {
      if (i + 2 >= p.length) return undefined;
      const hi = hexVal(p.charCodeAt(i + 1));
      const lo = hexVal(p.charCodeAt(i + 2));
      if (hi < 0 || lo < 0) return undefined;
      out[n++] = (hi << 4) | lo;
      i += 2;
    } else if (c === 0x2f || c === 0x2e || isCopied(c)) {
      out[n++] = c;
    } else {
      return undefined;
    }
  }
  return out.subarray(0, n);
}
