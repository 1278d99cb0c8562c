import { SCRIPT_TYPES_BASE, SCRIPT_TYPES_NAME, SCRIPT_TYPES_SEGWIT, type ScriptType } from '../chain/script.js';

/** Figures of main-chain blocks: what one block adds (kept per height), or the running totals. */
export interface Counters {
  txs: number;
  txins: number;
  txouts: number;
  /** Bytes of the blocks. */
  size: number;
  nameOps: number;
  scriptTypes: Record<string, number>;
  p2shTypes: Record<string, number>;
}

/** Chain-wide figures (everything stats.json needs but the address count). */
export interface ChainCounters extends Counters {
  mainBlocks: number;
  sideBlocks: number;
  orphanBlocks: number;
  coins: bigint;
  work: bigint;
  tipTime: number;
}

export function emptyDelta(): Counters {
  return { txs: 0, txins: 0, txouts: 0, size: 0, nameOps: 0, scriptTypes: {}, p2shTypes: {} };
}

/** Adds (sign 1) or subtracts (sign -1) one block's figures to running totals. */
export function addDelta(total: Counters, d: Counters, sign: 1 | -1): void {
  total.txs += sign * d.txs;
  total.txins += sign * d.txins;
  total.txouts += sign * d.txouts;
  total.size += sign * d.size;
  total.nameOps += sign * d.nameOps;
  for (const [k, v] of Object.entries(d.scriptTypes)) total.scriptTypes[k] = (total.scriptTypes[k] ?? 0) + sign * v;
  for (const [k, v] of Object.entries(d.p2shTypes)) total.p2shTypes[k] = (total.p2shTypes[k] ?? 0) + sign * v;
}

/** Every key present, in a fixed order: the spec's six, witness types, then Namecoin's. */
export function scriptTypeKeys(namecoin: boolean): ScriptType[] {
  return [...SCRIPT_TYPES_BASE, ...SCRIPT_TYPES_SEGWIT, ...(namecoin ? SCRIPT_TYPES_NAME : [])];
}

export function emptyCounters(namecoin: boolean): ChainCounters {
  const zero = () => Object.fromEntries(scriptTypeKeys(namecoin).map((k) => [k, 0])) as Record<string, number>;
  return {
    mainBlocks: 0,
    sideBlocks: 0,
    orphanBlocks: 0,
    size: 0,
    txs: 0,
    txins: 0,
    txouts: 0,
    coins: 0n,
    work: 0n,
    scriptTypes: zero(),
    p2shTypes: zero(),
    nameOps: 0,
    tipTime: 0,
  };
}
