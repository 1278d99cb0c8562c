/**
 * The browsing UI written into the site root by `snapshot build`: a static `index.html`, one
 * script and one stylesheet (no framework, no external requests: it works offline), reading the
 * site's own public JSON URLs. Kept as TypeScript string modules so they ship inside dist/ and
 * load unchanged under vitest.
 */
import { createHash } from 'node:crypto';
import { APP_CSS } from './app-css.js';
import { APP_JS } from './app-js.js';

/** What the UI needs to know about the tree and cannot get from a public URL (no height index). */
export interface UiSiteInfo {
  network: string;
  height: number;
  tip: string;
}

export const UI_INDEX = 'index.html';
export const UI_JS = 'assets/app.js';
export const UI_CSS = 'assets/app.css';
/** Public copy of the site info (`_site.json` is not served). */
export const UI_SITE = 'assets/site.json';

function version(content: string): string {
  return createHash('sha256').update(content).digest('hex').slice(0, 12);
}

const LOGO =
  '<svg class="logo" viewBox="0 0 32 32" aria-hidden="true"><rect x="3" y="3" width="26" height="26" rx="7" fill="var(--accent)"/>' +
  '<path d="M10 12h12M10 16h12M10 20h8" stroke="var(--panel)" stroke-width="2.4" stroke-linecap="round"/></svg>';

const ICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E%3Crect x='3' y='3' width='26' height='26' rx='7' fill='%231f5fd1'/%3E" +
  "%3Cpath d='M10 12h12M10 16h12M10 20h8' stroke='white' stroke-width='2.4' stroke-linecap='round'/%3E%3C/svg%3E";

export function indexHtml(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<title>chain snapshot</title>
<link rel="icon" href="${ICON}">
<link rel="stylesheet" href="${UI_CSS}?v=${version(APP_CSS)}">
<script src="${UI_JS}?v=${version(APP_JS)}" defer></script>
</head>
<body data-state="loading">
<header class="top"><div class="top-inner">
<a class="brand" href="#/">${LOGO}<span>chain snapshot</span></a>
<span class="net" id="net"></span>
<form id="search" role="search" autocomplete="off">
<input id="q" name="q" type="search" placeholder="Transaction id, block hash, address or name" spellcheck="false" autocapitalize="off" aria-label="Search">
<button type="submit">Search</button>
</form>
</div></header>
<main id="main"><noscript><p>This page needs JavaScript. The data itself is plain JSON: <a href="stats.json">stats.json</a>, <code>/tx/&lt;txid&gt;.json</code>, <code>/block/&lt;hash&gt;.json</code>, <code>/address/&lt;address&gt;.json</code>, <code>/name/&lt;name&gt;.json</code>.</p></noscript></main>
<footer>Static, read-only snapshot of the chain &middot; every page is backed by a public JSON document &middot; <a href="stats.json">stats.json</a></footer>
</body>
</html>
`;
}

/**
 * The UI's files, path relative to the site root → content. With `info`, also the public site
 * info the overview needs for the latest blocks (network, height, tip).
 */
export function uiFiles(info?: UiSiteInfo): Map<string, string> {
  const files = new Map<string, string>([
    [UI_INDEX, indexHtml()],
    [UI_JS, APP_JS],
    [UI_CSS, APP_CSS],
  ]);
  if (info) files.set(UI_SITE, JSON.stringify({ network: info.network, height: info.height, tip: info.tip }));
  return files;
}
