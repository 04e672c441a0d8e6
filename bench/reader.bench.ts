/**
 * Reader benchmark: `npm run bench:reader [-- options]`.
 *
 * Starts the service (embedded database; DATABASE_URL for PostgreSQL),
 * uploads a generated PDF (200 pages by default), publishes it and opens it
 * in Debian's Chromium (playwright-core), on a desktop (1280x800) and a phone
 * (390x844) viewport, each in a fresh browser context (empty cache). Prints:
 *
 *   - the time to the first page visible (its image decoded and on screen),
 *     measured in the page from navigation start, and Largest Contentful Paint
 *     (median of 3 cold loads);
 *   - bytes transferred until then (navigation + resources finished by then,
 *     Resource Timing transferSize: compressed bytes plus headers);
 *   - the JS heap (after a forced GC) once open, and after flipping through
 *     50 pages, with the page elements and images left in the DOM, and the
 *     mean time a turn takes to show its pages loaded;
 *   - the same walk in the scroll view on the phone;
 *   - the reader's bundle size (JS + CSS, raw, gzip, brotli).
 *
 * Options: --pages N       pages of the generated book (default 200)
 *          --flips N       pages to flip through (default 50)
 *          --animation A   animation_type of the book (default flip)
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { bundleSizes, readerBundle, BUNDLE_BUDGET_GZIP } from '../src/modules/reader/reader.bundle.ts';
import { makePdf } from '../test/documents.ts';
import { startService } from '../test/helpers.ts';
import { CHROMIUM_PATH, DESKTOP, PHONE, launchBrowser, publishBook } from '../test/reader/browser.ts';

const { values: args } = parseArgs({
  options: {
    pages: { type: 'string', default: '200' },
    flips: { type: 'string', default: '50' },
    animation: { type: 'string', default: 'flip' },
  },
});
const pageCount = Number(args.pages);
const flips = Number(args.flips);
/** Cold loads per viewport; the median is reported. */
const RUNS = 3;

if (!existsSync(CHROMIUM_PATH)) {
  console.error(`Chromium is not installed at ${CHROMIUM_PATH} (apt-get install -y chromium).`);
  process.exit(1);
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const ms = (n: number) => `${n.toFixed(0)} ms`;
const log = (line: string) => process.stdout.write(`${line}\n`);
const started = Date.now();
const elapsed = () => `[${((Date.now() - started) / 1000).toFixed(1)}s]`;

async function heap(cdp: CDPSession): Promise<{ used: number; nodes: number }> {
  await cdp.send('HeapProfiler.collectGarbage');
  const usage = await cdp.send('Runtime.getHeapUsage');
  const metrics = await cdp.send('Performance.getMetrics');
  const nodes = metrics.metrics.find((m) => m.name === 'Nodes')?.value ?? 0;
  return { used: usage.usedSize, nodes };
}

async function domPages(page: Page): Promise<{ pages: number; images: number }> {
  return page.evaluate(() => ({ pages: document.querySelectorAll('#stage .page').length, images: document.querySelectorAll('#stage img').length }));
}

/** Waits until the reader shows the pages it says it shows, images loaded, turn finished. */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const visible = (document.documentElement.dataset.visible ?? '').split(',').filter(Boolean);
    const loaded = visible.every((n) => {
      const img = document.querySelector<HTMLImageElement>(`#stage .page[data-page="${n}"] img`);
      return img && img.complete && img.naturalWidth > 0;
    });
    return visible.length > 0 && loaded && document.getAnimations().length === 0 && !document.querySelector('#stage .leaf');
  }, undefined, { timeout: 20_000 });
}

