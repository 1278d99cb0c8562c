import type { ChainCounters } from '../index/stats.js';
import type { ScriptTypeCountsDoc, StatsDoc } from '../contract/documents.js';
import { toJson } from './json.js';

/**
 * `/stats.json`: blocks{total, main, side, orphan, size}, txs, txins, txouts,
 * addrs, coins, work, script_types, p2sh_types[, names], time.
 */
export function renderStats(c: ChainCounters, addrs: number, namecoin: boolean, pretty = false): string {
  // time is set last (after names): the key order of the original.
  const obj: Omit<StatsDoc, 'time'> & Partial<Pick<StatsDoc, 'time'>> = {
    blocks: {
      total: c.mainBlocks + c.sideBlocks + c.orphanBlocks,
      main: c.mainBlocks,
      side: c.sideBlocks,
      orphan: c.orphanBlocks,
      size: c.size,
    },
    txs: c.txs,
    txins: c.txins,
    txouts: c.txouts,
    addrs,
    coins: c.coins,
    work: c.work,
    // Every type's key is set, in the document's order (index/stats.ts scriptTypeKeys).
    script_types: c.scriptTypes as ScriptTypeCountsDoc,
    p2sh_types: c.p2shTypes as ScriptTypeCountsDoc,
  };
  if (namecoin) obj.names = c.nameOps;
  obj.time = c.tipTime;
  return toJson(obj as StatsDoc, pretty);
}
