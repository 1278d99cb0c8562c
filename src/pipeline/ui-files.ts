/**
 * The browsing UI written into the site root by `snapshot build`: a static `index.html`, one
 * script and one stylesheet (no framework, no external requests: it works offline), reading the
 * site's own public JSON URLs. The script and stylesheet are the TypeScript modules and app.css
 * of src/ui, bundled by esbuild: at package build time into dist/ui/ (what an installed package
 * reads), or on the fly when running from the TypeScript sources.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sha256 } from '../chain/hash.js';
import { UI_CSS, UI_INDEX, UI_JS, UI_PACK_META, UI_SITE_PATH } from '../contract/paths.js';
import { fromSources } from '../runtime/from-source.js';
import type { UiBundle } from './ui-bundle.js';

/** A block that is not in the main chain, as the overview lists it. */
export interface UiOffChainBlock {
  hash: string;
  kind: 'side' | 'orphan';
  height: number | null;
}

/** What the UI needs to know about the tree and cannot get from a public URL (no height index). */
export interface UiSiteInfo {
  network: string;
  height: number;
  tip: string;
  /** Side and orphan blocks (their documents are in block/), sorted by hash. */
  offchain?: readonly UiOffChainBlock[];
}

/** Public copy of the site info (`_site.json` is not served). */

const HERE = dirname(fileURLToPath(import.meta.url));
/** dist/ui beside the compiled CLI (dist/pipeline/ui-files.js). */
export const UI_BUNDLE_DIR = join(HERE, '..', 'ui');

let bundle: Promise<UiBundle> | undefined;

/** The bundled script and stylesheet (read or made once per process). */
export function uiBundle(): Promise<UiBundle> {
  bundle ??= (async () => {
    if (fromSources(import.meta.url)) return (await import('./ui-bundle.js')).bundleUi();
    const js = join(UI_BUNDLE_DIR, 'app.js');
    const css = join(UI_BUNDLE_DIR, 'app.css');
    if (!existsSync(js) || !existsSync(css)) throw new Error(`the browsing UI bundle is missing (${js}): this package was built without \`npm run build\``);
    return { js: readFileSync(js, 'utf8'), css: readFileSync(css, 'utf8') };
  })();
  return bundle;
}

function version(content: string): string {
  return sha256(Buffer.from(content, 'utf8')).toString('hex').slice(0, 12);
}

const LOGO =
  '<svg class="logo" viewBox="0 0 32 32" aria-hidden="true"><rect x="3" y="3" width="26" height="26" rx="7" fill="var(--accent)"/>' +
  '<path d="M10 12h12M10 16h12M10 20h8" stroke="var(--panel)" stroke-width="2.4" stroke-linecap="round"/></svg>';

const ICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E%3Crect x='3' y='3' width='26' height='26' rx='7' fill='%231f5fd1'/%3E" +
  "%3Cpath d='M10 12h12M10 16h12M10 20h8' stroke='white' stroke-width='2.4' stroke-linecap='round'/%3E%3C/svg%3E";

/** The UI's page; with `pack`, one that reads its documents from the pack at that base URL (src/ui/pack.ts). */
export function indexHtml(b: UiBundle, pack?: string): string {
  const packMeta = pack === undefined ? '' : `<meta name="${UI_PACK_META}" content="${pack.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`)}">\n`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
${packMeta}<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<title>chain snapshot</title>
<link rel="icon" href="${ICON}">
<link rel="stylesheet" href="${UI_CSS}?v=${version(b.css)}">
<script src="${UI_JS}?v=${version(b.js)}" defer></script>
</head>
<body data-state="loading">
<header class="top"><div class="top-inner">
<a class="brand" href="#/">${LOGO}<span>chain snapshot</span></a>
<span class="net" id="net"></span>
<a class="nav" id="nav-names" href="#/names" hidden>Names</a>
<form id="search" role="search" autocomplete="off">
<input id="q" name="q" type="search" placeholder="Transaction id, block hash, address or name" spellcheck="false" autocapitalize="off" aria-label="Search">
<button type="submit">Search</button>
</form>
</div></header>
<main id="main"><noscript><p>This page needs JavaScript. The data itself is plain JSON: <a href="stats.json">stats.json</a>, <code>/tx/&lt;txid&gt;.json</code>, <code>/block/&lt;hash&gt;.json</code>, <code>/address/&lt;address&gt;.json</code>, <code>/name/&lt;name&gt;.json</code>, <a href="names.json">names.json</a> (Namecoin).</p></noscript></main>
<footer>Static, read-only snapshot of the chain &middot; every page is backed by a public JSON document &middot; <a href="stats.json">stats.json</a></footer>
</body>
</html>
`;
}

/**
 * The UI's files, path relative to the site root → content. With `info`, also the public site
 * info the overview needs for the latest blocks (network, height, tip, side and orphan blocks).
 */
export async function uiFiles(info?: UiSiteInfo): Promise<Map<string, string>> {
  const b = await uiBundle();
  const files = new Map<string, string>([
    [UI_INDEX, indexHtml(b)],
    [UI_JS, b.js],
    [UI_CSS, b.css],
  ]);
  if (info) files.set(UI_SITE_PATH, JSON.stringify({ network: info.network, height: info.height, tip: info.tip, offchain: info.offchain ?? [] }));
  return files;
}

/**
 * The UI's static files a pack build writes beside the pack (index.html reading the pack in its
 * own directory, the script, the stylesheet): a plain static host holding the directory serves the
 * UI with no server code. The site info comes from the pack, not a file.
 */
export async function packUiFiles(): Promise<Map<string, string>> {
  const b = await uiBundle();
  return new Map([
    [UI_INDEX, indexHtml(b, './')],
    [UI_JS, b.js],
    [UI_CSS, b.css],
  ]);
}
