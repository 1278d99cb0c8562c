import { hash160 } from './hash.js';
import { parseNameScript } from './name-script.js';

/**
 * Script parsing, ASM text and type classification as the original system
 * (bitcoin-ruby@next `Bitcoin::Script`) did it, plus BIP141 witness programs
 * and Namecoin name operations.
 */

export const OP_0 = 0x00;
export const OP_PUSHDATA1 = 0x4c;
export const OP_PUSHDATA2 = 0x4d;
export const OP_PUSHDATA4 = 0x4e;
export const OP_1 = 0x51;
export const OP_16 = 0x60;
export const OP_NOP = 0x61;
export const OP_RETURN = 0x6a;
export const OP_2DROP = 0x6d;
export const OP_DROP = 0x75;
export const OP_DUP = 0x76;
export const OP_EQUAL = 0x87;
export const OP_EQUALVERIFY = 0x88;
export const OP_HASH160 = 0xa9;
export const OP_CODESEPARATOR = 0xab;
export const OP_CHECKSIG = 0xac;
export const OP_CHECKMULTISIG = 0xae;

/** Mark of a push that could not be parsed: the chunk is the whole script. */
export const MARK_INVALID = 238;

export interface PushChunk {
  /** The pushed bytes (a view into the script); may be shorter than `markLen` for marked pushes. */
  data: Buffer;
  /**
   * bitcoin-ruby's `bitcoin_pushdata` marker: 0 for a 1-byte push of a value
   * ≤ 0x16, 76/77/78 for a PUSHDATA1/2/4 outside its canonical length range,
   * 238 for a parse error. Undefined for ordinary pushes.
   */
  mark?: number;
  /** The declared length, set with `mark`. */
  markLen?: number;
}

/** An opcode (number) or a data push. */
export type Chunk = number | PushChunk;

export type ScriptType =
  | 'unknown'
  | 'pubkey'
  | 'pubkey_hash'
  | 'multisig'
  | 'script_hash'
  | 'op_return'
  | 'witness_v0_keyhash'
  | 'witness_v0_scripthash'
  | 'witness_v1_taproot'
  | 'witness_unknown'
  | 'name_new'
  | 'name_firstupdate'
  | 'name_update';

/** The original's SCRIPT_TYPES, in its order (the index was the stored type id). */
export const SCRIPT_TYPES_BASE = ['unknown', 'pubkey', 'pubkey_hash', 'multisig', 'script_hash', 'op_return'] as const satisfies readonly ScriptType[];
export const SCRIPT_TYPES_SEGWIT = ['witness_v0_keyhash', 'witness_v0_scripthash', 'witness_v1_taproot', 'witness_unknown'] as const satisfies readonly ScriptType[];
export const SCRIPT_TYPES_NAME = ['name_new', 'name_firstupdate', 'name_update'] as const satisfies readonly ScriptType[];

export function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

export function isPush(c: Chunk | undefined): c is PushChunk {
  return typeof c === 'object';
}

/**
 * bitcoin-ruby's `Script#parse`, quirks included: 1-byte pushes of 0x00..0x16
 * and PUSHDATA1/2/4 outside their canonical ranges are marked (and may be
 * short); a truncated push ends parsing with one chunk holding the entire
 * script, marked 238.
 */
export function parseScript(script: Uint8Array): Chunk[] {
  const s = asBuffer(script);
  const n = s.length;
  const chunks: Chunk[] = [];
  let i = 0;
  while (i < n) {
    const op = s[i++]!;
    if (op === 0 || op > OP_PUSHDATA4) {
      chunks.push(op);
      continue;
    }
    let len: number;
    let minLen: number;
    let maxLen: number;
    if (op < OP_PUSHDATA1) {
      len = op;
      minLen = maxLen = -1;
    } else {
      const w = op === OP_PUSHDATA1 ? 1 : op === OP_PUSHDATA2 ? 2 : 4;
      // Missing length bytes: Ruby fails on the nil length before pushing anything.
      if (n - i < w) return invalid(chunks, s);
      len = w === 1 ? s[i]! : w === 2 ? s.readUInt16LE(i) : s.readUInt32LE(i);
      i += w;
      minLen = w === 1 ? OP_PUSHDATA1 + 1 : w === 2 ? 0x100 : 0x10000;
      maxLen = w === 1 ? 0xff : w === 2 ? 0xffff : Infinity;
    }
    const end = Math.min(i + len, n);
    const data = s.subarray(i, end);
    i = end;
    if (op < OP_PUSHDATA1) {
      if (op === 1 && data.length === 1 && data[0]! <= 0x16) chunks.push({ data, mark: 0, markLen: 1 });
      else if (data.length !== len) return invalid(chunks, s);
      else chunks.push({ data });
    } else if (!(len >= minLen && len <= maxLen)) {
      chunks.push({ data, mark: op, markLen: len });
    } else if (data.length !== len) {
      return invalid(chunks, s);
    } else {
      chunks.push({ data });
    }
  }
  return chunks;
}

