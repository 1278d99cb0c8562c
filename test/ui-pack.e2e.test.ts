/**
 * The browsing UI on a plain static host that holds only a pack: the demo chain built with
 * `--format pack`, its directory served as static files by a real nginx (no API, no server code:
 * nginx answers `Range` on static files), the UI driven in headless Chromium. The same walk
 * (home → block → tx → address → name, by the UI's links and search) is made over the tree that
 * `--format tree` builds, served by `snapshot serve`: every page must show the same text. The
 * browser may only GET the pack's own files from nginx (no JSON paths, no 404s).
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { freePort } from './support/helpers.js';
import { HAVE_NGINX, startNginx, type RunningNginx } from './support/nginx.js';
import { act, click, HAVE_CHROMIUM, launch, search, text, type Browser } from './ui/browser.js';

const HISTORY_QUERY = 'history&with_block&with_height';
const SKIP = !HAVE_CHROMIUM ? 'UI on a pack e2e: SKIPPED, /usr/bin/chromium is absent' : !HAVE_NGINX ? 'UI on a pack e2e: SKIPPED, nginx is absent' : undefined;
if (SKIP) console.warn(SKIP);

/** nginx serving `root` as plain static files, nothing else (the types a static host knows). */
function staticSite(root: string, port: number): string {
  return `types { text/html html; text/css css; application/javascript js; application/json json; }
default_type application/octet-stream;
server {
  listen 127.0.0.1:${port};
  root ${root};
  location / { }
}
`;
}

interface Shown {
  step: string;
  route: string;
  title: string;
  net: string;
  main: string;
}

