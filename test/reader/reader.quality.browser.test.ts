/**
 * The reader as readers of the best viewers judge it, in Chromium: never a
 * white page on a slow network, decoded images on every turn, zoom, the
 * responsive embed, selectable text, bounded DOM, search through every
 * result, reading direction, single/double pages and autoplay.
 * Screenshots go to artifacts/reader/.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { makePdf } from '../documents.ts';
import { startService, type TestService } from '../helpers.ts';
import { CHROMIUM_SKIP, PHONE, launchBrowser, openReader, openTab, publishBook, screenshot, visiblePages as visiblePagesOf, waitForPages, type ReaderTab } from './browser.ts';

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

  const zoomOf = (page: Page) => page.evaluate(() => Number(document.documentElement.dataset.zoom ?? 1));

  it('zooms with Ctrl + wheel about the pointer and with the zoom control, to 4×, with a sharper rendition for the zoomed page', async () => {
    const t = await tab();
    const { page } = t;
    await openReader(page, `${book.url}#page=2`);
    await waitForPages(page, '2,3');
    const before = await page.waitForFunction(() => document.querySelector<HTMLImageElement>('#stage .page[data-page="2"] img.hi.ready')?.naturalWidth ?? 0);
    const widthAt1 = (await before.jsonValue()) as number;
    const stage = (await page.locator('#stage').boundingBox())!;
    await page.mouse.move(stage.x + stage.width * 0.4, stage.y + stage.height * 0.4);
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, -70);
    await page.mouse.wheel(0, -70);
    await page.keyboard.up('Control');
    await page.waitForFunction(() => Number(document.documentElement.dataset.zoom) >= 4);
    assert.equal(await visiblePagesOf(page), '2,3', 'zooming does not turn');
    const sharp = await page.waitForFunction((was) => {
      const el = document.querySelector<HTMLElement>('#stage .page[data-page="2"]')!;
      const img = el.querySelector<HTMLImageElement>('img.hi.ready');
      return img && img.naturalWidth > was ? { natural: img.naturalWidth, screen: el.getBoundingClientRect().width * devicePixelRatio } : null;
    }, widthAt1);
    const { natural, screen } = (await sharp.jsonValue())!;
    // Beyond the stored sizes the service draws a rendition on request: the image covers the page's screen pixels.
    assert.ok(natural >= screen * 0.95, `a ${natural} px rendition for ${screen} screen px`);
    await screenshot(page, 'reader-zoomed-desktop');
    // The control steps down and back; 0 resets; a turn resets.
    await page.click('#zoom-out');
    await page.waitForFunction(() => Number(document.documentElement.dataset.zoom) === 4);
    await page.keyboard.press('0');
    await page.waitForFunction(() => document.documentElement.dataset.zoom === '1');
    await page.click('#zoom-in');
    await page.waitForFunction(() => document.documentElement.dataset.zoom === '1.5');
    await page.keyboard.press('ArrowRight');
    await waitForPages(page, '4,5');
    assert.equal(await zoomOf(page), 1);
    assert.deepEqual(t.problems, []);
  });

  it('pinches to 4× with two fingers on a phone and pans by drag; double-tap zooms to the point and back, never turning', async () => {
    const t = await tab({ viewport: PHONE, deviceScaleFactor: 3, isMobile: true, hasTouch: true });
    const { page } = t;
    await openReader(page, `${book.url}#page=3`);
    await waitForPages(page, '3');
    const cdp = await t.context.newCDPSession(page);
    const stage = (await page.locator('#stage').boundingBox())!;
    const cx = stage.x + stage.width / 2;
    const cy = stage.y + stage.height / 2;
    const touch = (type: 'touchStart' | 'touchMove' | 'touchEnd', spread: number | null) => cdp.send('Input.dispatchTouchEvent', {
      type, touchPoints: spread === null ? [] : [{ x: cx - spread, y: cy, id: 1 }, { x: cx + spread, y: cy, id: 2 }],
    });
    await touch('touchStart', 30);
    for (let spread = 40; spread <= 125; spread += 5) await touch('touchMove', spread);
    await touch('touchEnd', null);
    await page.waitForFunction(() => Number(document.documentElement.dataset.zoom) >= 3.9);
    const transform = () => page.locator('.zoomer').evaluate((el) => getComputedStyle(el).transform);
    const pinched = await transform();
    // One finger drags the zoomed page along.
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: cx, y: cy, id: 3 }] });
    for (let dx = 10; dx <= 80; dx += 10) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x: cx + dx, y: cy + dx / 2, id: 3 }] });
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    await page.waitForFunction((was) => getComputedStyle(document.querySelector('.zoomer')!).transform !== was, pinched);
    assert.equal(await visiblePagesOf(page), '3', 'neither the pinch nor the drag turned');
    // At 4× on a 3× screen the page covers ~4,300 device pixels: the rendition in use (drawn on request, up to 5120 px) covers them.
    const covered = await page.waitForFunction(() => {
      const el = document.querySelector<HTMLElement>('#stage .page[data-page="3"]')!;
      const img = el.querySelector<HTMLImageElement>('img.hi.ready');
      const screen = el.getBoundingClientRect().width * devicePixelRatio;
      return img && img.naturalWidth >= screen * 0.95 ? { natural: img.naturalWidth, screen } : null;
    }, undefined, { timeout: 60_000 });
    const coverage = (await covered.jsonValue())!;
    assert.ok(coverage.screen > 4000, `the zoomed page covers ${coverage.screen} device px`);
    await screenshot(page, 'reader-zoomed-phone');
    // Double tap (the four touch events sent back to back, so a loaded machine does not stretch them apart):
    // out to 1×, then in to the point, and the page stays.
    const doubleTap = () => Promise.all(['touchStart', 'touchEnd', 'touchStart', 'touchEnd'].map((type) =>
      cdp.send('Input.dispatchTouchEvent', { type: type as 'touchStart', touchPoints: type === 'touchStart' ? [{ x: cx, y: cy, id: 9 }] : [] })));
    await doubleTap();
    await page.waitForFunction(() => document.documentElement.dataset.zoom === '1');
    await doubleTap();
    await page.waitForFunction(() => document.documentElement.dataset.zoom === '2.5');
    assert.equal(await visiblePagesOf(page), '3');
    assert.deepEqual(t.problems, []);
  });

  it('zooms on a double click instead of turning two pages; a click on the edge turns one', async () => {
    const t = await tab();
    const { page } = t;
    await openReader(page, `${book.url}#page=4`);
    await waitForPages(page, '4,5');
    const book4 = (await page.locator('#stage .book').boundingBox())!;
    await page.mouse.dblclick(book4.x + book4.width * 0.3, book4.y + book4.height / 2);
    await page.waitForFunction(() => document.documentElement.dataset.zoom === '2.5');
    assert.equal(await visiblePagesOf(page), '4,5');
    await page.mouse.dblclick(book4.x + book4.width * 0.3, book4.y + book4.height / 2);
    await page.waitForFunction(() => document.documentElement.dataset.zoom === '1');
    assert.equal(await visiblePagesOf(page), '4,5');
    // A double click on the right edge turns once, not twice.
    await page.mouse.dblclick(book4.x + book4.width * 0.95, book4.y + book4.height / 2);
    await waitForPages(page, '6,7');
    assert.equal(await zoomOf(page), 1);
    assert.deepEqual(t.problems, []);
  });

  it('embeds responsively: in a 360 px phone column the page is at least 300 px wide, toolbars compact, with a button to open it full screen', async () => {
    const published = await svc.request('GET', `/v1/books/${book.randomId}`, { key });
    const embedCode = published.body.data.embed_code as string;
    const embedder = http.createServer((_request, response) => {
      response.setHeader('content-type', 'text/html');
      response.end(`<!doctype html><meta name="viewport" content="width=device-width, initial-scale=1"><title>Shop</title>` +
        `<body style="margin:0"><div id="column" style="width:360px;margin:0 15px">${embedCode}</div><p>After the book.</p></body>`);
    });
    await new Promise<void>((resolve) => embedder.listen(0, '127.0.0.1', resolve));
    try {
      const t = await tab({ viewport: PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
      const { page } = t;
      await page.goto(`http://127.0.0.1:${(embedder.address() as AddressInfo).port}/`);
      const frame = (await (await page.$('iframe'))!.contentFrame())!;
      await frame.waitForFunction(() => document.documentElement.dataset.ready === 'true');
      // The snippet applies the height the frame asks for; then the page fills the column's width.
      await frame.waitForFunction(() => (document.querySelector('#stage .page')?.getBoundingClientRect().width ?? 0) >= 300);
      const pageBox = await frame.evaluate(() => document.querySelector('#stage .page')!.getBoundingClientRect().width);
      assert.ok(pageBox >= 300, `page ${pageBox} px wide`);
      const bars = await frame.evaluate(() => [...document.querySelectorAll<HTMLElement>('.reader > .bar')].reduce((sum, bar) => sum + bar.offsetHeight, 0));
      assert.ok(bars <= 100, `toolbars take ${bars} px`);
      const open = frame.locator('#open-full');
      assert.ok(await open.isVisible(), 'the open-full-screen button shows in an embed');
      const [popup] = await Promise.all([t.context.waitForEvent('page'), open.click()]);
      await popup.waitForLoadState();
      assert.match(popup.url(), new RegExp(`/read/${book.randomId}#page=1$`));
      await popup.close();
      assert.deepEqual(t.problems, []);
    } finally {
      await new Promise((resolve) => embedder.close(resolve));
    }
  });

  it('keeps the toolbars compact on a phone and gives a landscape phone wide pages', async () => {
    const t = await tab({ viewport: PHONE, isMobile: true, hasTouch: true });
    const { page } = t;
    await openReader(page, book.url);
    assert.equal(await page.locator('#open-full').isVisible(), false, 'no open-full-screen button outside an embed');
    const bars = await page.evaluate(() => [...document.querySelectorAll<HTMLElement>('.reader > .bar')].reduce((sum, bar) => sum + bar.offsetHeight, 0));
    assert.ok(bars <= 100, `phone toolbars take ${bars} of 844 px`);
    await page.setViewportSize({ width: PHONE.height, height: PHONE.width });
    await page.waitForFunction(() => document.documentElement.dataset.spread === 'true');
    await page.keyboard.press('ArrowRight');
    await waitForPages(page, '2,3');
    const width = await page.evaluate(() => document.querySelector('#stage .page[data-page="2"]')!.getBoundingClientRect().width);
    await screenshot(page, 'reader-landscape-phone');
    assert.ok(width >= 240, `landscape page ${width} px wide`);
  });

  it('lets readers select and copy the text on a page, without turning it', async () => {
    const t = await tab({ permissions: ['clipboard-read', 'clipboard-write'] });
    const { page } = t;
    await openReader(page, `${book.url}#page=2`);
    await waitForPages(page, '2,3');
    const run = page.locator('#stage .page[data-page="2"] .textlayer span', { hasText: 'Page 2 of 14' });
    await run.waitFor();
    const box = (await run.boundingBox())!;
    // The run covers the words on the image: its box spans their width.
    assert.ok(box.width > 100, `text run ${box.width} px wide`);
    await page.mouse.move(box.x + 1, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 4 });
    await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2, { steps: 4 });
    await page.mouse.up();
    assert.match(await page.evaluate(() => String(getSelection())), /Page 2 of 1/);
    await page.keyboard.press('Control+C');
    assert.match(await page.evaluate(() => navigator.clipboard.readText()), /Page 2 of 1/);
    assert.equal(await visiblePagesOf(page), '2,3', 'selecting did not turn the page');
    assert.deepEqual(t.problems, []);
  });

  it('plays the page-turn sound on the very first keyboard turn', async () => {
    const t = await tab();
    const { page } = t;
    await t.context.addInitScript(() => {
      const w = window as unknown as { __sounds: number };
      w.__sounds = 0;
      const start = AudioBufferSourceNode.prototype.start;
      AudioBufferSourceNode.prototype.start = function (...args: Parameters<typeof start>) {
        w.__sounds++;
        return start.apply(this, args);
      };
    });
    await openReader(page, book.url);
    await page.keyboard.press('ArrowRight');
    await waitForPages(page, '2,3');
    await page.waitForFunction(() => (window as unknown as { __sounds: number }).__sounds === 1);
  });

  it('goes through every search result with next and previous hit, highlighting each', async () => {
    const t = await tab();
    const { page } = t;
    await openReader(page, book.url);
    await page.click('#open-search');
    await page.fill('#search-q', 'paragraph');
    await page.press('#search-q', 'Enter');
    await page.locator('#search-results button').first().waitFor();
    assert.match(await page.locator('#search-status').textContent() ?? '', /14 pages contain/);
    assert.equal(await page.locator('#search-results button').count(), 14);
    assert.equal(await page.locator('#search-more').isVisible(), false, 'every result is listed');
    await page.click('#dlg-search [data-close]');
    for (const expected of ['2,3', '4,5', '6,7', '8,9', '10,11', '12,13', '14']) {
      await page.click('#hit-next');
      await waitForPages(page, expected);
      const last = expected.split(',').at(-1)!;
      await page.locator(`#stage .page[data-page="${last}"] .hit`).first().waitFor();
    }
    await page.click('#hit-prev');
    await waitForPages(page, '12,13');
    assert.match(await page.locator('#announcer').textContent() ?? '', /Result 13 of 14, page 13|Result 12 of 14, page 12/);
    assert.deepEqual(t.problems, []);
  });
});
