/** A transaction page: inputs with the outputs they spend, outputs with their spenders. */
import { getJson, loadSite, type TxDoc, type TxIn, type TxOut } from '../data.js';
import { h } from '../dom.js';
import { decimalToUnits, fmtInt } from '../format.js';
import { api } from '../route.js';
import { nameOpOfAsm } from '../text.js';
import { amount, amountUnits, badge, blockLink, card, isCoinbase, kv, nameOpChip, outputWho, pageHead, rawLink, script, time, txLink } from '../widgets.js';
import { setTitle, notFound, confirmationsText } from './common.js';

export async function pageTx(id: string): Promise<HTMLElement> {
  const site = await loadSite();
  const r = await getJson<TxDoc>(api.tx(id));
  if (!r.ok) return notFound('Transaction', id, r, api.tx(id));
  const tx = r.body;
  const coinbase = isCoinbase(tx);
  setTitle(`Tx ${id.slice(0, 12)}\u2026`);
  // Input values and addresses come from the spent outputs (fetched for up to 50 inputs).
  const prevs = new Map<string, TxDoc>();
  if (!coinbase) {
    const ids = [...new Set(tx.in.map((i) => i.prev_out.hash))].slice(0, 50);
    const docs = await Promise.all(ids.map((p) => getJson<TxDoc>(api.tx(p))));
    ids.forEach((p, k) => {
      if (docs[k]!.ok) prevs.set(p, docs[k]!.body);
    });
  }
  const prevOut = (i: TxIn): TxOut | null => prevs.get(i.prev_out.hash)?.out[i.prev_out.n] ?? null;
  const totalOut = tx.out.reduce((s, o) => s + decimalToUnits(o.value), 0);
  let totalIn = 0;
  let inKnown = !coinbase;
  for (const i of tx.in) {
    const p = prevOut(i);
    if (p) totalIn += decimalToUnits(p.value);
    else inKnown = false;
  }

  const ins = h(
    'ol',
    { class: 'io-list', id: 'inputs' },
    tx.in.map((i, k) => {
      if (i.coinbase !== undefined) {
        return h(
          'li',
          { class: 'io-item' },
          h('div', { class: 'line' }, h('span', { class: 'who' }, h('span', { class: 'idx' }, `#${k}`), badge('coinbase', 'good'), ' ', h('span', { class: 'muted' }, 'newly generated coins'))),
          h('div', { class: 'script', 'data-field': 'coinbase' }, i.coinbase),
        );
      }
      const p = prevOut(i);
      return h(
        'li',
        { class: 'io-item', 'data-prev': `${i.prev_out.hash}:${i.prev_out.n}` },
        h('div', { class: 'line' }, h('span', { class: 'who' }, h('span', { class: 'idx' }, `#${k}`), p ? outputWho(p) : null), p ? amount(p.value) : null),
        h('div', { class: 'meta' }, 'spends ', txLink(i.prev_out.hash, i.prev_out.n), i.sequence !== undefined ? h('span', { class: 'faint' }, ` \u00b7 sequence ${i.sequence}`) : null),
        script(i.scriptSig),
        i.witness ? h('div', { class: 'script' }, h('span', { class: 'faint' }, 'witness'), '\n', i.witness.join('\n')) : null,
      );
    }),
  );
  const outs = h(
    'ol',
    { class: 'io-list', id: 'outputs' },
    tx.out.map((o, k) =>
      h(
        'li',
        { class: 'io-item', 'data-n': k },
        h('div', { class: 'line' }, h('span', { class: 'who' }, h('span', { class: 'idx' }, `#${k}`), outputWho(o)), amount(o.value)),
        nameOpChip(nameOpOfAsm(o.scriptPubKey, tx.ver)),
        h('div', { class: 'meta' }, o.next_in ? ['spent by ', txLink(o.next_in.hash, o.next_in.n)] : badge('unspent', 'good')),
        script(o.scriptPubKey),
      ),
    ),
  );
  const ops = tx.out.map((o) => nameOpOfAsm(o.scriptPubKey, tx.ver)).filter((x) => x !== null);
  const details = kv([
    ['Hash', h('span', { class: 'hash' }, tx.hash), 'hash'],
    ['Block', tx.block && tx.blocknumber !== undefined ? [blockLink(tx.block, fmtInt(tx.blocknumber)), ' ', h('span', { class: 'hash faint' }, tx.block)] : null, 'block'],
    tx.blocknumber !== undefined ? ['Confirmations', confirmationsText(site, tx.blocknumber), 'confirmations'] : null,
    ['Time', tx.time ? time(tx.time) : null, 'time'],
    ['Inputs \u2192 outputs', `${tx.vin_sz} \u2192 ${tx.vout_sz}`, 'io'],
    ['Total output', amountUnits(totalOut), 'total_out'],
    ['Fee', coinbase ? h('span', { class: 'muted' }, 'none (coinbase)') : inKnown ? amountUnits(totalIn - totalOut) : h('span', { class: 'muted' }, 'unknown'), 'fee'],
    ['Size', `${fmtInt(tx.size)} bytes`, 'size'],
    ['Version', String(tx.ver), 'ver'],
    ['Lock time', String(tx.lock_time), 'lock_time'],
    tx.nid ? ['Normalized id', h('span', { class: 'hash' }, tx.nid), 'nid'] : null,
  ]);
  return h(
    'div',
    null,
    pageHead('Transaction', tx.hash, {
      mono: true,
      badges: [coinbase ? badge('coinbase', 'good') : null, ...ops.map((op) => badge(op.op, 'info'))],
      actions: [rawLink(api.tx(id)), rawLink(api.tx(id, 'hex'), 'hex')],
    }),
    card('Details', details),
    card(
      'Inputs and outputs',
      h(
        'div',
        { class: 'io' },
        h('div', null, h('h3', { class: 'kind' }, `Inputs (${tx.vin_sz})`), ins),
        h('div', { class: 'arrow' }, '\u2192'),
        h('div', null, h('h3', { class: 'kind' }, `Outputs (${tx.vout_sz})`), outs),
      ),
    ),
  );
}
