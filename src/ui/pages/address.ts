/** An address page: totals, the history, then the unspent outputs (collapsed). */
import { getJson, loadSite, type AddressDoc, type TxDoc, type TxIn, type TxOut } from '../data.js';
import { h } from '../dom.js';
import { decimalToUnits, fmtInt } from '../format.js';
import { api } from '../route.js';
import { nameOpOfAsm } from '../text.js';
import { amount, amountUnits, blockLink, card, kv, nameOpChip, notice, pageHead, paged, rawLink, tile, txLink, txSummary } from '../widgets.js';
import { setTitle, notFound } from './common.js';

export async function pageAddress(addr: string): Promise<HTMLElement> {
  await loadSite();
  const url = api.address(addr);
  const r = await getJson<AddressDoc>(url);
  if (!r.ok) {
    if (r.status === 500 && r.error) {
      setTitle(addr);
      return h(
        'div',
        null,
        pageHead('Address', addr, { mono: true, actions: [rawLink(url)] }),
        notice('Address too large for this snapshot', r.error, h('p', { class: 'hint' }, 'The build caps address documents; see the raw JSON.')),
      );
    }
    return notFound('Address', addr, r, url);
  }
  const a = r.body;
  setTitle(a.address);
  const txs = Object.values(a.transactions);
  txs.sort((x, y) => (y.blocknumber ?? 0) - (x.blocknumber ?? 0));
  const prevOut = (i: TxIn): TxOut | null => a.transactions[i.prev_out.hash]?.out[i.prev_out.n] ?? null;
  const delta = (tx: TxDoc): number => {
    let d = 0;
    for (const o of tx.out) if (o.address === a.address) d += decimalToUnits(o.value);
    for (const i of tx.in) {
      const p = i.coinbase === undefined ? prevOut(i) : null;
      if (p && p.address === a.address) d -= decimalToUnits(p.value);
    }
    return d;
  };
  const unspentRows = a.unspent.map((u) =>
    h(
      'tr',
      { 'data-out': `${u.tx.hash}:${u.tx.n}` },
      h('td', { class: 'hash-cell' }, h('span', { class: 'ellipsis' }, txLink(u.tx.hash, u.tx.n)), nameOpChip(nameOpOfAsm(u.scriptPubKey, a.transactions[u.tx.hash]?.ver))),
      h('td', { class: 'num' }, amount(u.value)),
    ),
  );
  const unspent = h('table', { id: 'unspent' }, h('thead', null, h('tr', null, h('th', null, 'Output'), h('th', { class: 'num' }, 'Amount'))), h('tbody', null, unspentRows));
  const list = paged(
    txs,
    (tx) => {
      const d = delta(tx);
      return txSummary(tx, {
        address: a.address,
        prevOut,
        extra: [
          tx.blocknumber !== undefined && tx.block ? blockLink(tx.block, `#${fmtInt(tx.blocknumber)}`) : null,
          tx.time ? h('span', { class: 'faint' }, `${tx.time} UTC`) : null,
          h('span', { class: 'delta', 'data-field': 'delta', title: 'Change of this address\u2019s balance' }, d > 0 ? h('span', { class: 'amt pos' }, '+') : null, amountUnits(d, d > 0 ? 'pos' : d < 0 ? 'neg' : '')),
        ],
      });
    },
    25,
    h('div', { id: 'address-txs' }),
  );
  const n = a.unspent.length;
  return h(
    'div',
    null,
    pageHead('Address', a.address, { mono: true, actions: [rawLink(url)] }),
    h(
      'div',
      { class: 'tiles' },
      tile('Balance', amountUnits(a.balance), null, 'balance', true),
      tile('Received', amountUnits(a.coin_in), `${fmtInt(a.tx_in_sz)} transactions`, 'coin_in', true),
      tile('Sent', amountUnits(a.coin_out), `${fmtInt(a.tx_out_sz)} transactions`, 'coin_out', true),
      tile('Transactions', fmtInt(a.tx_sz), `${fmtInt(n)} unspent outputs`, 'tx_sz', true),
    ),
    card('Details', kv([['Address', h('span', { class: 'addr' }, a.address), 'address'], ['Hash160', h('span', { class: 'hash' }, a.hash160), 'hash160']])),
    card('Transactions', list, fmtInt(a.tx_sz), { id: 'history-card' }),
    n
      ? h(
          'details',
          { class: 'card collapsible', id: 'unspent-card' },
          h('summary', null, h('h2', null, 'Unspent outputs', h('span', { class: 'count' }, fmtInt(n)))),
          h('div', { class: 'table-wrap' }, unspent),
        )
      : null,
  );
}
