/**
 * The books list with 1,000 books in Chromium: scrolling to the end reads
 * the next pages by itself until every book is shown once, in order; then a
 * scroll from top to bottom is timed frame by frame, beside the same scroll
 * with `content-visibility: auto` on the cards (out-of-view cards skipped
 * until met), the alternative measured in the same run as a reference: at
 * 1,000 cards it made the first scroll rougher, so the list does not use it.
 * The list view (a table) is filled and scrolled the same way in a third tab. The figures are printed, not asserted
 * (a shared machine's timings are not a test); docs/publishing-screens.md
 * records them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { insertBook } from '../factories.ts';
import { heading, launchWebBrowser, openApp, personIn, signInThroughScreen, startWebService, WEB_SKIP, type WebService } from './web-browser.ts';

const COUNT = 1000;

describe('the books list with 1,000 books', { skip: WEB_SKIP }, () => {
  let svc: WebService;
  let browser: Browser;
  let workspaceId: number;

  before(async () => {
    svc = await startWebService();
    workspaceId = (await svc.workspace({ name: 'A thousand' })).id;
    for (let n = 1; n <= COUNT; n++) await insertBook(svc, workspaceId, { name: `Book ${String(n).padStart(4, '0')}`, pageCount: 1 + (n % 40) });
    browser = await launchWebBrowser();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('reads every page while scrolling, shows each book once, and scrolls through all of them', async () => {
    await personIn(svc, workspaceId, 'many@example.com', 'editor');
    const plain = await fillAndScroll('grid');
    // The reference, in a fresh tab: the same list with cards out of view skipped until met.
    const skipping = await fillAndScroll('grid-skipping');
    // The list view (a table row a book), in a fresh tab too.
    const table = await fillAndScroll('list');
    const frames = (f: Frames) => `${f.frames} frames, p50 ${f.p50} ms, p95 ${f.p95} ms, longest ${f.max} ms`;
    console.log(`books list, ${COUNT} books: first 24 shown ${plain.firstPageMs} ms after navigation (reference ${skipping.firstPageMs} ms); all ${COUNT} read by scrolling in ${plain.allMs} ms (reference ${skipping.allMs} ms)`);
    console.log(`first scroll top to bottom, 400 px a frame: ${frames(plain)} (reference, content-visibility: auto on the cards: ${frames(skipping)})`);
    console.log(`list view (table), ${COUNT} books: first 24 shown ${table.firstPageMs} ms after navigation; all read by scrolling in ${table.allMs} ms; first scroll top to bottom: ${frames(table)}; second scroll: ${frames(table.again)}`);
    console.log(`second scroll top to bottom, grid: ${frames(plain.again)} (reference: ${frames(skipping.again)})`);
  });

  interface Frames { frames: number; p50: number; p95: number; max: number }
  interface Figures extends Frames { firstPageMs: number; allMs: number; again: Frames }

  async function fillAndScroll(view: 'grid' | 'grid-skipping' | 'list'): Promise<Figures> {
    const tab = await openApp(browser);
    try {
      const { page } = tab;
      if (view === 'grid-skipping') {
        // Set through the CSSOM (the page's Content-Security-Policy refuses inline styles), on every card as it comes.
        await page.addInitScript(() => {
          const show = () => document.querySelectorAll<HTMLElement>('.book-card').forEach((card) => {
            card.style.setProperty('content-visibility', 'auto');
            card.style.setProperty('contain-intrinsic-size', 'auto 24rem');
          });
          new MutationObserver(show).observe(document, { childList: true, subtree: true });
        });
      }
      await signInThroughScreen(page, svc, 'many@example.com');
      const opened = Date.now();
      await page.goto(`${svc.origin}/app/books?sort=name${view === 'list' ? '&view=list' : ''}`);
      await heading(page, 'Books');
      await page.getByText('24 books shown.').waitFor();
      const firstPageMs = Date.now() - opened;

      // Scrolling to the end reads on, without a click, until the list says it holds them all.
      const filling = Date.now();
      for (let round = 0; round < 40; round++) {
        const shown = await shownCount(page);
        if (shown === COUNT) break;
        await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
        await page.waitForFunction((before) => {
          const text = document.querySelector('.list-end')?.textContent ?? '';
          return Number(text.match(/^(\d+) books? shown/)?.[1] ?? 0) > before;
        }, shown, { timeout: 15_000 });
      }
      const allMs = Date.now() - filling;
      await page.getByText(`${COUNT} books shown, all of them.`).waitFor();
      const names = view === 'list'
        ? await page.getByRole('table', { name: 'Books' }).locator('tbody th a').allTextContents()
        : await page.getByRole('list', { name: 'Books' }).locator('.book-name').allTextContents();
      assert.equal(names.length, COUNT);
      assert.deepEqual(names, Array.from({ length: COUNT }, (_, i) => `Book ${String(i + 1).padStart(4, '0')}`), 'every book once, in name order');
      assert.equal(await page.getByRole('button', { name: 'Show more books' }).count(), 0);
      const scroll = await scrollFrames(page);
      // Again, every row laid out and painted once already: what scrolling costs once the list is met.
      const again = await scrollFrames(page);
      assert.deepEqual(tab.problems, []);
      return { firstPageMs, allMs, ...scroll, again };
    } finally {
      await tab.close();
    }
  }
});

async function shownCount(page: Page): Promise<number> {
  const text = (await page.locator('.list-end').textContent()) ?? '';
  return Number(text.match(/^(\d+) books? shown/)?.[1] ?? 0);
}

/** Scrolls from the top to the bottom 400 px a frame and times each frame. */
function scrollFrames(page: Page): Promise<{ frames: number; p50: number; p95: number; max: number }> {
  return page.evaluate(async () => {
    window.scrollTo(0, 0);
    await new Promise(requestAnimationFrame);
    const gaps: number[] = [];
    let last = performance.now();
    // Cards met for the first time take their real height (the page's length moves): stop when a step moves nothing.
    for (let step = 0; step < 5000; step++) {
      const before = window.scrollY;
      window.scrollBy(0, 400);
      if (window.scrollY === before) break;
      await new Promise(requestAnimationFrame);
      const now = performance.now();
      gaps.push(now - last);
      last = now;
    }
    gaps.sort((a, b) => a - b);
    const at = (q: number) => Math.round(gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))]! * 10) / 10;
    return { frames: gaps.length, p50: at(0.5), p95: at(0.95), max: at(1) };
  });
}
