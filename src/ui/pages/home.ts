/** The overview: stats, latest blocks, side and orphan blocks, names and search examples. */
import { getJson, loadSite, type BlockDoc, type StatsDoc } from '../data.js';
import { h } from '../dom.js';
import { bigHuman, bytesHuman, fmtInt } from '../format.js';
import { exampleNames } from '../name-list.js';
import { api, href } from '../route.js';
import { amountShort, badge, blockLink, card, notice, pageHead, rawLink, tile, time } from '../widgets.js';
import { setTitle, loadNames, entryLink } from './common.js';

function bars(obj: Record<string, number> | undefined): HTMLElement {
  const keys = Object.keys(obj ?? {});
  const o = obj ?? {};
  const max = Math.max(1, ...keys.map((k) => o[k]!));
  keys.sort((a, b) => o[b]! - o[a]!);
  return h(
    'div',
    { class: 'bars' },
    keys.map((k) => {
      const v = o[k]!;
      return [
        h('span', { class: v ? '' : 'zero' }, k.replace(/_/g, ' ')),
        h('span', { class: 'bar' }, v ? h('span', { style: `width:${((100 * v) / max).toFixed(1)}%` }) : null),
        h('span', { class: 'n', 'data-stat': k }, fmtInt(v)),
      ];
    }),
  );
}

export async function pageHome(): Promise<HTMLElement> {
  const [st, site] = await Promise.all([getJson<StatsDoc>(api.stats()), loadSite()]);
  if (!st.ok) return notice('Statistics unavailable', st.error ?? 'stats.json could not be read.');
  const s = st.body;
  const namesP = loadNames(site);
  const workDigits = /"work":(\d+)/.exec(st.text)?.[1] ?? String(s.work);
  setTitle(site.network);

  const blocks: BlockDoc[] = [];
  let hash = site.tip;
  for (let i = 0; i < 10 && hash; i++) {
    const b = await getJson<BlockDoc>(api.block(hash));
    if (!b.ok) break;
    blocks.push(b.body);
    hash = /^0+$/.test(b.body.prev_block) ? null : b.body.prev_block;
  }
  const latest = h(
    'table',
    null,
    h('thead', null, h('tr', null, h('th', { class: 'num' }, 'Height'), h('th', null, 'Block'), h('th', { class: 'hide-narrow' }, 'Time'), h('th', { class: 'num' }, 'Txs'), h('th', { class: 'num hide-narrow' }, 'Size'))),
    h(
      'tbody',
      null,
      blocks.map((b, i) =>
        h(
          'tr',
          { 'data-block': b.hash },
          h('td', { class: 'num' }, blockLink(b.hash, fmtInt(site.height! - i))),
          h('td', { class: 'hash-cell' }, h('span', { class: 'ellipsis' }, blockLink(b.hash))),
          h('td', { class: 'hide-narrow' }, time(b.time)),
          h('td', { class: 'num' }, fmtInt(b.n_tx)),
          h('td', { class: 'num hide-narrow' }, fmtInt(b.size) + ' B'),
        ),
      ),
    ),
  );

  const names = await namesP;
  const offchain = [...site.offchain].sort((a, b) => (b.height ?? -1) - (a.height ?? -1) || a.hash.localeCompare(b.hash));
  const offchainCard = offchain.length
    ? card(
        'Side and orphan blocks',
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { id: 'offchain' },
            h('thead', null, h('tr', null, h('th', { class: 'num' }, 'Height'), h('th', null, 'Block'), h('th', null, 'Kind'))),
            h(
              'tbody',
              null,
              offchain.map((b) =>
                h(
                  'tr',
                  { 'data-block': b.hash },
                  h('td', { class: 'num' }, b.height === null ? '\u2014' : fmtInt(b.height)),
                  h('td', { class: 'hash-cell' }, h('span', { class: 'ellipsis' }, blockLink(b.hash))),
                  h('td', null, badge(b.kind, 'warn')),
                ),
              ),
            ),
          ),
        ),
        fmtInt(offchain.length),
        { id: 'offchain-card' },
      )
    : null;

  const examples = names ? exampleNames(names.names) : [];
  const tiles = h(
    'div',
    { class: 'tiles' },
    site.height !== null && site.tip ? tile('Height', fmtInt(site.height), h('span', null, 'tip ', blockLink(site.tip, site.tip.slice(0, 12) + '\u2026')), 'height') : null,
    tile('Blocks', fmtInt(s.blocks.main), [fmtInt(s.blocks.side), ' side \u00b7 ', fmtInt(s.blocks.orphan), ' orphan', offchain.length ? [' \u00b7 ', h('a', { href: '#offchain-card', 'data-nav': 'offchain', onclick: jumpTo('offchain-card') }, 'list')] : null], 'blocks.main'),
    tile('Transactions', fmtInt(s.txs), `${fmtInt(s.txins)} inputs \u00b7 ${fmtInt(s.txouts)} outputs`, 'txs'),
    tile('Addresses', fmtInt(s.addrs), 'used', 'addrs'),
    tile('Coins issued', amountShort(s.coins), `${fmtInt(s.coins)} base units`, 'coins'),
    s.names !== undefined
      ? tile(
          'Names',
          names ? h('a', { href: href.names(), 'data-nav': 'names' }, fmtInt(names.count)) : '\u2014',
          [h('span', { 'data-field': 'names' }, fmtInt(s.names)), ' name operations'],
          'names.count',
        )
      : null,
    tile('Chain size', bytesHuman(s.blocks.size), `${fmtInt(s.blocks.size)} bytes`, 'size'),
    tile('Chain work', bigHuman(workDigits), workDigits.length > 15 ? `${workDigits.length} digits` : 'cumulative', 'work'),
  );

  return h(
    'div',
    null,
    pageHead('Overview', site.network || 'Chain snapshot', {
      actions: [names ? h('a', { class: 'raw', href: href.names(), 'data-nav': 'names' }, 'All names') : null, rawLink(api.stats(), api.stats())],
      sub: h('span', { class: 'muted' }, 'Snapshot of the tip block\u2019s time: ', time(s.time)),
    }),
    tiles,
    card('Latest blocks', blocks.length ? h('div', { class: 'table-wrap', id: 'latest' }, latest) : h('p', { class: 'muted' }, 'No block list available.')),
    offchainCard,
    h('div', { class: 'grid2' }, card('Output script types', bars(s.script_types)), card('P2SH inputs by redeem script', bars(s.p2sh_types))),
    h(
      'p',
      { class: 'hint', id: 'search-hint' },
      'Search by transaction id, block hash, address, block height' + (names ? ' or name' : ''),
      examples.length ? [' (e.g. ', examples.map((e, i) => [i ? ', ' : '', h('code', null, entryLink(e))]), '; ', h('a', { href: href.names() }, 'all names'), ')'] : null,
      '.',
    ),
  );
}

/** Scrolls to an element of the page without touching the route. */
function jumpTo(id: string): (e: Event) => void {
  return (e) => {
    e.preventDefault();
    document.getElementById(id)?.scrollIntoView();
  };
}
