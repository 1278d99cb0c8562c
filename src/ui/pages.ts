/** The pages of the browsing UI: one async function per route, each returning the page's node. */
import { getJson, loadSite, type AddressDoc, type BlockDoc, type Fetched, type NameDoc, type Site, type StatsDoc, type TxDoc, type TxIn, type TxOut } from './data.js';
import { h, type Child } from './dom.js';
import { bigHuman, bytesHuman, confirmations, decimalToUnits, fmtInt, showName, visible } from './format.js';
import { exampleNames, filterNames, type NameEntry, type NameList } from './names.js';
import { HISTORY_QUERY, api, href, searchPlan, type Route } from './route.js';
import { bytesToText, isUtf8, nameBytesOf, nameOpOfAsm } from './text.js';
import {
  addrLink,
  amount,
  amountShort,
  amountUnits,
  badge,
  blockLink,
  card,
  expiry,
  isCoinbase,
  kv,
  nameLink,
  nameOpChip,
  notice,
  outputWho,
  pageHead,
  paged,
  rawLink,
  script,
  tile,
  time,
  txLink,
  txSummary,
} from './widgets.js';

const TITLE = 'chain snapshot';

function setTitle(t: string): void {
  document.title = t ? `${t} \u00b7 ${TITLE}` : TITLE;
}

function notFound(kind: string, id: string, r: Fetched<unknown>, url: string): HTMLElement {
  setTitle(`${kind} not found`);
  return h('div', { 'data-missing': kind }, notice(`${kind} not found`, r.error ?? `${kind} not found.`, h('p', { class: 'hint' }, visible(id), ' \u00b7 ', rawLink(url))));
}

function isNamecoin(site: Site): boolean {
  return site.network.startsWith('namecoin');
}

/** names.json, or null (not a Namecoin tree, or a tree built before the list existed). */
async function loadNames(site: Site): Promise<NameList | null> {
  if (!isNamecoin(site)) return null;
  const r = await getJson<NameList>(api.names());
  return r.ok && Array.isArray(r.body.names) ? r.body : null;
}

function entryLink(e: NameEntry): HTMLElement {
  const bytes = nameBytesOf(e.name, e.path);
  return bytes ? nameLink(bytes, e.name) : h('span', null, showName(e.name));
}

function confirmationsText(site: Site, height: number): string | null {
  return site.height === null ? null : fmtInt(confirmations(site.height, height));
}

// ---------------------------------------------------------------------------------------------
// Overview

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
    names ? tile('Names', h('a', { href: href.names(), 'data-nav': 'names' }, fmtInt(names.count)), h('a', { href: href.names() }, 'browse all names'), 'names.count') : null,
    s.names !== undefined ? tile('Name operations', fmtInt(s.names), 'name_new, firstupdate, update', 'names') : null,
    tile('Chain size', bytesHuman(s.blocks.size), `${fmtInt(s.blocks.size)} bytes`, 'size'),
    tile('Chain work', bigHuman(workDigits), workDigits.length > 15 ? `${workDigits.length} digits` : 'cumulative', 'work'),
  );

  return h(
    'div',
    null,
    pageHead('Overview', site.network || 'Chain snapshot', {
      actions: [names ? h('a', { class: 'raw', href: href.names(), 'data-nav': 'names' }, 'All names') : null, rawLink(api.stats(), 'stats.json')],
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

// ---------------------------------------------------------------------------------------------
// Block

export async function pageBlock(hash: string): Promise<HTMLElement> {
  const site = await loadSite();
  const r = await getJson<BlockDoc>(api.block(hash));
  if (!r.ok) return notFound('Block', hash, r, api.block(hash));
  const b = r.body;
  // Blocks have no height field: the coinbase tx document names its main-chain block.
  let height: number | null = null;
  let main = false;
  if (b.tx[0]) {
    const cb = await getJson<TxDoc>(api.tx(b.tx[0].hash));
    if (cb.ok && cb.body.block === b.hash && cb.body.blocknumber !== undefined) {
      height = cb.body.blocknumber;
      main = true;
    }
  }
  const off = site.offchain.find((o) => o.hash === b.hash);
  if (!main && off) height = off.height;
  setTitle(`Block ${height ?? hash.slice(0, 12)}`);
  const status = main ? badge('main chain', 'good') : badge(off ? `${off.kind} block: not in the main chain` : 'not in the main chain', 'warn');
  const nav = [
    b.prev_block && !/^0+$/.test(b.prev_block) ? h('a', { class: 'raw', href: href.block(b.prev_block), 'data-nav': 'prev' }, '\u2190 Previous') : null,
    b.next_block ? h('a', { class: 'raw', href: href.block(b.next_block), 'data-nav': 'next' }, 'Next \u2192') : null,
    rawLink(api.block(hash)),
    rawLink(`block/${hash}.hex`, 'hex'),
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

// ---------------------------------------------------------------------------------------------
// Transaction

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
      actions: [rawLink(api.tx(id)), rawLink(`tx/${id}.hex`, 'hex')],
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

// ---------------------------------------------------------------------------------------------
// Address

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

// ---------------------------------------------------------------------------------------------
// Names

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
      h('td', null, h('div', { class: 'value-box small', 'data-field': 'value', 'data-raw': n.value }, n.value === '' ? '(empty)' : visible(n.value))),
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
    pageHead('Names', 'All names', { sub: h('span', null, `Every name of the snapshot at height ${fmtInt(list.height)}, by path`), actions: [rawLink(api.names(), 'names.json')] }),
    card(h('span', null, 'Names ', count), [h('div', { class: 'filter' }, input), holder]),
  );
}

// ---------------------------------------------------------------------------------------------
// Search (guess by shape)

async function resolve(text: string): Promise<string | null> {
  const site = await loadSite();
  for (const step of searchPlan(text, site.height)) {
    switch (step.try) {
      case 'tx':
      case 'block':
        if ((await getJson(api[step.try](step.id))).ok) return href[step.try](step.id);
        break;
      case 'height': {
        let hash = site.tip;
        for (let i = site.height!; i > step.height && hash; i--) {
          const b = await getJson<BlockDoc>(api.block(hash));
          if (!b.ok) return null;
          hash = b.body.prev_block;
        }
        if (hash) return href.block(hash);
        break;
      }
      case 'address': {
        const a = await getJson(api.address(step.address));
        if (a.ok || a.status === 500) return href.address(step.address);
        break;
      }
      case 'name':
        if (isNamecoin(site) && (await getJson(api.name(step.bytes, HISTORY_QUERY))).ok) return href.name(step.bytes);
        break;
    }
  }
  return null;
}

export async function pageSearch(text: string, render: (r: Route) => Promise<HTMLElement>, parse: (hash: string) => Route): Promise<HTMLElement> {
  const target = await resolve(text);
  if (target) {
    history.replaceState(null, '', target);
    return render(parse(target));
  }
  setTitle('Not found');
  return h(
    'div',
    { 'data-missing': 'search' },
    notice(
      'Nothing found',
      `No transaction, block, address or name matches \u201c${visible(text)}\u201d.`,
      h('p', { class: 'hint' }, 'Search takes a 64-digit transaction id or block hash, an address, a block height near the tip, or a name.'),
    ),
  );
}

