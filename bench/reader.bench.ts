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
 *   - the reader's bundle size (JS + CSS, raw, gzip, brotli);
 *   - the throttled profile (a phone at DPR 3 on 9 Mbit/s with 60 ms latency,
 *     CDP Network.emulateNetworkConditions): white-page turns out of 30 (a
 *     page on screen without a loaded image in any frame of the turn), the time
 *     until the sharp image replaces the stand-in, the first page on slow 3G
 *     (400 kbit/s, 400 ms latency), DOM nodes after 350 turns, and the
 *     sharpness of text at 3× zoom (rendition px against the screen px the
 *     page covers; 1:1 or more is sharp).
 *
 * Options: --pages N       pages of the generated book (default 200)
 *          --flips N       pages to flip through (default 50)
 *          --animation A   animation_type of the book (default flip)
 *          --profile P     all (default), throttled (only the throttled profile) or long (only the long-book profile)
 *          --long-pages N  pages of the long book (default 400)
 *          --turns N       turns of the long book's memory walk (default 1000)
 *
 * The long-book profile (issue 31): a catalog-like book (a photo on every page) of 400 pages opened at its
 * middle; 30 turns every 300 ms on the phone at DPR 3 at 9 and 3 Mbit/s (60 ms latency) and on the desktop
 * at 9 Mbit/s: white turns, sharp rendition before the next turn and after the reader stops, bytes fetched
 * per turn; then 1,000 turns forward and back (runs of 100) on the desktop and the phone: DOM nodes, JS heap
 * and the decoded size of every image element alive (detached ones too, found with Runtime.queryObjects).
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Browser, BrowserContext, BrowserContextOptions, CDPSession, Page } from 'playwright-core';
import { bundleSizes, readerBundle, BUNDLE_BUDGET_GZIP } from '../src/modules/reader/reader.bundle.ts';
import { makeCatalogPdf, makePdf } from '../test/documents.ts';
import { startService } from '../test/helpers.ts';
import { CHROMIUM_PATH, DESKTOP, PHONE, PHONE_3X, imageRequests, launchBrowser, memorySample, publishBook, skim, throttle, waitForSharp } from '../test/reader/browser.ts';

