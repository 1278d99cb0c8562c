/**
 * Bytes and text in the browsing UI (no DOM): name bytes ↔ text exactly as the build decodes
 * them, the `#/name/` route encoding, and name operations read from a script's ASM text (the
 * API gives scripts as ASM, the form src/chain/name-script.ts parses is the script's bytes).
 */
import { nameBytesToText } from '../chain/name-text.js';
import { decodeNamePathBytes, encodeNamePath } from '../contract/name-path.js';

const HEX = '0123456789ABCDEF';
const encoder = new TextEncoder();

export function utf8Bytes(s: string): Uint8Array {
  return encoder.encode(s);
}

export function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

export function isUtf8(b: Uint8Array): boolean {
  return nameBytesToText(b).utf8;
}

/**
 * As the build decodes names and values (the same function, src/chain/name-text.ts): UTF-8 with
 * a leading BOM kept, else Latin-1 (each byte one U+00XX).
 */
export function bytesToText(b: Uint8Array): string {
  return nameBytesToText(b).text;
}

/** The bytes of a string of U+0000–U+00FF characters (Latin-1); null when it has others. */
export function latin1Bytes(s: string): Uint8Array | null {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 255) return null;
    out[i] = c;
  }
  return out;
}

function isSafeByte(b: number): boolean {
  return (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b === 45 || b === 46 || b === 95;
}

/** Name bytes in a `#/name/` route: safe bytes and '/' as they are, everything else %XX. */
export function pctEncodeBytes(b: Uint8Array): string {
  let s = '';
  for (const c of b) s += isSafeByte(c) || c === 47 ? String.fromCharCode(c) : '%' + HEX[c >> 4]! + HEX[c & 15]!;
  return s;
}

/** Inverse of {@link pctEncodeBytes}, lenient: stray characters count as their UTF-8 bytes. */
export function pctDecodeBytes(s: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    if (s.charAt(i) === '%' && /^[0-9A-Fa-f]{2}$/.test(s.substr(i + 1, 2))) {
      out.push(parseInt(s.substr(i + 1, 2), 16));
      i += 2;
    } else {
      const cp = s.codePointAt(i)!;
      out.push(...encoder.encode(String.fromCodePoint(cp)));
      if (cp > 0xffff) i++;
    }
  }
  return new Uint8Array(out);
}

/**
 * The bytes of a name given as its text (decoded as the build decodes it) and its canonical
 * path (as in names.json): the path's own bytes, or for the long-name hash form the text's
 * UTF-8 or Latin-1 bytes, whichever encodes to that path. Null when neither does.
 */
export function nameBytesOf(text: string, path: string): Uint8Array | null {
  const direct = decodeNamePathBytes(path);
  if (direct && encodeNamePath(direct) === path) return direct;
  for (const b of [utf8Bytes(text), latin1Bytes(text)]) if (b && encodeNamePath(b) === path) return b;
  return null;
}

// ---------------------------------------------------------------------------------------------
// Name operations in ASM

/** Bytes of one ASM token when it is a data push ("0", hex, or "<mark>:<len>:<hex>"); else null. */
function pushBytes(tok: string): Uint8Array | null {
  if (tok === '0') return new Uint8Array(0);
  const m = /^\d+:\d+:([0-9a-f]*)$/.exec(tok);
  if (m) return hexToBytes(m[1]!);
  if (/^([0-9a-f]{2})+$/.test(tok)) return hexToBytes(tok);
  return null;
}

const NAME_OPS: Readonly<Record<string, readonly [NameOpKind, number]>> = {
  '1': ['name_new', 1],
  '2': ['name_firstupdate', 3],
  '3': ['name_update', 2],
};
const DROPS = new Set(['OP_DROP', 'OP_2DROP', 'OP_NOP']);

export type NameOpKind = 'name_new' | 'name_firstupdate' | 'name_update';

export interface NameOp {
  op: NameOpKind;
  /** name_firstupdate and name_update. */
  name?: Uint8Array;
  value?: Uint8Array;
}

/**
 * A Namecoin name operation at the front of an output script given as ASM, by the rule of
 * Namecoin Core's CNameScript (src/chain/name-script.ts): OP_1/2/3, exactly 1/3/2 data pushes, then
 * OP_DROP/OP_2DROP/OP_NOP. Only transactions of version 0x7100 carry name operations: pass the
 * version when it is known.
 */
export function nameOpOfAsm(asm: unknown, txVersion?: number): NameOp | null {
  if (typeof asm !== 'string' || (txVersion !== undefined && txVersion !== 0x7100)) return null;
  const t = asm.split(' ');
  const kind = NAME_OPS[t[0]!];
  if (!kind) return null;
  const args: Uint8Array[] = [];
  for (let i = 1; i < t.length; i++) {
    if (DROPS.has(t[i]!)) {
      if (args.length !== kind[1]) return null;
      if (kind[0] === 'name_new') return { op: 'name_new' };
      return { op: kind[0], name: args[0]!, value: args[args.length - 1]! };
    }
    const b = pushBytes(t[i]!);
    if (!b || args.length === kind[1]) return null;
    args.push(b);
  }
  return null;
}

/** A short label for an output that has no address. */
export function scriptKind(asm: unknown): string {
  if (typeof asm !== 'string') return 'unknown';
  if (asm === 'OP_RETURN' || asm.startsWith('OP_RETURN ')) return 'OP_RETURN data';
  if (/ OP_CHECKMULTISIG$/.test(asm)) return 'multisig';
  return 'non-standard';
}
