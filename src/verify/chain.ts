/** Phase 1: `_site.json`, `stats.json` and the main chain from the tip down to genesis (chain rules). */
import { getNetwork } from '../chain/networks.js';
import { SITE_INFO_PATH, STATS_PATH, blockPath } from '../contract/layout.js';
import type { SiteInfoDoc } from '../contract/documents.js';
import { shapeProblem } from './shape.js';
import { HEX64, ZERO_HASH, isObj } from './values.js';
import { MainChain, type Verifier } from './verifier.js';

export function siteAndChain(ver: Verifier): void {
  const site = ver.readJson(SITE_INFO_PATH, 'is missing');
  if (site) {
    const shape = shapeProblem('site-info.schema.json#/$defs/internal', site.doc);
    if (shape) {
      ver.problem(SITE_INFO_PATH, shape);
    } else {
      const s = site.doc as SiteInfoDoc;
      try {
        ver.net = getNetwork(s.network);
      } catch {
        ver.problem(SITE_INFO_PATH, `names an unknown network ${JSON.stringify(s.network)}`);
      }
      ver.site = { network: s.network, height: s.height, tip: s.tip, capped: new Set(s.cappedAddresses) };
    }
  }
  const stats = ver.readJson(STATS_PATH, 'is missing');
  if (ver.site && ver.site.height > 100_000_000) {
    ver.problem(SITE_INFO_PATH, `height ${ver.site.height} is not plausible`);
    return;
  }
  if (ver.site) walkMainChain(ver);
  if (stats && ver.site) {
    const blocks = isObj(stats.doc) ? stats.doc.blocks : undefined;
    const main = isObj(blocks) ? blocks.main : undefined;
    if (main !== ver.site.height + 1) ver.problem(STATS_PATH, `blocks.main is ${String(main)}, but _site.json height ${ver.site.height} means ${ver.site.height + 1}`);
    const txs = isObj(stats.doc) ? stats.doc.txs : undefined;
    if (ver.chain?.complete && txs !== ver.mainTxs) ver.problem(STATS_PATH, `txs is ${String(txs)}, but the main-chain blocks hold ${ver.mainTxs}`);
  }
}

/** From the tip over prev_block to genesis; checks next_block of every main-chain block on the way. */
export function walkMainChain(ver: Verifier): void {
  const { height, tip } = ver.site!;
  const chain = new MainChain(height);
  ver.chain = chain;
  let hash = tip;
  for (let h = height; h >= 0; h--) {
    const rel = blockPath(hash, 'json');
    if (!HEX64.test(hash)) {
      ver.problem(h === height ? SITE_INFO_PATH : blockPath(chain.hashAt(h + 1)!, 'json'), `main chain at height ${h}: ${JSON.stringify(hash)} is not a block hash`);
      break;
    }
    const got = ver.readJson(rel, `is missing: the main chain walked from the tip over prev_block breaks at height ${h}`);
    if (!got) break;
    const doc = got.doc;
    if (!isObj(doc)) break; // its shape is reported with the file's own check
    chain.set(h, hash);
    if (doc.hash !== hash) ver.problem(rel, `hash field is ${String(doc.hash)}`);
    const next = h === height ? undefined : chain.hashAt(h + 1);
    if (doc.next_block !== next) {
      ver.problem(rel, next === undefined ? `is the tip (height ${h}) but has next_block ${String(doc.next_block)}` : `main-chain block at height ${h}: next_block is ${String(doc.next_block)}, expected ${next}`);
    }
    if (typeof doc.n_tx === 'number') ver.mainTxs += doc.n_tx;
    ver.counts.mainBlocks++;
    const prev = doc.prev_block;
    if (h === 0) {
      if (prev !== ZERO_HASH) ver.problem(rel, `is at height 0 of the main chain walked from the tip but has prev_block ${String(prev)} (chain longer than _site.json height ${height}?)`);
    } else if (prev === ZERO_HASH) {
      ver.problem(rel, `is the genesis block (no prev_block) but the walk from the tip puts it at height ${h}, not 0`);
      break;
    } else if (typeof prev !== 'string') {
      break; // its shape is reported with the file's own check
    } else {
      hash = prev;
    }
    if ((height - h) % 1000 === 0) ver.onProgress?.('chain', height - h + 1, height + 1);
  }
  chain.seal();
  ver.onProgress?.('chain', height + 1 - chain.lowest, height + 1);
}
