import { isNamecoin } from '../chain/networks.js';
import { toJson, type JsonValue } from '../render/json.js';
import { renderStats } from '../render/stats.js';
import { contractFiles } from '../publish/openapi.js';
import { hostFiles, type HostFileOptions } from '../hosts/index.js';
import { SITE_INFO_PATH, STATS_PATH, type SiteInfo } from '../contract/layout.js';
import { uiFiles } from './ui-files.js';
import type { StageContext } from './context.js';

/** stats.json, the site info, host glue, the UI and the contract files; returns the tip hash. */
export async function writeSiteFiles(ctx: StageContext, outDir: string, hostOpts: HostFileOptions, side: number, orphan: number): Promise<string> {
  const { index, writer, height, meta } = ctx;
  const namecoin = isNamecoin(index.net);
  ctx.progress.begin('site files');
  const tip = index.hashAt(height)!;
  writer.write(STATS_PATH, renderStats(index.chainCounters(height, meta.totals, side, orphan, namecoin), meta.addresses, namecoin, ctx.pretty));
  const info: SiteInfo = { network: index.net.name, height, tip, cappedAddresses: meta.capped };
  writer.write(SITE_INFO_PATH, toJson(info as unknown as JsonValue));
  for (const [rel, content] of await hostFiles(outDir, info, hostOpts)) writer.write(rel, content);
  const offchain = [...index.offChainBlocks()].map(({ hash, rec }) => ({ hash, kind: rec.kind, height: rec.height }));
  for (const [rel, content] of await uiFiles({ ...info, offchain })) writer.write(rel, content);
  for (const [rel, content] of contractFiles()) writer.write(rel, content);
  return tip;
}
