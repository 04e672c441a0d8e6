/**
 * The reader on a book readable before its last page is drawn (issue 32,
 * docs/conversion.md), in Debian's Chromium: opened while the background
 * phase draws (CONVERSION_BACKGROUND_THREADS=1 keeps it going), it jumps to
 * the last page, then to middle ones, each undrawn when asked for: each is
 * drawn on request and shown, its image loaded, never a white page, and no
 * request fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makePdf } from '../documents.ts';
import { startService, uploadFile, type TestService } from '../helpers.ts';
import { BROWSER_SKIP, launchBrowser, openReader, openTab, updateBook, type ReaderTab } from './browser.ts';

const PAGES = 120;

describe('the reader on a book still drawn in the background', { skip: BROWSER_SKIP }, () => {
  let svc: TestService;
  let key: string;
  let browser: Browser;
  let t: ReaderTab;
  const failed: string[] = [];
  let busy = 0;

  before(async () => {
    svc = await startService({ env: { CONVERSION_BACKGROUND_THREADS: 1 } });
    key = (await svc.workspace()).key;
    browser = await launchBrowser();
    t = await openTab(browser, { viewport: { width: 900, height: 900 } });
    t.page.on('requestfailed', (request) => {
      // The reader cancels the prefetches of pages a jump left behind (their image pointed at an empty GIF): by design, not a failure.
      const cancelled = request.failure()?.errorText === 'net::ERR_ABORTED' && request.url().includes('/assets/');
      if (!request.url().startsWith('data:') && !cancelled) failed.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText}`);
    });
    t.page.on('response', (response) => {
      // A busy server's 429 is retried by the reader (counted); anything else is a failure.
      if (response.status() === 429) busy++;
      else if (response.status() >= 400) failed.push(`${response.request().method()} ${response.url()}: ${response.status()}`);
    });
  });
  after(async () => {
    await t?.close().catch(() => undefined);
    await browser?.close();
    await svc?.stop();
  });

  const drawn = async (randomId: string, n: number) => {
    const res = await svc.request('GET', `/v1/books/${randomId}/pages`, { key, query: { cursor: Buffer.from(`page:${n - 1}`).toString('base64url'), limit: 1 } });
    return res.body.data[0].drawn as boolean;
  };

  /** Waits until page n is the one shown, with a loaded image (not broken, not blank paper), and the turn over. */
  async function shows(page: Page, n: number): Promise<void> {
    await page.waitForFunction((want) => document.documentElement.dataset.visible === want, String(n), { timeout: 60_000 })
      .catch(async (error: unknown) => {
        throw new Error(`page ${n} not shown: visible ${await page.evaluate(() => document.documentElement.dataset.visible)}, ${String(error)}`);
      });
    await page.waitForFunction((want) => {
      const images = [...document.querySelectorAll<HTMLImageElement>(`#stage .page[data-page="${want}"] img`)];
      return images.some((img) => img.complete && img.naturalWidth > 0 && img.getBoundingClientRect().width > 0) &&
        images.every((img) => !img.complete || img.naturalWidth > 0 || img.src.startsWith('data:'));
    }, n, { timeout: 60_000 });
    await page.waitForFunction(() => document.getAnimations().length === 0 && !document.querySelector('#stage .leaf'), undefined, { timeout: 10_000 });
    // Every page on screen shows a drawn image: none is an empty (white) frame.
    const blank = await page.evaluate(() => [...document.querySelectorAll<HTMLElement>('#stage .page')]
      .filter((el) => el.getBoundingClientRect().width > 0 && el.getBoundingClientRect().right > 0 && el.getBoundingClientRect().left < innerWidth)
      .filter((el) => ![...el.querySelectorAll('img')].some((img) => img.complete && img.naturalWidth > 0))
      .map((el) => el.dataset.page));
    assert.deepEqual(blank, [], 'no page on screen without its image');
  }

  async function jump(page: Page, n: number): Promise<void> {
    await page.getByRole('textbox', { name: 'Page number' }).fill(String(n));
    await page.getByRole('textbox', { name: 'Page number' }).press('Enter');
    await shows(page, n);
  }

  it('opens before the last page is drawn and reaches pages in any order, each shown with its image', async () => {
    const upload = await uploadFile(svc, key, await makePdf({ pages: PAGES }), 'Readable.pdf');
    assert.equal(upload.status, 202, upload.text);
    const batchId = upload.body.data.batch_id as string;
    let batch;
    for (const end = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 50))) {
      batch = (await svc.request('GET', `/v1/batches/${batchId}`, { key })).body.data;
      if (batch.stage !== 'queued' && batch.stage !== 'converting') break;
      assert.ok(Date.now() < end, 'readable in time');
    }
    assert.equal(batch.stage, 'rendering', 'readable while pages are still drawn');
    const randomId = batch.books[0].random_id as string;
    const book = await updateBook(svc, key, randomId, { page_layout: 'single', animation_type: 'slide' });
    const { page } = t;

    await openReader(page, book.preview_url);
    await shows(page, 1);
    const order = [PAGES, PAGES / 2, PAGES / 4, (PAGES * 3) / 4 + 1];
    const undrawnWhenAsked: number[] = [];
    for (const n of order) {
      if (!(await drawn(randomId, n))) undrawnWhenAsked.push(n);
      await jump(page, n);
    }
    assert.ok(undrawnWhenAsked.includes(PAGES), `the last page was not drawn yet when the reader jumped to it (undrawn when asked: ${undrawnWhenAsked.join(', ')})`);
    // And a turn back from the last jump, onto a page fetched as a stand-in ahead.
    await page.getByRole('button', { name: 'Previous page', exact: true }).click();
    await shows(page, (PAGES * 3) / 4);
    assert.deepEqual(failed, []);
    console.log(`jumps to undrawn pages: ${undrawnWhenAsked.join(', ')}; 429s retried: ${busy}`);
  });
});
