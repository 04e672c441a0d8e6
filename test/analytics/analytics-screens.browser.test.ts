/**
 * The analytics screens in Chromium on a seeded workspace whose time zone is
 * Tokyo: every figure shown is the API's answer for the same range and team
 * switch (the test reads both), a visit at 23:30 UTC counts on the next day
 * there, the switch changes every figure, the book's page table is the
 * page-performance answer, an export downloads and parses, axe finds nothing
 * at 1280 and 360 px, a viewer sees analytics, and a workspace without the
 * Company plan sees an explanation instead.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { leads } from '../../src/modules/analytics/analytics.tables.ts';
import { bookPages } from '../../src/modules/books/books.tables.ts';
import { dropOffSummary, duration, eventLabel, flowSummary, reachOf } from '../../src/web/analytics/range.ts';
import { makePng } from '../documents.ts';
import { insertBook } from '../factories.ts';
import { assertAccessible, heading, launchWebBrowser, openApp, personIn, signInThroughScreen, startWebService, WEB_SKIP, type WebService } from '../web/web-browser.ts';

/** axe in the light theme, then in the dark one (prefers-color-scheme emulated), checking the dark palette is the one applied. */
async function accessibleInBothThemes(page: Page, label: string): Promise<void> {
  await assertAccessible(page, label);
  await page.emulateMedia({ colorScheme: 'dark' });
  try {
    assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor), 'rgb(18, 22, 27)', `${label}: the dark page colour`);
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('.card')!).backgroundColor), 'rgb(28, 33, 40)', `${label}: the dark surface`);
    await assertAccessible(page, `${label}, dark theme`);
  } finally {
    await page.emulateMedia({ colorScheme: 'light' });
  }
}
import { insertAudit, insertLead, insertLink, insertViewer, insertVisit } from './analytics-seed.ts';

const RANGE = '2026-03-02,2026-03-04';
/** The workspace's zone: the book screen asks the book operations (UTC by default) for its days. */
const TZ = 'Asia/Tokyo';
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const LIVE = crypto.randomUUID();

