import { SCRIPT_TYPES_BASE, SCRIPT_TYPES_NAME, SCRIPT_TYPES_SEGWIT, type ScriptType } from '../chain/script.js';

/** Chain-wide figures gathered by the scan (everything stats.json needs but the address count). */
export interface ChainCounters {
  mainBlocks: number;
  sideBlocks: number;
  orphanBlocks: number;
  mainSize: number;
  txs: number;
  txins: number;
  txouts: number;
  coins: bigint;
  work: bigint;
  scriptTypes: Record<string, number>;
  p2shTypes: Record<string, number>;
  nameOps: number;
  tipTime: number;
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
    mainSize: 0,
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
