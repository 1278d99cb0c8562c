/** Pieces the pages share: titles, not-found notices, the names list, confirmations. */
import { getJson, type Fetched, type Site } from '../data.js';
import { h } from '../dom.js';
import { confirmations, fmtInt, showName, visible } from '../format.js';
import { type NameEntry, type NameList } from '../name-list.js';
import { api } from '../route.js';
import { nameBytesOf } from '../text.js';
import { nameLink, notice, rawLink } from '../widgets.js';

const TITLE = 'chain snapshot';

export function setTitle(t: string): void {
  document.title = t ? `${t} \u00b7 ${TITLE}` : TITLE;
}

/** A miss: "<Kind> not found", or "Invalid <kind>" when the API says the id is invalid (title and heading alike). */
export function notFound(kind: string, id: string, r: Fetched<unknown>, url: string): HTMLElement {
  const heading = r.error !== null && / is invalid\.$/.test(r.error) ? `Invalid ${kind.toLowerCase()}` : `${kind} not found`;
  setTitle(heading);
  return h('div', { 'data-missing': kind }, notice(heading, r.error ?? `${kind} not found.`, h('p', { class: 'hint' }, visible(id), ' \u00b7 ', rawLink(url))));
}

export function isNamecoin(site: Site): boolean {
  return site.network.startsWith('namecoin');
}

/** names.json, or null (not a Namecoin tree, or a tree built before the list existed). */
export async function loadNames(site: Site): Promise<NameList | null> {
  if (!isNamecoin(site)) return null;
  const r = await getJson<NameList>(api.names());
  return r.ok && Array.isArray(r.body.names) ? r.body : null;
}

export function entryLink(e: NameEntry): HTMLElement {
  const bytes = nameBytesOf(e.name, e.path);
  return bytes ? nameLink(bytes, e.name) : h('span', null, showName(e.name));
}

export function confirmationsText(site: Site, height: number): string | null {
  return site.height === null ? null : fmtInt(confirmations(site.height, height));
}