const { values: args } = parseArgs({
  options: {
    pages: { type: 'string', default: '200' },
    flips: { type: 'string', default: '50' },
    animation: { type: 'string', default: 'flip' },
    /** all, throttled (only the throttled profile) or long (only the long-book profile). */
    profile: { type: 'string', default: 'all' },
    /** Pages of the long book, and the turns of its memory walk. */
    'long-pages': { type: 'string', default: '400' },
    turns: { type: 'string', default: '1000' },
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

const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** Waits for the first page image on screen; returns ms since navigation start. */
async function firstPage(page: Page): Promise<number> {
  const handle = await page.waitForFunction(() => {
    const shown = [...document.querySelectorAll<HTMLImageElement>('#stage img')].some((img) => {
      const box = img.getBoundingClientRect();
      return img.complete && img.naturalWidth > 0 && box.width > 0 && box.bottom > 0 && box.top < innerHeight;
    });
    return shown ? performance.now() : 0;
  }, undefined, { polling: 'raf', timeout: 60_000 });
  return (await handle.jsonValue()) as number;
}

/** The throttled profile of issue 16. Returns rows for the summary. */
async function throttledProfile(browser: Browser, url: string): Promise<string[][]> {
  const rows: string[][] = [];
  log(`${elapsed()} throttled phone (390x844 at DPR 3, 9 Mbit/s, 60 ms latency): 30 turns…`);
  {
    const context = await browser.newContext(PHONE_3X);
    const page = await context.newPage();
    await throttle(await context.newCDPSession(page), 9 * 1024, 60);
    await page.goto(url);
    await firstPage(page);
    await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
    // A page on screen without a loaded image, in any frame or on insertion, is a white page.
    await page.evaluate(() => {
      const w = window as unknown as { __white: number };
      w.__white = 0;
      const check = () => {
        for (const el of document.querySelectorAll<HTMLElement>('#stage .page:not(.blank)')) {
          const box = el.getBoundingClientRect();
          if (box.width === 0 || box.bottom < 0 || box.top > innerHeight) continue;
          if (![...el.querySelectorAll('img')].some((img) => img.complete && img.naturalWidth > 0)) w.__white++;
        }
      };
      new MutationObserver(check).observe(document.getElementById('stage')!, { childList: true, subtree: true });
      const frame = () => {
        check();
        requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    });
    let whiteTurns = 0;
    const sharpTimes: number[] = [];
    for (let turn = 1; turn <= 30; turn++) {
      const before = await page.evaluate(() => (window as unknown as { __white: number }).__white);
      const n = turn + 1;
      // From the click until the page shows a sharp image (larger than the 320 px stand-in) that is not hidden.
      const sharpMs = await page.evaluate((want) => new Promise<number>((resolve) => {
        const t0 = performance.now();
        document.getElementById('next')!.click();
        const poll = () => {
          const sharp = [...document.querySelectorAll<HTMLImageElement>(`#stage .page[data-page="${want}"] img`)]
            .some((img) => img.complete && img.naturalWidth > 400 && (!img.classList.contains('hi') || img.classList.contains('ready')));
          if (sharp) resolve(performance.now() - t0);
          else if (performance.now() - t0 > 60_000) resolve(NaN);
          else requestAnimationFrame(poll);
        };
        poll();
      }), n);
      await settled(page);
      const after = await page.evaluate(() => (window as unknown as { __white: number }).__white);
      if (after > before) whiteTurns++;
      sharpTimes.push(sharpMs);
      if (turn % 10 === 0) log(`    ${turn}/30 turns: ${whiteTurns} white so far, sharp after ${ms(median(sharpTimes))} (median)`);
    }
    log(`  white-page turns: ${whiteTurns} of 30; sharp image after ${ms(median(sharpTimes))} median, ${ms(Math.max(...sharpTimes))} worst`);
    rows.push(['white-page turns (9 Mbit/s phone)', `${whiteTurns} / 30`, '0']);
    rows.push(['sharp image after a turn (median)', ms(median(sharpTimes)), '']);
    await context.close();
  }

  log(`${elapsed()} phone on slow 3G (400 kbit/s, 400 ms latency): first page…`);
  {
    const context = await browser.newContext(PHONE_3X);
    const page = await context.newPage();
    await throttle(await context.newCDPSession(page), 400, 400);
    await page.goto(url, { waitUntil: 'commit' });
    const first = await firstPage(page);
    log(`  first page visible after ${ms(first)}`);
    rows.push(['first page, slow 3G phone', ms(first), '< 3000 ms']);
    await context.close();
  }

  log(`${elapsed()} phone: DOM nodes over 350 turns (cut, so the walk is quick)…`);
  {
    const context = await browser.newContext({ viewport: PHONE });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    await page.goto(`${url}?animation=cut`);
    await settled(page);
    const start = await heap(cdp);
    let direction = 'ArrowRight';
    const samples: number[] = [];
    for (let turn = 1; turn <= 350; turn++) {
      const at = Number(await page.evaluate(() => document.documentElement.dataset.page));
      if (at >= pageCount) direction = 'ArrowLeft';
      if (at <= 1) direction = 'ArrowRight';
      await page.keyboard.press(direction);
      await settled(page);
      if (turn % 50 === 0) {
        const nodes = (await heap(cdp)).nodes;
        samples.push(nodes);
        log(`    ${turn}/350 turns: ${nodes} DOM nodes`);
      }
    }
    const end = await heap(cdp);
    log(`  DOM nodes ${start.nodes} open → ${end.nodes} after 350 turns`);
    rows.push(['DOM nodes open → after 350 turns', `${start.nodes} → ${end.nodes}`, 'flat']);
    await context.close();
  }

  log(`${elapsed()} phone at DPR 3: text sharpness at 3× and 4× zoom…`);
  {
    const context = await browser.newContext(PHONE_3X);
    const page = await context.newPage();
    await page.goto(`${url}#page=3`);
    await settled(page);
    const zoomable = await page.evaluate(() => Boolean(document.getElementById('zoom-in')));
    if (zoomable) {
      // The reader's own zoom: to 3× then 4×, and the rendition it loads for the page (drawn on request beyond the stored sizes).
      for (const level of [3, 4]) {
        while (await page.evaluate((l) => Number(document.documentElement.dataset.zoom ?? 1) < l, level)) await page.click('#zoom-in');
        // The reader asks for the rendition of a zoom level once the level has settled (120 ms without change).
        await page.waitForTimeout(400);
        const handle = await page.waitForFunction((l) => {
          const el = document.querySelector<HTMLElement>('#stage .page[data-page="3"]');
          const img = el?.querySelector<HTMLImageElement>('img.hi.ready');
          if (!el || !img || document.documentElement.dataset.zoom !== String(l)) return 0;
          // Settled on the rendition it wants for this zoom (it may be the largest there is).
          const wanted = Number((el.dataset.want ?? '').split(' ').pop());
          if (wanted && wanted !== img.naturalWidth) return 0;
          return img.naturalWidth / (el.getBoundingClientRect().width * devicePixelRatio);
        }, level, { timeout: 60_000 });
        const ratio = (await handle.jsonValue()) as number;
        log(`  reader's zoom at ${level}×: ${ratio.toFixed(2)} rendition px per screen px`);
        rows.push([`text sharpness at ${level}× zoom (px per screen px)`, `${ratio.toFixed(2)} : 1`, '≥ 1 : 1']);
      }
    } else {
      // No zoom of its own: the browser's pinch magnifies the largest rendition the page loaded.
      const ratio = await page.evaluate(() => {
        const el = document.querySelector<HTMLElement>('#stage .page[data-page="3"]')!;
        const widest = Math.max(...[...el.querySelectorAll('img')].map((img) => img.naturalWidth));
        return widest / (el.getBoundingClientRect().width * 3 * devicePixelRatio);
      });
      log(`  browser pinch (no zoom of its own): ${ratio.toFixed(2)} rendition px per screen px`);
      rows.push(['text sharpness at 3× zoom (px per screen px)', `${ratio.toFixed(2)} : 1`, '≥ 1 : 1']);
    }
    await context.close();
  }
  return rows;
}

/**
 * Opens `url` with `options` (on `downKbit` kbit/s with 60 ms latency, or unthrottled) and skims 30 turns
 * every 300 ms (browser.ts skim), counting the bytes fetched per turn on the wire (CDP).
 */
async function skimLong(browser: Browser, url: string, options: BrowserContextOptions, downKbit: number | null, turns: number): Promise<{ white: number; sharpBefore: number; sharpMs: number; dwellSharpMs: number; bytesPerTurn: number }> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  if (downKbit) await throttle(cdp, downKbit, 60);
  else await cdp.send('Network.enable');
  let bytes = 0;
  cdp.on('Network.loadingFinished', (event) => (bytes += event.encodedDataLength));
  const images = imageRequests(page);
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await settled(page);
  // Opening is not skimming: the first view's prefetches finish first.
  await images.idle(60_000);
  const opened = bytes;
  const result = await skim(page, turns);
  await context.close();
  return { white: result.white, sharpBefore: result.sharpBefore, sharpMs: median(result.sharpMs), dwellSharpMs: result.lastSharpMs, bytesPerTurn: (bytes - opened) / turns };
}

/**
 * The long-book profile (issue 31): a `longPages`-page catalog-like book opened mid-book. Skims 30 turns on the
 * phone at 9 and 3 Mbit/s and on the desktop at 9 Mbit/s, then walks `walkTurns` turns forward and back on
 * each viewport, sampling DOM nodes, JS heap and decoded image memory.
 */
async function longProfile(browser: Browser, url: string, longPages: number, walkTurns: number): Promise<string[][]> {
  const rows: string[][] = [];
  const start = Math.floor(longPages / 2);
  const at = `${url}#page=${start}`;
  for (const [name, options, kbit, goal] of [
    ['phone, 9 Mbit/s', PHONE_3X, 9 * 1024, '0'],
    ['phone, 3 Mbit/s', PHONE_3X, 3 * 1024, '≤ 2'],
    ['desktop, 9 Mbit/s', { viewport: DESKTOP }, 9 * 1024, '0'],
  ] as const) {
    log(`${elapsed()} long book, ${name}: 30 turns every 300 ms from page ${start}…`);
    const r = await skimLong(browser, at, options, kbit, 30);
    log(`  white turns ${r.white} of 30; sharp before the next turn on ${r.sharpBefore} of 30${r.sharpBefore ? ` (median ${ms(r.sharpMs)})` : ''}; sharp ${ms(r.dwellSharpMs)} after the last turn; ${kb(r.bytesPerTurn)} per turn`);
    rows.push([`long book, ${name}: white turns`, `${r.white} / 30`, goal]);
    rows.push([`  sharp before the next turn (median time)`, `${r.sharpBefore} / 30${r.sharpBefore ? ` (${ms(r.sharpMs)})` : ''}`, '']);
    rows.push([`  sharp after the reader stops`, ms(r.dwellSharpMs), '']);
    rows.push([`  fetched per turn`, kb(r.bytesPerTurn), '']);
  }
  for (const [name, options] of [['desktop', { viewport: DESKTOP }], ['phone', PHONE_3X]] as const) {
    log(`${elapsed()} long book, ${name}: ${walkTurns} turns forward and back (cut), memory…`);
    const context = await browser.newContext(options);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    await page.goto(`${url}?animation=cut#page=${start}`, { waitUntil: 'domcontentloaded' });
    await settled(page);
    // Samples are taken once the reader has stayed: the pages shown are sharp, and all it asked for has come.
    await waitForSharp(page);
    const first = await memorySample(cdp);
    let peak = { ...first };
    // Runs of 100 turns each way (in views), so the walk covers 100 views around the start and back.
    let direction = 'ArrowRight';
    for (let turn = 1; turn <= walkTurns; turn++) {
      if (turn % 100 === 1 && turn > 1) direction = direction === 'ArrowRight' ? 'ArrowLeft' : 'ArrowRight';
      await page.keyboard.press(direction);
      await settled(page);
      if (turn % 100 === 0 || turn === walkTurns) {
        await waitForSharp(page);
        const m = await memorySample(cdp);
        peak = { nodes: Math.max(peak.nodes, m.nodes), heap: Math.max(peak.heap, m.heap), imageBytes: Math.max(peak.imageBytes, m.imageBytes), images: Math.max(peak.images, m.images) };
        log(`    ${turn}/${walkTurns} turns: ${m.nodes} DOM nodes, heap ${mb(m.heap)}, ${m.images} images alive (${mb(m.imageBytes)} decoded)`);
      }
    }
    const last = await memorySample(cdp);
    log(`  DOM nodes ${first.nodes} → ${last.nodes} (peak ${peak.nodes}); heap ${mb(first.heap)} → ${mb(last.heap)} (peak ${mb(peak.heap)}); decoded images ${mb(first.imageBytes)} → ${mb(last.imageBytes)} (peak ${mb(peak.imageBytes)})`);
    const ratio = (a: number, b: number) => `×${(b / Math.max(1, a)).toFixed(2)}`;
    rows.push([`long book, ${name}, ${walkTurns} turns: DOM nodes`, `${first.nodes} → ${last.nodes} (peak ${ratio(first.nodes, peak.nodes)})`, '≤ ×1.5']);
    rows.push([`  JS heap`, `${mb(first.heap)} → ${mb(last.heap)} (peak ${ratio(first.heap, peak.heap)})`, '≤ ×1.5']);
    rows.push([`  decoded images`, `${mb(first.imageBytes)} → ${mb(last.imageBytes)} (peak ${ratio(first.imageBytes, peak.imageBytes)})`, '≤ ×1.5']);
    await context.close();
  }
  return rows;
}

function printRows(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  log(`\n${line(header)}\n${line(widths.map((w) => '-'.repeat(w)))}\n${rows.map(line).join('\n')}`);
}

log(`reader benchmark: ${pageCount}-page book, ${flips} pages flipped, animation ${args.animation}`);
log(`${elapsed()} starting the service…`);
const svc = await startService();
const browser = await launchBrowser();
try {
  const { key } = await svc.workspace();
  const longRows: string[][] = [];
  if (args.profile === 'all' || args.profile === 'long') {
    const longPages = Number(args['long-pages']);
    log(`${elapsed()} generating and uploading a ${longPages}-page catalog-like PDF…`);
    const t0 = Date.now();
    const long = await publishBook(svc, key, await makeCatalogPdf(longPages), `Long ${longPages} pages.pdf`, { animation_type: args.animation, flip_sound: false }, 60 * 60_000);
    log(`${elapsed()} converted and published in ${((Date.now() - t0) / 1000).toFixed(1)}s: ${long.url}`);
    await fetch(long.url);
    longRows.push(...(await longProfile(browser, long.url, longPages, Number(args.turns))));
  }
  if (args.profile === 'long') {
    printRows(['long-book profile', 'measured', 'goal'], longRows);
    await browser.close();
    await svc.stop();
    process.exit(0);
  }
  log(`${elapsed()} generating and uploading a ${pageCount}-page PDF…`);
  const pdf = await makePdf({ pages: pageCount, links: true });
  const convertStart = Date.now();
  const book = await publishBook(svc, key, pdf, `Benchmark ${pageCount} pages.pdf`, { animation_type: args.animation, flip_sound: false }, 30 * 60_000);
  log(`${elapsed()} converted and published in ${((Date.now() - convertStart) / 1000).toFixed(1)}s: ${book.url}`);

  const sizes = bundleSizes(await readerBundle());
  // The first request builds the bundle; do it outside the measurements.
  await fetch(book.url);

  const rows: string[][] = [];
  for (const [name, viewport] of args.profile === 'throttled' ? [] : [['desktop', DESKTOP], ['phone', PHONE]] as const) {
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

  if (args.profile !== 'throttled') {
    log(`${elapsed()} phone, scroll view: scrolling through ${flips} pages…`);
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

  const throttledRows = await throttledProfile(browser, book.url);

  log(`\nReader bundle (JS + CSS): raw ${kb(sizes.total.raw)}, gzip ${kb(sizes.total.gzip)}, brotli ${kb(sizes.total.br)} ` +
    `(JS ${kb(sizes.js.raw)} / ${kb(sizes.js.gzip)} gz, CSS ${kb(sizes.css.raw)} / ${kb(sizes.css.gzip)} gz; budget ${kb(BUNDLE_BUDGET_GZIP)} gz)`);
  const header = ['viewport', 'first page', 'LCP', 'bytes until', 'heap open', `heap +${flips}p`, 'DOM pages', 'per turn'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  if (rows.length > 0) log(`\n${line(header)}\n${line(widths.map((w) => '-'.repeat(w)))}\n${rows.map(line).join('\n')}`);
  throttledRows.push(['reader bundle, JS + CSS gzip', kb(sizes.total.gzip), `≤ ${kb(BUNDLE_BUDGET_GZIP)}`]);
  printRows(['throttled profile', 'measured', 'goal'], throttledRows);
  if (longRows.length > 0) printRows(['long-book profile', 'measured', 'goal'], longRows);
} finally {
  await browser.close();
  await svc.stop();
}
