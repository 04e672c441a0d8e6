/**
 * The reader as readers of the best viewers judge it, in Chromium: never a
 * white page on a slow network, decoded images on every turn, zoom, the
 * responsive embed, selectable text, bounded DOM, search through every
 * result, reading direction, single/double pages and autoplay.
 * Screenshots go to artifacts/reader/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { makePdf } from '../documents.ts';
import { startService, type TestService } from '../helpers.ts';
import { CHROMIUM_SKIP, PHONE, launchBrowser, openReader, openTab, publishBook, waitForPages, type ReaderTab } from './browser.ts';

/** The throttled profile of the issue: 9 Mbit/s down, 60 ms latency. */
export async function throttle(cdp: CDPSession, downMbit = 9, latencyMs = 60): Promise<void> {
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false, latency: latencyMs, downloadThroughput: (downMbit * 1024 * 1024) / 8, uploadThroughput: (downMbit * 1024 * 1024) / 8,
  });
}

/**
 * Counts, on every frame and on every insertion into the stage, page elements on screen that have no
 * loaded image (what a reader sees as a white page). Read with `whitePages(page)`.
 */
async function watchWhitePages(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __white: string[] };
    w.__white = [];
    const check = (when: string) => {
      for (const el of document.querySelectorAll<HTMLElement>('#stage .page:not(.blank)')) {
        const box = el.getBoundingClientRect();
        if (box.width === 0 || box.bottom < 0 || box.top > innerHeight) continue;
        const shown = [...el.querySelectorAll('img')].some((img) => img.complete && img.naturalWidth > 0);
        if (!shown) w.__white.push(`${when}: page ${el.dataset.page}`);
      }
    };
    new MutationObserver(() => check('inserted')).observe(document.getElementById('stage')!, { childList: true, subtree: true });
    const frame = () => {
      check('frame');
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
}

const whitePages = (page: Page) => page.evaluate(() => (window as unknown as { __white: string[] }).__white);

describe('the reader, as readers judge it', { skip: CHROMIUM_SKIP }, () => {
  let svc: TestService;
  let key: string;
  let browser: Browser;
  let book: { randomId: string; url: string };
  const tabs: ReaderTab[] = [];

  async function tab(options: Parameters<typeof openTab>[1] = {}): Promise<ReaderTab> {
    const t = await openTab(browser, options);
    tabs.push(t);
    return t;
  }

  before(async () => {
    svc = await startService();
    key = (await svc.workspace()).key;
    browser = await launchBrowser();
    book = await publishBook(svc, key, await makePdf({ pages: 14, links: true }), 'Quality book.pdf', { animation_type: 'flip', flip_sound: true });
  });
  after(async () => {
    for (const t of tabs) await t.close().catch(() => undefined);
    await browser?.close();
    await svc?.stop();
  });

  it('never shows a white page while turning on a throttled phone, and swaps in a sharp rendition for the screen', async () => {
    const t = await tab({ viewport: PHONE, deviceScaleFactor: 3, isMobile: true, hasTouch: true });
    const { page } = t;
    const cdp = await t.context.newCDPSession(page);
    await throttle(cdp);
    await openReader(page, book.url);
    await watchWhitePages(page);
    for (let n = 2; n <= 12; n++) {
      await page.click('#next');
      await waitForPages(page, String(n));
    }
    assert.deepEqual(await whitePages(page), [], 'pages on screen without an image');
    // The sharp image replaces the stand-in, chosen for the width shown × devicePixelRatio (3).
    const sharp = await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('#stage .page[data-page="12"] img.hi.ready');
      return img && img.complete ? { natural: img.naturalWidth, shown: img.getBoundingClientRect().width } : null;
    });
    const { natural, shown } = (await sharp.jsonValue())!;
    assert.ok(natural >= Math.min(2048, shown * 3 * 0.95), `a ${natural} px rendition for a page ${shown} CSS px wide at DPR 3`);
    assert.deepEqual(t.problems, []);
  });

  it('shows a decoded image in the first frame after a cut turn (stand-in or sharp), never a white flash', async () => {
    const t = await tab();
    const { page } = t;
    const cdp = await t.context.newCDPSession(page);
    await throttle(cdp);
    await openReader(page, `${book.url}?animation=cut`);
    await watchWhitePages(page);
    for (const expected of ['2,3', '4,5', '6,7', '8,9']) {
      await page.keyboard.press('ArrowRight');
      await waitForPages(page, expected);
    }
    // A jump far ahead (nothing preloaded there) waits for the images too.
    await page.keyboard.press('End');
    await waitForPages(page, '14');
    assert.deepEqual(await whitePages(page), []);
    assert.deepEqual(t.problems, []);
  });
});
