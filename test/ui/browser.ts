/**
 * Headless Chromium for the UI end-to-end tests: Debian's /usr/bin/chromium driven by
 * playwright-core (which never downloads a browser), a fresh profile per run, and helpers that
 * wait for the UI's "page rendered" signal (`body[data-state=ready]`, set by assets/app.js after
 * each route) and time it.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type ConsoleMessage, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
export const SCREENSHOT_DIR = join(process.cwd(), 'test-output', 'ui');
/**
 * Screenshots are for a human look, not checked by anything: taken only when asked for
 * (`UI_SCREENSHOTS=1`), as they are about a third of the CPU time of the UI tests.
 */
export const SCREENSHOTS = process.env.UI_SCREENSHOTS === '1';

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Console messages of type error and uncaught page errors, in order. */
  errors: { text: string; url: string }[];
  /** Every render: route, wall-clock ms (action → rendered) and the app's own ms. */
  renders: { what: string; wallMs: number; appMs: number }[];
  close(): Promise<void>;
}

export async function launch(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'ui-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
    colorScheme: 'light',
    timezoneId: 'UTC',
    locale: 'en-US',
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: Browser['errors'] = [];
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() === 'error') errors.push({ text: m.text(), url: m.location().url });
  });
  page.on('pageerror', (e) => errors.push({ text: `pageerror: ${e.message}`, url: '' }));
  return {
    context,
    page,
    errors,
    renders: [],
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The UI's own state, read in the page (the test's TS has no DOM lib: go through globalThis). */
interface UiGlobal {
  document: { body: { getAttribute(n: string): string | null } };
  snapshotUi?: { timings: { hash: string; kind: string; ms: number }[] };
}

/** Renders so far in the current document, and the document's identity (a reload resets both). */
async function renderCount(page: Page): Promise<[number, number]> {
  return page.evaluate(() => [(globalThis as unknown as UiGlobal).snapshotUi?.timings.length ?? 0, performance.timeOrigin]);
}

/**
 * Runs `action` (a navigation, click or search) and waits until the UI has rendered a page of
 * `kind` ('home', 'tx', 'block', 'address', 'name', 'missing'). Returns the wall-clock time.
 */
export async function act(b: Browser, what: string, kind: string, action: () => Promise<unknown>): Promise<number> {
  const before = await renderCount(b.page);
  const t0 = performance.now();
  await action();
  await b.page.waitForFunction(
    ([[n, origin], k]) => {
      const g = globalThis as unknown as UiGlobal;
      const body = g.document.body;
      const renders = g.snapshotUi?.timings.length ?? 0;
      const fresh = performance.timeOrigin !== origin ? renders > 0 : renders > n;
      return fresh && body.getAttribute('data-state') === 'ready' && body.getAttribute('data-page') === k;
    },
    [before, kind] as const,
    { timeout: 10_000, polling: 'raf' },
  );
  const wallMs = performance.now() - t0;
  const appMs = await b.page.evaluate(() => {
    const t = (globalThis as unknown as UiGlobal).snapshotUi!.timings;
    return t[t.length - 1]!.ms;
  });
  b.renders.push({ what, wallMs, appMs });
  return wallMs;
}

export async function search(b: Browser, text: string, kind: string): Promise<number> {
  return act(b, `search ${JSON.stringify(text)}`, kind, async () => {
    await b.page.fill('#q', text);
    await b.page.press('#q', 'Enter');
  });
}

export async function click(b: Browser, selector: string, kind: string): Promise<number> {
  return act(b, `click ${selector}`, kind, () => b.page.click(selector));
}

/** Full-page screenshots in the light and the dark scheme (test-output/ui/<name>-light|dark.png), if SCREENSHOTS. */
export async function screenshots(b: Browser, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  for (const scheme of ['light', 'dark'] as const) {
    await b.page.emulateMedia({ colorScheme: scheme });
    await b.page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${scheme}.png`), fullPage: true, animations: 'disabled' });
  }
  await b.page.emulateMedia({ colorScheme: 'light' });
}

/** Text content of the first match, whitespace collapsed. */
export async function text(page: Page, selector: string): Promise<string> {
  const t = await page.locator(selector).first().textContent();
  return (t ?? '').replace(/\s+/g, ' ').trim();
}

/** An amount as shown ("1,234.5000 0000 NMC", "−0.5 NMC") → the API's decimal string form. */
export function shownAmount(t: string): string {
  return t.replace(/[\s,+]|NMC|BTC/g, '').replace('\u2212', '-');
}

/** Base units → the API's 8-decimal string. */
export function decimal(units: number): string {
  const neg = units < 0;
  const s = String(Math.abs(units)).padStart(9, '0');
  return `${neg ? '-' : ''}${s.slice(0, -8)}.${s.slice(-8)}`;
}

/** One full-page screenshot in the light scheme at the current viewport (test-output/ui/<name>.png), if SCREENSHOTS. */
export async function screenshot(b: Browser, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await b.page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0)); // the sticky header at the top
  await b.page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true, animations: 'disabled' });
}

/** The document's scroll width (wider than the viewport = a horizontal scroll bar). */
export async function pageWidth(page: Page): Promise<number> {
  return page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth);
}

/**
 * Amounts (`.amt`) that are cut: wider than an ancestor that hides or scrolls its overflow
 * (horizontally), or whose own text overflows. Visible ones only. Returns "value: reason".
 */
export async function amountsClipped(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    /* eslint-disable @typescript-eslint/no-explicit-any -- DOM objects (the tests' TS has no DOM lib) */
    const g = globalThis as any;
    const out: string[] = [];
    for (const el of g.document.querySelectorAll('main .amt') as any[]) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue; // not displayed (collapsed, hidden column)
      const label = `${el.getAttribute('data-value') ?? el.textContent}`;
      if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0) out.push(`${label}: own text overflows`);
      for (let a = el.parentElement; a && a !== g.document.body; a = a.parentElement) {
        const cs = g.getComputedStyle(a);
        if (cs.overflowX === 'visible') continue;
        const ar = a.getBoundingClientRect();
        if (r.left < ar.left - 1 || r.right > ar.right + 1) out.push(`${label}: cut by ${a.tagName.toLowerCase()}.${a.className}`);
        break;
      }
    }
    return out;
  });
}
