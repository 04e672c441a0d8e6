/**
 * Reader events from a real reader in Debian's Chromium: a visit through a
 * tracked link that reads five pages (spreads), clicks a link in a page and
 * closes the tab leaves its view, interaction and audit events, with
 * plausible active times.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import type { Browser } from 'playwright-core';
import { auditEvents, interactionEvents, leads, viewEvents } from '../../src/modules/analytics/analytics.tables.ts';
import { makePdf } from '../documents.ts';
import { eventually, startService, type TestService } from '../helpers.ts';
import { BROWSER_SKIP, axeViolations, launchBrowser, openReader, openTab, publishBook, screenshot, seriousOrWorse, waitForPages } from '../reader/browser.ts';

/** Headless Chromium names itself in its user agent, and bots are not counted: present as a desktop Chrome. */
const DESKTOP_CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('reader events in Chromium', { skip: BROWSER_SKIP }, () => {
  let svc: TestService;
  let browser: Browser;
  let ws: { id: number; key: string };
  let book: { randomId: string; url: string };

  before(async () => {
    svc = await startService();
    ws = await svc.workspace();
    book = await publishBook(svc, ws.key, await makePdf({ pages: 8, links: true }), 'Events.pdf');
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('records a tracked visit: five pages read, a link clicked, the tab closed', async () => {
    const link = await svc.request('POST', `/v1/books/${book.randomId}/tracked-links`, { key: ws.key, body: { name: 'Spring mailing', slug: 'spring' } });
    assert.equal(link.status, 201, link.text);
    const t = await openTab(browser, { userAgent: DESKTOP_CHROME });
    const { page } = t;
    await t.context.route('https://example.com/**', (route) => route.fulfill({ status: 200, body: 'ok' }));
    const started = Date.now();
    await openReader(page, link.body.data.url);
    await waitForPages(page, '1');
    await page.waitForTimeout(1200);
    // The link in page 1 opens a new tab; the reader stays.
    const [popup] = await Promise.all([t.context.waitForEvent('page'), page.locator('#stage .page[data-page="1"] a[href="https://example.com/annotated"]').click()]);
    await popup.close();
    await page.bringToFront();
    for (const spread of ['2,3', '4,5']) {
      await page.click('#next');
      await waitForPages(page, spread);
      await page.waitForTimeout(1200);
    }
    await page.close();
    const wallMs = Date.now() - started;
    const db = svc.runtime.database.db;

    // The browser stays open while the closed tab's last beacon goes out, as a reader's browser does: closing the
    // whole context at once could cancel a beacon not yet sent on a loaded machine.
    const events = await eventually(async () => {
      const rows = await db.select().from(interactionEvents).where(eq(interactionEvents.trackedLinkId, link.body.data.id)).orderBy(interactionEvents.sequence);
      return rows.some((r) => r.eventType === 'session_ended') ? rows : null;
    }, { timeoutMs: 30_000 });
    await t.close();
    assert.equal(new Set(events.map((e) => e.sessionId)).size, 1, 'one session');
    assert.equal(events[0]!.eventType, 'session_started');
    assert.ok(events.every((e) => e.sourceType === 'tracked_link'));

    const segments = events.filter((e) => e.eventType === 'page_segment_completed');
    assert.deepEqual([...new Set(segments.map((s) => s.pageNumber))].sort(), [1, 2, 3, 4, 5]);
    for (const segment of segments) {
      assert.ok(segment.activeMs! > 0 && segment.activeMs! < wallMs, `page ${segment.pageNumber}: ${segment.activeMs} ms of ${wallMs}`);
    }
    // In a spread both pages were on screen for the same time.
    const byPage = new Map(segments.map((s) => [s.pageNumber, s.activeMs]));
    assert.equal(byPage.get(2), byPage.get(3));

    const click = events.find((e) => e.eventType === 'link_clicked');
    assert.equal(click?.pageNumber, 1);
    assert.deepEqual(click?.metadata, [{ url: 'https://example.com/annotated' }]);
    const ended = events.find((e) => e.eventType === 'session_ended')!;
    assert.equal(ended.exitReason, 'closed');

    const [view] = await db.select().from(viewEvents).where(eq(viewEvents.sessionId, events[0]!.sessionId));
    assert.ok(view);
    assert.equal(view.trackedLinkId, link.body.data.id);
    assert.equal(view.fromEmbedded, false);
    assert.equal(view.pagesViewed, 5);
    assert.equal(view.clicks, 1);
    assert.equal(view.reads, 1);
    assert.equal(view.exitReason, 'closed');
    assert.ok(view.activeMs > 0 && view.activeMs < wallMs, `${view.activeMs} ms active of ${wallMs}`);
    assert.ok(view.engagementScore > 0 && view.engagementScore <= 100);

    const audit = await db.select().from(auditEvents).where(eq(auditEvents.sourceEventId, click!.id));
    assert.equal(audit.length, 1);
    assert.equal(audit[0]!.eventType, 'link_clicked');
    assert.equal(audit[0]!.trackedLinkId, link.body.data.id);

    const links = await svc.request('GET', `/v1/books/${book.randomId}/tracked-links`, { key: ws.key });
    assert.equal(links.body.data[0].visits, 1);
  });

  it('opens the lead form at its page; a submission is stored and identifies the reader for the rest of the visit', async () => {
    const form = await svc.request('PUT', `/v1/books/${book.randomId}/lead-form`, {
      key: ws.key,
      body: { enabled: true, title: 'Get the price list', fields: [{ name: 'name', required: true }, { name: 'email', required: true }, { name: 'company', required: false }], show_after_page: 4 },
    });
    assert.equal(form.status, 200, form.text);
    const t = await openTab(browser, { userAgent: DESKTOP_CHROME });
    const { page } = t;
    await openReader(page, book.url);
    const dialog = page.locator('#dlg-lead');
    await page.click('#next');
    await waitForPages(page, '2,3');
    assert.equal(await dialog.isVisible(), false, 'not before its page');
    await page.click('#next');
    await dialog.waitFor({ state: 'visible' });
    assert.equal(await page.locator('#dlg-lead-h').textContent(), 'Get the price list');
    await screenshot(page, 'lead-form');
    assert.deepEqual(seriousOrWorse(await axeViolations(page)), []);
    assert.deepEqual(t.problems, []);
    // The browser's own validation keeps an incomplete form from being sent.
    await page.click('#dlg-lead .lead-submit');
    assert.equal(await page.locator('#lead-name:invalid').count(), 1);
    await page.fill('#lead-name', 'Ann Lee');
    await page.fill('#lead-email', 'ann@example.com');
    await page.click('#dlg-lead .lead-submit');
    await page.locator('#dlg-lead .lead-thanks').waitFor();
    await dialog.waitFor({ state: 'hidden' });
    await page.click('#next');
    await waitForPages(page, '6,7');
    await page.close();

    const db = svc.runtime.database.db;
    const [lead] = await db.select().from(leads).where(eq(leads.email, 'ann@example.com'));
    assert.ok(lead);
    assert.equal(lead.name, 'Ann Lee');
    // As above: the context stays open until the closed tab's last beacon is stored.
    const sessionEvents = await eventually(async () => {
      const rows = await db.select().from(interactionEvents).where(eq(interactionEvents.sessionId, lead.sessionId)).orderBy(interactionEvents.sequence);
      return rows.some((r) => r.eventType === 'session_ended') ? rows : null;
    }, { timeoutMs: 30_000 });
    await t.close();
    const submitted = sessionEvents.find((e) => e.eventType === 'lead_form_submitted')!;
    assert.equal(submitted.viewerId, lead.viewerId);
    // Events after the submission carry the reader's identity; the visit's view does too.
    const laterSegments = sessionEvents.filter((e) => e.sequence > submitted.sequence && e.eventType === 'page_segment_completed');
    assert.ok(laterSegments.length > 0);
    assert.ok(laterSegments.every((e) => e.viewerId === lead.viewerId));
    const [view] = await db.select().from(viewEvents).where(eq(viewEvents.sessionId, lead.sessionId));
    assert.equal(view!.viewerId, lead.viewerId);
  });
});
