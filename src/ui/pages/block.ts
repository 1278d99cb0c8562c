/** A block page. */
import { getJson, loadSite, type BlockDoc, type TxDoc } from '../data.js';
import { h } from '../dom.js';
import { fmtInt } from '../format.js';
import { api, href } from '../route.js';
import { badge, blockLink, card, kv, pageHead, paged, rawLink, time, txSummary } from '../widgets.js';
import { setTitle, notFound, confirmationsText } from './common.js';

export async function pageBlock(hash: string): Promise<HTMLElement> {
  const site = await loadSite();
  const r = await getJson<BlockDoc>(api.block(hash));
  if (!r.ok) return notFound('Block', hash, r, api.block(hash));
  const b = r.body;
  // Blocks have no height field: the coinbase tx document names its main-chain block. Side and
  // orphan blocks (listed in the site info) have their height there, and no tx documents.
  const off = site.offchain.find((o) => o.hash === b.hash);
  let height: number | null = off ? off.height : null;
  let main = false;
  if (!off && b.tx[0]) {
    const cb = await getJson<TxDoc>(api.tx(b.tx[0].hash));
    if (cb.ok && cb.body.block === b.hash && cb.body.blocknumber !== undefined) {
      height = cb.body.blocknumber;
      main = true;
    }
  }
  setTitle(`Block ${height ?? hash.slice(0, 12)}`);
  const status = main ? badge('main chain', 'good') : badge(off ? `${off.kind} block: not in the main chain` : 'not in the main chain', 'warn');
  const nav = [
    b.prev_block && !/^0+$/.test(b.prev_block) ? h('a', { class: 'raw', href: href.block(b.prev_block), 'data-nav': 'prev' }, '\u2190 Previous') : null,
    b.next_block ? h('a', { class: 'raw', href: href.block(b.next_block), 'data-nav': 'next' }, 'Next \u2192') : null,
    rawLink(api.block(hash)),
    rawLink(api.block(hash, 'hex'), 'hex'),
  ];
  const aux = b.aux_pow?.parent_block;
  const details = kv([
    ['Hash', h('span', { class: 'hash' }, b.hash), 'hash'],
    ['Height', height !== null ? [fmtInt(height), main ? null : h('span', { class: 'muted' }, ' (not in the main chain)')] : h('span', { class: 'muted' }, 'unknown (not in the main chain)'), 'height'],
    main && height !== null ? ['Confirmations', confirmationsText(site, height), 'confirmations'] : null,
    ['Time', time(b.time), 'time'],
    ['Transactions', fmtInt(b.n_tx), 'n_tx'],
    ['Size', `${fmtInt(b.size)} bytes`, 'size'],
    ['Version', `${b.ver} (0x${(b.ver >>> 0).toString(16)})`, 'ver'],
    ['Bits', `0x${(b.bits >>> 0).toString(16)} (${b.bits})`, 'bits'],
    ['Nonce', fmtInt(b.nonce), 'nonce'],
    ['Merkle root', h('span', { class: 'hash' }, b.mrkl_root), 'mrkl_root'],
    ['Previous block', /^0+$/.test(b.prev_block) ? h('span', { class: 'muted' }, 'none (genesis)') : blockLink(b.prev_block), 'prev_block'],
    ['Next block', b.next_block ? blockLink(b.next_block) : h('span', { class: 'muted' }, 'none in this snapshot'), 'next_block'],
    aux ? ['Merge-mined in', h('span', { class: 'hash' }, aux.hash), 'aux_pow'] : null,
  ]);
  const txs = paged(b.tx, (tx) => txSummary(tx), 40, h('div', { id: 'block-txs' }));
  return h(
    'div',
    null,
    pageHead('Block', height !== null ? `Block ${fmtInt(height)}` : 'Block', { sub: b.hash, badges: [status], actions: nav }),
    card('Details', details),
    card('Transactions', txs, fmtInt(b.n_tx)),
  );
}
