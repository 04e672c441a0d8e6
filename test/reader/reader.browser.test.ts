/**
 * The reader in a real browser (Debian's Chromium through playwright-core):
 * page turning by keys, buttons, swipes, links, search and the table of
 * contents; deep links; every animation; settings; embedding; accessibility
 * (axe-core). Screenshots go to artifacts/reader/.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { CORPUS_SKIP, corpus, makePdf } from '../documents.ts';
import { startService, type TestService } from '../helpers.ts';
import {
  BROWSER_SKIP, DESKTOP, PHONE, axeViolations, launchBrowser, openReader, openTab, publishBook, screenshot, updateBook,
  visiblePages, waitForPages, waitForReader, type ReaderTab,
} from './browser.ts';

const FEATURES = {
  watermark: 'SAMPLE', copyright_enabled: true, downloadable_pdf: true, allow_fullscreen: true, flip_sound: true,
  share_social_media: true, accessibility_enabled: true, animation_type: 'flip', made_with_badge_enabled: true, background: '#2a3b4c',
};

describe('the reader in a browser', { skip: BROWSER_SKIP }, () => {
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

  function assertNoProblems(t: ReaderTab) {
    assert.deepEqual(t.problems, [], 'console errors, CSP violations or page errors');
  }

  before(async () => {
    svc = await startService();
    key = (await svc.workspace()).key;
    browser = await launchBrowser();
    book = await publishBook(svc, key, await makePdf({ pages: 6, links: true }), 'Browser book.pdf', FEATURES);
  });
  after(async () => {
    for (const t of tabs) await t.close().catch(() => undefined);
    await browser?.close();
    await svc?.stop();
  });

  it('shows the first page at once, then turns pages with arrow keys, buttons, Home, End, Page Up/Down', async () => {
    const t = await tab();
    const { page } = t;
    await openReader(page, book.url);
    assert.equal(await visiblePages(page), '1');
    const cover = (await page.locator('#stage .page[data-page="1"]').boundingBox())!;
    assert.ok(Math.abs(cover.x + cover.width / 2 - DESKTOP.width / 2) < 2, 'the cover is centred');
    assert.ok(await page.locator('#stage img[alt="Page 1"]').isVisible());
    assert.equal(await page.evaluate(() => document.documentElement.dataset.spread), 'true', 'spreads on a wide screen');

    await page.keyboard.press('ArrowRight');
    await waitForPages(page, '2,3');
    assert.match(page.url(), /#page=2$/);
    assert.equal(await page.locator('#announcer').textContent(), 'Pages 2–3 of 6');
    await page.click('#next');
    await waitForPages(page, '4,5');
    await page.keyboard.press('ArrowLeft');
    await waitForPages(page, '2,3');
    await page.keyboard.press('End');
    await waitForPages(page, '6');
    assert.equal(await page.locator('#next').getAttribute('aria-disabled'), 'true');
    await page.keyboard.press('Home');
    await waitForPages(page, '1');
    assert.equal(await page.locator('#prev').getAttribute('aria-disabled'), 'true');
    await page.keyboard.press('PageDown');
    await waitForPages(page, '2,3');
    await page.fill('#page-input', '5');
    await page.press('#page-input', 'Enter');
    await waitForPages(page, '4,5');
    assertNoProblems(t);
  });

  it('opens #page=4 on page 4, keeps it on reload and follows the pages in the URL', async () => {
    const t = await tab();
    const { page } = t;
    await openReader(page, `${book.url}#page=4`);
    await waitForPages(page, '4,5');
    await page.reload();
    await waitForReader(page);
    await waitForPages(page, '4,5');
    await page.keyboard.press('ArrowRight');
    await waitForPages(page, '6');
    assert.match(page.url(), /#page=6$/);
    await page.reload();
    await waitForReader(page);
    await waitForPages(page, '6');
    assertNoProblems(t);
  });

  it('makes annotation and detected links clickable, and internal links turn to their page', async () => {
    const t = await tab();
    const { page } = t;
    await openReader(page, book.url);
    const annotated = page.locator('#stage .page[data-page="1"] a[href="https://example.com/annotated"]');
    assert.equal(await annotated.getAttribute('target'), '_blank');
    assert.equal(await annotated.getAttribute('rel'), 'noopener noreferrer');
    await annotated.click({ trial: true });
    const detected = page.locator('#stage .page[data-page="1"] a[href*="www.flipbook-test.example"]');
    assert.equal(await detected.count(), 1);
    assert.equal(await detected.getAttribute('target'), '_blank');
    await detected.click({ trial: true });
    const mail = page.locator('#stage a[href="mailto:hello@flipbook-test.example"]');
    await mail.click({ trial: true });

    // A real click on the external link opens a new tab (not followed further).
    await t.context.route('https://example.com/**', (route) => route.fulfill({ status: 200, body: 'ok' }));
    const [popup] = await Promise.all([t.context.waitForEvent('page'), annotated.click()]);
    assert.equal(popup.url(), 'https://example.com/annotated');
    await popup.close();

    await page.locator('#stage a[href="#page=6"]').click();
    await waitForPages(page, '6');
    assertNoProblems(t);
  });

  it('searches the text, lists page 5, turns to it and highlights the hit', async () => {
    const t = await tab();
    const { page } = t;
    await openReader(page, book.url);
    await page.click('#open-search');
    await page.fill('#search-q', 'Page 5 of 6');
    await page.press('#search-q', 'Enter');
    const result = page.locator('#search-results button[data-page="5"]');
    await result.waitFor();
    assert.match(await page.locator('#search-status').textContent() ?? '', /1 page contains/);
    assert.match(await result.textContent() ?? '', /Page 5.*Page 5 of 6/);
    await result.click();
    await waitForPages(page, '4,5');
    assert.ok(await page.locator('#stage .page[data-page="5"] .hit').first().isVisible());
    assertNoProblems(t);
  });

  it('goes to an entry of the table of contents', { skip: CORPUS_SKIP }, async () => {
    const outlined = await publishBook(svc, key, await readFile(corpus('pdflatex-outline.pdf')), 'outline.pdf');
    const t = await tab();
    const { page } = t;
    await openReader(page, outlined.url);
    await page.click('#open-toc');
    const entries = page.locator('#dlg-toc a[data-page]');
    assert.ok((await entries.count()) > 0, 'the outline has entries');
    const pages = await entries.evaluateAll((links) => links.map((a) => Number((a as HTMLElement).dataset.page)));
    const index = pages.findIndex((p) => p > 1);
    const target = index >= 0 ? pages[index]! : pages[0]!;
    await entries.nth(Math.max(0, index)).click();
    await page.waitForFunction((n) => (document.documentElement.dataset.visible ?? '').split(',').includes(String(n)), target);
    assert.equal(await page.locator('#dlg-toc').evaluate((d) => (d as HTMLDialogElement).open), false);
    assertNoProblems(t);
  });

  it('turns pages with every animation type', async () => {
    const t = await tab();
    const { page } = t;
    for (const animation of ['flip', 'slide', 'fade', 'zoom', 'flick-through', 'cut', 'scroll_view']) {
      await openReader(page, `${book.url}?animation=${animation}`);
      assert.equal(await page.evaluate(() => document.documentElement.dataset.animation), animation);
      await page.keyboard.press('ArrowRight');
      await waitForPages(page, animation === 'scroll_view' ? '2' : '2,3');
      await page.keyboard.press('End');
      await waitForPages(page, '6');
      await page.keyboard.press('Home');
      await waitForPages(page, '1');
      // Turns in quick succession end on the right page.
      for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
      await waitForPages(page, animation === 'scroll_view' ? '4' : '6');
      if (animation === 'scroll_view') {
        // Scrolling by hand (once the smooth scroll to page 4 is over) moves the current page along.
        await page.waitForFunction(() => {
          const top = document.querySelector('#stage .page[data-page="4"]')?.getBoundingClientRect().top;
          return top !== undefined && Math.abs(top - document.querySelector('.scroller')!.getBoundingClientRect().top - 12) < 4;
        });
        await page.mouse.move(640, 400);
        for (let i = 0; i < 10; i++) {
          await page.mouse.wheel(0, -1500);
          await page.waitForTimeout(50);
        }
        await waitForPages(page, '1');
      }
    }
    assertNoProblems(t);
  });

  it('uses the animation settings: mobile_animation_type on phones, cut for reduced motion', async () => {
    await updateBook(svc, key, book.randomId, { animation_type: 'slide', mobile_animation_type: 'fade' });
    try {
      const desktop = await tab();
      await openReader(desktop.page, book.url);
      assert.equal(await desktop.page.evaluate(() => document.documentElement.dataset.animation), 'slide');
      const phone = await tab({ viewport: PHONE, hasTouch: true, isMobile: true });
      await openReader(phone.page, book.url);
      assert.equal(await phone.page.evaluate(() => document.documentElement.dataset.animation), 'fade');
      const calm = await tab({ reducedMotion: 'reduce' });
      await openReader(calm.page, book.url);
      assert.equal(await calm.page.evaluate(() => document.documentElement.dataset.animation), 'cut');
    } finally {
      await updateBook(svc, key, book.randomId, { animation_type: 'flip', mobile_animation_type: 'flip' });
    }
  });

  it('shows single pages on a phone, turns them by swiping, and re-lays out on rotation', async () => {
    const t = await tab({ viewport: PHONE });
    const { page } = t;
    await openReader(page, book.url);
    assert.equal(await page.evaluate(() => document.documentElement.dataset.spread), 'false');
    const box = (await page.locator('#stage').boundingBox())!;
    const y = box.y + box.height / 2;
    await page.mouse.move(box.x + box.width * 0.8, y);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.5, y, { steps: 5 });
    await page.mouse.move(box.x + box.width * 0.2, y, { steps: 5 });
    await page.mouse.up();
    await waitForPages(page, '2');
    // A click on the right edge of the page turns forward too (the middle is for text and zoom).
    await page.mouse.click(box.x + box.width * 0.92, y);
    await waitForPages(page, '3');
    await page.setViewportSize({ width: PHONE.height, height: PHONE.width });
    await page.waitForFunction(() => document.documentElement.dataset.spread === 'true');
    await waitForPages(page, '2,3');
    await page.setViewportSize(PHONE);
    await page.waitForFunction(() => document.documentElement.dataset.spread === 'false');
    assertNoProblems(t);
  });

  it('reads right to left with ?dir=rtl', async () => {
    const t = await tab();
    const { page } = t;
    await openReader(page, `${book.url}?dir=rtl`);
    assert.equal(await page.locator('#stage .book.rtl').count(), 1);
    // The cover alone is centred, as in left-to-right books.
    const cover = (await page.locator('#stage .page[data-page="1"]').boundingBox())!;
    const stage = (await page.locator('#stage').boundingBox())!;
    assert.ok(Math.abs(cover.x + cover.width / 2 - (stage.x + stage.width / 2)) < 2, 'cover centred');
    await page.keyboard.press('ArrowLeft');
    await waitForPages(page, '2,3');
    const left = await page.locator('#stage .page[data-page="3"]').boundingBox();
    const right = await page.locator('#stage .page[data-page="2"]').boundingBox();
    assert.ok(left!.x < right!.x, 'page 3 is on the left of page 2');
    assertNoProblems(t);
  });

  it('applies the settings: watermark, copyright, badge, background, sound, share, text view', async () => {
    const t = await tab({ permissions: ['clipboard-read', 'clipboard-write'] });
    const { page } = t;
    await openReader(page, book.url);
    assert.equal(await page.locator('#stage .page[data-page="1"] .wm span').first().textContent(), 'SAMPLE');
    assert.match(await page.locator('.copyright').textContent() ?? '', /^© \d{4} .+\. All rights reserved\.$/);
    assert.equal(await page.locator('.badge').textContent(), 'Made with Flipbook');
    assert.equal(await page.locator('#stage').evaluate((el) => getComputedStyle(el).backgroundColor), 'rgb(42, 59, 76)');

    const sound = page.locator('#sound');
    assert.equal(await sound.getAttribute('aria-pressed'), 'true');
    await sound.click();
    assert.equal(await sound.getAttribute('aria-pressed'), 'false');

    await page.click('#open-share');
    const hrefs = await page.locator('#dlg-share a.share-link').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    const encoded = encodeURIComponent(book.url);
    assert.ok(hrefs.some((h) => h?.startsWith('https://twitter.com/intent/tweet?url=' + encoded)));
    assert.ok(hrefs.some((h) => h?.startsWith('https://www.facebook.com/sharer/sharer.php?u=' + encoded)));
    assert.ok(hrefs.some((h) => h?.startsWith('https://www.linkedin.com/sharing/share-offsite/?url=' + encoded)));
    assert.ok(hrefs.some((h) => h?.startsWith('mailto:?subject=')));
    await page.click('#copy-link');
    await page.locator('#copy-status', { hasText: 'Link copied.' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${book.url}#page=1`);
    await page.keyboard.press('Escape');

    await page.click('#open-text');
    assert.ok(await page.locator('#dlg-text').getByText('Page 5 of 6').isVisible());
    await page.locator('#dlg-text a[href="#page=4"]').click();
    await waitForPages(page, '4,5');
    assertNoProblems(t);
  });

  it('shows the fullscreen and download buttons only when enabled; the download is a PDF', async () => {
    const t = await tab({ acceptDownloads: true });
    const { page } = t;
    await openReader(page, book.url);
    const fullscreen = page.locator('#fullscreen');
    assert.ok(await fullscreen.isVisible());
    await fullscreen.click();
    // The button's state is set by the reader's fullscreenchange handler, after the document's state changes:
    // wait for the attribute itself, not for document.fullscreenElement (a race a loaded machine exposes).
    await page.waitForFunction(() => document.fullscreenElement !== null && document.querySelector('#fullscreen')?.getAttribute('aria-pressed') === 'true');
    await fullscreen.click();
    await page.waitForFunction(() => document.fullscreenElement === null && document.querySelector('#fullscreen')?.getAttribute('aria-pressed') === 'false');

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    const file = await download.path();
    assert.equal((await readFile(file)).subarray(0, 5).toString(), '%PDF-');

    await updateBook(svc, key, book.randomId, { allow_fullscreen: false, downloadable_pdf: false });
    try {
      await openReader(page, book.url);
      assert.equal(await page.locator('#fullscreen').count(), 0);
      assert.equal(await page.locator('#download').count(), 0);
    } finally {
      await updateBook(svc, key, book.randomId, { allow_fullscreen: true, downloadable_pdf: true });
    }
    assertNoProblems(t);
  });

  it('opens full screen by default on the first interaction when asked to', async () => {
    await updateBook(svc, key, book.randomId, { open_fullscreen_by_default: true });
    try {
      const t = await tab();
      const { page } = t;
      await openReader(page, book.url);
      await page.click('#next');
      await page.waitForFunction(() => document.fullscreenElement !== null);
    } finally {
      await updateBook(svc, key, book.randomId, { open_fullscreen_by_default: false });
    }
  });

  it('works inside an iframe, with full screen only where the frame allows it', async () => {
    const t = await tab();
    const { page } = t;
    // A page of another site (its own server) that embeds the reader twice.
    const embedder = http.createServer((_request, response) => {
      response.setHeader('content-type', 'text/html');
      response.end(
        `<!doctype html><title>Shop</title><iframe id="a" src="${book.url}" title="Embedded" allowfullscreen width="900" height="600"></iframe>` +
          `<iframe id="b" src="${book.url}#page=2" title="Embedded without full screen" width="900" height="600"></iframe>`,
      );
    });
    await new Promise<void>((resolve) => embedder.listen(0, '127.0.0.1', resolve));
    after(() => new Promise((resolve) => embedder.close(resolve)));
    await page.goto(`http://127.0.0.1:${(embedder.address() as AddressInfo).port}/catalogue`);
    const allowed = (await (await page.$('#a'))!.contentFrame())!;
    const forbidden = (await (await page.$('#b'))!.contentFrame())!;
    for (const frame of [allowed, forbidden]) {
      await frame.waitForFunction(() => document.documentElement.dataset.ready === 'true');
      await frame.waitForFunction(() => [...document.querySelectorAll<HTMLImageElement>('#stage .page img')].some((img) => img.complete && img.naturalWidth > 0));
    }
    assert.ok(await allowed.locator('#fullscreen').isVisible());
    assert.equal(await forbidden.locator('#fullscreen').isVisible(), false);
    assert.equal(await forbidden.evaluate(() => document.documentElement.dataset.visible), '2,3');
    await allowed.locator('#next').click();
    await allowed.waitForFunction(() => document.documentElement.dataset.visible === '2,3');
    assertNoProblems(t);
  });

  it('passes an axe-core audit with zero violations, in every state, and saves screenshots', async () => {
    const shots: string[] = [];
    for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]] as const) {
      const t = await tab({ viewport });
      const { page } = t;
      await openReader(page, book.url);
      shots.push(await screenshot(page, `reader-${name}`));
      const problems = await axeViolations(page, ['target-size']);
      assert.deepEqual(problems, [], `${name}: ${JSON.stringify(problems, null, 2)}`);

      // Every control of the bars, reached by keyboard, shows its whole focus ring: nothing that clips it (the
      // bars' scrollers) cuts it off.
      const controls = await page.locator('.bar :is(button, a, input, select):visible').count();
      await page.locator('#stage').focus();
      const clipped: string[] = [];
      for (let i = 0; i < controls; i++) {
        await page.keyboard.press('Tab');
        const problem = await page.evaluate(() => {
          const el = document.activeElement as HTMLElement | null;
          if (!el || !el.closest('.bar')) return null;
          const style = getComputedStyle(el);
          const spread = Math.max(0, parseFloat(style.outlineOffset) + parseFloat(style.outlineWidth));
          const box = el.getBoundingClientRect();
          const ring = { left: box.left - spread, top: box.top - spread, right: box.right + spread, bottom: box.bottom + spread };
          for (let parent = el.parentElement; parent; parent = parent.parentElement) {
            const s = getComputedStyle(parent);
            if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
            const clip = parent.getBoundingClientRect();
            if (ring.left < clip.left - 0.5 || ring.top < clip.top - 0.5 || ring.right > clip.right + 0.5 || ring.bottom > clip.bottom + 0.5) return `#${el.id || el.tagName} by ${parent.className}`;
          }
          return null;
        });
        if (problem) clipped.push(problem);
      }
      assert.deepEqual(clipped, [], `${name}: focus rings cut off`);

      await page.keyboard.press('ArrowRight');
      await waitForPages(page, name === 'desktop' ? '2,3' : '2');
      shots.push(await screenshot(page, `reader-${name}-page-2`));
      const onPage2 = await axeViolations(page, ['target-size']);
      assert.deepEqual(onPage2, [], `${name}, page 2: ${JSON.stringify(onPage2, null, 2)}`);

      for (const dialog of ['search', 'thumbs', 'text', 'share']) {
        await page.click(`#open-${dialog}`);
        if (dialog === 'search') {
          await page.fill('#search-q', 'paragraph');
          await page.press('#search-q', 'Enter');
          await page.locator('#search-results button').first().waitFor();
        }
        const inDialog = await axeViolations(page, ['target-size']);
        assert.deepEqual(inDialog, [], `${name}, ${dialog} dialog: ${JSON.stringify(inDialog, null, 2)}`);
        if (name === 'desktop' && dialog === 'search') shots.push(await screenshot(page, 'reader-desktop-search'));
        await page.click(`#dlg-${dialog} [data-close]`);
      }
      assertNoProblems(t);
    }
    console.log(`screenshots:\n  ${shots.join('\n  ')}`);
  });
});
