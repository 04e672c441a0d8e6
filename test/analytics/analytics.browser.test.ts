/**
 * End to end in Debian's Chromium: a reader opens a book through a tracked
 * link, turns pages, clicks a link in a page and downloads the PDF; then the
 * analytics operations and the CSV exports show that visit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import type { Browser } from 'playwright-core';
import { makePdf } from '../documents.ts';
import { eventually, startService, type TestService } from '../helpers.ts';
import { BROWSER_SKIP, launchBrowser, openReader, openTab, publishBook, waitForPages } from '../reader/browser.ts';

const DESKTOP_CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('analytics of a visit read in Chromium', { skip: BROWSER_SKIP }, () => {
  let svc: TestService;
  let browser: Browser;
  let ws: { id: number; key: string };
  let book: { randomId: string; url: string };

  before(async () => {
    svc = await startService();
    ws = await svc.workspace();
    book = await publishBook(svc, ws.key, await makePdf({ pages: 8, links: true }), 'Analytics.pdf', { downloadable_pdf: true });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  const get = (path: string, query: Record<string, string | number | boolean>) => svc.request('GET', `/v1/analytics/${path}`, { key: ws.key, query: { book_id: book.randomId, ...query } });

  it('shows the visit in every operation and export', async () => {
    const link = await svc.request('POST', `/v1/books/${book.randomId}/tracked-links`, { key: ws.key, body: { name: 'Été mailing', slug: 'ete' } });
    assert.equal(link.status, 201, link.text);
    const t = await openTab(browser, { userAgent: DESKTOP_CHROME });
    const { page } = t;
    await t.context.route('https://example.com/**', (route) => route.fulfill({ status: 200, body: 'ok' }));
    await openReader(page, link.body.data.url);
    await waitForPages(page, '1');
    await page.waitForTimeout(1000);
    const [popup] = await Promise.all([t.context.waitForEvent('page'), page.locator('#stage .page[data-page="1"] a[href="https://example.com/annotated"]').click()]);
    await popup.close();
    await page.bringToFront();
    for (const spread of ['2,3', '4,5']) {
      await page.click('#next');
      await waitForPages(page, spread);
      await page.waitForTimeout(1000);
    }
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    assert.ok(await download.path());
    await page.close();

    // The visit is complete once its session_ended is stored. The context stays open until then: closing it
    // with the page could cancel the closing page's beacon before it is sent on a loaded machine.
    const events = await eventually(async () => {
      const res = await get('interaction-events', { tracked_link_id: link.body.data.id, limit: 500 });
      return res.body.data?.some((e: any) => e.event_type === 'session_ended') ? res.body.data : null;
    }, { timeoutMs: 30_000 });
    await t.close();
    const session = events[0].session_id;
    assert.ok(events.every((e: any) => e.session_id === session && e.source_type === 'tracked_link'));
    const segments = events.filter((e: any) => e.event_type === 'page_segment_completed');
    const segmentMs = segments.reduce((n: number, e: any) => n + e.active_ms, 0);
    assert.deepEqual([...new Set(segments.map((s: any) => s.page_number))].sort(), [1, 2, 3, 4, 5]);

    const views = await get('book-view-events', { tracked_link_id: link.body.data.id });
    assert.equal(views.body.data.length, 1);
    const view = views.body.data[0];
    assert.deepEqual(view.tracked_link, { id: link.body.data.id, name: 'Été mailing', slug: 'ete' });
    assert.equal(view.pages_viewed, 5);
    assert.equal(view.clicks, 1);
    assert.match(view.engagement_score, /^\d+\.\d$/);

    const audit = await get('audit-log', { tracked_link_id: link.body.data.id });
    assert.deepEqual(audit.body.data.map((e: any) => e.event_type).sort(), ['document_downloaded', 'link_clicked']);

    const perf = await get('page-performance', { tracked_link_id: link.body.data.id, date: 'today', tz: 'UTC' });
    assert.equal(perf.body.data.reduce((n: number, p: any) => n + p.total_active_ms, 0), segmentMs);
    assert.equal(perf.body.data[0].unique_readers, 1);

    const flow = await get('book-flow', { tracked_link_id: link.body.data.id });
    assert.equal(flow.body.meta.visits, 1);
    assert.ok(flow.body.data.transitions.some((tr: any) => tr.from_page === 1));
    assert.equal(flow.body.data.pages[0].entries, 1);

    const visit = await get('reading-session-pages', { view_event_id: view.id });
    assert.deepEqual(visit.body.data.map((p: any) => p.page_number).slice(0, 1), [1]);
    assert.equal(visit.body.meta.total_active_ms, segmentMs);

    const readers = await get('readers', { include_anonymous: true, tracked_link_id: link.body.data.id });
    assert.equal(readers.body.data.length, 1);
    assert.equal(readers.body.data[0].session_id, session);
    const journey = await svc.request('GET', '/v1/analytics/reader-journey', { key: ws.key, query: { session_id: session } });
    assert.equal(journey.status, 200, journey.text);
    assert.equal(journey.body.data.books[0].book_id, book.randomId);

    const csv = async (path: string) => {
      const response = await fetch(`${svc.url}/v1/exports/${path}`, { headers: { authorization: `Bearer ${ws.key}` } });
      assert.equal(response.status, 200, path);
      return parse(await response.text(), { bom: true, columns: true }) as Record<string, string>[];
    };
    const exported = await csv(`books/${book.randomId}/interaction-events?tracked_link_id=${link.body.data.id}`);
    assert.deepEqual(exported.map((e) => Number(e.id)), events.map((e: any) => e.id));
    assert.ok(exported.every((e) => e.tracked_link_name === 'Été mailing'));
    const pages = await csv(`books/${book.randomId}/page-performance?tracked_link_id=${link.body.data.id}`);
    assert.equal(pages.reduce((n, p) => n + Number(p.total_active_ms), 0), segmentMs);
    const summary = await csv(`analytics/${book.randomId}?tracked_link_id=${link.body.data.id}`);
    assert.equal(summary.length, 1);
    assert.equal(summary[0]!.visits, '1');
    assert.equal(summary[0]!.clicks, '1');
    const auditCsv = await csv(`books/${book.randomId}/audit-log?tracked_link_id=${link.body.data.id}`);
    assert.equal(auditCsv.length, 2);
  });
});