function invalid(chunks: Chunk[], s: Buffer): Chunk[] {
  chunks.push({ data: s, mark: MARK_INVALID, markLen: s.length });
  return chunks;
}

const NAMED_OPCODES: Readonly<Record<number, string>> = {
  0x4c: 'OP_PUSHDATA1', 0x4d: 'OP_PUSHDATA2', 0x4e: 'OP_PUSHDATA4', 0x4f: 'OP_1NEGATE',
  0x61: 'OP_NOP', 0x62: 'OP_VER', 0x63: 'OP_IF', 0x64: 'OP_NOTIF', 0x67: 'OP_ELSE', 0x68: 'OP_ENDIF',
  0x69: 'OP_VERIFY', 0x6a: 'OP_RETURN', 0x6b: 'OP_TOALTSTACK', 0x6c: 'OP_FROMALTSTACK', 0x6d: 'OP_2DROP',
  0x6e: 'OP_2DUP', 0x6f: 'OP_3DUP', 0x70: 'OP_2OVER', 0x71: 'OP_2ROT', 0x72: 'OP_2SWAP', 0x73: 'OP_IFDUP',
  0x74: 'OP_DEPTH', 0x75: 'OP_DROP', 0x76: 'OP_DUP', 0x77: 'OP_NIP', 0x78: 'OP_OVER', 0x79: 'OP_PICK',
  0x7a: 'OP_ROLL', 0x7b: 'OP_ROT', 0x7c: 'OP_SWAP', 0x7d: 'OP_TUCK', 0x7e: 'OP_CAT', 0x7f: 'OP_SUBSTR',
  0x80: 'OP_LEFT', 0x81: 'OP_RIGHT', 0x82: 'OP_SIZE', 0x83: 'OP_INVERT', 0x84: 'OP_AND', 0x85: 'OP_OR',
  0x86: 'OP_XOR', 0x87: 'OP_EQUAL', 0x88: 'OP_EQUALVERIFY', 0x8b: 'OP_1ADD', 0x8c: 'OP_1SUB',
  0x8d: 'OP_2MUL', 0x8e: 'OP_2DIV', 0x8f: 'OP_NEGATE', 0x90: 'OP_ABS', 0x91: 'OP_NOT', 0x92: 'OP_0NOTEQUAL',
  0x93: 'OP_ADD', 0x94: 'OP_SUB', 0x95: 'OP_MUL', 0x96: 'OP_DIV', 0x97: 'OP_MOD', 0x98: 'OP_LSHIFT',
  0x99: 'OP_RSHIFT', 0x9a: 'OP_BOOLAND', 0x9b: 'OP_BOOLOR', 0x9c: 'OP_NUMEQUAL', 0x9d: 'OP_NUMEQUALVERIFY',
  0x9e: 'OP_NUMNOTEQUAL', 0x9f: 'OP_LESSTHAN', 0xa0: 'OP_GREATERTHAN', 0xa1: 'OP_LESSTHANOREQUAL',
  0xa2: 'OP_GREATERTHANOREQUAL', 0xa3: 'OP_MIN', 0xa4: 'OP_MAX', 0xa5: 'OP_WITHIN', 0xa6: 'OP_RIPEMD160',
  0xa7: 'OP_SHA1', 0xa8: 'OP_SHA256', 0xa9: 'OP_HASH160', 0xaa: 'OP_HASH256', 0xab: 'OP_CODESEPARATOR',
  0xac: 'OP_CHECKSIG', 0xad: 'OP_CHECKSIGVERIFY', 0xae: 'OP_CHECKMULTISIG', 0xaf: 'OP_CHECKMULTISIGVERIFY',
  0xb0: 'OP_NOP1', 0xb1: 'OP_NOP2', 0xb2: 'OP_NOP3', 0xb3: 'OP_NOP4', 0xb4: 'OP_NOP5', 0xb5: 'OP_NOP6',
  0xb6: 'OP_NOP7', 0xb7: 'OP_NOP8', 0xb8: 'OP_NOP9', 0xb9: 'OP_NOP10', 0xee: 'OP_PUSHDATA_INVALID',
  0xff: 'OP_INVALIDOPCODE',
};

