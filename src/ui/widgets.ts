/** Page pieces of the browsing UI: amounts, times, links, cards, tiles, lists. */
import type { TxDoc, TxIn, TxOut } from './data.js';
import { add, h, type Child } from './dom.js';
import { amountParts, decimalToUnits, fmtInt, parseTime, relative, showName, unitsToDecimal, utcText } from './format.js';
import { href } from './route.js';
import { bytesToText, nameOpOfAsm, scriptKind, type NameOp } from './text.js';

let unit = '';
export function setUnit(u: string): void {
  unit = u;
}

/**
 * An amount given as a decimal string. Every digit is shown (trailing zeros faint) on one line:
 * in a tile the type shrinks to fit (app.css, from `--chars`), elsewhere the line wraps around it.
 */
export function amount(v: string, cls?: string): HTMLElement {
  const p = amountParts(v);
  const int = (p.neg ? '\u2212' : '') + p.int;
  const frac = p.frac || p.zeros ? '.' + p.frac + p.zeros : '';
  return h(
    'span',
    { class: 'amt' + (cls ? ' ' + cls : ''), 'data-value': v, style: fitChars(int + frac) },
    h('span', { class: 'int' }, int),
    h('span', { class: 'tail' }, frac ? h('span', { class: 'frac' }, '.' + p.frac, p.zeros ? h('span', { class: 'zeros' }, p.zeros) : null) : null, ' ', h('span', { class: 'unit' }, unit)),
  );
}

/** `--chars`: the amount's width in digit widths (its unit is smaller), for the tiles' shrink-to-fit. */
function fitChars(digits: string): string {
  return `--chars:${Math.ceil(digits.length + 0.5 + unit.length * 0.85)}`;
}

export function amountUnits(n: number, cls?: string): HTMLElement {
  return amount(unitsToDecimal(n), cls);
}

/** Overview style: trailing fractional zeros dropped. */
export function amountShort(n: number): HTMLElement {
  const p = amountParts(unitsToDecimal(n));
  const frac = p.frac ? '.' + p.frac : '';
  return h(
    'span',
    { class: 'amt', 'data-value': unitsToDecimal(n), style: fitChars(p.int + frac) },
    h('span', { class: 'int' }, p.int),
    h('span', { class: 'tail' }, frac ? h('span', { class: 'frac' }, frac) : null, ' ', h('span', { class: 'unit' }, unit)),
  );
}

/** Unix seconds or the API's "YYYY-MM-DD HH:MM:SS" (UTC). */
export function time(v: number | string): HTMLElement {
  const d = parseTime(v);
  if (isNaN(d.getTime())) return h('span', { class: 'time' }, String(v));
  return h('span', { class: 'time', title: d.toString() }, utcText(d) + ' UTC', h('span', { class: 'rel' }, `(${relative(d.getTime(), Date.now())})`));
}

export function txLink(id: string, n?: number, label?: string): HTMLElement {
  return h('a', { class: 'hash', href: href.tx(id), 'data-kind': 'tx' }, label ?? (n === undefined ? id : `${id}:${n}`));
}
export function blockLink(hash: string, label?: string): HTMLElement {
  return h('a', { class: 'hash', href: href.block(hash), 'data-kind': 'block' }, label ?? hash);
}
export function addrLink(a: string | null | undefined): HTMLElement {
  if (!a) return h('span', { class: 'muted' }, 'none');
  return h('a', { class: 'addr', href: href.address(a), 'data-kind': 'address' }, a);
}
export function nameLink(bytes: Uint8Array, label?: string): HTMLElement {
  return h('a', { class: 'name-link', href: href.name(bytes), 'data-kind': 'name' }, showName(label ?? bytesToText(bytes)));
}
export function rawLink(url: string, label = 'JSON'): HTMLElement {
  return h('a', { class: 'raw', href: url, target: '_blank', rel: 'noopener' }, label, ' \u2197');
}
export function badge(text: string, cls?: string): HTMLElement {
  return h('span', { class: 'badge' + (cls ? ' ' + cls : '') }, text);
}

export function nameOpChip(op: NameOp | null): HTMLElement | null {
  if (!op) return null;
  return h('span', { class: 'nameop' }, badge(op.op, 'info'), op.name ? nameLink(op.name) : null);
}
export function script(text: string | undefined): HTMLElement {
  return h('div', { class: 'script' }, !text ? '(empty)' : text);
}

export function pageHead(kind: string, title: Child, opts: { mono?: boolean; badges?: Child[]; sub?: Child; actions?: Child } = {}): HTMLElement {
  return h(
    'div',
    { class: 'page-head' },
    h(
      'div',
      { class: 'title' },
      h('div', { class: 'kind' }, kind, opts.badges?.length ? [' ', ...opts.badges] : null),
      h('h1', { class: opts.mono ? 'hash' : '', 'data-field': 'title' }, title),
      opts.sub ? h('div', { class: typeof opts.sub === 'string' ? 'hash muted' : 'muted', 'data-field': 'subtitle' }, opts.sub) : null,
    ),
    h('div', { class: 'actions' }, opts.actions ?? null),
  );
}

