import { hash160, sha256 } from '../chain/hash.js';
import type { Key } from './keys.js';

/** Opcodes the builder uses (Namecoin's OP_NAME_* are OP_1..OP_3). */
export const OP = {
  OP_0: 0x00,
  OP_PUSHDATA1: 0x4c,
  OP_PUSHDATA2: 0x4d,
  OP_PUSHDATA4: 0x4e,
  OP_1NEGATE: 0x4f,
  OP_1: 0x51,
  OP_2: 0x52,
  OP_3: 0x53,
  OP_16: 0x60,
  OP_NOP: 0x61,
  OP_RETURN: 0x6a,
  OP_2DROP: 0x6d,
  OP_DROP: 0x75,
  OP_DUP: 0x76,
  OP_EQUAL: 0x87,
  OP_EQUALVERIFY: 0x88,
  OP_ADD: 0x93,
  OP_SHA256: 0xa8,
  OP_HASH160: 0xa9,
  OP_CHECKSIG: 0xac,
  OP_CHECKMULTISIG: 0xae,
  OP_NAME_NEW: 0x51,
  OP_NAME_FIRSTUPDATE: 0x52,
  OP_NAME_UPDATE: 0x53,
} as const;

/** A data push exactly as Core's `CScript << vector` writes it (empty → OP_0, never OP_N). */
export function pushData(data: Uint8Array): Buffer {
  const n = data.length;
  let head: number[];
  if (n < OP.OP_PUSHDATA1) head = [n];
  else if (n <= 0xff) head = [OP.OP_PUSHDATA1, n];
  else if (n <= 0xffff) head = [OP.OP_PUSHDATA2, n & 0xff, n >> 8];
  else head = [OP.OP_PUSHDATA4, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24];
  const out = Buffer.allocUnsafe(head.length + n);
  out.set(head, 0);
  out.set(data, head.length);
  return out;
}

/** CScriptNum encoding (minimal, sign bit in the last byte). */
export function scriptNum(n: number): Buffer {
  if (n === 0) return Buffer.alloc(0);
  const neg = n < 0;
  let abs = Math.abs(n);
  const bytes: number[] = [];
  while (abs > 0) {
    bytes.push(abs & 0xff);
    abs = Math.floor(abs / 256);
  }
  if (bytes[bytes.length - 1]! & 0x80) bytes.push(neg ? 0x80 : 0);
  else if (neg) bytes[bytes.length - 1]! |= 0x80;
  return Buffer.from(bytes);
}

/** A number push as Core's `CScript << int64` writes it (OP_0, OP_1NEGATE, OP_1..OP_16, else a push). */
export function pushInt(n: number): Buffer {
  if (n === 0) return Buffer.from([OP.OP_0]);
  if (n === -1) return Buffer.from([OP.OP_1NEGATE]);
  if (n >= 1 && n <= 16) return Buffer.from([OP.OP_1 + n - 1]);
  return pushData(scriptNum(n));
}

/** Concatenates script pieces: numbers are raw opcodes, buffers raw bytes. */
export function script(...parts: (number | Uint8Array)[]): Buffer {
  const bufs = parts.map((p) => (typeof p === 'number' ? Buffer.from([p]) : Buffer.from(p)));
  return Buffer.concat(bufs);
}

/** scriptSig of pushes of every item. */
export function pushAll(items: readonly Uint8Array[]): Buffer {
  return Buffer.concat(items.map(pushData));
}

// ---- scriptPubKeys ------------------------------------------------------------

export function p2pkScript(pub: Uint8Array): Buffer {
  return script(pushData(pub), OP.OP_CHECKSIG);
}

export function p2pkhScript(h160: Uint8Array): Buffer {
  return script(OP.OP_DUP, OP.OP_HASH160, 0x14, h160, OP.OP_EQUALVERIFY, OP.OP_CHECKSIG);
}

export function p2shScript(h160: Uint8Array): Buffer {
  return script(OP.OP_HASH160, 0x14, h160, OP.OP_EQUAL);
}

export function multisigScript(m: number, pubs: readonly Uint8Array[]): Buffer {
  if (m < 1 || m > pubs.length || pubs.length > 16) throw new Error(`bad multisig ${m}-of-${pubs.length}`);
  return script(pushInt(m), ...pubs.map(pushData), pushInt(pubs.length), OP.OP_CHECKMULTISIG);
}

export function opReturnScript(...data: Uint8Array[]): Buffer {
  return script(OP.OP_RETURN, ...data.map(pushData));
}

export function p2wpkhScript(h160: Uint8Array): Buffer {
  return script(OP.OP_0, 0x14, h160);
}