log(`reader benchmark: ${pageCount}-page book, ${flips} pages flipped, animation ${args.animation}`);
log(`${elapsed()} starting the service…`);
const svc = await startService();
const browser = await launchBrowser();
try {
  const { key } = await svc.workspace();
  log(`${elapsed()} generating and uploading a ${pageCount}-page PDF…`);
  const pdf = await makePdf({ pages: pageCount, links: true });
  const convertStart = Date.now();
  const book = await publishBook(svc, key, pdf, `Benchmark ${pageCount} pages.pdf`, { animation_type: args.animation, flip_sound: false }, 30 * 60_000);
  log(`${elapsed()} converted and published in ${((Date.now() - convertStart) / 1000).toFixed(1)}s: ${book.url}`);

  const sizes = bundleSizes(await readerBundle());
  // The first request builds the bundle; do it outside the measurements.
  await fetch(book.url);

  const rows: string[][] = [];
  for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
    log(`${elapsed()} ${name} ${viewport.width}x${viewport.height}: opening the reader ${RUNS} times, each in a fresh context (empty cache)…`);
    const runs: { firstMs: number; lcp: number; bytes: number; requests: number; html: number }[] = [];
    let context!: BrowserContext;
    let page!: Page;
    let cdp!: CDPSession;
    for (let run = 0; run < RUNS; run++) {
      if (context) await context.close();
      context = await browser.newContext({ viewport });
      page = await context.newPage();
      cdp = await context.newCDPSession(page);
      await cdp.send('Performance.enable');
      await page.goto(book.url, { waitUntil: 'commit' });
      const firstVisible = await page.waitForFunction(() => {
        const shown = [...document.querySelectorAll<HTMLImageElement>('#stage img')].some((img) => {
          const box = img.getBoundingClientRect();
          return img.complete && img.naturalWidth > 0 && box.width > 0 && box.bottom > 0 && box.top < innerHeight;
        });
        return shown ? performance.now() : 0;
      }, undefined, { polling: 'raf', timeout: 30_000 });
      const firstMs = (await firstVisible.jsonValue()) as number;
      const network = await page.evaluate((until) => {
        const navigation = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
        const resources = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).filter((r) => r.responseEnd <= until);
        return { bytes: navigation.transferSize + resources.reduce((sum, r) => sum + r.transferSize, 0), requests: resources.length + 1, html: navigation.transferSize };
      }, firstMs);
      const lcp = await page.evaluate(() => new Promise<number>((resolve) => {
        new PerformanceObserver((list) => resolve(list.getEntries().at(-1)?.startTime ?? 0)).observe({ type: 'largest-contentful-paint', buffered: true });
        setTimeout(() => resolve(0), 1000);
      }));
      runs.push({ firstMs, lcp, ...network });
      log(`  run ${run + 1}: first page visible after ${ms(firstMs)} (LCP ${ms(lcp)}), ${kb(network.bytes)} transferred in ${network.requests} requests (HTML ${kb(network.html)})`);
    }
    const median = runs.toSorted((a, b) => a.firstMs - b.firstMs)[Math.floor(RUNS / 2)]!;
    const { firstMs, lcp } = median;
    const network = median;

    await settled(page);
    const before = await heap(cdp);
    const spread = (await page.evaluate(() => document.documentElement.dataset.spread)) === 'true';
    const presses = spread ? Math.ceil(flips / 2) : flips;
    log(`  flipping through ${flips} pages (${presses} turns, ${spread ? 'spreads' : 'single pages'})…`);
    const turnStart = Date.now();
    for (let i = 0; i < presses; i++) {
      await page.keyboard.press('ArrowRight');
      await settled(page);
      if ((i + 1) % 10 === 0) log(`    ${i + 1}/${presses} turns, at page ${await page.evaluate(() => document.documentElement.dataset.page)}`);
    }
    const turnMean = (Date.now() - turnStart) / presses;
    const afterFlips = await heap(cdp);
    const dom = await domPages(page);
    log(`  JS heap ${mb(before.used)} open → ${mb(afterFlips.used)} after ${flips} pages; ${dom.pages} page elements, ${dom.images} images in the DOM; ${afterFlips.nodes} DOM nodes; ${ms(turnMean)} per turn`);
    rows.push([name, ms(firstMs), ms(lcp), kb(network.bytes), mb(before.used), mb(afterFlips.used), String(dom.pages), ms(turnMean)]);
    await context.close();
  }

  log(`${elapsed()} phone, scroll view: scrolling through ${flips} pages…`);
  {
    const context = await browser.newContext({ viewport: PHONE });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    await page.goto(`${book.url}?animation=scroll_view`);
    await settled(page);
    const before = await heap(cdp);
    for (let n = 2; n <= flips + 1; n++) {
      await page.keyboard.press('ArrowRight');
      await page.waitForFunction((want) => {
        const el = document.querySelector<HTMLElement>(`#stage .page[data-page="${want}"]`);
        const scroller = document.querySelector('.scroller');
        const img = el?.querySelector('img');
        return el && scroller && img?.complete && img.naturalWidth > 0 && Math.abs(el.getBoundingClientRect().top - scroller.getBoundingClientRect().top - 12) < 4;
      }, n, { timeout: 20_000 });
    }
    const after = await heap(cdp);
    const dom = await domPages(page);
    log(`  JS heap ${mb(before.used)} → ${mb(after.used)}; ${dom.pages} page elements, ${dom.images} images in the DOM of ${pageCount} pages`);
    rows.push(['phone scroll', '', '', '', mb(before.used), mb(after.used), String(dom.pages), '']);
    await context.close();
  }

  log(`\nReader bundle (JS + CSS): raw ${kb(sizes.total.raw)}, gzip ${kb(sizes.total.gzip)}, brotli ${kb(sizes.total.br)} ` +
    `(JS ${kb(sizes.js.raw)} / ${kb(sizes.js.gzip)} gz, CSS ${kb(sizes.css.raw)} / ${kb(sizes.css.gzip)} gz; budget ${kb(BUNDLE_BUDGET_GZIP)} gz)`);
  const header = ['viewport', 'first page', 'LCP', 'bytes until', 'heap open', `heap +${flips}p`, 'DOM pages', 'per turn'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  log(`\n${line(header)}\n${line(widths.map((w) => '-'.repeat(w)))}\n${rows.map(line).join('\n')}`);
} finally {
  await browser.close();
  await svc.stop();
}
