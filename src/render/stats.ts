import type { ChainCounters } from '../index/stats.js';
import { toJson, type JsonValue } from './json.js';

/**
 * `/stats.json`: blocks{total, main, side, orphan, size}, txs, txins, txouts,
 * addrs, coins, work, script_types, p2sh_types[, names], time.
 */
export function renderStats(c: ChainCounters, addrs: number, namecoin: boolean, pretty = false): string {
  const obj: Record<string, JsonValue> = {
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
    script_types: c.scriptTypes,
    p2sh_types: c.p2shTypes,
  };
  if (namecoin) obj.names = c.nameOps;
  obj.time = c.tipTime;
  return toJson(obj, pretty);
}
