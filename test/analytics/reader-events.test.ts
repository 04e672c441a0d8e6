/**
 * Reader event ingestion over HTTP: what a batch stores (view totals,
 * interaction and audit events, attribution, geography), re-sent batches,
 * validation, size and rate limits, bots and prefetches, the reader gate.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { auditEvents, interactionEvents, viewers, viewEvents } from '../../src/modules/analytics/analytics.tables.ts';
import { Geolocator } from '../../src/modules/analytics/geography.ts';
import { engagementScore } from '../../src/modules/analytics/reader-events.service.ts';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';

export const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
let ipCounter = 0;
/** A fresh client address per test (TRUST_PROXY is on), so per-client limits of one test never touch another. */
const nextIp = () => `198.51.100.${++ipCounter}`;

describe('reader events', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let book: { id: number; randomId: string };

  before(async () => {
    svc = await startService({ worker: false, env: { TRUST_PROXY: true } });
    ws = await svc.workspace();
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 6 });
  });
  after(() => svc.stop());

  const db = () => svc.runtime.database.db;

  async function send(body: unknown, options: { book?: string; ip?: string; headers?: Record<string, string>; contentType?: string } = {}) {
    const response = await fetch(`${svc.url}/read/${options.book ?? book.randomId}/events`, {
      method: 'POST',
      headers: {
        'content-type': options.contentType ?? 'application/json',
        'user-agent': BROWSER_UA,
        'x-forwarded-for': options.ip ?? nextIp(),
        ...options.headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: response.status, body: json, text, headers: response.headers };
  }

  const viewOf = async (sessionId: string, bookId = book.id) =>
    (await db().select().from(viewEvents).where(and(eq(viewEvents.bookId, bookId), eq(viewEvents.sessionId, sessionId))))[0];
  const interactionsOf = (sessionId: string) => db().select().from(interactionEvents).where(eq(interactionEvents.sessionId, sessionId)).orderBy(interactionEvents.sequence);

  it('stores a batch as a view with its totals, interaction events and audit events', async () => {
    const session = randomUUID();
    const now = Date.now();
    const res = await send({
      session_id: session,
      active_ms: 42_000,
      events: [
        { seq: 0, type: 'session_started', page: 1, at: now - 50_000 },
        { seq: 1, type: 'page_segment_completed', page: 1, active_ms: 12_000, at: now - 40_000 },
        { seq: 2, type: 'page_segment_completed', page: 2, active_ms: 15_000 },
        { seq: 3, type: 'page_segment_completed', page: 3, active_ms: 15_000 },
        { seq: 4, type: 'link_clicked', page: 3, metadata: { url: 'https://example.com/offer' } },
        { seq: 5, type: 'document_downloaded', page: 3 },
        { seq: 6, type: 'session_ended', exit_reason: 'navigated', at: now + 3_600_000 },
      ],
      context: { embedded: true, referrer: 'https://Shop.Example.com/catalogue?x=1' },
    }, { ip: '81.2.69.160' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { received: 7, stored: 7, counted: true });

    const view = (await viewOf(session))!;
    assert.equal(view.workspaceId, ws.id);
    assert.equal(view.impressions, 1);
    assert.equal(view.reads, 1);
    assert.equal(view.clicks, 1);
    assert.equal(view.pagesViewed, 3);
    assert.deepEqual(view.pagesSeen, [1, 2, 3]);
    assert.equal(view.activeMs, 42_000);
    assert.equal(view.durationSeconds, 42);
    assert.equal(view.exitReason, 'navigated');
    assert.equal(view.fromEmbedded, true);
    assert.equal(view.sourceHost, 'shop.example.com');
    assert.equal(view.trackedLinkId, null);
    assert.equal(view.viewerId, null);
    assert.equal(view.engagementScore, engagementScore({ pagesViewed: 3, pageCount: 6, activeMs: 42_000, clicks: 1 }));
    // Geography from the DB-IP database when it is installed (an optional dependency), else unknown.
    if (new Geolocator().enabled) {
      assert.deepEqual([view.country, view.region, view.city], ['GB', 'England', 'London']);
      assert.ok(Math.abs(view.latitude! - 51.5) < 0.5 && Math.abs(view.longitude!) < 0.5);
    } else {
      assert.equal(view.country, null);
    }

    const events = await interactionsOf(session);
    assert.deepEqual(events.map((e) => e.eventType), ['session_started', 'page_segment_completed', 'page_segment_completed', 'page_segment_completed', 'link_clicked', 'document_downloaded', 'session_ended']);
    assert.ok(events.every((e) => e.viewEventId === view.id && e.sourceType === 'embed' && e.sourceHost === 'shop.example.com'));
    assert.deepEqual(events[4]!.metadata, [{ url: 'https://example.com/offer' }]);
    assert.equal(events[6]!.exitReason, 'navigated');
    // Client clocks are trusted up to now: an event "in the future" is placed at arrival.
    assert.ok(events[6]!.occurredAt.getTime() <= Date.now());
    assert.ok(Math.abs(events[1]!.occurredAt.getTime() - (now - 40_000)) < 1000);

    const audit = await db().select().from(auditEvents).where(eq(auditEvents.bookId, book.id));
    const mine = audit.filter((a) => events.some((e) => e.id === a.sourceEventId));
    assert.deepEqual(mine.map((a) => a.eventType).sort(), ['document_downloaded', 'link_clicked']);
    assert.ok(mine.every((a) => a.source === 'reader'));
    assert.deepEqual(mine.find((a) => a.eventType === 'link_clicked')!.metadata, { url: 'https://example.com/offer' });
  });

  it('counts a re-sent batch once and folds later batches into the same view', async () => {
    const session = randomUUID();
    const first = { session_id: session, active_ms: 5_000, events: [{ seq: 0, type: 'session_started' }, { seq: 1, type: 'page_segment_completed', page: 1, active_ms: 5_000 }] };
    assert.equal((await send(first)).body.stored, 2);
    const again = await send(first);
    assert.equal(again.status, 200);
    assert.equal(again.body.stored, 0);
    const later = await send({ session_id: session, active_ms: 9_000, events: [{ seq: 1, type: 'page_segment_completed', page: 1, active_ms: 5_000 }, { seq: 2, type: 'link_clicked', page: 2 }, { seq: 3, type: 'page_segment_completed', page: 2, active_ms: 4_000 }] });
    assert.equal(later.body.stored, 2);
    const view = (await viewOf(session))!;
    assert.equal(view.pagesViewed, 2);
    assert.equal(view.clicks, 1);
    assert.equal(view.activeMs, 9_000);
    assert.equal((await interactionsOf(session)).length, 4);
    const views = await db().select().from(viewEvents).where(eq(viewEvents.sessionId, session));
    assert.equal(views.length, 1);
  });

  it('attributes a visit through a tracked link', async () => {
    const link = await svc.request('POST', `/v1/books/${book.randomId}/tracked-links`, { key: ws.key, body: { name: 'Mailing', slug: 'mailing' } });
    const session = randomUUID();
    await send({ session_id: session, events: [{ seq: 0, type: 'session_started' }], context: { tl: 'mailing' } });
    const view = (await viewOf(session))!;
    assert.equal(view.trackedLinkId, link.body.data.id);
    assert.equal((await interactionsOf(session))[0]!.sourceType, 'tracked_link');
    const unknown = randomUUID();
    await send({ session_id: unknown, events: [{ seq: 0, type: 'session_started' }], context: { tl: 'no-such-link' } });
    assert.equal((await viewOf(unknown))!.trackedLinkId, null);
    const list = await svc.request('GET', `/v1/books/${book.randomId}/tracked-links`, { key: ws.key });
    assert.equal(list.body.data.find((l: { id: number }) => l.id === link.body.data.id).visits, 1);
  });

  it('accepts beacons sent as text/plain', async () => {
    const session = randomUUID();
    const res = await send({ session_id: session, events: [{ seq: 0, type: 'session_ended', exit_reason: 'closed' }] }, { contentType: 'text/plain;charset=UTF-8' });
    assert.equal(res.status, 200, res.text);
    assert.equal((await viewOf(session))!.exitReason, 'closed');
  });

  it('refuses an invalid batch with a 422 and stores nothing of it', async () => {
    const session = randomUUID();
    const ok = { seq: 0, type: 'session_started' };
    const cases: [unknown, string][] = [
      [{ session_id: session, events: [ok, { seq: 1, type: 'page_flipped' }] }, 'events.1.type'],
      [{ session_id: session, events: [ok, { seq: 1, type: 'page_segment_completed', page: 7, active_ms: 10 }] }, 'events.1.page'],
      [{ session_id: session, events: [ok, { seq: 1, type: 'page_segment_completed', page: 1, active_ms: 3_600_001 }] }, 'events.1.active_ms'],
      [{ session_id: session, events: [ok, { seq: 1, type: 'page_segment_completed', page: 2 }] }, 'events.1.page'],
      [{ session_id: session, events: [ok, { seq: 0, type: 'link_clicked' }] }, 'events.1.seq'],
      [{ session_id: session, events: [ok, { seq: 1, type: 'lead_form_submitted' }] }, 'events.1.type'],
      [{ session_id: session, events: [ok, { seq: 1, type: 'link_clicked', metadata: { 'Bad Key': 'x' } }] }, 'events.1.metadata'],
      [{ session_id: session, events: [{ ...ok, extra: true }] }, 'events.0'],
      [{ session_id: session, events: [] }, 'events'],
      [{ session_id: session, events: Array.from({ length: 201 }, (_, i) => ({ seq: i, type: 'session_started' })) }, 'events'],
      [{ session_id: 'short', events: [ok] }, 'session_id'],
      [{ events: [ok] }, 'session_id'],
      [{ session_id: session, events: [ok], context: { tl: 'Not A Slug' } }, 'context.tl'],
    ];
    for (const [body, field] of cases) {
      const res = await send(body);
      assert.equal(res.status, 422, `${field}: ${res.text}`);
      assert.equal(res.body.error.type, 'ValidationException');
      assert.ok(Object.keys(res.body.error.details).some((k) => k.startsWith(field)), `${field}: ${JSON.stringify(res.body.error.details)}`);
    }
    assert.equal(await viewOf(session), undefined);
    assert.equal((await interactionsOf(session)).length, 0);
    const notJson = await send('{"session_id":', {});
    assert.equal(notJson.status, 400);
    const otherType = await send('x=1', { contentType: 'application/x-www-form-urlencoded' });
    assert.equal(otherType.status, 415);
  });

  it('refuses a body over 64 KB with a 413', async () => {
    const session = randomUUID();
    const events = Array.from({ length: 40 }, (_, i) => ({ seq: i, type: 'link_clicked', metadata: { url: `https://example.com/${'x'.repeat(2000)}` } }));
    const res = await send({ session_id: session, events });
    assert.equal(res.status, 413, res.text);
    assert.equal(res.body.error.type, 'PayloadTooLargeException');
    assert.equal(await viewOf(session), undefined);
  });

  it('answers bots and prefetches without counting them', async () => {
    const requests: Record<string, string>[] = [
      { 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' },
      { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36' },
      { 'sec-purpose': 'prefetch;prerender' },
      { purpose: 'prefetch' },
    ];
    for (const headers of requests) {
      const session = randomUUID();
      const res = await send({ session_id: session, events: [{ seq: 0, type: 'session_started' }] }, { headers });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.counted, false, JSON.stringify(headers));
      assert.equal(res.body.stored, 0);
      assert.equal(await viewOf(session), undefined);
    }
  });

  it('limits batches per session (429 with Retry-After)', async () => {
    const session = randomUUID();
    const ip = nextIp();
    let last = null as Awaited<ReturnType<typeof send>> | null;
    // Fixed one-minute windows: if a window ends mid-loop, the next one fills within another 61 batches.
    for (let i = 0; i < 122; i++) {
      last = await send({ session_id: session, events: [{ seq: i, type: 'session_started' }] }, { ip });
      if (last.status === 429) break;
    }
    assert.equal(last!.status, 429);
    assert.equal(last!.body.error.type, 'RateLimitException');
    assert.ok(Number(last!.headers.get('retry-after')) > 0);
    // Another session from another address is not affected.
    const other = await send({ session_id: randomUUID(), events: [{ seq: 0, type: 'session_started' }] });
    assert.equal(other.status, 200);
  });

  it('identifies a reader signed in through the access gate', async () => {
    const listed = await insertBook(svc, ws.id, { status: 'publish', pageCount: 3 });
    const entry = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: listed.randomId, email: 'example.org', type: 'domain' } });
    assert.equal(entry.status, 201, entry.text);
    const cookie = svc.runtime.services.readerSessions.issue(listed.randomId, 'bo@example.org').split(';')[0]!;
    const session = randomUUID();
    const res = await send({ session_id: session, events: [{ seq: 0, type: 'session_started' }, { seq: 1, type: 'document_downloaded', page: 2 }] }, { book: listed.randomId, headers: { cookie } });
    assert.equal(res.status, 200, res.text);
    const view = (await viewOf(session, listed.id))!;
    const [viewer] = await db().select().from(viewers).where(and(eq(viewers.workspaceId, ws.id), eq(viewers.email, 'bo@example.org')));
    assert.ok(viewer);
    assert.equal(view.viewerId, viewer.id);
    assert.ok((await interactionsOf(session)).every((e) => e.viewerId === viewer.id));
    const [audit] = await db().select().from(auditEvents).where(and(eq(auditEvents.bookId, listed.id), eq(auditEvents.eventType, 'document_downloaded')));
    assert.equal(audit!.viewerEmail, 'bo@example.org');
    assert.equal(audit!.viewerId, viewer.id);
    // Removed from the list: the same session is refused at once.
    await svc.request('DELETE', `/v1/subscribers/${entry.body.data.id}`, { key: ws.key });
    await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: listed.randomId, email: 'someone@else.example' } });
    const after = await send({ session_id: session, events: [{ seq: 2, type: 'session_ended' }] }, { book: listed.randomId, headers: { cookie } });
    assert.equal(after.status, 401, after.text);
  });

  it('refuses events for unknown, draft and access-listed books', async () => {
    const draft = await insertBook(svc, ws.id, { status: 'draft', pageCount: 3 });
    const event = { session_id: randomUUID(), events: [{ seq: 0, type: 'session_started' }] };
    assert.equal((await send(event, { book: 'AAAAAAAAAAAAAAAAAAAAAA' })).status, 404);
    assert.equal((await send(event, { book: draft.randomId })).status, 404);
    assert.equal((await send(event, { book: 'not-a-random-id' })).status, 404);
    const listed = await insertBook(svc, ws.id, { status: 'publish', pageCount: 3 });
    const entry = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: listed.randomId, email: 'ann@example.com' } });
    assert.equal(entry.status, 201, entry.text);
    const gated = await send(event, { book: listed.randomId });
    assert.equal(gated.status, 401, gated.text);
    const stored = await db().select().from(viewEvents).where(eq(viewEvents.sessionId, event.session_id));
    assert.equal(stored.length, 0);
  });
});

describe('engagement score', () => {
  it('weighs pages seen, attention per page and clicks', () => {
    assert.equal(engagementScore({ pagesViewed: 0, pageCount: 10, activeMs: 0, clicks: 0 }), 0);
    assert.equal(engagementScore({ pagesViewed: 10, pageCount: 10, activeMs: 100_000, clicks: 2 }), 100);
    assert.equal(engagementScore({ pagesViewed: 5, pageCount: 10, activeMs: 25_000, clicks: 1 }), 25 + 17.5 + 7.5);
    assert.equal(engagementScore({ pagesViewed: 1, pageCount: 0, activeMs: 1_000, clicks: 9 }), 3.5 + 15);
  });
});
