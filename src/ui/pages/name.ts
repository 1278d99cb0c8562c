/** A name's page (current record and history) and the names index. */
import { getJson, loadSite, type NameDoc } from '../data.js';
import { h } from '../dom.js';
import { fmtInt, showName, visible } from '../format.js';
import { filterNames } from '../name-list.js';
import { HISTORY_QUERY, api, href } from '../route.js';
import { bytesToText, isUtf8 } from '../text.js';
import { addrLink, badge, blockLink, card, expiry, kv, notice, pageHead, paged, rawLink, txLink } from '../widgets.js';
import { setTitle, notFound, isNamecoin, loadNames, entryLink, confirmationsText } from './common.js';

function valueBox(v: string): HTMLElement {
  if (v === '') return h('div', { class: 'value-box empty', 'data-field': 'value' }, '(empty value)');
  let shown = v;
  try {
    const j: unknown = JSON.parse(v);
    if (j && typeof j === 'object') shown = JSON.stringify(j, null, 2);
  } catch {
    // not JSON: shown as it is
  }
  return h('div', { class: 'value-box', 'data-field': 'value', 'data-raw': v }, visible(shown));
}

export async function pageName(bytes: Uint8Array): Promise<HTMLElement> {
  const site = await loadSite();
  const hurl = api.name(bytes, HISTORY_QUERY);
  const r = await getJson<NameDoc[]>(hurl);
  const label = bytesToText(bytes);
  if (!r.ok || !Array.isArray(r.body) || r.body.length === 0) return notFound('Name', showName(label), r, api.name(bytes));
  const hist = r.body;
  const cur = hist[hist.length - 1]!;
  setTitle(showName(cur.name));
  const badges = [expiry(cur.expires_in)];
  if (!isUtf8(bytes)) badges.push(badge('not UTF-8: shown as Latin-1', 'warn'));
  const rows = [...hist].reverse().map((n, i) =>
    h(
      'tr',
      { 'data-txid': n.txid },
      h('td', { class: 'num' }, n.block && n.height !== undefined ? blockLink(n.block, fmtInt(n.height)) : fmtInt(n.height ?? 0)),
      h('td', { class: 'hash-cell' }, h('span', { class: 'ellipsis' }, txLink(n.txid)), i === 0 ? badge('current', 'info') : null),
      h('td', { class: 'hide-narrow' }, addrLink(n.address)),
      h('td', null, h('div', { class: 'value-box', 'data-field': 'value', 'data-raw': n.value }, n.value === '' ? '(empty)' : visible(n.value))),
    ),
  );
  return h(
    'div',
    null,
    pageHead('Name', showName(cur.name), {
      badges,
      actions: [rawLink(api.name(bytes), 'JSON'), rawLink(hurl, 'history JSON'), isNamecoin(site) ? h('a', { class: 'raw', href: href.names(), 'data-nav': 'names' }, 'All names') : null],
    }),
    card(
      'Current record',
      kv([
        ['Name', h('span', { class: 'mono' }, showName(cur.name)), 'name'],
        ['Value', valueBox(cur.value), 'value'],
        ['Owner', addrLink(cur.address), 'address'],
        ['Transaction', txLink(cur.txid), 'txid'],
        ['Block', cur.block && cur.height !== undefined ? [blockLink(cur.block, fmtInt(cur.height)), ' ', h('span', { class: 'hash faint' }, cur.block)] : null, 'block'],
        cur.height !== undefined ? ['Confirmations', confirmationsText(site, cur.height), 'confirmations'] : null,
        ['Expires in', [`${fmtInt(cur.expires_in)} blocks `, expiry(cur.expires_in)], 'expires_in'],
      ]),
    ),
    card(
      'History',
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { id: 'history' },
          h('thead', null, h('tr', null, h('th', { class: 'num' }, 'Height'), h('th', null, 'Transaction'), h('th', { class: 'hide-narrow' }, 'Owner'), h('th', null, 'Value'))),
          h('tbody', null, rows),
        ),
      ),
      hist.length + (hist.length === 1 ? ' operation' : ' operations, newest first'),
    ),
  );
}

export async function pageNames(filter: string): Promise<HTMLElement> {
  const site = await loadSite();
  const list = await loadNames(site);
  if (!list) {
    setTitle('Names');
    return h('div', { 'data-missing': 'names' }, notice('No names list', isNamecoin(site) ? 'names.json could not be read.' : `The ${site.network || 'snapshot'} network has no names.`));
  }
  setTitle('Names');
  const body = h('tbody');
  const count = h('span', { class: 'count', 'data-field': 'shown' });
  const holder = h('div');
  const show = (f: string) => {
    const shown = filterNames(list.names, f);
    count.textContent = f ? `${fmtInt(shown.length)} of ${fmtInt(list.count)}` : fmtInt(list.count);
    body.replaceChildren();
    const rows = paged(
      shown,
      (e) =>
        h(
          'tr',
          { 'data-path': e.path },
          h('td', { class: 'name-cell' }, entryLink(e)),
          h('td', { class: 'num' }, fmtInt(e.height)),
          h('td', { class: 'num' }, e.expires_in > 0 ? h('span', { class: 'faint' }, `in ${fmtInt(e.expires_in)}`) : badge('expired', 'bad')),
        ),
      100,
      body,
    );
    const table = h(
      'table',
      { id: 'names' },
      h('thead', null, h('tr', null, h('th', null, 'Name'), h('th', { class: 'num' }, 'Last update'), h('th', { class: 'num' }, 'Expires'))),
      body,
    );
    holder.replaceChildren(h('div', { class: 'table-wrap' }, table), Array.isArray(rows) ? rows[1] as Node : '');
  };
  const input = h('input', { id: 'names-filter', type: 'search', placeholder: 'Filter names', value: filter, spellcheck: 'false', autocapitalize: 'off', 'aria-label': 'Filter names' });
  input.addEventListener('input', () => {
    show(input.value);
    history.replaceState(null, '', href.names(input.value));
  });
  show(filter);
  return h(
    'div',
    null,
    pageHead('Names', 'All names', { sub: h('span', null, `Every name of the snapshot at height ${fmtInt(list.height)}, by path`), actions: [rawLink(api.names(), api.names())] }),
    card(h('span', null, 'Names ', count), [h('div', { class: 'filter' }, input), holder]),
  );
}
