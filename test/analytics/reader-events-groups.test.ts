/**
 * Group commit of reader event batches (ingest-groups.ts), over HTTP: many
 * concurrent batches of many sessions, several of one session and re-sent
 * batches racing their originals end with exactly the totals and counts
 * computed here from the events sent; a batch that fails in the database
 * (its book deleted after the gate let it in) fails alone, its group's other
 * batches are stored, and it is a 404, as the gate now says. A tracked link
 * deleted in the same moment is resolved again and the batch stored.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { auditEvents, interactionEvents, trackedLinks, viewEvents } from '../../src/modules/analytics/analytics.tables.ts';
import { books } from '../../src/modules/books/books.tables.ts';
import type { DbOrTx } from '../../src/platform/db/database.ts';
import type { EventBatchInput } from '../../src/modules/analytics/reader-events.schemas.ts';
import { engagementScore } from '../../src/modules/analytics/reader-events.service.ts';
import { insertBook } from '../factories.ts';
import { startService, usingPostgres, type TestService } from '../helpers.ts';

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const PAGES = 12;
let ipCounter = 0;
/** A fresh client address per session (TRUST_PROXY is on), so no per-client limit is reached. */
const nextIp = () => `203.0.${113 + (++ipCounter >> 8)}.${ipCounter & 255}`;

interface SentEvent {
  seq: number;
  type: string;
  page?: number;
  active_ms?: number;
  metadata?: Record<string, string>;
}

