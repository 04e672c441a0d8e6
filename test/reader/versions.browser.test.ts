/**
 * A reader open through a book's replacement (issue 29, docs/book-versions.md),
 * in Debian's Chromium: it keeps reading version 1 while version 2 converts
 * (page turns, search, zoom) with no failed request, then is told a new
 * version exists and reopens at the same page; a shorter version opens at its
 * last page. Prints the switch time and the failed requests.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makePdf } from '../documents.ts';
import { sendMultipart, startService, waitForBatch, type TestService } from '../helpers.ts';
import { BROWSER_SKIP, launchBrowser, openReader, openTab, publishBook, waitForReader, type ReaderTab } from './browser.ts';

describe('a reader through a new version of its book', { skip: BROWSER_SKIP }, () => {
  let svc: TestService;
  let key: string;
  let browser: Browser;
  let t: ReaderTab;
  const failed: string[] = [];
  let beacons = 0;

  before(async () => {
    svc = await startService();
    key = (await svc.workspace()).key;
    browser = await launchBrowser();
    t = await openTab(browser);
    t.page.on('requestfailed', (request) => {
      // The reading events a page hands to the browser as it unloads (sendBeacon, at each reopen) are delivered by the browser
      // after the page is gone, which the page's own view reports as aborted: counted apart, not failures.
      if (request.method() === 'POST' && request.url().endsWith('/events') && request.failure()?.errorText === 'net::ERR_ABORTED') beacons++;
      else failed.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText}`);
    });
    t.page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.request().method()} ${response.url()}: ${response.status()}`);
    });
  });
  after(async () => {
    await t?.close().catch(() => undefined);
    await browser?.close();
    await svc?.stop();
  });

  const readerVersion = (page: Page) => page.evaluate(() => (JSON.parse(document.getElementById('reader-data')!.textContent!) as { ver: number }).ver);
  const currentPage = (page: Page) => page.evaluate(() => Number(document.documentElement.dataset.page));
  const uploadVersion = (book: string, file: Buffer, name: string) => sendMultipart(svc, key, 'POST', `/v1/books/${book}/versions`, {}, { field: 'files[]', bytes: file, name });

  it('keeps reading version 1 during the conversion, then moves to version 2 at the same page, and to the last page of a shorter one', async () => {
    const book = await publishBook(svc, key, await makePdf({ pages: 8 }), 'Catalog.pdf', { animation_type: 'slide', page_layout: 'single' });
    const { page } = t;
    await openReader(page, `${book.url}#page=4`);
    assert.equal(await readerVersion(page), 1);

    const upload = await uploadVersion(book.randomId, await makePdf({ pages: 40 }), 'Catalog v2.pdf');
    assert.equal(upload.status, 202, upload.text);
    const batchId = upload.body.data.batch_id as string;
    // Switch time: a client opening the reader back to back (its page has no rate limit), from the upload on.
    const seen = (async () => {
      for (;;) {
        const html = await fetch(book.url).then((r) => r.text());
        if (html.includes('"ver":2')) return Date.now();
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    // Until version 2 is completely ready the reader works on version 1: turns, search, zoom.
    let actions = 0;
    for (;;) {
      const status = (await svc.request('GET', `/v1/batches/${batchId}`, { key })).body.data.status as string;
      if (status !== 'queued' && status !== 'processing') break;
      await page.getByRole('button', { name: 'Next page', exact: true }).click();
      await page.getByRole('button', { name: 'Previous page', exact: true }).click();
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.fill('#search-q', 'paragraph 3');
      await page.press('#search-q', 'Enter');
      await page.locator('#search-results button').first().waitFor();
      await page.locator('#dlg-search').getByRole('button', { name: 'Close' }).click();
      await page.getByRole('button', { name: 'Zoom in' }).click();
      await page.getByRole('button', { name: 'Zoom out' }).click();
      actions++;
      // The conversion can finish during these actions and the reader reopen on version 2 (checked below): then stop.
      if ((await readerVersion(page).catch(() => 0)) !== 1) break;
    }
    const batch = await waitForBatch(svc, key, batchId);
    assert.equal(batch.status, 'completed');
    // Switch time: the version ready (the batch's finished_at, taken just before the switch's transaction) → the first reader request that gets it.
    const firstSeen = await seen;
    const switchMs = firstSeen - Date.parse(batch.finished_at);
    console.log(`# switch time: ${switchMs} ms (version ready → first reader request answered with it); reader actions during the conversion: ${actions}`);

    // The open reader is told at its next page turn (or was already, during the actions above), and reopens on version 2 at the
    // same page: the page it showed then, which the actions leave at 4 (a turn forward and back) or 5 (between the two).
    let expected = [4, 5];
    if ((await readerVersion(page).catch(() => 0)) === 1) {
      await page.getByRole('button', { name: 'Next page', exact: true }).click();
      expected = [await currentPage(page)];
      // Within a check's interval (30 s) at the latest; at the turn when the last check is 5 s old.
      await page.getByRole('status').filter({ hasText: 'A new version of this document is available' }).waitFor({ timeout: 40_000 });
    }
    await page.getByRole('status').filter({ hasText: 'This document was updated (version 2)' }).waitFor({ timeout: 40_000 });
    await waitForReader(page);
    assert.equal(await readerVersion(page), 2);
    const reopenedAt = await currentPage(page);
    assert.ok(expected.includes(reopenedAt), `reopened at page ${reopenedAt}, expected ${expected.join(' or ')}`);
    assert.ok(await page.locator(`#stage img[alt="Page ${reopenedAt}"]`).isVisible());
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.fill('#search-q', 'Page 30 of 40');
    await page.press('#search-q', 'Enter');
    await page.locator('#search-results button[data-page="30"]').waitFor();
    await page.locator('#dlg-search').getByRole('button', { name: 'Close' }).click();

    // A shorter version 3: the reader opens at its last page.
    await page.keyboard.press('End');
    await page.waitForFunction(() => document.documentElement.dataset.page === '40');
    await page.getByRole('status').filter({ hasText: 'was updated' }).waitFor({ state: 'detached' }).catch(() => undefined);
    const short = await uploadVersion(book.randomId, await makePdf({ pages: 3 }), 'Catalog v3.pdf');
    assert.equal((await waitForBatch(svc, key, short.body.data.batch_id)).status, 'completed');
    await page.getByRole('button', { name: 'Previous page', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'This document was updated (version 3)' }).waitFor({ timeout: 40_000 });
    await waitForReader(page);
    assert.equal(await readerVersion(page), 3);
    assert.equal(await currentPage(page), 3);
    assert.ok(await page.locator('#stage img[alt="Page 3"]').isVisible());

    console.log(`# failed reader requests during the replaces: ${failed.length} (unload beacons, not counted: ${beacons})`);
    assert.deepEqual(failed, [], 'no failed request');
    assert.deepEqual(t.problems, [], 'no console error');
  });
});