describe.skipIf(SKIP !== undefined)(SKIP ?? 'browsing UI served from a pack by a plain static host', () => {
  let tmp: string;
  let tree: string;
  let pack: string;
  let server: RunningServer;
  let nginx: RunningNginx;
  let b: Browser;
  /** Every request the browser made to nginx: method, path, status. */
  const packRequests: { method: string; path: string; status: number; range: string | undefined }[] = [];

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'ui-pack-e2e-'));
    chmodSync(tmp, 0o755); // nginx workers run as an unprivileged user
    tree = join(tmp, 'tree');
    pack = join(tmp, 'pack');
    const [browser] = await Promise.all([launch(), buildSnapshot({ source: demoSource(), outDir: tree }), buildSnapshot({ source: demoSource(), outDir: pack, format: 'pack' })]);
    b = browser;
    server = await startServer({ dir: tree, port: 0 });
    const port = await freePort();
    nginx = await startNginx(staticSite(pack, port), join(tmp, 'nginx'), port, '/pack.json');
    b.page.on('response', (r) => {
      if (!r.url().startsWith(nginx.url + '/')) return;
      const req = r.request();
      packRequests.push({ method: req.method(), path: new URL(r.url()).pathname, status: r.status(), range: req.headers()['range'] });
    });
  }, 240_000);

  afterAll(async () => {
    await b?.close();
    await server?.close();
    await nginx?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  async function shown(step: string): Promise<Shown> {
    const main = await b.page.locator('main').innerText();
    return { step, route: (await b.page.getAttribute('body', 'data-route')) ?? '', title: await b.page.title(), net: await text(b.page, '#net'), main };
  }

  /** The walk, on the UI at `base`: what each page shows. */
  async function walk(base: string): Promise<Shown[]> {
    const out: Shown[] = [];
    const api = async (path: string) => (await fetch(server.url + path)).json() as Promise<{ block: string; txid: string; address: string }[]>;
    const hist = await api(`/name/d/history.json?${HISTORY_QUERY}`);
    const last = hist[hist.length - 1]!;
    await act(b, 'open /', 'home', () => b.page.goto(`${base}/`));
    out.push(await shown('home'));
    await click(b, '#latest tbody a[href^="#/block/"] >> nth=0', 'block');
    out.push(await shown('latest block'));
    await search(b, last.block, 'block');
    out.push(await shown('block by search'));
    await click(b, `#block-txs a[href="#/tx/${last.txid}"]`, 'tx');
    out.push(await shown('tx'));
    await click(b, `#outputs a[data-kind="address"][href="#/address/${encodeURIComponent(last.address)}"] >> nth=0`, 'address');
    out.push(await shown('address'));
    await click(b, '#address-txs a[href^="#/tx/"] >> nth=0', 'tx');
    out.push(await shown('tx of the address'));
    await search(b, 'd/history', 'name');
    out.push(await shown('name'));
    await act(b, 'open names', 'names', () => b.page.goto(`${base}/#/names`));
    out.push(await shown('names'));
    await search(b, 'no such name here', 'missing');
    out.push(await shown('missing'));
    return out;
  }

  it('shows every page as the tree served by `snapshot serve` does, reading only the pack files from nginx', async () => {
    const onTree = await walk(server.url);
    expect(onTree.map((s) => s.route)).toEqual(expect.arrayContaining(['#/name/d/history', '#/names', expect.stringMatching(/^#\/tx\//), expect.stringMatching(/^#\/address\//)]));
    expect(onTree.find((s) => s.step === 'name')!.main).toContain('d/history');
    b.errors.length = 0;
    const treeRenders = b.renders.splice(0);
    const onPack = await walk(nginx.url).catch(async (e: unknown) => {
      // What the browser saw, for the failing test's output.
      console.error(JSON.stringify({ errors: b.errors, requests: packRequests.slice(-20), main: await b.page.locator('main').innerText().catch(() => '') }, null, 1), nginx.errors());
      throw e;
    });
    expect(onPack).toEqual(onTree);
    expect(b.errors, nginx.errors()).toEqual([]);

    // Only GETs of the pack's own files and the UI's static files; the data came by Range.
    const allowed = /^\/(?:|index\.html|assets\/app\.(?:js|css)|pack\.json|[0-9a-f]{32}\.(?:idx|part))$/;
    expect(packRequests.filter((r) => r.method !== 'GET' || !allowed.test(r.path) || r.status >= 400)).toEqual([]);
    expect(packRequests.filter((r) => r.path.endsWith('.json') && r.path !== '/pack.json')).toEqual([]);
    const ranged = packRequests.filter((r) => /\.(?:idx|part)$/.test(r.path));
    expect(ranged.length).toBeGreaterThan(5);
    for (const r of ranged) expect({ path: r.path, status: r.status, range: r.range }).toEqual({ path: r.path, status: 206, range: expect.stringMatching(/^bytes=\d+-\d+$/) });
    const ms = (rs: { appMs: number }[]) => rs.map((r) => r.appMs.toFixed(0)).join(' ');
    console.log(`UI on a pack: ${packRequests.length} requests to nginx (${ranged.length} ranges); in-app ms per page, tree: ${ms(treeRenders)}; pack: ${ms(b.renders)}`);
  }, 120_000);

  it('a link to a raw document opens the document read from the pack (the host has no such file)', async () => {
    const hist = (await (await fetch(`${server.url}/name/d/history.json?${HISTORY_QUERY}`)).json()) as { txid: string }[];
    const txid = hist[hist.length - 1]!.txid;
    await act(b, 'open tx', 'tx', () => b.page.goto(`${nginx.url}/#/tx/${txid}`));
    for (const [selector, file] of [
      ['a.raw[href$=".json"]', `tx/${txid}.json`],
      ['a.raw[href$=".hex"]', `tx/${txid}.hex`],
    ] as const) {
      const [tab] = await Promise.all([b.context.waitForEvent('page'), b.page.click(selector)]);
      await tab.waitForURL(/^blob:/);
      expect(await tab.locator('pre').first().textContent()).toBe(readFileSync(join(tree, file), 'utf8'));
      await tab.close();
    }
    expect(packRequests.filter((r) => !/^\/(?:|index\.html|assets\/app\.(?:js|css)|pack\.json|[0-9a-f]{32}\.(?:idx|part))$/.test(r.path) || r.status >= 400)).toEqual([]);
  }, 60_000);
});