/** A definition list; rows whose value is null are left out. */
export function kv(rows: ([string, Child, string] | null)[]): HTMLElement {
  const dl = h('dl', { class: 'kv' });
  for (const r of rows) {
    if (!r || r[1] === null || r[1] === undefined) continue;
    add(dl, [h('dt', null, r[0]), h('dd', { 'data-field': r[2] }, r[1])]);
  }
  return dl;
}

export function card(title: Child, body: Child, count?: string, attrs: Record<string, string> = {}): HTMLElement {
  return h('section', { class: 'card', ...attrs }, title ? h('h2', null, title, count !== undefined ? h('span', { class: 'count' }, count) : null) : null, body);
}

export function tile(label: string, value: Child, sub: Child, field: string, wide = false): HTMLElement {
  return h('div', { class: 'tile' + (wide ? ' wide' : '') }, h('div', { class: 'label' }, label), h('div', { class: 'value', 'data-field': field }, value), sub ? h('div', { class: 'sub' }, sub) : null);
}

export function notice(title: string, text: string, extra?: Child): HTMLElement {
  return h('div', { class: 'notice error', 'data-field': 'notice' }, h('h1', null, title), h('p', null, text), extra ?? null);
}

/** Renders items in slices with a "Show more" button (huge blocks and addresses stay fast). */
export function paged<T>(items: readonly T[], render: (item: T, i: number) => Child, size: number, list: HTMLElement): Child {
  let shown = 0;
  const more = h('button', { class: 'secondary more', type: 'button' });
  const step = () => {
    const end = Math.min(items.length, shown + size);
    for (; shown < end; shown++) add(list, render(items[shown]!, shown));
    if (shown < items.length) more.textContent = `Show more (${fmtInt(items.length - shown)} left)`;
    else more.remove();
  };
  more.addEventListener('click', step);
  step();
  return shown < items.length ? [list, more] : list;
}

export function outputWho(o: TxOut): HTMLElement {
  if (o.address) return addrLink(o.address);
  return h('span', { class: 'muted' }, scriptKind(o.scriptPubKey));
}

export function isCoinbase(tx: TxDoc): boolean {
  return tx.in[0]?.coinbase !== undefined;
}

/** Compact transaction (block and address pages). */
export function txSummary(tx: TxDoc, opts: { address?: string; prevOut?: (i: TxIn) => TxOut | null; extra?: Child } = {}): HTMLElement {
  const total = tx.out.reduce((s, o) => s + decimalToUnits(o.value), 0);
  const ins = h('ul', { class: 'io-list' });
  if (isCoinbase(tx)) add(ins, h('li', { class: 'io-item' }, badge('coinbase', 'good'), ' ', h('span', { class: 'muted' }, 'new coins')));
  else {
    const shown = tx.in.slice(0, 6);
    for (const i of shown) {
      const prev = opts.prevOut ? opts.prevOut(i) : null;
      add(ins, h('li', { class: 'io-item' }, h('div', { class: 'line' }, h('span', { class: 'who' }, prev?.address ? addrLink(prev.address) : txLink(i.prev_out.hash, i.prev_out.n)), prev ? amount(prev.value) : null)));
    }
    if (tx.in.length > shown.length) add(ins, h('li', { class: 'io-item muted' }, `\u2026 ${tx.in.length - shown.length} more inputs`));
  }
  const outs = h('ul', { class: 'io-list' });
  const shownOuts = tx.out.slice(0, 8);
  for (const o of shownOuts) {
    const mine = opts.address !== undefined && o.address === opts.address;
    add(
      outs,
      h(
        'li',
        { class: 'io-item' },
        h('div', { class: 'line' }, h('span', { class: 'who' }, mine ? h('strong', { class: 'addr' }, o.address!) : outputWho(o)), amount(o.value)),
        nameOpChip(nameOpOfAsm(o.scriptPubKey, tx.ver)),
      ),
    );
  }
  if (tx.out.length > shownOuts.length) add(outs, h('li', { class: 'io-item muted' }, `\u2026 ${tx.out.length - shownOuts.length} more outputs`));
  return h(
    'div',
    { class: 'txrow', 'data-tx': tx.hash },
    h('div', { class: 'txrow-head' }, h('span', { class: 'ellipsis' }, txLink(tx.hash)), h('span', { class: 'txrow-meta' }, opts.extra ?? amountUnits(total))),
    h('div', { class: 'io' }, ins, h('div', { class: 'arrow' }, '\u2192'), outs),
  );
}

export function expiry(n: number): HTMLElement {
  return n > 0 ? badge(`expires in ${fmtInt(n)} blocks`, 'good') : badge(n === 0 ? 'expires now' : `expired ${fmtInt(-n)} blocks ago`, 'bad');
}