export function p2wshScript(sha: Uint8Array): Buffer {
  return script(OP.OP_0, 0x20, sha);
}

export function p2trScript(xonly: Uint8Array): Buffer {
  return script(OP.OP_1, 0x20, xonly);
}

/** Witness program of a version 2..16 (unknown to current consensus). */
export function witnessUnknownScript(version: number, program: Uint8Array): Buffer {
  if (version < 2 || version > 16 || program.length < 2 || program.length > 40) throw new Error('bad witness program');
  return script(OP.OP_1 + version - 1, program.length, program);
}

/** Namecoin: `OP_NAME_NEW <hash> OP_2DROP <address script>`. */
export function nameNewScript(hash: Uint8Array, address: Uint8Array): Buffer {
  if (hash.length !== 20) throw new Error('name_new hash must be 20 bytes');
  return script(OP.OP_NAME_NEW, pushData(hash), OP.OP_2DROP, address);
}

/** Namecoin: `OP_NAME_FIRSTUPDATE <name> <rand> <value> OP_2DROP OP_2DROP <address script>`. */
export function nameFirstUpdateScript(name: Uint8Array, rand: Uint8Array, value: Uint8Array, address: Uint8Array): Buffer {
  return script(OP.OP_NAME_FIRSTUPDATE, pushData(name), pushData(rand), pushData(value), OP.OP_2DROP, OP.OP_2DROP, address);
}

/** Namecoin: `OP_NAME_UPDATE <name> <value> OP_2DROP OP_DROP <address script>`. */
export function nameUpdateScript(name: Uint8Array, value: Uint8Array, address: Uint8Array): Buffer {
  return script(OP.OP_NAME_UPDATE, pushData(name), pushData(value), OP.OP_2DROP, OP.OP_DROP, address);
}

/** The name_new commitment: hash160(rand ‖ name). */
export function nameCommitment(rand: Uint8Array, name: Uint8Array): Buffer {
  return hash160(Buffer.concat([rand, name]));
}

// ---- Locks: an output script plus how to spend it ------------------------------

export type LockKind =
  | 'p2pk'
  | 'p2pkh'
  | 'p2sh'
  | 'multisig'
  | 'op_return'
  | 'p2wpkh'
  | 'p2wsh'
  | 'p2tr'
  | 'witness_unknown'
  | 'nonstandard'
  | 'name_new'
  | 'name_firstupdate'
  | 'name_update';

/** Where signatures come from when a lock is satisfied. */
export interface SigSource {
  ecdsa(): Buffer;
  schnorr(): Buffer;
}

/** What spending a lock needs: scriptSig stack items (pushed in order) and witness items. */
export interface Satisfaction {
  stack: Buffer[];
  witness: Buffer[] | undefined;
}

export interface Lock {
  kind: LockKind;
  /** The scriptPubKey. */
  script: Buffer;
  /** The redeem script / witness script / name address lock inside, when any. */
  inner: Lock | undefined;
  /** Produces the spending data; undefined for unspendable outputs (OP_RETURN, unknown witness versions). */
  satisfy: ((sigs: SigSource) => Satisfaction) | undefined;
}

const SEGWIT: ReadonlySet<LockKind> = new Set(['p2wpkh', 'p2wsh', 'p2tr']);

export function isSegwitLock(lock: Lock): boolean {
  return SEGWIT.has(lock.kind);
}

function legacy(kind: LockKind, scr: Buffer, stack: (s: SigSource) => Buffer[], inner?: Lock): Lock {
  return { kind, script: scr, inner, satisfy: (s) => ({ stack: stack(s), witness: undefined }) };
}

function requireSpendable(lock: Lock, what: string): (s: SigSource) => Satisfaction {
  if (!lock.satisfy) throw new Error(`${what}: inner ${lock.kind} lock is not spendable`);
  return lock.satisfy;
}

