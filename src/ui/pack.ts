/**
 * The UI's documents read from a pack (docs/pack-format.md) by HTTP Range, for a plain static host
 * that holds only the pack and the UI's own files (nginx, an S3 or R2 public bucket): no API, no
 * server code. A pack build writes `<meta name="chain-snapshot-pack" content="./">` (UI_PACK_META)
 * into its index.html; the content is the pack's base URL, relative to the page. Each request goes through
 * the shared router with the pack's own `_site.json`, as the edge glue does, so a page shows what
 * it shows on a tree served by `snapshot serve` (error documents included).
 */
import { SITE_INFO_PATH, type SiteInfo } from '../contract/layout.js';
import { UI_PACK_META } from '../contract/paths.js';
import { answerBytes } from '../contract/pack-answer.js';
import { PackCore, readPointer, readRoot } from '../contract/pack-reader.js';
import { HttpSource } from '../contract/pack-source.js';
import { makeRouterSite, routeRequest, type RouterSite } from '../contract/router.js';

/** Milliseconds between reads of `pack.json` looking for a new generation (the API's short cache). */
const RECHECK_MS = 60_000;

export interface PackResponse {
  status: number;
  text: string;
}

interface Opened {
  core: PackCore;
  site: RouterSite;
  checkedAt: number;
}

const decoder = new TextDecoder();

/** The pack's base URL the page names, or undefined (the documents are plain URLs). */
export function packBase(doc: Document = document): string | undefined {
  const content = doc.querySelector(`meta[name="${UI_PACK_META}"]`)?.getAttribute('content');
  return content ? new URL(content, doc.baseURI).href : undefined;
}

/** Fetches the site's documents from the pack below `base`; opened on first use, reopened for a new generation. */
export function packFetcher(base: string): (url: string) => Promise<PackResponse> {
  const source = new HttpSource(base);
  let current: Opened | undefined;
  let opening: Promise<Opened> | undefined;

  async function open(index: string): Promise<Opened> {
    const core = new PackCore(source, await readRoot(source, index));
    const own = await core.get(SITE_INFO_PATH);
    if (!own) throw new Error(`${source.describe(index)}: the pack has no ${SITE_INFO_PATH}`);
    const info = JSON.parse(decoder.decode(await answerBytes(own))) as SiteInfo;
    return { core, site: makeRouterSite(info), checkedAt: Date.now() };
  }

  async function refresh(): Promise<Opened> {
    const index = await readPointer(source);
    if (current && current.core.index === index) current.checkedAt = Date.now();
    else current = await open(index);
    return current;
  }

  function pack(): Promise<Opened> {
    if (current && Date.now() - current.checkedAt < RECHECK_MS) return Promise.resolve(current);
    opening ??= refresh().finally(() => (opening = undefined));
    // A failed re-check keeps reading the generation already open.
    return current ? opening.catch(() => current!) : opening;
  }

  return async (url) => {
    const p = await pack();
    const r = routeRequest('GET', '/' + url.replace(/^\.?\//, ''), p.site);
    if (r.type === 'error') return { status: r.status, text: r.body };
    const answer = await p.core.get(r.file);
    if (!answer) return { status: r.missing.status, text: r.missing.body };
    return { status: r.status, text: decoder.decode(await answerBytes(answer)) };
  };
}

// Text documents only: the pack fetcher decodes answers as UTF-8 (the UI links no .bin).
const RAW_TYPES: Readonly<Record<string, string>> = { json: 'application/json', hex: 'text/plain' };

/**
 * A click handler for the page's links to raw documents (a tx's JSON, the stats, …): a
 * static host holding only the pack has no such files, so the document is read from the pack and
 * opened as a blob URL in a new tab (opened at once, so no popup blocker stops it).
 */
export function rawLinksFromPack(load: (url: string) => Promise<PackResponse>): (e: MouseEvent) => void {
  return (e) => {
    const a = e.target instanceof Element ? e.target.closest('a[href]') : null;
    const url = a?.getAttribute('href') ?? '';
    const ext = /^[a-z0-9][^:#]*\.(json|hex)(?:\?|$)/i.exec(url)?.[1]?.toLowerCase();
    if (!ext || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    const tab = window.open('about:blank', '_blank');
    if (!tab) return;
    tab.opener = null;
    load(url).then(
      (r) => (tab.location.href = URL.createObjectURL(new Blob([r.text], { type: `${RAW_TYPES[ext]}; charset=utf-8` }))),
      (err: unknown) => tab.document.write(`Cannot read ${url}: ${String(err)}`.replace(/[&<>]/g, (c) => `&#${c.charCodeAt(0)};`)),
    );
  };
}