describe('analytics screens', { skip: WEB_SKIP }, () => {
  let svc: WebService;
  let browser: Browser;
  let ws: { id: number; key: string };
  let book: Awaited<ReturnType<typeof insertBook>>;
  let alice: number;

  before(async () => {
    svc = await startWebService();
    ws = await svc.workspace({ name: 'Acme Publishing' });
    await personIn(svc, ws.id, 'owner@acme.example', 'owner');
    await personIn(svc, ws.id, 'viewer@acme.example', 'viewer');
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 4, name: 'Spring catalogue' });
    // The pages listing's 320 px renditions, real images in storage (the per-page attention shows them).
    for (let n = 1; n <= 4; n++) {
      const key = `books/${book.randomId}/test/p${n}-w320.webp`;
      await svc.runtime.storage.put(key, await sharp(await makePng(320, 452)).webp().toBuffer(), { contentType: 'image/webp' });
      await svc.runtime.database.db.insert(bookPages).values({
        bookId: book.id, number: n, widthPt: 595, heightPt: 842, text: [], links: [],
        images: [{ width: 320, height: 452, key, bytes: 1 }],
      });
    }
    const link = await insertLink(svc, ws.id, book.id, 'March newsletter', 'march');
    alice = await insertViewer(svc, ws.id, 'alice@example.com');
    const owner = await insertViewer(svc, ws.id, 'owner@acme.example');
    // 23:30 UTC on 1 March is 2 March in Tokyo: inside the range there, outside it in UTC.
    await insertVisit(svc, book, { session: 's1', viewerId: alice, linkId: link, at: new Date('2026-03-01T23:30:00Z'), pages: [[1, 4000], [2, 9000], [3, 2000]], clicks: 1 });
    await insertVisit(svc, book, { session: 's2', viewerId: null, linkId: null, at: new Date('2026-03-02T10:00:00Z'), pages: [[1, 3000], [2, 1000]] });
    await insertVisit(svc, book, { session: 's3', viewerId: owner, linkId: null, at: new Date('2026-03-03T09:00:00Z'), pages: [[1, 60_000], [2, 5000], [3, 5000], [4, 5000]], clicks: 2 });
    // A long anonymous visit (60 page segments), so the events run over one screenful (50) and "Show more events" follows the cursor.
    await insertVisit(svc, book, { session: 's5', viewerId: null, linkId: null, at: new Date('2026-03-04T02:00:00Z'), pages: Array.from({ length: 60 }, (_, i): [number, number] => [(i % 4) + 1, 1000 + i]) });
    await insertVisit(svc, book, { session: 's4', viewerId: alice, linkId: null, at: new Date('2026-02-27T09:00:00Z'), pages: [[1, 2000]] });
    await insertAudit(svc, book, { eventType: 'access_rejected', viewerId: null, email: 'stranger@elsewhere.example', at: new Date('2026-03-03T12:00:00Z'), reason: 'not_allowed' });
    const lead = await insertLead(svc, book, { name: 'Alice', email: 'alice@example.com', at: new Date('2026-03-02T11:00:00Z') });
    await svc.runtime.database.db.update(leads).set({ viewerId: alice }).where(eq(leads.id, lead.id));
    // 54 more leads, so the Leads table runs over one screenful (50) and "Show more leads" follows the cursor.
    for (let i = 0; i < 54; i++) {
      await insertLead(svc, book, { name: `Lead ${i}`, email: `lead${i}@example.com`, fields: i % 3 === 0 ? { company: `Company ${i}` } : {}, at: new Date(Date.UTC(2026, 2, 2, 12, i)), session: `lead-${i}` });
    }
    const set = await svc.request('PATCH', '/v1/analytics/settings', { key: ws.key, body: { time_zone: TZ } });
    assert.equal(set.status, 200);
    browser = await launchWebBrowser();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  const api = async (path: string, query: Record<string, string | boolean | number>) => {
    const res = await svc.request('GET', `/v1/analytics/${path}`, { key: ws.key, query });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  /** The five figures as shown, and each one's previous-period value. */
  async function shownFigures(page: Page) {
    const figures = page.getByRole('definition').locator('.analytics-value');
    await figures.first().waitFor();
    return page.locator('[data-figure]').evaluateAll((nodes) => Object.fromEntries(nodes.map((n) => [
      n.getAttribute('data-figure'),
      { value: n.querySelector('.analytics-value')!.textContent, previous: n.querySelector('.analytics-previous')?.textContent ?? null },
    ])));
  }

  function expectedFigures(body: { data: Record<string, number>; meta: { previous: Record<string, number> | null } }) {
    const format = (key: string, n: number) => (key === 'reading_seconds' ? duration(n) : n.toLocaleString('en'));
    return Object.fromEntries(['views', 'unique_readers', 'reading_seconds', 'leads', 'link_clicks'].map((key) => [key, {
      value: format(key, body.data[key]!),
      previous: body.meta.previous ? `(previous period: ${format(key, body.meta.previous[key]!)})` : null,
    }]));
  }

  async function waitForFigures(page: Page, want: ReturnType<typeof expectedFigures>) {
    const deadline = Date.now() + 15_000;
    let shown: unknown;
    while (Date.now() < deadline) {
      shown = await shownFigures(page);
      try {
        assert.deepEqual(shown, want);
        return;
      } catch {
        await page.waitForTimeout(100);
      }
    }
    assert.deepEqual(shown, want);
  }

  it('shows the API figures for the range in the workspace time zone, with and without the team, and the book screen', async () => {
    const tab = await openApp(browser);
    try {
      const { page } = tab;
      await signInThroughScreen(page, svc, 'owner@acme.example');
      await page.goto(`${svc.origin}/app/analytics?range=${RANGE}`);
      await heading(page, 'Analytics');
      const all = await api('summary', { date: RANGE });
      // s1 (23:30 UTC on 1 March) is on 2 March in Tokyo: four visits (s1, s2, s3, s5), not three.
      assert.equal(all.data.views, 4);
      await waitForFigures(page, expectedFigures(all));
      await page.getByText('days in Asia/Tokyo').waitFor();

      // The series, read as a table, is the API's.
      const series = await api('views-over-time', { date: RANGE });
      await page.getByRole('button', { name: 'Show as table' }).click();
      const rows = await page.getByRole('table', { name: 'Views by day' }).locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(0, 2).map((c) => c.textContent)));
      assert.deepEqual(rows, series.data.map((b: { period: string; views: number }) => [b.period, String(b.views)]));
      await accessibleInBothThemes(page, 'Analytics overview');

      // The team switch: the owner's own visit leaves every figure, in the address too.
      await page.getByLabel("Exclude the team's own visits").check();
      await page.waitForURL(/team=exclude/);
      const withoutTeam = await api('summary', { date: RANGE, exclude_team: true });
      assert.equal(withoutTeam.data.views, 3);
      await waitForFigures(page, expectedFigures(withoutTeam));

      // Reloaded, the view is as it was.
      await page.reload();
      await heading(page, 'Analytics');
      await waitForFigures(page, expectedFigures(withoutTeam));

      // The book, from the top books.
      await page.getByRole('link', { name: 'Spring catalogue' }).click();
      await heading(page, 'Analytics: Spring catalogue');
      const bookSummary = await api('summary', { date: RANGE, exclude_team: true, book_id: book.randomId });
      await waitForFigures(page, expectedFigures(bookSummary));
      const pages = await api('page-performance', { tz: TZ, date: RANGE, exclude_team: true, book_id: book.randomId });
      const table = page.getByRole('table', { name: 'Page performance' });
      await table.waitFor();
      const shownPages = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
      assert.deepEqual(shownPages, pages.data.map((p: Record<string, number>) => [
        String(p.page_number), String(p.unique_readers), `${Math.round((p.unique_readers! / bookSummary.data.unique_readers) * 100)} %`,
        duration(p.avg_active_seconds_per_reader!), duration(p.median_active_seconds_per_segment!), String(p.total_segments),
      ]));

      // Tracked links of the book side by side: the top-tracked-links answer for the book.
      const bookLinks = await api('top-tracked-links', { date: RANGE, exclude_team: true, book_id: book.randomId, limit: 100 });
      assert.equal(bookLinks.data.length, 1);
      const linksTable = page.getByRole('table', { name: 'Tracked links side by side: views, readers and reading time' });
      await linksTable.waitFor();
      assert.deepEqual(
        await linksTable.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent))),
        bookLinks.data.map((l: { name: string; slug: string; views: number; unique_readers: number; reading_seconds: number }) => [`${l.name} (/${l.slug})`, String(l.views), String(l.unique_readers), duration(l.reading_seconds)]),
      );

      // Per-page attention: each page's 320 px thumbnail (loaded), its numbers on hover being the API's, the drop-off summary from the same answer.
      const listing = await svc.request('GET', `/v1/books/${book.randomId}/pages`, { key: ws.key });
      const tiles = page.locator('[data-page-tile]');
      await tiles.first().locator('img').waitFor();
      for (const tile of await tiles.all()) await tile.scrollIntoViewIfNeeded();
      await page.waitForFunction(() => [...document.querySelectorAll('[data-page-tile] img')].every((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0));
      const shownTiles = await tiles.evaluateAll((lis) => lis.map((li) => ({ src: li.querySelector('img')!.getAttribute('src'), title: li.getAttribute('title') })));
      const visits = bookSummary.data.unique_readers as number;
      assert.deepEqual(shownTiles, listing.body.data.map((l: { number: number; images: { width: number; url: string }[] }) => {
        const p = pages.data.find((r: { page_number: number }) => r.page_number === l.number);
        return {
          src: l.images.find((i) => i.width === 320)!.url,
          title: `Page ${l.number}: ${duration(p?.avg_active_seconds_per_reader ?? 0)} per reader, reach ${reachOf(p?.unique_readers ?? 0, visits)} %, ${p?.unique_readers ?? 0} readers, ${p?.total_segments ?? 0} views`,
        };
      }));
      const reach = listing.body.data.map((l: { number: number }) => ({ page: l.number, reach: reachOf(pages.data.find((r: { page_number: number }) => r.page_number === l.number)?.unique_readers ?? 0, visits) }));
      assert.equal(await page.locator('[data-drop-off]').textContent(), dropOffSummary(reach));

      // Reading flow: the summary and both tables are the book-flow answer for the same filter.
      const flow = await api('book-flow', { tz: TZ, date: RANGE, exclude_team: true, book_id: book.randomId });
      assert.ok(flow.data.transitions.length > 0);
      await page.locator('[data-flow-summary]').waitFor();
      assert.equal(await page.locator('[data-flow-summary]').textContent(), flowSummary(flow.meta.visits, flow.data));
      const cells = (name: string) => page.getByRole('table', { name }).locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => Number(c.textContent))));
      assert.deepEqual(await cells('Most common moves between pages'), flow.data.transitions.slice(0, 20).map((t: Record<string, number>) => [t.from_page, t.to_page, t.count, t.readers]));
      assert.deepEqual(await cells('Entries and exits by page'), flow.data.pages.filter((p: Record<string, number>) => p.views! + p.entries! + p.exits! > 0).map((p: Record<string, number>) => [p.page_number, p.views, p.entries, p.exits]));
      await accessibleInBothThemes(page, 'Book analytics');

      // Readers → journey, by keyboard: the button of Alice's row opens her journey (focus on its heading), every figure the API's.
      const readers = await api('readers', { tz: TZ, date: RANGE, exclude_team: true, book_id: book.randomId, include_anonymous: true, limit: 50 });
      assert.deepEqual(await page.locator('[data-reader] th').allTextContents(), readers.data.map((r: { viewer_email: string | null; session_id: string | null }) => r.viewer_email ?? `Anonymous visit ${r.session_id!.slice(0, 8)}`));
      const opener = page.getByRole('button', { name: 'Journey of alice@example.com' });
      await opener.focus();
      await page.keyboard.press('Enter');
      const journeyHeading = page.getByRole('heading', { name: 'Journey of alice@example.com' });
      await journeyHeading.waitFor();
      await page.waitForFunction(() => document.activeElement?.id === 'journey');
      const journey = await api('reader-journey', { tz: TZ, viewer_id: alice, date: RANGE });
      const summary = page.locator('[data-journey-summary]');
      await summary.waitFor();
      const agg = journey.data.aggregates;
      assert.equal(await summary.textContent(), `alice@example.com read ${agg.total_books} ${agg.total_books === '1' ? 'book' : 'books'} in this range: ${agg.total_pages_viewed} pages, ${duration(Number(agg.total_duration_seconds))}, engagement ${agg.overall_engagement_score}.`);
      const rowsOf = (name: string, columns: number) => page.getByRole('table', { name }).locator('tbody tr').evaluateAll((trs, n) => trs.map((tr) => [...tr.children].slice(0, n).map((c) => c.textContent)), columns);
      assert.deepEqual(await rowsOf('Books read', 5), journey.data.books.map((b: Record<string, string>) => [b.title, b.visits, b.pages_viewed, duration(Number(b.duration_seconds)), b.engagement_score]));
      const readerPages = await api('reader-pages', { tz: TZ, date: RANGE, exclude_team: true, book_id: book.randomId, viewer_id: alice });
      assert.ok(readerPages.data.length > 0);
      assert.deepEqual(await rowsOf('Time on each page of this book', 4), readerPages.data.map((p: Record<string, number>) => [String(p.page_number), duration(p.total_active_seconds!), String(p.segments), duration(p.avg_active_seconds_per_segment!)]));
      const visitsOf = await api('book-view-events', { tz: TZ, date: RANGE, exclude_team: true, book_id: book.randomId, viewer_id: alice, limit: 50 });
      const visitButtons = page.getByRole('button', { name: /^Visit of / });
      await visitButtons.first().waitFor();
      assert.equal(await visitButtons.count(), visitsOf.data.length);
      await visitButtons.first().focus();
      await page.keyboard.press('Enter');
      const session = await svc.request('GET', '/v1/analytics/reading-session-pages', { key: ws.key, query: { book_id: book.randomId, view_event_id: visitsOf.data[0].id } });
      assert.equal(session.status, 200);
      const visitTable = page.getByRole('table', { name: 'Pages of the visit, in order' });
      await visitTable.waitFor();
      assert.deepEqual(await rowsOf('Pages of the visit, in order', 3), session.body.data.map((p: Record<string, number>) => [String(p.position), String(p.page_number), duration(p.active_seconds!)]));
      await accessibleInBothThemes(page, 'Book analytics with a reader\'s journey');
      // Closing it gives the focus back to the row's button.
      await page.getByRole('button', { name: 'Close journey' }).focus();
      await page.keyboard.press('Enter');
      await journeyHeading.waitFor({ state: 'detached' });
      await page.waitForFunction(() => document.activeElement?.getAttribute('data-opens')?.startsWith('v') === true);

      // An anonymous visit's journey: its books (reader-journey by session); per-page detail is the identified readers'.
      const anonymous = readers.data.find((r: { viewer_id: number | null }) => r.viewer_id === null);
      assert.ok(anonymous);
      const anonymousName = `Anonymous visit ${anonymous.session_id.slice(0, 8)}`;
      await page.getByRole('button', { name: `Journey of ${anonymousName}` }).click();
      await page.getByRole('heading', { name: `Journey of ${anonymousName}` }).waitFor();
      const anonymousJourney = await api('reader-journey', { tz: TZ, session_id: anonymous.session_id, date: RANGE });
      await page.getByRole('table', { name: 'Books read' }).waitFor();
      assert.deepEqual(await rowsOf('Books read', 5), anonymousJourney.data.books.map((b: Record<string, string>) => [b.title, b.visits, b.pages_viewed, duration(Number(b.duration_seconds)), b.engagement_score]));
      await page.locator('[data-anonymous-note]').waitFor();
      // Its visit (book-view-events by session_id) opens the pages of that visit in order, as for identified readers.
      const anonymousVisits = await api('book-view-events', { tz: TZ, date: RANGE, exclude_team: true, book_id: book.randomId, session_id: anonymous.session_id, limit: 50 });
      assert.equal(anonymousVisits.data.length, 1);
      assert.equal(anonymousVisits.data[0].session_id, anonymous.session_id);
      const anonymousVisit = page.getByRole('button', { name: /^Visit of / });
      await anonymousVisit.waitFor();
      assert.equal(await anonymousVisit.count(), 1);
      await anonymousVisit.focus();
      await page.keyboard.press('Enter');
      const anonymousPages = await svc.request('GET', '/v1/analytics/reading-session-pages', { key: ws.key, query: { book_id: book.randomId, view_event_id: anonymousVisits.data[0].id } });
      assert.ok(anonymousPages.body.data.length > 0);
      await page.getByRole('table', { name: 'Pages of the visit, in order' }).locator(`tbody tr:nth-child(${anonymousPages.body.data.length})`).waitFor();
      assert.deepEqual(await rowsOf('Pages of the visit, in order', 3), anonymousPages.body.data.map((p: Record<string, number>) => [String(p.position), String(p.page_number), duration(p.active_seconds!)]));

      // Events: the interaction events and the audit log with their filters, each the API's answer for the same filter.
      const eventRows = async (name: string) => {
        const table = page.getByRole('table', { name });
        await table.waitFor();
        return table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(1, 4).map((c) => c.textContent)));
      };
      const waitForEvents = async (name: string, want: string[][]) => {
        const deadline = Date.now() + 15_000;
        let shown: string[][] = [];
        while (Date.now() < deadline) {
          shown = (await eventRows(name)) as string[][];
          if (JSON.stringify(shown) === JSON.stringify(want)) return;
          await page.waitForTimeout(100);
        }
        assert.deepEqual(shown, want);
      };
      const bookFilter = { tz: TZ, date: RANGE, exclude_team: true, book_id: book.randomId, limit: 50 };
      const interactionRow = (e: { event_type: string; viewer_email?: string; session_id: string; page_number: number | null }) => [eventLabel(e.event_type), e.viewer_email ?? `Anonymous visit ${e.session_id.slice(0, 8)}`, e.page_number === null ? '' : String(e.page_number)];
      const firstEvents = await api('interaction-events', bookFilter);
      assert.equal(firstEvents.data.length, 50);
      await waitForEvents('Interaction events, in the order they occurred', firstEvents.data.map(interactionRow));
      const nextEvents = await api('interaction-events', { ...bookFilter, cursor: firstEvents.meta.next_cursor });
      await page.getByRole('button', { name: 'Show more events' }).focus();
      await page.keyboard.press('Enter');
      await waitForEvents('Interaction events, in the order they occurred', [...firstEvents.data, ...nextEvents.data].map(interactionRow));
      await page.getByLabel('Event type').selectOption('link_clicked');
      const clicks = await api('interaction-events', { ...bookFilter, event_type: 'link_clicked' });
      assert.ok(clicks.data.length > 0);
      await waitForEvents('Interaction events, in the order they occurred', clicks.data.map(interactionRow));
      await page.getByLabel('Event type').selectOption('');
      await page.getByLabel('Page', { exact: true }).fill('2');
      await waitForEvents('Interaction events, in the order they occurred', (await api('interaction-events', { ...bookFilter, page_number: 2 })).data.map(interactionRow));
      // The filters are the screen's state, in the address with the range and the switch: a reload (or the address shared) shows the same list.
      await page.getByLabel('Event type').selectOption('page_segment_completed');
      const segmentsOfPage2 = (await api('interaction-events', { ...bookFilter, event_type: 'page_segment_completed', page_number: 2 })).data.map(interactionRow);
      assert.ok(segmentsOfPage2.length > 0);
      await waitForEvents('Interaction events, in the order they occurred', segmentsOfPage2);
      const filtered = new URL(page.url());
      assert.deepEqual([filtered.searchParams.get('range'), filtered.searchParams.get('team'), filtered.searchParams.get('event_type'), filtered.searchParams.get('event_page')], [RANGE, 'exclude', 'page_segment_completed', '2']);
      await page.reload();
      await waitForEvents('Interaction events, in the order they occurred', segmentsOfPage2);
      assert.equal(await page.getByLabel('Event type').inputValue(), 'page_segment_completed');
      assert.equal(await page.getByLabel('Page', { exact: true }).inputValue(), '2');
      await page.getByLabel('Show').selectOption('audit');
      const auditRow = (e: { event_type: string; viewer_email: string; page_number: number | null }) => [eventLabel(e.event_type), e.viewer_email || 'Anonymous', e.page_number === null ? '' : String(e.page_number)];
      const audit = await api('audit-log', bookFilter);
      assert.ok(audit.data.some((e: { event_type: string }) => e.event_type === 'access_rejected'));
      await waitForEvents('Audit log, in the order it was recorded', audit.data.map(auditRow));
      assert.equal(new URL(page.url()).searchParams.get('event_page'), null);
      await page.getByLabel('Event type').selectOption('access_rejected');
      const rejected = (await api('audit-log', { ...bookFilter, event_type: 'access_rejected' })).data.map(auditRow);
      await waitForEvents('Audit log, in the order it was recorded', rejected);
      await page.reload();
      await waitForEvents('Audit log, in the order it was recorded', rejected);
      assert.equal(await page.getByLabel('Show').inputValue(), 'audit');
      assert.equal(await page.getByLabel('Event type').inputValue(), 'access_rejected');
      await page.getByLabel('Event type').selectOption('');
      await waitForEvents('Audit log, in the order it was recorded', audit.data.map(auditRow));
      await accessibleInBothThemes(page, 'Book analytics with the audit log');

      // Leads: the API's leads for the same filter, 50 then the rest with "Show more leads".
      const leadRow = (l: { email: string; name: string; company: string | null }) => [l.email, l.name, l.company ?? ''];
      const firstLeads = await api('leads', bookFilter);
      assert.equal(firstLeads.data.length, 50);
      assert.equal(firstLeads.meta.has_more, true);
      await waitForEvents('Leads, in the order they were submitted', firstLeads.data.map(leadRow));
      const nextLeads = await api('leads', { ...bookFilter, cursor: firstLeads.meta.next_cursor });
      assert.equal(nextLeads.meta.has_more, false);
      await page.getByRole('button', { name: 'Show more leads' }).click();
      await waitForEvents('Leads, in the order they were submitted', [...firstLeads.data, ...nextLeads.data].map(leadRow));
      await page.getByRole('button', { name: 'Show more leads' }).waitFor({ state: 'detached' });
      await accessibleInBothThemes(page, 'Book analytics with the leads');

      // An export of the range downloads as CSV with the API's rows.
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Page performance (CSV)' }).click()]);
      const csv = (await readFile((await download.path())!, 'utf8')).replace(/^\uFEFF/, '').trim().split('\r\n');
      assert.equal(csv.length - 1, pages.data.length);
      assert.match(csv[0]!, /page_number/);

      // A tracked link's screen, from the book's tracked links: every figure and the page table of the visits through it.
      await page.getByRole('link', { name: 'March newsletter (/march)' }).click();
      await heading(page, 'Analytics: Spring catalogue, through March newsletter (/march)');
      await page.waitForURL(/link=\d+/);
      const linkId = bookLinks.data[0].tracked_link_id as number;
      const linkSummary = await api('summary', { date: RANGE, exclude_team: true, book_id: book.randomId, tracked_link_id: linkId });
      assert.equal(linkSummary.data.views, 1);
      await waitForFigures(page, expectedFigures(linkSummary));
      const linkPages = await api('page-performance', { tz: TZ, date: RANGE, exclude_team: true, book_id: book.randomId, tracked_link_id: linkId });
      const linkTable = page.getByRole('table', { name: 'Page performance' });
      await page.waitForFunction((want) => document.querySelectorAll('[data-page]').length === want && !document.querySelector('[aria-busy="true"]'), linkPages.data.length);
      assert.deepEqual(
        await linkTable.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent))),
        linkPages.data.map((p: Record<string, number>) => [
          String(p.page_number), String(p.unique_readers), `${Math.round((p.unique_readers! / linkSummary.data.unique_readers) * 100)} %`,
          duration(p.avg_active_seconds_per_reader!), duration(p.median_active_seconds_per_segment!), String(p.total_segments),
        ]),
      );
      const linkReaders = await api('readers', { tz: TZ, date: RANGE, exclude_team: true, book_id: book.randomId, tracked_link_id: linkId, include_anonymous: true, limit: 50 });
      await page.waitForFunction((want) => document.querySelectorAll('[data-reader]').length === want, linkReaders.data.length);
      assert.deepEqual(await page.locator('[data-reader] th').allTextContents(), linkReaders.data.map((r: { viewer_email: string | null; session_id: string | null }) => r.viewer_email ?? `Anonymous visit ${r.session_id!.slice(0, 8)}`));
      assert.match((await page.getByRole('link', { name: 'Page performance (CSV)' }).getAttribute('href'))!, new RegExp(`tracked_link_id=${linkId}`));
      await accessibleInBothThemes(page, 'Book analytics through a tracked link');
      await page.getByRole('link', { name: 'All visits of this book' }).click();
      await heading(page, 'Analytics: Spring catalogue');
      await waitForFigures(page, expectedFigures(bookSummary));
      assert.deepEqual(tab.problems, []);
    } finally {
      await tab.close();
    }
  });

  it('shows a live reader session, sent through the reader\'s event endpoint, in reading now and drops it when it ends', async () => {
    const send = async (events: unknown[]) => {
      const response = await fetch(`${svc.url}/read/${book.randomId}/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': BROWSER_UA },
        body: JSON.stringify({ session_id: LIVE, active_ms: 3000, events }),
      });
      assert.equal(response.status, 200, await response.text());
    };
    const tab = await openApp(browser);
    try {
      const { page } = tab;
      await signInThroughScreen(page, svc, 'owner@acme.example');
      await page.goto(`${svc.origin}/app/analytics/books/${book.randomId}`);
      await heading(page, 'Analytics: Spring catalogue');
      const shown = page.locator('[data-reading-now]');
      await page.getByText('Reading now: 0 readers in this book').waitFor();
      await send([{ seq: 0, type: 'session_started', at: Date.now() }, { seq: 1, type: 'page_segment_completed', page: 1, active_ms: 3000 }]);
      assert.equal((await api('reading-now', { book_id: book.randomId })).data.sessions, 1);
      await page.reload();
      await page.getByText('Reading now: 1 reader in this book').waitFor();
      assert.equal(await shown.getAttribute('data-reading-now'), '1');
      await send([{ seq: 2, type: 'session_ended', exit_reason: 'closed' }]);
      assert.equal((await api('reading-now', { book_id: book.randomId })).data.sessions, 0);
      await page.reload();
      await page.getByText('Reading now: 0 readers in this book').waitFor();
    } finally {
      await tab.close();
    }
  });

  it('shows a viewer the analytics, and a workspace without the Company plan an explanation', async () => {
    const tab = await openApp(browser);
    try {
      const { page } = tab;
      await signInThroughScreen(page, svc, 'viewer@acme.example');
      await page.getByRole('link', { name: 'Analytics' }).click();
      await heading(page, 'Analytics');
      await waitForFigures(page, expectedFigures(await api('summary', { date: '30d' })));
    } finally {
      await tab.close();
    }
    const pro = await svc.workspace({ name: 'Small Press', plan: 'pro' });
    await personIn(svc, pro.id, 'small@press.example', 'owner');
    const other = await openApp(browser);
    try {
      const { page } = other;
      await signInThroughScreen(page, svc, 'small@press.example');
      await page.goto(`${svc.origin}/app/analytics`);
      await heading(page, 'Analytics');
      await page.getByRole('heading', { name: 'Analytics need the Company plan' }).waitFor();
      assert.equal(await page.locator('[data-figure]').count(), 0);
      await accessibleInBothThemes(page, 'Analytics without the plan');
      // Leads are on every plan: the book screen still lists them (UTC days, the API's default).
      const proBook = await insertBook(svc, pro.id, { status: 'publish', pageCount: 2, name: 'Small catalogue' });
      await insertLead(svc, proBook, { name: 'Pat', email: 'pat@example.com', fields: { company: 'Pat & Co' }, at: new Date() });
      const proLeads = await svc.request('GET', '/v1/analytics/leads', { key: pro.key, query: { book_id: proBook.randomId, date: '30d', tz: 'UTC' } });
      assert.equal(proLeads.status, 200, proLeads.text);
      await page.goto(`${svc.origin}/app/analytics/books/${proBook.randomId}`);
      const proTable = page.getByRole('table', { name: 'Leads, in the order they were submitted' });
      await proTable.waitFor();
      assert.deepEqual(await proTable.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(1, 4).map((c) => c.textContent))),
        proLeads.body.data.map((l: { email: string; name: string; company: string | null }) => [l.email, l.name, l.company ?? '']));
    } finally {
      await other.close();
    }
  });
});
