/** Phase 4: totals against `stats.json` and `_site.json`. */
import { ERROR_KINDS, SITE_INFO_PATH, STATS_PATH, addressPath, errorDocPath } from '../contract/layout.js';
import { missingHeights } from './block-height.js';
import { isObj } from './values.js';
import { type Verifier } from './verifier.js';

export function totals(ver: Verifier): void {
  if (!ver.site || !ver.chain?.complete) return;
  if (ver.ownedTxs !== ver.counts.txs) {
    ver.problem('tx/', `${ver.counts.txs} tx documents, but main-chain blocks place ${ver.ownedTxs} of them (${ver.counts.txs - ver.placedTxs} name no main-chain block)`);
  }
  for (const a of ver.site.capped) {
    if (!ver.cappedSeen.has(a)) ver.problem(SITE_INFO_PATH, `cappedAddresses lists ${a}, whose ${addressPath(a)} is not a capped document`);
  }
  const stats = ver.readJson(STATS_PATH, 'is missing');
  if (stats && isObj(stats.doc)) {
    const s = stats.doc;
    if (s.addrs !== ver.counts.addresses) ver.problem(STATS_PATH, `addrs is ${String(s.addrs)}, the tree has ${ver.counts.addresses} address documents`);
    const blocks = isObj(s.blocks) ? s.blocks : {};
    const off = (typeof blocks.side === 'number' ? blocks.side : 0) + (typeof blocks.orphan === 'number' ? blocks.orphan : 0);
    if (off !== ver.counts.offChainBlocks) ver.problem(STATS_PATH, `blocks.side + blocks.orphan is ${off}, the tree has ${ver.counts.offChainBlocks} off-chain block documents`);
  }
  missingHeights(ver);
  for (const kind of ERROR_KINDS) {
    if (!ver.exists(errorDocPath(kind))) ver.missingProblem(errorDocPath(kind), 'is missing');
  }
}