export const locks = {
  p2pk(key: Key): Lock {
    return legacy('p2pk', p2pkScript(key.pub), (s) => [s.ecdsa()]);
  },

  p2pkh(key: Key): Lock {
    return legacy('p2pkh', p2pkhScript(key.hash160), (s) => [s.ecdsa(), key.pub]);
  },

  /** Bare m-of-n multisig (spent with the OP_CHECKMULTISIG dummy OP_0 and m signatures). */
  multisig(m: number, keys: readonly Key[]): Lock {
    return legacy('multisig', multisigScript(m, keys.map((k) => k.pub)), (s) => [
      Buffer.alloc(0),
      ...Array.from({ length: m }, () => s.ecdsa()),
    ]);
  },

  /** SHA-256 hash lock `OP_SHA256 <h> OP_EQUAL` (non-standard), spent with the preimage. */
  hashlock(preimage: Buffer): Lock {
    return legacy('nonstandard', script(OP.OP_SHA256, pushData(sha256(preimage)), OP.OP_EQUAL), () => [preimage]);
  },

  /** Any script; `stack` spends it (undefined: unspendable). */
  nonstandard(scr: Buffer, stack?: Buffer[]): Lock {
    return stack ? legacy('nonstandard', scr, () => stack) : { kind: 'nonstandard', script: scr, inner: undefined, satisfy: undefined };
  },

  opReturn(...data: Uint8Array[]): Lock {
    return { kind: 'op_return', script: opReturnScript(...data), inner: undefined, satisfy: undefined };
  },

  /**
   * P2SH around a redeem lock. Legacy redeem: scriptSig = redeem's stack + the
   * redeem script as the last push. Segwit redeem (P2SH-P2WPKH / P2SH-P2WSH):
   * scriptSig = just the program push, the witness comes from the inner lock.
   */
  p2sh(redeem: Lock): Lock {
    const sat = requireSpendable(redeem, 'p2sh');
    return {
      kind: 'p2sh',
      script: p2shScript(hash160(redeem.script)),
      inner: redeem,
      satisfy: (s) => {
        const r = sat(s);
        return { stack: [...r.stack, redeem.script], witness: r.witness };
      },
    };
  },

  p2wpkh(key: Key): Lock {
    if (!key.compressed) throw new Error('p2wpkh needs a compressed key');
    return { kind: 'p2wpkh', script: p2wpkhScript(key.hash160), inner: undefined, satisfy: (s) => ({ stack: [], witness: [s.ecdsa(), key.pub] }) };
  },

  /** P2WSH around a witness script lock: witness = its stack items + the script. */
  p2wsh(witnessScript: Lock): Lock {
    const sat = requireSpendable(witnessScript, 'p2wsh');
    if (isSegwitLock(witnessScript)) throw new Error('p2wsh: the witness script must be a legacy-style script');
    return {
      kind: 'p2wsh',
      script: p2wshScript(sha256(witnessScript.script)),
      inner: witnessScript,
      satisfy: (s) => ({ stack: [], witness: [...sat(s).stack, witnessScript.script] }),
    };
  },

  /** P2TR key-path: the output key is the key's x-only point; spent with one Schnorr signature. */
  p2tr(key: Key): Lock {
    return { kind: 'p2tr', script: p2trScript(key.xonly), inner: undefined, satisfy: (s) => ({ stack: [], witness: [s.schnorr()] }) };
  },

  /**
   * P2TR script-path shape: witness = [sig, leaf script `<xonly> OP_CHECKSIG`,
   * control block 0xc0|parity ‖ internal key]. The output key is `outputKey`
   * (no tweak arithmetic: nothing here verifies it).
   */
  p2trScriptPath(outputKey: Key, internalKey: Key, leafKey: Key): Lock {
    const leaf = script(0x20, leafKey.xonly, OP.OP_CHECKSIG);
    const control = Buffer.concat([Buffer.from([0xc0 | (outputKey.pub[0]! & 1)]), internalKey.xonly]);
    return { kind: 'p2tr', script: p2trScript(outputKey.xonly), inner: undefined, satisfy: (s) => ({ stack: [], witness: [s.schnorr(), leaf, control] }) };
  },

  witnessUnknown(version: number, program: Uint8Array): Lock {
    return { kind: 'witness_unknown', script: witnessUnknownScript(version, program), inner: undefined, satisfy: undefined };
  },

  nameNew(hash: Uint8Array, address: Lock): Lock {
    return { kind: 'name_new', script: nameNewScript(hash, address.script), inner: address, satisfy: address.satisfy };
  },

  nameFirstUpdate(name: Uint8Array, rand: Uint8Array, value: Uint8Array, address: Lock): Lock {
    return { kind: 'name_firstupdate', script: nameFirstUpdateScript(name, rand, value, address.script), inner: address, satisfy: address.satisfy };
  },

  nameUpdate(name: Uint8Array, value: Uint8Array, address: Lock): Lock {
    return { kind: 'name_update', script: nameUpdateScript(name, value, address.script), inner: address, satisfy: address.satisfy };
  },
};

/** scriptSig and witness for spending `lock`. */
export function unlock(lock: Lock, sigs: SigSource): { scriptSig: Buffer; witness: Buffer[] | undefined } {
  if (!lock.satisfy) throw new Error(`a ${lock.kind} output is not spendable`);
  const sat = lock.satisfy(sigs);
  return { scriptSig: pushAll(sat.stack), witness: sat.witness };
}
