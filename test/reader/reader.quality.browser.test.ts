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
import { BROWSER_SKIP, PHONE, launchBrowser, openReader, openTab, publishBook, screenshot, updateBook, visiblePages as visiblePagesOf, waitForPages, type ReaderTab } from './browser.ts';

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

describe('the reader, as readers judge it', { skip: BROWSER_SKIP }, () => {
  let svc: TestService;
  let key: string;
  let browser: Browser;
  let book: { randomId: string; url: string };
  /** Longer than the reader's cache of pages, so a walk through it evicts pages. */
  let long: { randomId: string; url: string };
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
    long = await publishBook(svc, key, await makePdf({ pages: 40, links: true }), 'Long book.pdf', { animation_type: 'flip' });
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
    // The sharp image replaces the stand-in, chosen for the width shown × devicePixelRatio (3). The reader may show the
    // 1024 px image first while the 2048 px one is drawn on its first request (slow on a loaded machine): wait for the
    // rendition the test asserts, and say which one was shown if it never comes.
    const sharpEnough = () => {
      const img = document.querySelector<HTMLImageElement>('#stage .page[data-page="12"] img.hi.ready');
      if (!img || !img.complete) return null;
      const shown = img.getBoundingClientRect().width;
      return img.naturalWidth >= Math.min(2048, shown * 3 * 0.95) ? { natural: img.naturalWidth, shown } : null;
    };
    await page.waitForFunction(sharpEnough, undefined, { timeout: 60_000 }).catch(async (error: unknown) => {
      const shown = await page.evaluate(() => {
        const img = document.querySelector<HTMLImageElement>('#stage .page[data-page="12"] img.hi.ready');
        return img ? `a ${img.naturalWidth} px rendition for a page ${img.getBoundingClientRect().width} CSS px wide` : 'no sharp image';
      });
      assert.fail(`${shown} at DPR 3 after 60 s (${(error as Error).message.split('\n')[0]})`);
    });
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

  it('keeps the DOM flat over 350 turns', async () => {
    const t = await tab({ viewport: PHONE });
    const { page } = t;
    const cdp = await t.context.newCDPSession(page);
    // Cut, so the walk is quick; every turn builds and drops the same elements as any other animation.
    await openReader(page, `${long.url}?animation=cut`);
    const nodes = async () => {
      await cdp.send('HeapProfiler.collectGarbage');
      return (await cdp.send('Memory.getDOMCounters')).nodes;
    };
    const start = await nodes();
    let direction = 'ArrowRight';
    let at = 1;
    for (let turn = 1; turn <= 350; turn++) {
      if (at >= 40) direction = 'ArrowLeft';
      if (at <= 1) direction = 'ArrowRight';
      await page.keyboard.press(direction);
      at += direction === 'ArrowRight' ? 1 : -1;
      await waitForPages(page, String(at));
    }
    const end = await nodes();
    // The cache holds 14 pages (images, links, text layer) beyond the ones on screen: a bounded few hundred nodes.
    assert.ok(end <= start + 300, `DOM nodes ${start} at open, ${end} after 350 turns`);
    assert.deepEqual(t.problems, []);
  });

  /**
   * Records, on every frame, where the lifted part of the curl is on screen (the client bounds of the flap's
   * clip polygon, through its transform). `flap(page)` reads the latest, `flaps(page)` all of them.
   */
  async function watchFlap(page: Page): Promise<void> {
    await page.evaluate(() => {
      const w = window as unknown as { __flaps: { top: number; bottom: number; left: number; right: number }[] };
      w.__flaps = [];
      const frame = () => {
        const flap = document.querySelector<HTMLElement>('#stage .leaf .flap');
        if (flap && flap.style.clipPath.startsWith('polygon')) {
          const matrix = new DOMMatrix(getComputedStyle(flap).transform);
          const book = document.querySelector('#stage .book')!.getBoundingClientRect();
          const points = [...flap.style.clipPath.matchAll(/(-?[\d.]+)px (-?[\d.]+)px/g)].map(([, x, y]) => matrix.transformPoint(new DOMPoint(Number(x), Number(y))));
          const ys = points.map((p) => book.top + flap.offsetTop + p.y);
          const xs = points.map((p) => book.left + flap.offsetLeft + p.x);
          w.__flaps.push({ top: Math.min(...ys), bottom: Math.max(...ys), left: Math.min(...xs), right: Math.max(...xs) });
        }
        requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    });
  }
  const flaps = (page: Page) => page.evaluate(() => (window as unknown as { __flaps: { top: number; bottom: number; left: number; right: number }[] }).__flaps);

  it('curls the page under a dragged corner: releasing past the middle completes the turn, an early release springs back', async () => {
    const t = await tab();
    const { page } = t;
    await openReader(page, `${book.url}#page=2`);
    await waitForPages(page, '2,3');
    await watchFlap(page);
    const box = (await page.locator('#stage .book').boundingBox())!;
    const corner = { x: box.x + box.width - 6, y: box.y + box.height - 6 };
    await page.mouse.move(corner.x, corner.y);
    await page.mouse.down();
    for (let i = 1; i <= 12; i++) await page.mouse.move(corner.x - i * box.width * 0.04, corner.y - i * 10);
    // Mid-drag: the front is cut at the fold, the flap shows the next page's back, the spread has not turned yet.
    await page.waitForFunction(() => /^polygon/.test(document.querySelector<HTMLElement>('#stage .sheet')?.style.clipPath ?? ''));
    await page.waitForFunction(() => (window as unknown as { __flaps: unknown[] }).__flaps.length > 0);
    const flap = (await flaps(page)).at(-1)!;
    assert.ok(flap.left < box.x + box.width * 0.75, `the flap reaches back towards the pointer (${flap.left})`);
    assert.equal(await page.locator('#stage .leaf .flap .page[data-page="4"]').count(), 1, 'page 4 is on the back of the sheet');
    assert.equal(await visiblePagesOf(page), '2,3');
    await screenshot(page, 'reader-curl-mid-drag');
    for (let i = 13; i <= 24; i++) await page.mouse.move(corner.x - i * box.width * 0.04, corner.y - (24 - i) * 10);
    await page.mouse.up();
    await waitForPages(page, '4,5');

    // A short drag from the right edge, brought back a little and released early: the sheet falls back, the spread stays.
    await page.mouse.move(corner.x, box.y + box.height * 0.6);
    await page.mouse.down();
    for (let i = 1; i <= 4; i++) await page.mouse.move(corner.x - i * 15, box.y + box.height * 0.6);
    for (let i = 3; i >= 2; i--) await page.mouse.move(corner.x - i * 15, box.y + box.height * 0.6);
    await page.waitForFunction(() => document.querySelector('#stage .leaf') !== null);
    await page.mouse.up();
    await page.waitForFunction(() => !document.querySelector('#stage .leaf'));
    assert.equal(await visiblePagesOf(page), '4,5');
    // The release did not click through to a turn either.
    await waitForPages(page, '4,5');

    // Dragging the left page's corner turns back.
    const left = { x: box.x + 6, y: box.y + box.height - 6 };
    await page.mouse.move(left.x, left.y);
    await page.mouse.down();
    for (let i = 1; i <= 20; i++) await page.mouse.move(left.x + i * box.width * 0.045, left.y - Math.sin((i / 20) * Math.PI) * 60);
    await page.mouse.up();
    await waitForPages(page, '2,3');
    assert.deepEqual(t.problems, []);
  });

  it('curls on a button turn without leaving the stage (never under the toolbars), and turns by a finger drag on a phone', async () => {
    const t = await tab();
    const { page } = t;
    await openReader(page, `${book.url}#page=2`);
    await waitForPages(page, '2,3');
    await watchFlap(page);
    await page.click('#next');
    await waitForPages(page, '4,5');
    const samples = await flaps(page);
    const stage = (await page.locator('#stage').boundingBox())!;
    assert.ok(samples.length > 0, 'the turn was drawn as a curl');
    for (const s of samples) assert.ok(s.top >= stage.y - 0.5 && s.bottom <= stage.y + stage.height + 0.5, `flap ${s.top}–${s.bottom} within the stage ${stage.y}–${stage.y + stage.height}`);

    const p = await tab({ viewport: PHONE, hasTouch: true, isMobile: true });
    await openReader(p.page, `${book.url}#page=3`);
    await waitForPages(p.page, '3');
    const cdp = await p.context.newCDPSession(p.page);
    const b = (await p.page.locator('#stage .book').boundingBox())!;
    const y = b.y + b.height * 0.8;
    const touch = (type: 'touchStart' | 'touchMove' | 'touchEnd', x: number) => cdp.send('Input.dispatchTouchEvent', { type, touchPoints: type === 'touchEnd' ? [] : [{ x, y, id: 1 }] });
    await touch('touchStart', b.x + b.width - 40);
    for (let i = 1; i <= 10; i++) await touch('touchMove', b.x + b.width - 40 - i * 25);
    await p.page.waitForFunction(() => document.querySelector('#stage .leaf .flap') !== null);
    await screenshot(p.page, 'reader-curl-mid-drag-phone');
    await touch('touchEnd', 0);
    await waitForPages(p.page, '4');
    assert.deepEqual([...t.problems, ...p.problems], []);
  });

  it('reads right to left when the book says so, with ?dir= as the override', async () => {
    await updateBook(svc, key, book.randomId, { reading_direction: 'rtl' });
    try {
      const t = await tab();
      const { page } = t;
      await openReader(page, book.url);
      assert.equal(await page.locator('#stage .book.rtl').count(), 1);
      // Forward is to the left: the left arrow and the left-hand button turn on.
      await page.keyboard.press('ArrowLeft');
      await waitForPages(page, '2,3');
      const p2 = (await page.locator('#stage .page[data-page="2"]').boundingBox())!;
      const p3 = (await page.locator('#stage .page[data-page="3"]').boundingBox())!;
      assert.ok(p2.x > p3.x, 'page 2 is on the right of page 3');
      await page.click('#prev');
      await waitForPages(page, '4,5');
      // The URL overrides the book.
      await openReader(page, `${book.url}?dir=ltr`);
      assert.equal(await page.locator('#stage .book.rtl').count(), 0);
      await page.keyboard.press('ArrowRight');
      await waitForPages(page, '2,3');
      // On a phone, a right-to-left single page is on screen, and a swipe to the right turns forward.
      const phone = await tab({ viewport: PHONE, hasTouch: true, isMobile: true });
      await openReader(phone.page, `${book.url}#page=2`);
      await waitForPages(phone.page, '2');
      const single = (await phone.page.locator('#stage .page[data-page="2"]').boundingBox())!;
      assert.ok(single.x >= 0 && single.x + single.width <= PHONE.width + 0.5, `the page is on screen (${single.x}, ${single.width} wide)`);
      assert.deepEqual([...t.problems, ...phone.problems], []);
    } finally {
      await updateBook(svc, key, book.randomId, { reading_direction: 'ltr' });
    }
  });

  it('switches between one and two pages on a wide screen, starting from the book\'s page_layout', async () => {
    await updateBook(svc, key, book.randomId, { page_layout: 'single' });
    try {
      const t = await tab();
      const { page } = t;
      await openReader(page, `${book.url}#page=2`);
      await waitForPages(page, '2');
      assert.equal(await page.evaluate(() => document.documentElement.dataset.spread), 'false');
      assert.equal(await page.getAttribute('#layout', 'aria-pressed'), 'false');
      await page.click('#layout');
      await waitForPages(page, '2,3');
      assert.equal(await page.getAttribute('#layout', 'aria-pressed'), 'true');
      await page.click('#layout');
      await waitForPages(page, '2');
      await openReader(page, `${book.url}?layout=double#page=4`);
      await waitForPages(page, '4,5');
      // On a phone there is no room for two: no toggle.
      const phone = await tab({ viewport: PHONE });
      await openReader(phone.page, book.url);
      assert.equal(await phone.page.locator('#layout').isVisible(), false);
      assert.deepEqual([...t.problems, ...phone.problems], []);
    } finally {
      await updateBook(svc, key, book.randomId, { page_layout: 'auto' });
    }
  });

  it('plays a slideshow: from the book\'s autoplay_interval, and from the toolbar with a chosen interval, until stopped', async () => {
    await updateBook(svc, key, book.randomId, { autoplay_interval: 2 });
    try {
      const t = await tab();
      const { page } = t;
      await openReader(page, `${book.url}?animation=cut`);
      assert.equal(await page.getAttribute('#autoplay', 'aria-pressed'), 'true');
      assert.equal(await page.inputValue('#autoplay-interval'), '2');
      await waitForPages(page, '2,3');
      await waitForPages(page, '4,5');
      // Stopped by the reader: the page stays.
      await page.click('#autoplay');
      assert.equal(await page.getAttribute('#autoplay', 'aria-pressed'), 'false');
      const stoppedAt = await visiblePagesOf(page);
      await page.waitForTimeout(3_000);
      assert.equal(await visiblePagesOf(page), stoppedAt, 'no turn once stopped');
    } finally {
      await updateBook(svc, key, book.randomId, { autoplay_interval: null });
    }
    // A book without a slideshow: the reader starts one with the interval they pick; it stops at the end.
    const t = await tab();
    const { page } = t;
    await openReader(page, `${book.url}?animation=cut#page=12`);
    assert.equal(await page.getAttribute('#autoplay', 'aria-pressed'), 'false');
    await page.selectOption('#autoplay-interval', '3');
    await page.click('#autoplay');
    assert.equal(await page.evaluate(() => document.documentElement.dataset.autoplay), '3');
    await waitForPages(page, '14');
    await page.waitForFunction(() => document.querySelector('#autoplay')?.getAttribute('aria-pressed') === 'false');
    assert.deepEqual(t.problems, []);
  });
});
