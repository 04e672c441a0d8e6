/**
 * The nine analytics operations over HTTP, on seeded visits whose answers
 * the test computes on its own: records and fields, every filter, plan and
 * scope refusals, another workspace's book/viewer/link, date forms and a
 * time-zone day boundary, pagination while events are inserted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';
import { expectedPages, insertAudit, insertLink, insertViewer, insertVisit, type SeededVisit } from './analytics-seed.ts';

describe('analytics queries', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let other: { id: number; key: string };
  let book: Awaited<ReturnType<typeof insertBook>>;
  let otherBook: Awaited<ReturnType<typeof insertBook>>;
  let alice: number;
  let bob: number;
  let stranger: number;
  let link: number;
  let otherLink: number;
  const visits: SeededVisit[] = [];

  before(async () => {
    svc = await startService({ worker: false });
    ws = await svc.workspace();
    other = await svc.workspace();
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 6, name: 'Spring catalogue' });
    otherBook = await insertBook(svc, other.id, { status: 'publish', pageCount: 6 });
    alice = await insertViewer(svc, ws.id, 'alice@example.com', 'Alice');
    bob = await insertViewer(svc, ws.id, 'bob@example.com', 'Zoë Ñandú');
    stranger = await insertViewer(svc, other.id, 'stranger@example.com');
    link = await insertLink(svc, ws.id, book.id, 'March newsletter', 'march');
    otherLink = await insertLink(svc, other.id, otherBook.id, 'Other', 'other');
    const seeds = [
      // 23:30 UTC on 1 March is already 2 March in Tokyo.
      { session: 's1', viewerId: alice, linkId: link, at: new Date('2026-03-01T23:30:00Z'), pages: [[1, 4000], [2, 6000], [3, 2000], [2, 3000]], clicks: 1, host: 'shop.example.com' },
      { session: 's2', viewerId: bob, linkId: null, at: new Date('2026-03-02T10:00:00Z'), pages: [[1, 1000], [2, 5000], [3, 7000]] },
      { session: 's3', viewerId: null, linkId: null, at: new Date('2026-03-05T12:00:00Z'), pages: [[1, 2000], [4, 8000]] },
      { session: 's4', viewerId: alice, linkId: null, at: new Date('2026-03-10T09:00:00Z'), pages: [[1, 3000], [5, 1000]], clicks: 2 },
      { session: 's5', viewerId: null, linkId: link, at: new Date('2026-03-10T09:30:00Z'), pages: [[1, 1500]] },
    ] as const;
    for (const s of seeds) visits.push(await insertVisit(svc, book, { ...s, pages: s.pages.map(([p, ms]) => [p, ms] as [number, number]) }));
    await insertVisit(svc, otherBook, { session: 'x1', viewerId: stranger, linkId: otherLink, at: new Date('2026-03-02T10:00:00Z'), pages: [[1, 9999]] });
    await insertAudit(svc, book, { eventType: 'access_requested', viewerId: alice, email: 'alice@example.com', at: new Date('2026-03-01T23:00:00Z') });
    await insertAudit(svc, book, { eventType: 'access_granted', viewerId: alice, email: 'alice@example.com', at: new Date('2026-03-01T23:01:00Z') });
    await insertAudit(svc, book, { eventType: 'access_rejected', viewerId: null, email: 'mallory@example.com', at: new Date('2026-03-03T08:00:00Z'), reason: 'not_on_list' });
  });
  after(() => svc.stop());

  const get = (path: string, query: Record<string, string | number | boolean> = {}, key = ws.key) => svc.request('GET', `/v1/analytics/${path}`, { key, query });
  const all = (query: Record<string, string | number | boolean> = {}) => ({ book_id: book.randomId, ...query });
  const pick = (list: SeededVisit[], f: (v: SeededVisit) => boolean) => list.filter(f);

  it('answers 403 without the Company plan or the analytics:read scope, for every operation', async () => {
    const pro = await svc.workspace({ plan: 'pro' });
    const narrow = await svc.key(ws.id, ['books:read']);
    for (const path of ['audit-log', 'book-flow', 'book-view-events', 'interaction-events', 'page-performance', 'reader-journey', 'reader-pages', 'readers', 'reading-session-pages']) {
      const planned = await get(path, all(), pro.key);
      assert.equal(planned.status, 403, path);
      assert.equal(planned.body.error.type, 'PlanRestrictionException');
      const scoped = await get(path, all(), narrow.key);
      assert.equal(scoped.status, 403, path);
      assert.equal(scoped.body.error.type, 'AuthorizationException');
      assert.deepEqual(scoped.body.error.details.required_scope, ['analytics:read']);
    }
  });

  it("answers 404 for another workspace's book, exactly like a missing one", async () => {
    for (const path of ['audit-log', 'book-flow', 'book-view-events', 'interaction-events', 'page-performance', 'reader-pages', 'readers']) {
      const foreign = await get(path, { book_id: otherBook.randomId });
      const missing = await get(path, { book_id: 'no-such-book' });
      assert.equal(foreign.status, 404, path);
      assert.deepEqual(foreign.body, missing.body);
    }
    assert.equal((await get('reading-session-pages', { book_id: otherBook.randomId, view_event_id: 1 })).status, 404);
  });

  it('page-performance: every page with exact totals, readers and medians; the filters; another workspace\'s link matches nothing', async () => {
    const res = await get('page-performance', all());
    assert.equal(res.status, 200, res.text);
    const expected = expectedPages(visits, 6);
    assert.equal(res.body.data.length, 6);
    res.body.data.forEach((row: any, i: number) => {
      const e = expected[i]!;
      assert.equal(row.page_number, e.page_number);
      assert.equal(row.book_id, book.randomId);
      assert.equal(row.total_segments, e.total_segments);
      assert.equal(row.total_active_ms, e.total_active_ms);
      assert.equal(row.total_active_seconds, e.total_active_ms / 1000);
      assert.equal(row.unique_readers, e.unique_readers);
      assert.equal(row.median_active_seconds_per_segment, e.median / 1000);
      assert.equal(row.median_active_ms_per_segment, Math.round(e.median));
      assert.equal(row.avg_active_ms_per_segment, e.total_segments ? Math.round(e.total_active_ms / e.total_segments) : 0);
      assert.equal(row.avg_active_ms_per_reader, e.unique_readers ? Math.round(e.total_active_ms / e.unique_readers) : 0);
    });
    // Page 1: 5 segments (4000, 1000, 2000, 3000, 1500): median 2000; 4 readers (alice twice counts once).
    assert.equal(res.body.data[0].median_active_ms_per_segment, 2000);
    assert.equal(res.body.data[0].unique_readers, 4);
    // Page 2: 6000, 3000, 5000 → median 5000, alice's two segments one reader.
    assert.equal(res.body.data[1].unique_readers, 2);

    const linked = await get('page-performance', all({ tracked_link_id: link }));
    assert.deepEqual(linked.body.data.map((r: any) => r.total_active_ms), expectedPages(pick(visits, (v) => v.linkId === link), 6).map((e) => e.total_active_ms));
    const foreignLink = await get('page-performance', all({ tracked_link_id: otherLink }));
    assert.ok(foreignLink.body.data.every((r: any) => r.total_segments === 0));
  });

  it('reads date in tz: the same day holds other visits in Tokyo than in UTC; malformed forms are a 422', async () => {
    const total = (body: any) => body.data.reduce((n: number, r: any) => n + r.total_active_ms, 0);
    const sum = (list: SeededVisit[]) => list.reduce((n, v) => n + v.pages.reduce((m, [, ms]) => m + ms, 0), 0);
    const utc = await get('page-performance', all({ date: '2026-03-01' }));
    assert.equal(total(utc.body), sum([visits[0]!]));
    const tokyo = await get('page-performance', all({ date: '2026-03-01', tz: 'Asia/Tokyo' }));
    assert.equal(total(tokyo.body), 0);
    const tokyoNext = await get('page-performance', all({ date: '2026-03-02', tz: 'Asia/Tokyo' }));
    // 2 March in Tokyo: 1 March 15:00 UTC to 2 March 15:00 UTC: s1 and s2.
    assert.equal(total(tokyoNext.body), sum([visits[0]!, visits[1]!]));
    const range = await get('page-performance', all({ date: '2026-03-02,2026-03-05' }));
    assert.equal(total(range.body), sum([visits[1]!, visits[2]!]));
    assert.equal(total((await get('page-performance', all({ date: 'all' }))).body), sum(visits));
    for (const bad of ['2026-13-01', 'last-week', '2026-03-05,2026-03-01']) {
      const res = await get('page-performance', all({ date: bad }));
      assert.equal(res.status, 422, bad);
      assert.ok(res.body.error.details.date, bad);
    }
    const badTz = await get('interaction-events', all({ tz: 'Nowhere/Town' }));
    assert.equal(badTz.status, 422);
    assert.ok(badTz.body.error.details.tz);
  });

  it('reader-pages: per identified reader and page, adding up to page-performance for the same reader', async () => {
    const res = await get('reader-pages', all());
    assert.equal(res.status, 200, res.text);
    const expected = new Map<string, { total: number; segments: number }>();
    for (const v of visits.filter((x) => x.viewerId !== null)) {
      for (const [p, ms] of v.pages) {
        const key = `${v.viewerId}:${p}`;
        const e = expected.get(key) ?? { total: 0, segments: 0 };
        expected.set(key, { total: e.total + ms, segments: e.segments + 1 });
      }
    }
    assert.equal(res.body.data.length, expected.size);
    for (const row of res.body.data) {
      const e = expected.get(`${row.viewer_id}:${row.page_number}`)!;
      assert.equal(row.total_active_ms, e.total);
      assert.equal(row.segments, e.segments);
      assert.equal(row.viewer_email, row.viewer_id === alice ? 'alice@example.com' : 'bob@example.com');
      assert.equal(typeof row.first_viewed_at, 'string');
    }
    const alicePages = await get('reader-pages', all({ viewer_id: alice }));
    const alicePerf = await get('page-performance', all());
    const aliceOnly = expectedPages(pick(visits, (v) => v.viewerId === alice), 6);
    assert.equal(alicePages.body.data.reduce((n: number, r: any) => n + r.total_active_ms, 0), aliceOnly.reduce((n, p) => n + p.total_active_ms, 0));
    assert.ok(alicePerf.body.data.length === 6);
    const page2 = await get('reader-pages', all({ page_number: 2, session_id: 's1' }));
    assert.deepEqual(page2.body.data.map((r: any) => [r.viewer_id, r.total_active_ms, r.segments]), [[alice, 9000, 2]]);
    assert.deepEqual((await get('reader-pages', all({ viewer_id: stranger }))).body.data, []);
  });

  it('book-flow: transitions, entries and exits of each visit', async () => {
    const res = await get('book-flow', all());
    assert.equal(res.status, 200, res.text);
    const transitions = new Map<string, { count: number; readers: Set<string> }>();
    for (const v of visits) {
      for (let i = 1; i < v.pages.length; i++) {
        const from = v.pages[i - 1]![0];
        const to = v.pages[i]![0];
        if (from === to) continue;
        const t = transitions.get(`${from}>${to}`) ?? { count: 0, readers: new Set() };
        t.count++;
        t.readers.add(v.viewerId === null ? v.session : String(v.viewerId));
        transitions.set(`${from}>${to}`, t);
      }
    }
    assert.equal(res.body.data.transitions.length, transitions.size);
    for (const t of res.body.data.transitions) {
      const e = transitions.get(`${t.from_page}>${t.to_page}`)!;
      assert.equal(t.count, e.count, `${t.from_page}>${t.to_page}`);
      assert.equal(t.readers, e.readers.size);
    }
    // 1→2 twice (s1, s2), first as the most frequent.
    assert.deepEqual(res.body.data.transitions[0], { from_page: 1, to_page: 2, count: 2, readers: 2 });
    const page1 = res.body.data.pages[0];
    assert.deepEqual(page1, { page_number: 1, views: 5, entries: 5, exits: 1 });
    assert.equal(res.body.data.pages[1].exits, 1); // s1 ended on page 2
    assert.equal(res.body.meta.visits, 5);
    const linked = await get('book-flow', all({ tracked_link_id: link }));
    assert.equal(linked.body.meta.visits, 2);
  });

  it('book-view-events: the visits with their title, reader, tracked link and score as a string, newest first; filters', async () => {
    const res = await get('book-view-events', all());
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data.map((v: any) => v.id), [...visits].sort((a, b) => b.at.getTime() - a.at.getTime()).map((v) => v.viewEventId));
    const first = res.body.data.find((v: any) => v.id === visits[0]!.viewEventId);
    assert.equal(first.book_title, 'Spring catalogue');
    assert.equal(first.viewer_email, 'alice@example.com');
    assert.deepEqual(first.tracked_link, { id: link, name: 'March newsletter', slug: 'march' });
    assert.equal(typeof first.engagement_score, 'string');
    assert.match(first.engagement_score, /^\d+\.\d$/);
    assert.equal(first.duration_seconds, 15);
    assert.equal(first.pages_viewed, 3);
    const anonymous = res.body.data.find((v: any) => v.id === visits[2]!.viewEventId);
    assert.equal(anonymous.viewer_email, undefined);
    assert.equal(anonymous.tracked_link, null);
    assert.equal(anonymous.session_id, 's3');
    assert.equal(first.session_id, 's1');
    // session_id: one visit, anonymous or not; another book's or workspace's session matches nothing.
    assert.deepEqual((await get('book-view-events', all({ session_id: 's3' }))).body.data.map((v: any) => v.id), [visits[2]!.viewEventId]);
    assert.deepEqual((await get('book-view-events', all({ session_id: 's1', viewer_id: alice }))).body.data.map((v: any) => v.id), [visits[0]!.viewEventId]);
    assert.equal((await get('book-view-events', all({ session_id: 's3', viewer_id: alice }))).body.data.length, 0);
    assert.equal((await get('book-view-events', all({ session_id: 'x1' }))).body.data.length, 0);
    assert.equal((await get('book-view-events', all({ session_id: '' }))).status, 422);
    assert.deepEqual((await get('book-view-events', all({ source_host: 'SHOP.example.com' }))).body.data.map((v: any) => v.id), [visits[0]!.viewEventId]);
    assert.deepEqual((await get('book-view-events', all({ viewer_id: alice }))).body.data.map((v: any) => v.id), [visits[3]!.viewEventId, visits[0]!.viewEventId]);
    assert.equal((await get('book-view-events', all({ viewer_id: stranger }))).body.data.length, 0);
    assert.equal((await get('book-view-events', all({ tracked_link_id: otherLink }))).body.data.length, 0);
    const paged = await get('book-view-events', all({ limit: 2 }));
    assert.equal(paged.body.meta.has_more, true);
    const rest = await get('book-view-events', all({ limit: 500, cursor: paged.body.meta.next_cursor }));
    assert.equal(rest.body.data.length, 3);
    assert.equal((await get('book-view-events', all({ limit: 501 }))).status, 422);
    assert.equal((await get('book-view-events', all({ cursor: 'garbage' }))).status, 422);
  });

  it('interaction-events: chronological records; every filter', async () => {
    const res = await get('interaction-events', all({ limit: 500 }));
    assert.equal(res.status, 200, res.text);
    const times = res.body.data.map((e: any) => e.occurred_at);
    assert.deepEqual(times, [...times].sort());
    const segment = res.body.data.find((e: any) => e.id === visits[0]!.segmentIds[0]);
    assert.deepEqual(
      { ...segment, created_at: undefined },
      {
        id: visits[0]!.segmentIds[0], book_id: book.randomId, viewer_id: alice, viewer_email: 'alice@example.com', tracked_link_id: link, session_id: 's1',
        event_type: 'page_segment_completed', page_number: 1, active_ms: 4000, active_seconds: 4, exit_reason: '', source_type: 'tracked_link',
        source_host: 'shop.example.com', country: null, region: null, city: null, latitude: null, longitude: null, metadata: null,
        occurred_at: '2026-03-01T23:30:10.000Z', created_at: undefined,
      },
    );
    const clicks = await get('interaction-events', all({ event_type: 'link_clicked' }));
    assert.equal(clicks.body.data.length, 3);
    assert.deepEqual(clicks.body.data[0].metadata, [{ url: 'https://shop.example/=cmd' }]);
    assert.equal((await get('interaction-events', all({ session_id: 's3' }))).body.data.length, 3);
    assert.equal((await get('interaction-events', all({ page_number: 4 }))).body.data.length, 1);
    assert.equal((await get('interaction-events', all({ viewer_id: bob }))).body.data.length, 4);
    assert.equal((await get('interaction-events', all({ viewer_id: stranger }))).body.data.length, 0);
    assert.equal((await get('interaction-events', all({ event_type: 'nope' }))).status, 422);
    assert.equal((await get('interaction-events', all({ page_number: 0 }))).status, 422);
  });

  it('pages through interaction events without gaps or repeats while events are inserted', async () => {
    const before = (await get('interaction-events', all({ limit: 500 }))).body.data.map((e: any) => e.id);
    const seen: number[] = [];
    let cursor: string | undefined;
    let round = 0;
    do {
      const page = await get('interaction-events', all({ limit: 3, ...(cursor ? { cursor } : {}) }));
      assert.equal(page.status, 200, page.text);
      seen.push(...page.body.data.map((e: any) => e.id));
      cursor = page.body.meta.next_cursor ?? undefined;
      // New visits land both before (an earlier time) and after the cursor.
      if (round < 3) {
        const at = round % 2 ? new Date('2026-02-01T00:00:00Z') : new Date(Date.now() + 86_400_000);
        visits.push(await insertVisit(svc, book, { session: `paging-${round}`, viewerId: null, linkId: null, at, pages: [[6, 100]] }));
      }
      round++;
    } while (cursor);
    assert.equal(new Set(seen).size, seen.length, 'no repeats');
    for (const id of before) assert.ok(seen.includes(id), `row ${id} present before paging was skipped`);
  });

  it('audit-log: chronological, the gate and reader events, filters', async () => {
    const res = await get('audit-log', all());
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data.map((e: any) => e.event_type), ['access_requested', 'access_granted', 'link_clicked', 'access_rejected', 'link_clicked', 'link_clicked']);
    const granted = res.body.data[1];
    assert.equal(typeof granted.id, 'string');
    assert.equal(granted.viewer_email, 'alice@example.com');
    assert.equal(granted.source, 'gate');
    assert.equal(granted.active_seconds, null);
    assert.deepEqual(res.body.data[2].metadata, { url: 'https://shop.example/=cmd' });
    assert.equal((await get('audit-log', all({ event_type: 'access_rejected' }))).body.data[0].reason, 'not_on_list');
    assert.equal((await get('audit-log', all({ event_type: 'checkout_redirect_clicked' }))).body.data.length, 0);
    assert.equal((await get('audit-log', all({ viewer_id: alice }))).body.data.length, 5);
    assert.equal((await get('audit-log', all({ tracked_link_id: link }))).body.data.length, 1);
    assert.equal((await get('audit-log', all({ date: '2026-03-03' }))).body.data.length, 1);
    const pages = [await get('audit-log', all({ limit: 4 }))];
    pages.push(await get('audit-log', all({ limit: 4, cursor: pages[0]!.body.meta.next_cursor })));
    assert.deepEqual([...pages[0]!.body.data, ...pages[1]!.body.data].map((e: any) => e.id), res.body.data.map((e: any) => e.id));
    assert.equal(pages[1]!.body.meta.has_more, false);
  });

  it('readers: one summary per reader, anonymous visits on request, both sorts, paginated', async () => {
    const res = await get('readers', all({ date: '2026-03-01,2026-03-31' }));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data.map((r: any) => r.viewer_id), [alice, bob]);
    const a = res.body.data[0];
    assert.equal(a.visits, 2);
    assert.equal(a.pages_viewed, 4); // distinct pages: 1, 2, 3 then 1, 5
    assert.equal(a.clicks, 3);
    assert.equal(a.active_ms, 15000 + 4000);
    assert.equal(a.first_visit_at, '2026-03-01T23:30:00.000Z');
    assert.equal(a.last_visit_at, '2026-03-10T09:00:00.000Z');
    assert.equal(a.session_id, null);
    assert.equal(a.viewer_email, 'alice@example.com');
    const withAnonymous = await get('readers', all({ date: '2026-03-01,2026-03-31', include_anonymous: true }));
    assert.deepEqual(withAnonymous.body.data.map((r: any) => r.viewer_id ?? r.session_id), ['s5', alice, 's3', bob]);
    const byEngagement = await get('readers', all({ date: '2026-03-01,2026-03-31', include_anonymous: true, sort: 'engagement' }));
    const scores = byEngagement.body.data.map((r: any) => Number(r.engagement_score));
    assert.deepEqual(scores, [...scores].sort((x, y) => y - x));
    const walked: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await get('readers', all({ date: '2026-03-01,2026-03-31', include_anonymous: true, sort: 'engagement', limit: 1, ...(cursor ? { cursor } : {}) }));
      walked.push(...page.body.data.map((r: any) => r.viewer_id ?? r.session_id));
      cursor = page.body.meta.next_cursor ?? undefined;
    } while (cursor);
    assert.deepEqual(walked, byEngagement.body.data.map((r: any) => r.viewer_id ?? r.session_id));
    const recentCursor = (await get('readers', all({ limit: 1 }))).body.meta.next_cursor;
    assert.equal((await get('readers', all({ sort: 'engagement', cursor: recentCursor }))).status, 422);
    assert.deepEqual((await get('readers', all({ tracked_link_id: link }))).body.data.map((r: any) => r.viewer_id), [alice]);
    assert.deepEqual((await get('readers', all({ viewer_id: stranger }))).body.data, []);
  });

  it("reading-session-pages: one visit's pages in order; another book's visit matches nothing", async () => {
    const res = await get('reading-session-pages', all({ view_event_id: visits[0]!.viewEventId }));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data.map((p: any) => [p.position, p.page_number, p.active_ms]), [[1, 1, 4000], [2, 2, 6000], [3, 3, 2000], [4, 2, 3000]]);
    assert.equal(res.body.meta.total_active_ms, 15000);
    assert.equal(res.body.meta.found, true);
    assert.equal(res.body.meta.session_id, 's1');
    const foreign = await get('reading-session-pages', all({ view_event_id: 999999 }));
    assert.deepEqual(foreign.body.data, []);
    assert.equal(foreign.body.meta.found, false);
    assert.equal((await get('reading-session-pages', all())).status, 422);
  });

  it('reader-journey: one reader across books, every leaf a string; by session; 404 for another workspace\'s viewer', async () => {
    const second = await insertBook(svc, ws.id, { status: 'publish', pageCount: 4, name: 'Autumn' });
    await insertVisit(svc, second, { session: 'j1', viewerId: alice, linkId: null, at: new Date('2026-03-12T09:00:00Z'), pages: [[1, 2000], [2, 2000]] });
    const res = await get('reader-journey', { viewer_id: alice });
    assert.equal(res.status, 200, res.text);
    const j = res.body.data;
    assert.deepEqual(j.viewer, { id: String(alice), email: 'alice@example.com' });
    assert.deepEqual(j.aggregates.total_books, '2');
    assert.equal(j.aggregates.total_pages_viewed, '7');
    assert.equal(j.aggregates.total_duration_seconds, String(15 + 4 + 4));
    assert.deepEqual(j.books.map((b: any) => [b.book_id, b.visits]), [[book.randomId, '2'], [second.randomId, '1']]);
    const leaves = (o: unknown): unknown[] => (typeof o === 'object' && o !== null ? Object.values(o).flatMap(leaves) : [o]);
    assert.ok(leaves(j).every((v) => typeof v === 'string'));
    assert.equal((await get('reader-journey', { viewer_id: alice, date: '2026-03-01,2026-03-10' })).body.data.aggregates.total_books, '1');
    assert.equal((await get('reader-journey', { session_id: 's4' })).body.data.viewer.email, 'alice@example.com');
    const anon = await get('reader-journey', { session_id: 's3' });
    assert.deepEqual(anon.body.data.viewer, { id: '', email: '' });
    assert.equal(anon.body.data.books[0].visits, '1');
    assert.equal((await get('reader-journey', { viewer_id: stranger })).status, 404);
    assert.equal((await get('reader-journey', { session_id: 'x1' })).status, 404);
    assert.equal((await get('reader-journey', {})).status, 422);
  });

  it('stops a statement at the timeout and answers 503, not 500', { skip: !process.env.DATABASE_URL && 'PGlite has no statement timeout' }, async () => {
    const slow = await startService({ worker: false, env: { ANALYTICS_STATEMENT_TIMEOUT_MS: 1 } });
    try {
      const w = await slow.workspace();
      const b = await insertBook(slow, w.id, { status: 'publish', pageCount: 6 });
      await slow.runtime.database.db.execute(
        (await import('drizzle-orm')).sql`insert into interaction_events (workspace_id, book_id, session_id, sequence, event_type, page_number, active_ms, source_type, occurred_at)
          select ${w.id}, ${b.id}, 's' || (g / 50), g, 'page_segment_completed', 1 + g % 6, g % 5000, 'direct', now() - (g || ' seconds')::interval from generate_series(1, 20000) g`);
      const res = await slow.request('GET', '/v1/analytics/book-flow', { key: w.key, query: { book_id: b.randomId } });
      assert.equal(res.status, 503, res.text);
      assert.equal(res.body.error.type, 'ServiceUnavailableException');
      assert.match(res.body.error.message, /Narrow the date range/);
    } finally {
      await slow.stop();
    }
  });
});
