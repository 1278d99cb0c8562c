/** The search: tries what the text may be (route.ts searchPlan) and opens the first hit. */
import { getJson, loadSite, type BlockHeightDoc } from '../data.js';
import { h } from '../dom.js';
import { visible } from '../format.js';
import { HISTORY_QUERY, api, href, searchPlan, type Route } from '../route.js';
import { notice } from '../widgets.js';
import { setTitle, isNamecoin } from './common.js';

async function resolve(text: string): Promise<string | null> {
  const site = await loadSite();
  for (const step of searchPlan(text, site.height)) {
    switch (step.try) {
      case 'tx':
      case 'block':
        if ((await getJson(api[step.try](step.id))).ok) return href[step.try](step.id);
        break;
      case 'height': {
        const b = await getJson<BlockHeightDoc>(api.blockHeight(step.height));
        if (b.ok) return href.block(b.body.hash);
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
  setTitle('Nothing found');
  return h(
    'div',
    { 'data-missing': 'search' },
    notice(
      'Nothing found',
      `No transaction, block, address or name matches \u201c${visible(text)}\u201d.`,
      h('p', { class: 'hint' }, 'Search takes a 64-digit transaction id or block hash, an address, a block height, or a name.'),
    ),
  );
}