/** Deterministic pseudo-random numbers, so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('reader events, group commit', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let book: { id: number; randomId: string };

  before(async () => {
    svc = await startService({ worker: false, env: { TRUST_PROXY: true } });
    ws = await svc.workspace();
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: PAGES });
  });
  after(() => svc.stop());

  const db = () => svc.runtime.database.db;
  const stats = () => svc.runtime.services.readerEvents.groupStats();

  async function send(body: unknown, ip: string, randomId = book.randomId): Promise<{ status: number; body: any }> {
    const response = await fetch(`${svc.url}/read/${randomId}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': BROWSER_UA, 'x-forwarded-for': ip },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  /** A session's events, cut into batches (some sharing events, as a reader re-sends a batch it got no answer for). */
  function session(rnd: () => number, withSessionActiveMs: boolean) {
    const id = randomUUID();
    const events: SentEvent[] = [{ seq: 0, type: 'session_started' }];
    const count = 3 + Math.floor(rnd() * 25);
    for (let seq = 1; seq <= count; seq++) {
      const kind = rnd();
      if (kind < 0.7) events.push({ seq, type: 'page_segment_completed', page: 1 + Math.floor(rnd() * PAGES), active_ms: Math.floor(rnd() * 20_000) });
      else if (kind < 0.85) events.push({ seq, type: 'link_clicked', page: 1 + Math.floor(rnd() * PAGES), metadata: { url: `https://example.com/${seq}` } });
      else if (kind < 0.92) events.push({ seq, type: 'checkout_redirect_clicked', page: 1 });
      else events.push({ seq, type: 'form_widget_opened', page: 1 });
    }
    const batches: { session_id: string; active_ms?: number; events: SentEvent[] }[] = [];
    for (let from = 0; from < events.length;) {
      const size = 1 + Math.floor(rnd() * 8);
      const slice = events.slice(from, from + size);
      const batch = { session_id: id, ...(withSessionActiveMs ? { active_ms: Math.floor(rnd() * 300_000) } : {}), events: slice };
      batches.push(batch);
      if (rnd() < 0.4) batches.push({ ...batch, events: [...slice] }); // re-sent, racing its original
      from += size;
    }
    // The expected totals, from the distinct events (each stored once, whatever the order the batches arrive in).
    const segments = events.filter((e) => e.type === 'page_segment_completed');
    const expected = {
      events: events.length,
      pagesViewed: new Set(segments.map((e) => e.page)).size,
      clicks: events.filter((e) => e.type === 'link_clicked' || e.type === 'checkout_redirect_clicked').length,
      activeMs: withSessionActiveMs ? Math.max(0, ...batches.map((b) => b.active_ms!)) : segments.reduce((sum, e) => sum + e.active_ms!, 0),
      audited: events.filter((e) => e.type !== 'page_segment_completed' && e.type !== 'session_started').length,
    };
    return { id, ip: nextIp(), batches, expected };
  }

  it('stores concurrent batches of many sessions (several per session, re-sent ones racing) with exact totals', async () => {
    const rnd = random(11);
    const retriedBefore = stats().retried;
    let largest = 0;
    // Rounds until a group held several batches (on a loaded machine the first round may already have); each round is checked in full.
    for (let round = 0; round < 5 && largest < 2; round++) {
      const sessions = Array.from({ length: 40 }, (_, i) => session(rnd, i % 3 === 0));
      const sends = sessions.flatMap((s) => s.batches.map(async (batch) => ({ session: s.id, response: await send(batch, s.ip) })));
      const responses = await Promise.all(sends);
      for (const { response } of responses) assert.equal(response.status, 200, JSON.stringify(response.body));

      const views = await db().select().from(viewEvents).where(and(eq(viewEvents.bookId, book.id), inArray(viewEvents.sessionId, sessions.map((s) => s.id))));
      assert.equal(views.length, sessions.length);
      const counts = await db()
        .select({ session: interactionEvents.sessionId, n: sql<number>`count(*)::int` })
        .from(interactionEvents)
        .where(and(eq(interactionEvents.bookId, book.id), inArray(interactionEvents.sessionId, sessions.map((s) => s.id))))
        .groupBy(interactionEvents.sessionId);
      const audited = await db()
        .select({ session: interactionEvents.sessionId, n: sql<number>`count(*)::int` })
        .from(auditEvents)
        .innerJoin(interactionEvents, eq(interactionEvents.id, auditEvents.sourceEventId))
        .where(and(eq(auditEvents.bookId, book.id), eq(auditEvents.source, 'reader'), inArray(interactionEvents.sessionId, sessions.map((s) => s.id))))
        .groupBy(interactionEvents.sessionId);
      for (const s of sessions) {
        const view = views.find((v) => v.sessionId === s.id)!;
        const label = `session ${s.id}`;
        assert.equal(counts.find((c) => c.session === s.id)?.n, s.expected.events, label);
        // Each distinct event was reported stored by exactly one of the batches that carried it.
        const stored = responses.filter((r) => r.session === s.id).reduce((sum, r) => sum + r.response.body.stored, 0);
        assert.equal(stored, s.expected.events, label);
        assert.equal(audited.find((c) => c.session === s.id)?.n ?? 0, s.expected.audited, label);
        assert.equal(view.pagesViewed, s.expected.pagesViewed, label);
        assert.equal(view.pagesSeen.length, s.expected.pagesViewed, label);
        assert.equal(view.clicks, s.expected.clicks, label);
        assert.equal(view.activeMs, Math.min(s.expected.activeMs, 86_400_000), label);
        assert.equal(view.engagementScore, engagementScore({ pagesViewed: s.expected.pagesViewed, pageCount: PAGES, activeMs: view.activeMs, clicks: s.expected.clicks }), label);
      }
      largest = stats().largest;
    }
    assert.ok(largest >= 2, `batches were grouped (largest group ${largest})`);
    // No group failed (one holding a session twice would, and its retry batch by batch would hide it).
    assert.equal(stats().retried, retriedBefore);
  });

  it('stores the other batches of a group when one fails in the database, and answers the failed one 404', async () => {
    const rnd = random(7);
    const retriedBefore = stats().retried;
    // Batches the gate let in a moment before their book was deleted (its origin, built then), handed to the service in
    // the same event-loop turn as 30 sessions' good batches, so they share a group: that group fails (foreign key) and
    // is retried batch by batch.
    const doomed = await Promise.all(Array.from({ length: 4 }, () => insertBook(svc, ws.id, { status: 'publish', pageCount: PAGES })));
    await db().delete(books).where(inArray(books.id, doomed.map((b) => b.id)));
    const events = svc.runtime.services.readerEvents;
    const originOf = (bookId: number) => ({ book: { id: bookId, workspaceId: ws.id, pageCount: PAGES }, viewerEmail: null, ip: nextIp(), ownHost: '127.0.0.1' });
    const sessions = Array.from({ length: 30 }, () => session(rnd, false));
    // One batch per session (a session's batches never share a group), then the rest in order.
    const firsts = sessions.map((s) => events.ingest(originOf(book.id), s.batches[0] as unknown as EventBatchInput));
    const condemned = doomed.map((b) => events.ingest(originOf(b.id), { session_id: randomUUID(), events: [{ seq: 0, type: 'session_started' }] } as unknown as EventBatchInput));
    const outcomes = await Promise.allSettled([...firsts, ...condemned]);
    assert.ok(outcomes.slice(0, firsts.length).every((o) => o.status === 'fulfilled'), 'every good batch stored');
    for (const o of outcomes.slice(firsts.length)) {
      assert.equal(o.status, 'rejected');
      const error = (o as PromiseRejectedResult).reason as { status?: number; type?: string };
      assert.deepEqual([error.status, error.type], [404, 'ModelNotFoundException']);
    }
    assert.ok(stats().retried > retriedBefore, 'a failing batch shared a group with others');
    for (const s of sessions) for (const batch of s.batches.slice(1)) await events.ingest(originOf(book.id), batch as unknown as EventBatchInput);

    const views = await db().select().from(viewEvents).where(and(eq(viewEvents.bookId, book.id), inArray(viewEvents.sessionId, sessions.map((s) => s.id))));
    assert.equal(views.length, sessions.length);
    for (const s of sessions) {
      const view = views.find((v) => v.sessionId === s.id)!;
      assert.equal(view.pagesViewed, s.expected.pagesViewed);
      assert.equal(view.clicks, s.expected.clicks);
      assert.equal(view.activeMs, s.expected.activeMs);
      const [{ n }] = await db().select({ n: sql<number>`count(*)::int` }).from(interactionEvents).where(and(eq(interactionEvents.bookId, book.id), eq(interactionEvents.sessionId, s.id))) as [{ n: number }];
      assert.equal(n, s.expected.events);
    }
  });

  it('answers 404 for a batch whose book was deleted after the gate let it in', async () => {
    const doomed = await insertBook(svc, ws.id, { status: 'publish', pageCount: PAGES });
    await db().delete(books).where(eq(books.id, doomed.id));
    // The origin the gate built a moment before the deletion.
    const origin = { book: { id: doomed.id, workspaceId: ws.id, pageCount: PAGES }, viewerEmail: null, ip: nextIp(), ownHost: '127.0.0.1' };
    await assert.rejects(
      svc.runtime.services.readerEvents.ingest(origin, { session_id: randomUUID(), events: [{ seq: 0, type: 'session_started' }] } as unknown as EventBatchInput),
      (error: { status?: number; type?: string }) => error.status === 404 && error.type === 'ModelNotFoundException',
    );
  });

  /**
   * The races themselves, on PostgreSQL: a transaction deletes a row and holds
   * its lock; the batch passes the gate (which still sees the row), its
   * insert waits on that lock, and the deletion commits under it.
   */
  async function racingDeletion(remove: (tx: DbOrTx) => Promise<unknown>, request: () => Promise<{ status: number; body: any }>): Promise<{ status: number; body: any }> {
    let commit!: () => void;
    const released = new Promise<void>((resolve) => { commit = resolve; });
    let deleted!: () => void;
    const holding = new Promise<void>((resolve) => { deleted = resolve; });
    const deletion = db().transaction(async (tx) => {
      await remove(tx);
      deleted();
      await released;
    });
    await holding;
    const response = request();
    // Wait until the batch's insert is waiting on the deleted row's lock.
    for (let i = 0; ; i++) {
      const rows = await db().execute(sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
      if ((rows as unknown as { rows?: unknown[] }).rows?.length ?? (rows as unknown as unknown[]).length) break;
      assert.ok(i < 400, 'the batch never waited for the deleting transaction');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    commit();
    await deletion;
    return response;
  }

  it('answers 404, not 500, when the book is deleted while its batch is stored', { skip: !usingPostgres && 'needs a second database connection (PostgreSQL)' }, async () => {
    const doomed = await insertBook(svc, ws.id, { status: 'publish', pageCount: PAGES });
    const sessionId = randomUUID();
    const response = await racingDeletion(
      (tx) => tx.delete(books).where(eq(books.id, doomed.id)),
      () => send({ session_id: sessionId, events: [{ seq: 0, type: 'session_started' }] }, nextIp(), doomed.randomId),
    );
    assert.equal(response.status, 404, JSON.stringify(response.body));
    assert.equal(response.body.error.type, 'ModelNotFoundException');
  });

  it('stores the batch when its tracked link is deleted while it is stored', { skip: !usingPostgres && 'needs a second database connection (PostgreSQL)' }, async () => {
    const [link] = await db().insert(trackedLinks).values({ workspaceId: ws.id, bookId: book.id, name: 'Newsletter', slug: `nl-${randomUUID().slice(0, 8)}` }).returning();
    const sessionId = randomUUID();
    const response = await racingDeletion(
      (tx) => tx.delete(trackedLinks).where(eq(trackedLinks.id, link!.id)),
      () => send({ session_id: sessionId, context: { tl: link!.slug }, events: [{ seq: 0, type: 'session_started' }, { seq: 1, type: 'page_segment_completed', page: 1, active_ms: 4000 }] }, nextIp()),
    );
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.stored, 2);
    const [view] = await db().select().from(viewEvents).where(and(eq(viewEvents.bookId, book.id), eq(viewEvents.sessionId, sessionId)));
    assert.equal(view!.trackedLinkId, null);
    assert.equal(view!.activeMs, 4000);
  });
});