/** Text of every opcode byte: bitcoin-ruby's OPCODES_PARSE_BINARY, `(opcode-N)` where it has none. */
const OPCODE_TEXT: readonly string[] = Array.from({ length: 256 }, (_, op) => {
  if (op === 0) return '0';
  if (op >= OP_1 && op <= OP_16) return String(op - 0x50);
  return NAMED_OPCODES[op] ?? `(opcode-${op})`;
});

export function opcodeText(op: number): string {
  return OPCODE_TEXT[op] ?? `(opcode-${op})`;
}

export function chunkText(c: Chunk): string {
  if (typeof c === 'number') return opcodeText(c);
  const hex = c.data.toString('hex');
  return c.mark === undefined ? hex : `${c.mark}:${c.markLen}:${hex}`;
}

/** bitcoin-ruby@next `Script#to_string`: chunks joined by single spaces; "" for an empty script. */
export function scriptToAsm(script: Uint8Array): string {
  return parseScript(script).map(chunkText).join(' ');
}

/** BIP141 witness program: OP_0 or OP_1..OP_16, then one direct push of 2..40 bytes, nothing else. */
function witnessType(s: Uint8Array): ScriptType | undefined {
  const n = s.length;
  if (n < 4 || n > 42 || s[1]! + 2 !== n) return undefined;
  const v = s[0]!;
  if (v === OP_0) return n === 22 ? 'witness_v0_keyhash' : n === 34 ? 'witness_v0_scripthash' : 'witness_unknown';
  if (v === OP_1 && n === 34) return 'witness_v1_taproot';
  return v >= OP_1 && v <= OP_16 ? 'witness_unknown' : undefined;
}

/** The common templates by direct byte comparison; undefined when the full parse is needed. */
function templateType(s: Uint8Array): ScriptType | undefined {
  const n = s.length;
  if (n === 25) {
    if (s[0] === OP_DUP && s[1] === OP_HASH160 && s[2] === 20 && s[23] === OP_EQUALVERIFY && s[24] === OP_CHECKSIG) return 'pubkey_hash';
  } else if (n === 23) {
    if (s[0] === OP_HASH160 && s[1] === 20 && s[22] === OP_EQUAL) return 'script_hash';
  } else if (n === 35 || n === 67) {
    if (s[0] === n - 2 && s[n - 1] === OP_CHECKSIG) return 'pubkey';
  }
  // A witness program is two chunks <op> <push>, which none of the original's six rules accept.
  return witnessType(s);
}

/**
 * bitcoin-ruby's `cast_to_string` of a chunk: an opcode number becomes its
 * OpenSSL MPI bytes reversed (0 → empty).
 */
function chunkBytes(c: Chunk | undefined): Buffer {
  if (c === undefined) return Buffer.alloc(0);
  if (typeof c === 'object') return c.data;
  if (c === 0) return Buffer.alloc(0);
  return c < 0x80 ? Buffer.from([c]) : Buffer.from([c, 0]);
}

