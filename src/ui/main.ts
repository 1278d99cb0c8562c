/**
 * Entry of the browsing UI (`assets/app.js`, bundled by esbuild at package build time): wires
 * the search form and the hash router to the pages. No framework, no requests beyond the
 * site's own public JSON URLs.
 */
import { fromPack, loadSite } from './data.js';
import { h } from './dom.js';
import { fmtInt, unitOf, visible } from './format.js';
import { rawLinksFromPack } from './pack.js';
import { pageAddress } from './pages/address.js';
import { pageBlock } from './pages/block.js';
import { pageHome } from './pages/home.js';
import { pageName, pageNames } from './pages/name.js';
import { pageSearch } from './pages/search.js';
import { setTitle } from './pages/common.js';
import { pageTx } from './pages/tx.js';
import { href, parseRoute, type Route } from './route.js';
import { notice, setUnit } from './widgets.js';

const main = document.getElementById('main')!;
const form = document.getElementById('search') as HTMLFormElement;
const input = document.getElementById('q') as HTMLInputElement;
const netBadge = document.getElementById('net')!;
const navNames = document.getElementById('nav-names');

/** Every render: route, kind, in-app milliseconds (read by the end-to-end test). */
const timings: { hash: string; kind: string; ms: number }[] = [];
let renderSeq = 0;

function render(r: Route): Promise<HTMLElement> {
  switch (r.kind) {
    case 'home':
      return pageHome();
    case 'tx':
      return pageTx(r.id);
    case 'block':
      return pageBlock(r.id);
    case 'address':
      return pageAddress(r.id);
    case 'name':
      return pageName(r.bytes);
    case 'names':
      return pageNames(r.filter);
    case 'search':
      return pageSearch(r.text, render, parseRoute);
    default:
      setTitle('Page not found');
      return Promise.resolve(h('div', { 'data-missing': 'page' }, notice('Page not found', `There is no page at \u201c${visible(r.text)}\u201d.`)));
  }
}

function go(): void {
  const seq = ++renderSeq;
  const t0 = performance.now();
  document.body.setAttribute('data-state', 'loading');
  const slow = setTimeout(() => {
    if (seq === renderSeq) main.replaceChildren(h('p', { class: 'loading' }, 'Loading\u2026'));
  }, 150);
  render(parseRoute(location.hash))
    .catch((err: unknown) => notice('Something went wrong', String(err instanceof Error ? err.message : err)))
    .then((node) => {
      clearTimeout(slow);
      if (seq !== renderSeq) return;
      main.replaceChildren(node);
      window.scrollTo(0, 0);
      const kind = parseRoute(location.hash).kind;
      timings.push({ hash: location.hash, kind, ms: performance.now() - t0 });
      document.body.setAttribute('data-page', node.getAttribute('data-missing') ? 'missing' : kind);
      document.body.setAttribute('data-route', location.hash);
      document.body.setAttribute('data-state', 'ready');
    })
    .catch((err: unknown) => console.error(err));
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  const text = input.value.trim();
  if (!text) return;
  const target = href.search(text);
  if (location.hash === target) go();
  else location.hash = target;
});
window.addEventListener('hashchange', () => {
  if (parseRoute(location.hash).kind !== 'search') input.value = '';
  go();
});

// On a static host holding only the pack, links to raw documents are read from the pack too.
if (fromPack) document.addEventListener('click', rawLinksFromPack(fromPack));

(window as unknown as { snapshotUi: unknown }).snapshotUi = { timings };

// Until the site info arrives (a slow first load) the page says it is loading, not blank.
main.replaceChildren(h('p', { class: 'loading', 'data-field': 'loading' }, 'Loading\u2026'));
loadSite()
  .then((site) => {
    setUnit(unitOf(site.network));
    netBadge.textContent = site.network ? site.network + (site.height !== null ? ` \u00b7 height ${fmtInt(site.height)}` : '') : '';
    if (navNames && site.network.startsWith('namecoin')) navNames.hidden = false;
  })
  .then(go, go);
