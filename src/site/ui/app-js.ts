/**
 * `assets/app.js`: the browsing UI's one script. Plain browser JavaScript (no framework, no
 * build step, no network access beyond the site's own public JSON URLs), kept as a string so it
 * ships inside dist/ and runs unchanged under vitest. It must not contain a backtick or a
 * dollar-brace (it lives in a String.raw template).
 *
 * Hash routes: #/ (overview), #/block/<hash>, #/tx/<txid>, #/address/<addr>,
 * #/name/<percent-encoded name bytes>, #/search/<text>.
 */
export const APP_JS = String.raw`(function () {
'use strict';

// ---------------------------------------------------------------------------------------------
// Small helpers

var main = document.getElementById('main');
var form = document.getElementById('search');
var input = document.getElementById('q');
var netBadge = document.getElementById('net');
var HEX = '0123456789ABCDEF';
var utf8 = new TextEncoder();
var strictUtf8 = new TextDecoder('utf-8', { fatal: true });
var site = null;
var unit = '';
var renderSeq = 0;
var timings = [];

function h(tag, attrs) {
  var el = document.createElement(tag);
  if (attrs) {
    for (var k in attrs) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k.slice(0, 2) === 'on') el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (var i = 2; i < arguments.length; i++) add(el, arguments[i]);
  return el;
}
function add(el, c) {
  if (c === null || c === undefined || c === false) return;
  if (Array.isArray(c)) { for (var i = 0; i < c.length; i++) add(el, c[i]); return; }
  el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
}

function hexToBytes(hex) {
  var out = new Uint8Array(hex.length >> 1);
  for (var i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}
function bytesToHex(b) {
  var s = '';
  for (var i = 0; i < b.length; i++) s += (b[i] < 16 ? '0' : '') + b[i].toString(16);
  return s;
}
function isUtf8(b) {
  try { strictUtf8.decode(b); return true; } catch (e) { return false; }
}
/** As the build decodes names and values: UTF-8, else Latin-1 (each byte one U+00XX). */
function bytesToText(b) {
  try { return strictUtf8.decode(b); } catch (e) {
    var s = '';
    for (var i = 0; i < b.length; i++) s += String.fromCharCode(b[i]);
    return s;
  }
}
function latin1Bytes(s) {
  var out = new Uint8Array(s.length);
  for (var i = 0; i < s.length; i++) {
    var c = s.charCodeAt(i);
    if (c > 255) return null;
    out[i] = c;
  }
  return out;
}
function isSafeByte(b) {
  return (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b === 45 || b === 46 || b === 95;
}
/** Name bytes in a #/name/ route: safe bytes and '/' as they are, everything else %XX. */
function pctEncodeBytes(b) {
  var s = '';
  for (var i = 0; i < b.length; i++) {
    var c = b[i];
    s += isSafeByte(c) || c === 47 ? String.fromCharCode(c) : '%' + HEX[c >> 4] + HEX[c & 15];
  }
  return s;
}
/** Inverse of pctEncodeBytes, lenient: stray characters count as their UTF-8 bytes. */
function pctDecodeBytes(s) {
  var out = [];
  for (var i = 0; i < s.length; i++) {
    var ch = s.charAt(i);
    if (ch === '%' && /^[0-9A-Fa-f]{2}$/.test(s.substr(i + 1, 2))) {
      out.push(parseInt(s.substr(i + 1, 2), 16));
      i += 2;
    } else {
      var cp = s.codePointAt(i);
      var enc = utf8.encode(String.fromCodePoint(cp));
      for (var j = 0; j < enc.length; j++) out.push(enc[j]);
      if (cp > 0xffff) i++;
    }
  }
  return new Uint8Array(out);
}

// SHA-256 (for the long-name path form only).
var SHA_K = [], SHA_H = [];
(function () {
  var n = 2, found = 0;
  while (found < 64) {
    var prime = true;
    for (var d = 2; d * d <= n; d++) if (n % d === 0) { prime = false; break; }
    if (prime) {
      if (found < 8) SHA_H[found] = (Math.pow(n, 1 / 2) * 4294967296) | 0;
      SHA_K[found] = (Math.pow(n, 1 / 3) * 4294967296) | 0;
      found++;
    }
    n++;
  }
})();
function sha256(msg) {
  var len = msg.length, total = ((len + 9 + 63) >> 6) << 6;
  var buf = new Uint8Array(total);
  buf.set(msg);
  buf[len] = 0x80;
  var dv = new DataView(buf.buffer);
  dv.setUint32(total - 8, Math.floor(len / 536870912));
  dv.setUint32(total - 4, (len << 3) >>> 0);
  var H = SHA_H.slice(), W = new Int32Array(64);
  function rotr(x, r) { return (x >>> r) | (x << (32 - r)); }
  for (var off = 0; off < total; off += 64) {
    for (var t = 0; t < 16; t++) W[t] = dv.getInt32(off + t * 4);
    for (t = 16; t < 64; t++) {
      var a15 = W[t - 15], a2 = W[t - 2];
      var s0 = rotr(a15, 7) ^ rotr(a15, 18) ^ (a15 >>> 3);
      var s1 = rotr(a2, 17) ^ rotr(a2, 19) ^ (a2 >>> 10);
      W[t] = (W[t - 16] + s0 + W[t - 7] + s1) | 0;
    }
    var a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], hh = H[7];
    for (t = 0; t < 64; t++) {
      var t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + SHA_K[t] + W[t]) | 0;
      var t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    H[0] = (H[0] + a) | 0; H[1] = (H[1] + b) | 0; H[2] = (H[2] + c) | 0; H[3] = (H[3] + d) | 0;
    H[4] = (H[4] + e) | 0; H[5] = (H[5] + f) | 0; H[6] = (H[6] + g) | 0; H[7] = (H[7] + hh) | 0;
  }
  var out = new Uint8Array(32), odv = new DataView(out.buffer);
  for (var i = 0; i < 8; i++) odv.setInt32(i * 4, H[i]);
  return out;
}

/**
 * The canonical file path of a name below name/ (the build's encodeNamePath): works on every
 * host, plain static ones included, and for names with '.'/'..' segments or NUL bytes that a
 * percent-encoded URL cannot carry.
 */
function encodeNamePath(name) {
  if (name.length === 0) return '~';
  var segs = [], seg = '';
  for (var i = 0; i < name.length; i++) {
    var b = name[i];
    if (b === 47) {
      if (seg !== '' && i !== name.length - 1) { segs.push(seg); seg = ''; } else seg += '~2F';
    } else if (b !== 46 && isSafeByte(b)) {
      seg += String.fromCharCode(b);
    } else if (b === 46) {
      seg += seg === '' ? '~2E' : '.';
    } else {
      seg += '~' + HEX[b >> 4] + HEX[b & 15];
    }
  }
  segs.push(seg);
  for (i = 0; i < segs.length - 1; i++) {
    if (segs[i].slice(-5) === '.json') segs[i] = segs[i].slice(0, -5) + '~2Ejson';
  }
  var p = segs.join('/');
  if (p.length > 895 || segs.some(function (s) { return s.length > 245; })) {
    var hx = bytesToHex(sha256(name));
    return '~x/' + hx.slice(0, 2) + '/' + hx;
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// The JSON API (relative URLs: the UI sits at the site root)

var HISTORY_QUERY = 'history&with_block&with_height';
var api = {
  stats: function () { return 'stats.json'; },
  site: function () { return 'assets/site.json'; },
  tx: function (id) { return 'tx/' + id + '.json'; },
  block: function (id) { return 'block/' + id + '.json'; },
  address: function (a) { return 'address/' + encodeURIComponent(a) + '.json'; },
  name: function (bytes, query) { return 'name/' + encodeNamePath(bytes) + '.json' + (query ? '?' + query : ''); },
};

var cache = new Map();
function getJson(url) {
  var hit = cache.get(url);
  if (hit) return hit;
  var p = fetch(url, { headers: { Accept: 'application/json' } }).then(function (r) {
    return r.text().then(function (text) {
      var body = null;
      try { body = JSON.parse(text); } catch (e) { body = null; }
      var err = body && !Array.isArray(body) && typeof body === 'object' && typeof body.error === 'string' ? body.error : null;
      return { ok: r.ok && body !== null && err === null, status: r.status, body: body, text: text, error: err || (body === null ? 'HTTP ' + r.status : null) };
    });
  });
  if (cache.size > 300) cache.delete(cache.keys().next().value);
  cache.set(url, p);
  p.catch(function () { cache.delete(url); });
  return p;
}

// ---------------------------------------------------------------------------------------------
// Formatting

function group(digits) { return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
function fmtInt(n) { return group(String(n)); }
/** Base units (integer, number or digit string) → "12.34500000". */
function unitsToDecimal(n) {
  var s = String(n), neg = s.charAt(0) === '-';
  if (neg) s = s.slice(1);
  while (s.length < 9) s = '0' + s;
  return (neg ? '-' : '') + s.slice(0, -8) + '.' + s.slice(-8);
}
/** "12.34500000" → base units (a Number; exact below 2^53). */
function decimalToUnits(v) {
  var neg = v.charAt(0) === '-';
  if (neg) v = v.slice(1);
  var parts = v.split('.'), frac = ((parts[1] || '') + '00000000').slice(0, 8);
  var n = Number(parts[0] || '0') * 1e8 + Number(frac);
  return neg ? -n : n;
}
/** An amount given as a decimal string with eight fractional digits. */
function amount(v, cls) {
  var neg = v.charAt(0) === '-', s = neg ? v.slice(1) : v;
  var parts = s.split('.'), ip = parts[0] || '0', fp = parts[1] || '';
  var sig = fp.replace(/0+$/, ''), zeros = fp.slice(sig.length);
  return h('span', { class: 'amt' + (cls ? ' ' + cls : ''), 'data-value': v },
    neg ? '\u2212' : '', group(ip), fp ? '.' + sig : '', zeros ? h('span', { class: 'zeros' }, zeros) : null, ' ',
    h('span', { class: 'unit' }, unit));
}
function amountUnits(n, cls) { return amount(unitsToDecimal(n), cls); }
/** Whole-coin style for overview tiles: trailing fractional zeros dropped. */
function amountShort(n) {
  var v = unitsToDecimal(n).replace(/\.?0+$/, '');
  var parts = v.split('.');
  return h('span', { class: 'amt', 'data-value': unitsToDecimal(n) }, group(parts[0]), parts[1] ? '.' + parts[1] : '', ' ', h('span', { class: 'unit' }, unit));
}
function pad2(n) { return (n < 10 ? '0' : '') + n; }
function utcText(d) {
  return d.getUTCFullYear() + '-' + pad2(d.getUTCMonth() + 1) + '-' + pad2(d.getUTCDate()) + ' ' +
    pad2(d.getUTCHours()) + ':' + pad2(d.getUTCMinutes()) + ':' + pad2(d.getUTCSeconds());
}
function relative(ms) {
  var s = Math.round((Date.now() - ms) / 1000), fut = s < 0;
  s = Math.abs(s);
  var t = s < 60 ? s + ' s' : s < 3600 ? Math.round(s / 60) + ' min' : s < 86400 ? Math.round(s / 3600) + ' h' :
    s < 86400 * 365 ? Math.round(s / 86400) + ' d' : (s / (86400 * 365.25)).toFixed(1) + ' y';
  return fut ? 'in ' + t : t + ' ago';
}
/** Unix seconds or the API's "YYYY-MM-DD HH:MM:SS" (UTC). */
function time(v) {
  var d = typeof v === 'number' ? new Date(v * 1000) : new Date(String(v).replace(' ', 'T') + 'Z');
  if (isNaN(d.getTime())) return h('span', { class: 'time' }, String(v));
  return h('span', { class: 'time', title: d.toString() }, utcText(d) + ' UTC', h('span', { class: 'rel' }, '(' + relative(d.getTime()) + ')'));
}
function bytesHuman(n) {
  if (n < 1000) return n + ' B';
  var units = ['kB', 'MB', 'GB', 'TB'], i = -1;
  do { n /= 1000; i++; } while (n >= 1000 && i < units.length - 1);
  return n.toFixed(n < 10 ? 2 : 1) + ' ' + units[i];
}
function bigHuman(digits) {
  if (digits.length <= 15) return fmtInt(digits);
  return digits.charAt(0) + '.' + digits.slice(1, 4) + ' \u00d7 10^' + (digits.length - 1);
}
/** Control characters made visible (names and values may hold any bytes). */
function visible(s) {
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, function (c) {
    var n = c.charCodeAt(0);
    return '\\x' + HEX[n >> 4] + HEX[n & 15];
  });
}
function showName(s) { return s === '' ? '(empty name)' : visible(s).replace(/\n/g, '\\n'); }

// ---------------------------------------------------------------------------------------------
// Links

function txLink(id, n, label) {
  return h('a', { class: 'hash', href: '#/tx/' + id, 'data-kind': 'tx' }, label || (n === undefined ? id : id + ':' + n));
}
function blockLink(hash, label) { return h('a', { class: 'hash', href: '#/block/' + hash, 'data-kind': 'block' }, label || hash); }
function addrLink(a) { return h('a', { class: 'addr', href: '#/address/' + encodeURIComponent(a), 'data-kind': 'address' }, a); }
function nameHref(bytes) { return '#/name/' + pctEncodeBytes(bytes); }
function nameLink(bytes) { return h('a', { class: 'name-link', href: nameHref(bytes), 'data-kind': 'name' }, showName(bytesToText(bytes))); }
function rawLink(url, label) { return h('a', { class: 'raw', href: url, target: '_blank', rel: 'noopener' }, label || 'JSON', ' \u2197'); }
function badge(text, cls) { return h('span', { class: 'badge' + (cls ? ' ' + cls : '') }, text); }

// ---------------------------------------------------------------------------------------------
// Scripts

/** One ASM token as pushed bytes, or null when it is an opcode. */
function pushBytes(tok) {
  if (tok === '0') return new Uint8Array(0);
  if (/^(1[0-6]|[1-9])$/.test(tok)) return new Uint8Array([Number(tok)]);
  var m = /^\d+:\d+:([0-9a-f]*)$/.exec(tok);
  if (m) return hexToBytes(m[1]);
  if (/^([0-9a-f]{2})+$/.test(tok)) return hexToBytes(tok);
  return null;
}
/** A Namecoin name operation at the front of an output script (ASM text). */
function nameOp(asm) {
  if (typeof asm !== 'string') return null;
  var t = asm.split(' ');
  if (t[0] === '1' && t[2] === 'OP_2DROP' && t[3] === 'OP_DROP') return { op: 'name_new' };
  var name, value;
  if (t[0] === '2' && t[4] === 'OP_2DROP' && t[5] === 'OP_2DROP') { name = pushBytes(t[1]); value = pushBytes(t[3]); return name ? { op: 'name_firstupdate', name: name, value: value } : null; }
  if (t[0] === '3' && t[3] === 'OP_2DROP' && t[4] === 'OP_DROP') { name = pushBytes(t[1]); value = pushBytes(t[2]); return name ? { op: 'name_update', name: name, value: value } : null; }
  return null;
}
function scriptKind(asm) {
  if (typeof asm !== 'string') return 'unknown';
  if (asm === 'OP_RETURN' || asm.indexOf('OP_RETURN ') === 0) return 'OP_RETURN data';
  if (/ OP_CHECKMULTISIG$/.test(asm)) return 'multisig';
  return 'non-standard';
}
function nameOpChip(op) {
  if (!op) return null;
  if (!op.name) return h('span', { class: 'nameop' }, badge(op.op, 'info'));
  return h('span', { class: 'nameop' }, badge(op.op, 'info'), nameLink(op.name));
}
function script(text) { return h('div', { class: 'script' }, text === '' ? '(empty)' : text); }

// ---------------------------------------------------------------------------------------------
// Page pieces

function pageHead(kind, title, opts) {
  opts = opts || {};
  return h('div', { class: 'page-head' },
    h('div', { class: 'title' },
      h('div', { class: 'kind' }, kind, opts.badges ? [' '].concat(opts.badges) : null),
      h('h1', { class: opts.mono ? 'hash' : '', 'data-field': 'title' }, title),
      opts.sub ? h('div', { class: typeof opts.sub === 'string' ? 'hash muted' : 'muted', 'data-field': 'subtitle' }, opts.sub) : null),
    h('div', { class: 'actions' }, opts.actions || null));
}
function kv(rows) {
  var dl = h('dl', { class: 'kv' });
  rows.forEach(function (r) {
    if (!r || r[1] === null || r[1] === undefined) return;
    add(dl, [h('dt', null, r[0]), h('dd', { 'data-field': r[2] || null }, r[1])]);
  });
  return dl;
}
function card(title, body, count) {
  return h('section', { class: 'card' }, title ? h('h2', null, title, count !== undefined ? h('span', { class: 'count' }, count) : null) : null, body);
}
function tile(label, value, sub, field) {
  return h('div', { class: 'tile' }, h('div', { class: 'label' }, label), h('div', { class: 'value', 'data-field': field || null }, value), sub ? h('div', { class: 'sub' }, sub) : null);
}
function notice(title, text, extra) {
  return h('div', { class: 'notice error', 'data-field': 'notice' }, h('h1', null, title), h('p', null, text), extra || null);
}
/** Renders items in slices with a "Show more" button (huge blocks and addresses stay fast). */
function paged(items, render, size, container) {
  var list = container || h('div');
  var shown = 0;
  var more = h('button', { class: 'secondary more', type: 'button' });
  function step() {
    var end = Math.min(items.length, shown + size);
    for (; shown < end; shown++) add(list, render(items[shown], shown));
    if (shown < items.length) more.textContent = 'Show more (' + fmtInt(items.length - shown) + ' left)';
    else more.remove();
  }
  more.addEventListener('click', step);
  step();
  return shown < items.length ? [list, more] : list;
}
function outputWho(o) {
  if (o.address) return addrLink(o.address);
  return h('span', { class: 'muted' }, scriptKind(o.scriptPubKey));
}
/** Compact transaction (block and address pages). */
function txSummary(tx, opts) {
  opts = opts || {};
  var coinbase = tx.in && tx.in[0] && tx.in[0].coinbase !== undefined;
  var total = 0;
  tx.out.forEach(function (o) { total += decimalToUnits(o.value); });
  var ins = h('ul', { class: 'io-list' });
  if (coinbase) add(ins, h('li', { class: 'io-item' }, badge('coinbase', 'good'), ' ', h('span', { class: 'muted' }, 'new coins')));
  else {
    var shownIns = tx.in.slice(0, 6);
    shownIns.forEach(function (i) {
      var prev = opts.prevOut ? opts.prevOut(i) : null;
      add(ins, h('li', { class: 'io-item' }, h('div', { class: 'line' },
        h('span', { class: 'who' }, prev && prev.address ? addrLink(prev.address) : txLink(i.prev_out.hash, i.prev_out.n)),
        prev ? amount(prev.value) : null)));
    });
    if (tx.in.length > shownIns.length) add(ins, h('li', { class: 'io-item muted' }, '\u2026 ' + (tx.in.length - shownIns.length) + ' more inputs'));
  }
  var outs = h('ul', { class: 'io-list' });
  var shownOuts = tx.out.slice(0, 8);
  shownOuts.forEach(function (o) {
    var mine = opts.address && o.address === opts.address;
    add(outs, h('li', { class: 'io-item' }, h('div', { class: 'line' },
      h('span', { class: 'who' }, mine ? h('strong', { class: 'addr' }, o.address) : outputWho(o)), amount(o.value)),
      nameOpChip(nameOp(o.scriptPubKey))));
  });
  if (tx.out.length > shownOuts.length) add(outs, h('li', { class: 'io-item muted' }, '\u2026 ' + (tx.out.length - shownOuts.length) + ' more outputs'));
  return h('div', { class: 'txrow', 'data-tx': tx.hash },
    h('div', { class: 'txrow-head' },
      h('span', { class: 'ellipsis' }, txLink(tx.hash)),
      h('span', { class: 'txrow-meta' }, opts.extra || null, opts.extra ? null : amountUnits(total))),
    h('div', { class: 'io' }, ins, h('div', { class: 'arrow' }, '\u2192'), outs));
}

// ---------------------------------------------------------------------------------------------
// Pages

async function loadSite() {
  if (site) return site;
  var r = await getJson(api.site());
  site = r.ok ? r.body : { network: '', height: null, tip: null };
  unit = /^namecoin/.test(site.network) ? 'NMC' : /^bitcoin/.test(site.network) ? 'BTC' : '';
  netBadge.textContent = site.network ? site.network + (site.height !== null ? ' \u00b7 height ' + fmtInt(site.height) : '') : '';
  return site;
}

async function pageHome() {
  var both = await Promise.all([getJson(api.stats()), loadSite()]);
  var st = both[0];
  if (!st.ok) return notice('Statistics unavailable', st.error || 'stats.json could not be read.');
  var s = st.body;
  var workDigits = (/"work":(\d+)/.exec(st.text) || [])[1] || String(s.work);
  document.title = (site.network ? site.network + ' \u00b7 ' : '') + 'chain snapshot';

  var blocks = [];
  if (site.tip) {
    var hash = site.tip;
    for (var i = 0; i < 10 && hash; i++) {
      var b = await getJson(api.block(hash));
      if (!b.ok) break;
      blocks.push(b.body);
      hash = b.body.prev_block;
      if (/^0+$/.test(hash)) break;
    }
  }
  var latest = h('table', null,
    h('thead', null, h('tr', null, h('th', { class: 'num' }, 'Height'), h('th', null, 'Block'), h('th', { class: 'hide-narrow' }, 'Time'), h('th', { class: 'num' }, 'Txs'), h('th', { class: 'num hide-narrow' }, 'Size'))),
    h('tbody', null, blocks.map(function (b, i) {
      return h('tr', { 'data-block': b.hash },
        h('td', { class: 'num' }, blockLink(b.hash, fmtInt(site.height - i))),
        h('td', { class: 'hash-cell' }, h('span', { class: 'ellipsis' }, blockLink(b.hash))),
        h('td', { class: 'hide-narrow' }, time(b.time)),
        h('td', { class: 'num' }, fmtInt(b.n_tx)),
        h('td', { class: 'num hide-narrow' }, fmtInt(b.size) + ' B'));
    })));

  function bars(obj) {
    var keys = Object.keys(obj || {}), max = 0;
    keys.forEach(function (k) { max = Math.max(max, obj[k]); });
    keys.sort(function (a, b) { return obj[b] - obj[a]; });
    return h('div', { class: 'bars' }, keys.map(function (k) {
      var v = obj[k];
      return [h('span', { class: v ? '' : 'zero' }, k.replace(/_/g, ' ')),
        h('span', { class: 'bar' }, v ? h('span', { style: 'width:' + (100 * v / (max || 1)).toFixed(1) + '%' }) : null),
        h('span', { class: 'n', 'data-stat': k }, fmtInt(v))];
    }));
  }

  var tiles = h('div', { class: 'tiles' },
    site.height !== null ? tile('Height', fmtInt(site.height), h('span', null, 'tip ', blockLink(site.tip, site.tip.slice(0, 12) + '\u2026')), 'height') : null,
    tile('Blocks', fmtInt(s.blocks.main), fmtInt(s.blocks.side) + ' side \u00b7 ' + fmtInt(s.blocks.orphan) + ' orphan', 'blocks.main'),
    tile('Transactions', fmtInt(s.txs), fmtInt(s.txins) + ' inputs \u00b7 ' + fmtInt(s.txouts) + ' outputs', 'txs'),
    tile('Addresses', fmtInt(s.addrs), 'used', 'addrs'),
    tile('Coins issued', amountShort(s.coins), fmtInt(s.coins) + ' base units', 'coins'),
    s.names !== undefined ? tile('Name operations', fmtInt(s.names), null, 'names') : null,
    tile('Chain size', bytesHuman(s.blocks.size), fmtInt(s.blocks.size) + ' bytes', 'size'),
    tile('Chain work', bigHuman(workDigits), workDigits.length > 15 ? workDigits.length + ' digits' : 'cumulative', 'work'));

  return h('div', null,
    pageHead('Overview', site.network ? site.network : 'Chain snapshot', { actions: [rawLink(api.stats(), 'stats.json')],
      sub: h('span', { class: 'muted' }, 'Snapshot of the tip block’s time: ', time(s.time)) }),
    tiles,
    card('Latest blocks', blocks.length ? h('div', { class: 'table-wrap', id: 'latest' }, latest) : h('p', { class: 'muted' }, 'No block list available.')),
    h('div', { class: 'grid2' },
      card('Output script types', bars(s.script_types)),
      card('P2SH inputs by redeem script', bars(s.p2sh_types))),
    h('p', { class: 'hint' }, 'Search by transaction id, block hash, address or name' + (/^namecoin/.test(site.network) ? ' (e.g. ' : '.'),
      /^namecoin/.test(site.network) ? [h('code', null, 'd/example'), ')'] : null));
}

async function pageBlock(hash) {
  await loadSite();
  var r = await getJson(api.block(hash));
  if (!r.ok) return notFound('Block', hash, r, api.block(hash));
  var b = r.body;
  // The API has no height field on blocks: the coinbase tx document names its main-chain block.
  var height = null, main = false;
  if (b.tx && b.tx[0]) {
    var cb = await getJson(api.tx(b.tx[0].hash));
    if (cb.ok && cb.body.block === b.hash) { height = cb.body.blocknumber; main = true; }
  }
  document.title = 'Block ' + (height !== null ? height : hash.slice(0, 12)) + ' \u00b7 chain snapshot';
  var status = main ? badge('main chain', 'good') : badge('not in the main chain', 'warn');
  var nav = h('div', { class: 'actions' },
    b.prev_block && !/^0+$/.test(b.prev_block) ? h('a', { class: 'raw', href: '#/block/' + b.prev_block, 'data-nav': 'prev' }, '\u2190 Previous') : null,
    b.next_block ? h('a', { class: 'raw', href: '#/block/' + b.next_block, 'data-nav': 'next' }, 'Next \u2192') : null,
    rawLink(api.block(hash)), rawLink('block/' + hash + '.hex', 'hex'));
  var aux = b.aux_pow && b.aux_pow.parent_block;
  var details = kv([
    ['Hash', h('span', { class: 'hash' }, b.hash), 'hash'],
    ['Height', height !== null ? fmtInt(height) : h('span', { class: 'muted' }, 'unknown (not in the main chain)'), 'height'],
    ['Time', time(b.time), 'time'],
    ['Transactions', fmtInt(b.n_tx), 'n_tx'],
    ['Size', fmtInt(b.size) + ' bytes', 'size'],
    ['Version', b.ver + ' (0x' + (b.ver >>> 0).toString(16) + ')', 'ver'],
    ['Bits', '0x' + (b.bits >>> 0).toString(16) + ' (' + b.bits + ')', 'bits'],
    ['Nonce', fmtInt(b.nonce), 'nonce'],
    ['Merkle root', h('span', { class: 'hash' }, b.mrkl_root), 'mrkl_root'],
    ['Previous block', /^0+$/.test(b.prev_block) ? h('span', { class: 'muted' }, 'none (genesis)') : blockLink(b.prev_block), 'prev_block'],
    ['Next block', b.next_block ? blockLink(b.next_block) : h('span', { class: 'muted' }, 'none in this snapshot'), 'next_block'],
    aux ? ['Merge-mined in', h('span', { class: 'hash' }, aux.hash), 'aux_pow'] : null,
  ]);
  var txs = paged(b.tx || [], function (tx) { return txSummary(tx); }, 40, h('div', { id: 'block-txs' }));
  return h('div', null,
    pageHead('Block', height !== null ? 'Block ' + fmtInt(height) : 'Block', { sub: b.hash, badges: [status], actions: nav }),
    card('Details', details),
    card('Transactions', txs, fmtInt(b.n_tx)));
}

async function pageTx(id) {
  await loadSite();
  var r = await getJson(api.tx(id));
  if (!r.ok) return notFound('Transaction', id, r, api.tx(id));
  var tx = r.body;
  var coinbase = tx.in[0] && tx.in[0].coinbase !== undefined;
  document.title = 'Tx ' + id.slice(0, 12) + '\u2026 \u00b7 chain snapshot';
  // Input values and addresses come from the spent outputs (fetched for up to 50 inputs).
  var prevs = {};
  if (!coinbase) {
    var ids = [];
    tx.in.forEach(function (i) { if (ids.indexOf(i.prev_out.hash) < 0) ids.push(i.prev_out.hash); });
    ids = ids.slice(0, 50);
    var docs = await Promise.all(ids.map(function (p) { return getJson(api.tx(p)); }));
    ids.forEach(function (p, k) { if (docs[k].ok) prevs[p] = docs[k].body; });
  }
  function prevOut(i) { var p = prevs[i.prev_out.hash]; return p ? p.out[i.prev_out.n] : null; }
  var totalOut = 0, totalIn = 0, inKnown = !coinbase;
  tx.out.forEach(function (o) { totalOut += decimalToUnits(o.value); });
  tx.in.forEach(function (i) { var p = prevOut(i); if (p) totalIn += decimalToUnits(p.value); else inKnown = false; });

  var ins = h('ol', { class: 'io-list', id: 'inputs' }, tx.in.map(function (i, k) {
    if (i.coinbase !== undefined) {
      return h('li', { class: 'io-item' }, h('div', { class: 'line' }, h('span', { class: 'who' }, h('span', { class: 'idx' }, '#' + k), badge('coinbase', 'good'), ' ', h('span', { class: 'muted' }, 'newly generated coins'))),
        h('div', { class: 'script', 'data-field': 'coinbase' }, i.coinbase));
    }
    var p = prevOut(i);
    return h('li', { class: 'io-item', 'data-prev': i.prev_out.hash + ':' + i.prev_out.n },
      h('div', { class: 'line' },
        h('span', { class: 'who' }, h('span', { class: 'idx' }, '#' + k), p && p.address ? addrLink(p.address) : p ? h('span', { class: 'muted' }, scriptKind(p.scriptPubKey)) : null),
        p ? amount(p.value) : null),
      h('div', { class: 'meta' }, 'spends ', txLink(i.prev_out.hash, i.prev_out.n),
        i.sequence !== undefined ? h('span', { class: 'faint' }, ' \u00b7 sequence ' + i.sequence) : null),
      script(i.scriptSig),
      i.witness ? h('div', { class: 'script' }, h('span', { class: 'faint' }, 'witness'), '\n', i.witness.join('\n')) : null);
  }));
  var outs = h('ol', { class: 'io-list', id: 'outputs' }, tx.out.map(function (o, k) {
    return h('li', { class: 'io-item', 'data-n': k },
      h('div', { class: 'line' }, h('span', { class: 'who' }, h('span', { class: 'idx' }, '#' + k), outputWho(o)), amount(o.value)),
      nameOpChip(nameOp(o.scriptPubKey)),
      h('div', { class: 'meta' }, o.next_in ? ['spent by ', txLink(o.next_in.hash, o.next_in.n)] : badge('unspent', 'good')),
      script(o.scriptPubKey));
  }));
  var ops = tx.out.map(function (o) { return nameOp(o.scriptPubKey); }).filter(function (x) { return x; });
  var details = kv([
    ['Hash', h('span', { class: 'hash' }, tx.hash), 'hash'],
    ['Block', tx.block ? [blockLink(tx.block, fmtInt(tx.blocknumber)), ' ', h('span', { class: 'hash faint' }, tx.block)] : null, 'block'],
    ['Time', tx.time ? time(tx.time) : null, 'time'],
    ['Inputs \u2192 outputs', tx.vin_sz + ' \u2192 ' + tx.vout_sz, 'io'],
    ['Total output', amountUnits(totalOut), 'total_out'],
    ['Fee', coinbase ? h('span', { class: 'muted' }, 'none (coinbase)') : inKnown ? amountUnits(totalIn - totalOut) : h('span', { class: 'muted' }, 'unknown'), 'fee'],
    ['Size', fmtInt(tx.size) + ' bytes', 'size'],
    ['Version', String(tx.ver), 'ver'],
    ['Lock time', String(tx.lock_time), 'lock_time'],
    tx.nid ? ['Normalized id', h('span', { class: 'hash' }, tx.nid), 'nid'] : null,
  ]);
  return h('div', null,
    pageHead('Transaction', tx.hash, { mono: true, badges: (coinbase ? [badge('coinbase', 'good')] : []).concat(ops.map(function (op) { return badge(op.op, 'info'); })),
      actions: [rawLink(api.tx(id)), rawLink('tx/' + id + '.hex', 'hex')] }),
    card('Details', details),
    card('Inputs and outputs', h('div', { class: 'io' },
      h('div', null, h('h3', { class: 'kind' }, 'Inputs (' + tx.vin_sz + ')'), ins),
      h('div', { class: 'arrow' }, '\u2192'),
      h('div', null, h('h3', { class: 'kind' }, 'Outputs (' + tx.vout_sz + ')'), outs))));
}

async function pageAddress(addr) {
  await loadSite();
  var url = api.address(addr);
  var r = await getJson(url);
  if (!r.ok) {
    if (r.status === 500 && r.error) {
      document.title = addr + ' \u00b7 chain snapshot';
      return h('div', null, pageHead('Address', addr, { mono: true, actions: [rawLink(url)] }),
        notice('Address too large for this snapshot', r.error, h('p', { class: 'hint' }, 'The build caps address documents; see the raw JSON.')));
    }
    return notFound('Address', addr, r, url);
  }
  var a = r.body;
  document.title = a.address + ' \u00b7 chain snapshot';
  var txs = Object.keys(a.transactions || {}).map(function (k) { return a.transactions[k]; });
  txs.sort(function (x, y) { return (y.blocknumber || 0) - (x.blocknumber || 0); });
  function prevOut(i) {
    var p = i.prev_out && a.transactions[i.prev_out.hash];
    return p ? p.out[i.prev_out.n] : null;
  }
  function delta(tx) {
    var d = 0;
    tx.out.forEach(function (o) { if (o.address === a.address) d += decimalToUnits(o.value); });
    tx.in.forEach(function (i) { var p = i.coinbase === undefined ? prevOut(i) : null; if (p && p.address === a.address) d -= decimalToUnits(p.value); });
    return d;
  }
  var unspent = h('table', { id: 'unspent' },
    h('thead', null, h('tr', null, h('th', null, 'Output'), h('th', { class: 'num' }, 'Amount'))),
    h('tbody', null, (a.unspent || []).map(function (u) {
      return h('tr', { 'data-out': u.tx.hash + ':' + u.tx.n },
        h('td', { class: 'hash-cell' }, h('span', { class: 'ellipsis' }, txLink(u.tx.hash, u.tx.n)), nameOpChip(nameOp(u.scriptPubKey))),
        h('td', { class: 'num' }, amount(u.value)));
    })));
  var list = paged(txs, function (tx) {
    var d = delta(tx);
    return txSummary(tx, {
      address: a.address,
      prevOut: prevOut,
      extra: [tx.blocknumber !== undefined ? blockLink(tx.block, '#' + fmtInt(tx.blocknumber)) : null, ' ', tx.time ? h('span', { class: 'faint' }, tx.time + ' UTC') : null, ' ',
        h('span', { class: 'delta', 'data-field': 'delta', title: 'Change of this address’s balance' }, d > 0 ? h('span', { class: 'amt pos' }, '+') : null, amountUnits(d, d > 0 ? 'pos' : d < 0 ? 'neg' : ''))],
    });
  }, 25, h('div', { id: 'address-txs' }));
  return h('div', null,
    pageHead('Address', a.address, { mono: true, actions: [rawLink(url)] }),
    h('div', { class: 'tiles' },
      tile('Balance', amountUnits(a.balance), null, 'balance'),
      tile('Received', amountUnits(a.coin_in), fmtInt(a.tx_in_sz) + ' transactions', 'coin_in'),
      tile('Sent', amountUnits(a.coin_out), fmtInt(a.tx_out_sz) + ' transactions', 'coin_out'),
      tile('Transactions', fmtInt(a.tx_sz), fmtInt((a.unspent || []).length) + ' unspent outputs', 'tx_sz')),
    card('Details', kv([
      ['Address', h('span', { class: 'addr' }, a.address), 'address'],
      ['Hash160', h('span', { class: 'hash' }, a.hash160), 'hash160'],
    ])),
    (a.unspent || []).length ? card('Unspent outputs', h('div', { class: 'table-wrap' }, unspent), fmtInt(a.unspent.length)) : null,
    card('Transactions', list, fmtInt(a.tx_sz)));
}

function valueBox(v) {
  if (v === '') return h('div', { class: 'value-box empty', 'data-field': 'value' }, '(empty value)');
  var shown = v;
  try {
    var j = JSON.parse(v);
    if (j && typeof j === 'object') shown = JSON.stringify(j, null, 2);
  } catch (e) { /* not JSON: shown as it is */ }
  return h('div', { class: 'value-box', 'data-field': 'value', 'data-raw': v }, visible(shown));
}
function expiry(n) {
  return n > 0 ? badge('expires in ' + fmtInt(n) + ' blocks', 'good') : badge(n === 0 ? 'expires now' : 'expired ' + fmtInt(-n) + ' blocks ago', 'bad');
}

async function pageName(bytes) {
  await loadSite();
  var hurl = api.name(bytes, HISTORY_QUERY);
  var r = await getJson(hurl);
  var label = bytesToText(bytes);
  if (!r.ok || !Array.isArray(r.body) || r.body.length === 0) return notFound('Name', showName(label), r, api.name(bytes));
  var hist = r.body, cur = hist[hist.length - 1];
  document.title = showName(cur.name) + ' \u00b7 chain snapshot';
  var badges = [expiry(cur.expires_in)];
  if (!isUtf8(bytes)) badges.push(badge('not UTF-8: shown as Latin-1', 'warn'));
  var rows = hist.slice().reverse().map(function (n, i) {
    return h('tr', { 'data-txid': n.txid },
      h('td', { class: 'num' }, n.block ? blockLink(n.block, fmtInt(n.height)) : fmtInt(n.height)),
      h('td', { class: 'hash-cell' }, h('span', { class: 'ellipsis' }, txLink(n.txid)), i === 0 ? badge('current', 'info') : null),
      h('td', { class: 'hide-narrow' }, addrLink(n.address)),
      h('td', null, h('div', { class: 'value-box', 'data-field': 'value', 'data-raw': n.value, style: 'max-height:8em' }, n.value === '' ? '(empty)' : visible(n.value))));
  });
  return h('div', null,
    pageHead('Name', showName(cur.name), { badges: badges, actions: [rawLink(api.name(bytes), 'JSON'), rawLink(hurl, 'history JSON')] }),
    card('Current record', kv([
      ['Name', h('span', { class: 'mono' }, showName(cur.name)), 'name'],
      ['Value', valueBox(cur.value), 'value'],
      ['Owner', addrLink(cur.address), 'address'],
      ['Transaction', txLink(cur.txid), 'txid'],
      ['Block', cur.block ? [blockLink(cur.block, fmtInt(cur.height)), ' ', h('span', { class: 'hash faint' }, cur.block)] : null, 'block'],
      ['Expires in', [fmtInt(cur.expires_in) + ' blocks ', expiry(cur.expires_in)], 'expires_in'],
    ])),
    card('History', h('div', { class: 'table-wrap' }, h('table', { id: 'history' },
      h('thead', null, h('tr', null, h('th', { class: 'num' }, 'Height'), h('th', null, 'Transaction'), h('th', { class: 'hide-narrow' }, 'Owner'), h('th', null, 'Value'))),
      h('tbody', null, rows))), hist.length + (hist.length === 1 ? ' operation' : ' operations, newest first')));
}

function notFound(kind, id, r, url) {
  document.title = kind + ' not found \u00b7 chain snapshot';
  var msg = r.error || (kind + ' not found.');
  return h('div', { 'data-missing': kind }, notice(kind + ' not found', msg, h('p', { class: 'hint' }, visible(String(id)), ' \u00b7 ', rawLink(url))));
}

// ---------------------------------------------------------------------------------------------
// Search (guess by shape)

var BASE58 = /^[1-9A-HJ-NP-Za-km-z]{25,36}$/;
var BECH32 = /^[a-z]{1,20}1[02-9ac-hj-np-z]{6,90}$/i;
async function resolve(text) {
  await loadSite();
  if (/^[0-9a-fA-F]{64}$/.test(text)) {
    var id = text.toLowerCase();
    // Try a tx first, except for hashes that look mined (a txid with 8 leading zeros is 1 in 2^32).
    var order = /^00000000/.test(id) ? ['block', 'tx'] : ['tx', 'block'];
    for (var o = 0; o < order.length; o++) {
      if ((await getJson(api[order[o]](id))).ok) return '#/' + order[o] + '/' + id;
    }
    return null;
  }
  if (/^\d{1,9}$/.test(text) && site.tip && site.height !== null) {
    var want = Number(text);
    if (want <= site.height && site.height - want <= 200) {
      var hash = site.tip;
      for (var i = site.height; i > want && hash; i--) {
        var b = await getJson(api.block(hash));
        if (!b.ok) return null;
        hash = b.body.prev_block;
      }
      if (hash) return '#/block/' + hash;
    }
  }
  if (BASE58.test(text) || BECH32.test(text)) {
    var a = await getJson(api.address(text));
    if (a.ok || a.status === 500) return '#/address/' + encodeURIComponent(text);
  }
  // A name: its UTF-8 bytes, else (names that are not UTF-8 are shown as Latin-1) its Latin-1 bytes.
  var cands = [utf8.encode(text)], l1 = latin1Bytes(text);
  if (l1 && !isUtf8(l1)) cands.push(l1);
  for (var k = 0; k < cands.length; k++) {
    if ((await getJson(api.name(cands[k], HISTORY_QUERY))).ok) return nameHref(cands[k]);
  }
  return null;
}

async function pageSearch(text) {
  var target = await resolve(text);
  if (target) {
    history.replaceState(null, '', target);
    return render(parse(target));
  }
  document.title = 'Not found \u00b7 chain snapshot';
  return h('div', { 'data-missing': 'search' }, notice('Nothing found', 'No transaction, block, address or name matches \u201c' + visible(text) + '\u201d.',
    h('p', { class: 'hint' }, 'Search takes a 64-digit transaction id or block hash, an address, a block height near the tip, or a name.')));
}

// ---------------------------------------------------------------------------------------------
// Router

function parse(hash) {
  var s = hash.replace(/^#\/?/, '');
  var slash = s.indexOf('/');
  var kind = slash < 0 ? s : s.slice(0, slash), arg = slash < 0 ? '' : s.slice(slash + 1);
  function dec(x) { try { return decodeURIComponent(x); } catch (e) { return x; } }
  switch (kind) {
    case 'tx': case 'block': return /^[0-9a-fA-F]{64}$/.test(arg) ? { kind: kind, id: arg.toLowerCase() } : { kind: 'bad', text: arg };
    case 'address': return { kind: 'address', id: dec(arg) };
    case 'name': return { kind: 'name', bytes: pctDecodeBytes(arg) };
    case 'search': return { kind: 'search', text: dec(arg) };
    case '': return { kind: 'home' };
    default: return { kind: 'bad', text: s };
  }
}
function render(r) {
  switch (r.kind) {
    case 'home': return pageHome();
    case 'tx': return pageTx(r.id);
    case 'block': return pageBlock(r.id);
    case 'address': return pageAddress(r.id);
    case 'name': return pageName(r.bytes);
    case 'search': return pageSearch(r.text);
    default: return Promise.resolve(notice('Page not found', 'There is no page at \u201c' + visible(r.text) + '\u201d.'));
  }
}
function go() {
  var seq = ++renderSeq, t0 = performance.now();
  var r = parse(location.hash);
  document.body.setAttribute('data-state', 'loading');
  var slow = setTimeout(function () { if (seq === renderSeq) main.replaceChildren(h('p', { class: 'loading' }, 'Loading\u2026')); }, 150);
  render(r).then(function (node) { return node; }, function (err) {
    return notice('Something went wrong', String(err && err.message ? err.message : err));
  }).then(function (node) {
    clearTimeout(slow);
    if (seq !== renderSeq) return;
    main.replaceChildren(node);
    window.scrollTo(0, 0);
    var kind = parse(location.hash).kind;
    var ms = performance.now() - t0;
    timings.push({ hash: location.hash, kind: kind, ms: ms });
    document.body.setAttribute('data-page', node.getAttribute('data-missing') ? 'missing' : kind);
    document.body.setAttribute('data-route', location.hash);
    document.body.setAttribute('data-state', 'ready');
  });
}

form.addEventListener('submit', function (e) {
  e.preventDefault();
  var text = input.value.trim();
  if (!text) return;
  var target = '#/search/' + encodeURIComponent(text);
  if (location.hash === target) go(); else location.hash = target;
});
window.addEventListener('hashchange', function () {
  if (parse(location.hash).kind !== 'search') input.value = '';
  go();
});
window.snapshotUi = { encodeNamePath: encodeNamePath, sha256: sha256, nameOp: nameOp, timings: timings };
loadSite().then(go, go);
})();
`;