/** The original's `Script#type` (webbtc-api.md §3.3) over parsed chunks. */
function chunksType(c: readonly Chunk[]): ScriptType {
  const n = c.length;
  const c2 = c[2];
  if (n === 5 && c[0] === OP_DUP && c[1] === OP_HASH160 && isPush(c2) && c2.data.length === 20 && c[3] === OP_EQUALVERIFY && c[4] === OP_CHECKSIG) {
    return 'pubkey_hash';
  }
  if (n === 2 && c[1] === OP_CHECKSIG && isPush(c[0])) return 'pubkey';
  const last2 = c[n - 2];
  if (n >= 4 && typeof last2 === 'number' && c[n - 1] === OP_CHECKMULTISIG) {
    let all = true;
    for (let i = 1; i <= last2 - 80; i++) {
      if (!isPush(c[i])) {
        all = false;
        break;
      }
    }
    if (all) return 'multisig';
  }
  if (n >= 3 && c[n - 3] === OP_HASH160 && isPush(last2) && last2.data.length === 20 && c[n - 1] === OP_EQUAL) {
    if (n === 3) return 'script_hash';
    // Longer forms count only when a preceding push hashes to the P2SH hash.
    let redeem = c[n - 4];
    if (redeem === OP_CODESEPARATOR) redeem = c[n - 5];
    if (hash160(chunkBytes(redeem)).equals(last2.data)) return 'script_hash';
  }
  if (c[0] === OP_RETURN && n <= 2) return 'op_return';
  return 'unknown';
}

/** Type of a script under the Bitcoin rules: the original's six, then witness programs. */
function bitcoinType(s: Uint8Array): ScriptType {
  return templateType(s) ?? chunksType(parseScript(s));
}

export interface Solved {
  type: ScriptType;
  /**
   * pubkey_hash / script_hash: the 20-byte hash; pubkey: the pushed key;
   * witness types: the program. Undefined for the other types.
   */
  data: Buffer | undefined;
}

/** Like classifyScript(script, false), also returning the hash, key or program. */
export function solveScript(script: Uint8Array): Solved {
  const s = asBuffer(script);
  const type = templateType(s);
  if (type !== undefined) {
    switch (type) {
      case 'pubkey_hash':
        return { type, data: s.subarray(3, 23) };
      case 'script_hash':
        return { type, data: s.subarray(2, 22) };
      case 'pubkey':
        return { type, data: s.subarray(1, s.length - 1) };
      default:
        return { type, data: s.subarray(2) };
    }
  }
  const c = parseScript(s);
  const t = chunksType(c);
  const pick = (x: Chunk | undefined) => (isPush(x) ? x.data : undefined);
  if (t === 'pubkey_hash') return { type: t, data: pick(c[2]) };
  if (t === 'script_hash') return { type: t, data: pick(c[c.length - 2]) };
  if (t === 'pubkey') return { type: t, data: pick(c[0]) };
  return { type: t, data: undefined };
}

/**
 * Output script type: on Namecoin a name script (Core's CNameScript) first;
 * then the original's checks (pubkey_hash, pubkey, multisig, script_hash,
 * op_return); a BIP141 witness program instead of `unknown`.
 */
export function classifyScript(script: Uint8Array, namecoin: boolean): ScriptType {
  if (namecoin) {
    const b = script[0];
    if (b !== undefined && b >= OP_1 && b <= OP_1 + 2) {
      const ns = parseNameScript(script);
      if (ns) return ns.op;
    }
  }
  return bitcoinType(script);
}

/**
 * Type of the redeem script of an input spending a P2SH output: the item the
 * scriptSig's last operation leaves on top of the stack (a data push, or the
 * value of OP_0 / OP_1NEGATE / OP_1..OP_16), classified like an output script.
 * For P2SH-wrapped segwit that is the witness program type. Undefined when the
 * scriptSig is empty, does not end with a push, or (given `p2shHash`) the
 * item does not hash to it.
 */
export function redeemScriptType(scriptSig: Uint8Array, namecoin: boolean, p2shHash?: Uint8Array): ScriptType | undefined {
  const chunks = parseScript(scriptSig);
  const last = chunks[chunks.length - 1];
  let redeem: Buffer;
  if (last === undefined) return undefined;
  if (typeof last === 'object') {
    if (last.mark === MARK_INVALID) return undefined;
    redeem = last.data;
  } else if (last === OP_0) {
    redeem = Buffer.alloc(0);
  } else if (last === 0x4f) {
    redeem = Buffer.from([0x81]);
  } else if (last >= OP_1 && last <= OP_16) {
    redeem = Buffer.from([last - 0x50]);
  } else {
    return undefined;
  }
  if (p2shHash && !hash160(redeem).equals(p2shHash)) return undefined;
  return classifyScript(redeem, namecoin);
}
