import type { Tx } from './tx.js';

/** nVersion of Namecoin transactions that carry name operations. */
export const NAMECOIN_TX_VERSION = 0x7100;

export type NameOp = 'name_new' | 'name_firstupdate' | 'name_update';

export interface NameScript {
  op: NameOp;
  /** The pushed arguments, in script order (views into the script). */
  args: Buffer[];
  /** name_firstupdate, name_update. */
  name?: Buffer;
  /** name_firstupdate, name_update. */
  value?: Buffer;
  /** name_firstupdate. */
  rand?: Buffer;
  /** name_new: Hash160(rand ‖ name). */
  hash?: Buffer;
  /** The script after the name prefix: it decides the owner. */
  addressScript: Buffer;
}

const OP_PUSHDATA1 = 0x4c;
const OP_PUSHDATA2 = 0x4d;
const OP_PUSHDATA4 = 0x4e;
const OP_NAME_NEW = 0x51;
const OP_NAME_FIRSTUPDATE = 0x52;
const OP_NAME_UPDATE = 0x53;
const OP_NOP = 0x61;
const OP_2DROP = 0x6d;
const OP_DROP = 0x75;
const OP_INVALIDOPCODE = 0xff;

/** Result slots of getOp (module scratch, so the hot loop allocates nothing). */
let opPc = 0;
let opCode = 0;
let opStart = 0;
let opEnd = 0;

/**
 * Core's GetScriptOp at `pc`. Sets opPc to where the cursor ends up — also on
 * failure, where Core leaves it partly advanced and the opcode OP_INVALIDOPCODE.
 */
function getOp(s: Buffer, pc: number): boolean {
  const end = s.length;
  opCode = OP_INVALIDOPCODE;
  opPc = pc;
  if (pc >= end) return false;
  const op = s[pc++]!;
  opPc = pc;
  if (op <= OP_PUSHDATA4) {
    let size: number;
    if (op < OP_PUSHDATA1) {
      size = op;
    } else if (op === OP_PUSHDATA1) {
      if (end - pc < 1) return false;
      size = s[pc++]!;
    } else if (op === OP_PUSHDATA2) {
      if (end - pc < 2) return false;
      size = s.readUInt16LE(pc);
      pc += 2;
    } else {
      if (end - pc < 4) return false;
      size = s.readUInt32LE(pc);
      pc += 4;
    }
    opPc = pc;
    if (end - pc < size) return false;
    opStart = pc;
    pc += size;
    opEnd = pc;
  }
  opPc = pc;
  opCode = op;
  return true;
}

function isDropOrNop(op: number): boolean {
  return op === OP_DROP || op === OP_2DROP || op === OP_NOP;
}

const ARG_COUNT: Readonly<Record<number, number>> = { [OP_NAME_NEW]: 1, [OP_NAME_FIRSTUPDATE]: 3, [OP_NAME_UPDATE]: 2 };

/**
 * Namecoin Core's CNameScript: OP_1/2/3, then data pushes (OP_0 is an empty
 * push) up to the first OP_DROP/OP_2DROP/OP_NOP, then any run of those; the
 * rest is the address script. Exactly 1/3/2 arguments, else not a name op.
 *
 * Like Core, the address script starts one byte before the end of the first
 * operation after the drops. That is that operation itself when it is a
 * single opcode (every standard tail: OP_DUP, OP_HASH160, OP_0, OP_1), but the
 * last byte of its data when it is a push (e.g. a bare-pubkey tail), which
 * Core then sees as non-standard.
 */
export function parseNameScript(script: Uint8Array): NameScript | undefined {
  const s = Buffer.isBuffer(script) ? script : Buffer.from(script.buffer, script.byteOffset, script.byteLength);
  const nameOp = s[0];
  if (nameOp === undefined) return undefined;
  const want = ARG_COUNT[nameOp];
  if (want === undefined) return undefined;
  const args: Buffer[] = [];
  let pc = 1;
  let op: number;
  for (;;) {
    if (!getOp(s, pc)) return undefined;
    pc = opPc;
    op = opCode;
    if (isDropOrNop(op)) break;
    if (op > OP_PUSHDATA4) return undefined;
    if (args.length === want) return undefined;
    args.push(s.subarray(opStart, opEnd));
  }
  while (isDropOrNop(op)) {
    const ok = getOp(s, pc);
    pc = opPc;
    op = opCode;
    if (!ok) break;
  }
  if (args.length !== want) return undefined;
  const addressScript = s.subarray(pc - 1);
  switch (nameOp) {
    case OP_NAME_NEW:
      return { op: 'name_new', args, hash: args[0]!, addressScript };
    case OP_NAME_FIRSTUPDATE:
      return { op: 'name_firstupdate', args, name: args[0]!, rand: args[1]!, value: args[2]!, addressScript };
    default:
      return { op: 'name_update', args, name: args[0]!, value: args[1]!, addressScript };
  }
}

/** Name outputs of a transaction; only version-0x7100 transactions carry name operations. */
export function nameOutputs(tx: Tx): { vout: number; op: NameScript }[] {
  if (tx.version !== NAMECOIN_TX_VERSION) return [];
  const out: { vout: number; op: NameScript }[] = [];
  tx.outputs.forEach((o, vout) => {
    const op = parseNameScript(o.script);
    if (op) out.push({ vout, op });
  });
  return out;
}

export { nameBytesToText } from './name-text.js';
