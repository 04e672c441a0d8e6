/**
 * book-flow from the day rollups (ANALYTICS_EXACT_MAX_SEGMENTS=0 so every
 * range with a whole UTC day takes the rollup path), over HTTP, against the
 * flow computed in the test from the raw rows: views, entries, exits and
 * transition counts equal, transition readers within the HyperLogLog bound.
 * Visits cross UTC midnight, a range cuts visits, a Tokyo range has partial
 * UTC days, a visit goes on above the watermark, and a segment arrives out
 * of sequence order both before and after the next fold.
 */
import assert from 'node:assert/strict';
import { sql } from 'drizzle-orm';
import { after, before, describe, it } from 'node:test';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';

interface Segment { session: string; sequence: number; page: number; reader: string; at: Date }

describe('book-flow rollups', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let book: Awaited<ReturnType<typeof insertBook>>;
  let viewer: number;
  const base = Date.parse('2026-03-01T00:00:00Z');

  const loadSegments = async (): Promise<Segment[]> => {
    const result = await svc.runtime.database.db.execute(sql`
      select session_id, sequence, page_number, viewer_id, occurred_at from interaction_events
      where book_id = ${book.id} and event_type = 'page_segment_completed'`);
    return ((result as unknown as { rows: Record<string, unknown>[] }).rows).map((r) => ({
      session: r.session_id as string, sequence: Number(r.sequence), page: Number(r.page_number),
      reader: r.viewer_id === null ? `s:${r.session_id as string}` : `v:${Number(r.viewer_id)}`, at: new Date(r.occurred_at as string),
    }));
  };

  /** The flow computed here: each visit's segments in the range, in sequence order. */
  const expected = (segments: Segment[], from: Date, to: Date) => {
    const visits = new Map<string, Segment[]>();
    for (const s of segments) if (s.at >= from && s.at < to) visits.set(s.session, [...(visits.get(s.session) ?? []), s]);
    const pages = new Map<number, { views: number; entries: number; exits: number }>();
    const moves = new Map<string, { count: number; readers: Set<string> }>();
    const page = (n: number) => pages.get(n) ?? pages.set(n, { views: 0, entries: 0, exits: 0 }).get(n)!;
    for (const list of visits.values()) {
      list.sort((a, b) => a.sequence - b.sequence);
      page(list[0]!.page).entries++;
      page(list[list.length - 1]!.page).exits++;
      list.forEach((s, i) => {
        page(s.page).views++;
        const prev = list[i - 1];
        if (prev && prev.page !== s.page) {
          const key = `${prev.page}>${s.page}`;
          const m = moves.get(key) ?? moves.set(key, { count: 0, readers: new Set() }).get(key)!;
          m.count++;
          m.readers.add(s.reader);
        }
      });
    }
    return { pages, moves, visits: visits.size };
  };

  const check = async (query: Record<string, string>, from: Date, to: Date) => {
    const response = await svc.request('GET', '/v1/analytics/book-flow', { key: ws.key, query: { book_id: book.randomId, ...query } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const want = expected(await loadSegments(), from, to);
    assert.ok(want.visits > 0 && want.moves.size > 0);
    assert.equal(response.body.meta.visits, want.visits, 'visits');
    for (const row of response.body.data.pages as { page_number: number; views: number; entries: number; exits: number }[]) {
      const w = want.pages.get(row.page_number) ?? { views: 0, entries: 0, exits: 0 };
      assert.deepEqual({ views: row.views, entries: row.entries, exits: row.exits }, w, `page ${row.page_number}`);
    }
    const got = new Map((response.body.data.transitions as { from_page: number; to_page: number; count: number; readers: number }[]).map((t) => [`${t.from_page}>${t.to_page}`, t]));
    assert.deepEqual([...got.keys()].sort(), [...want.moves.keys()].sort(), 'the same transitions');
    for (const [key, w] of want.moves) {
      const t = got.get(key)!;
      assert.equal(t.count, w.count, `${key} count`);
      // A few dozen readers per move: HyperLogLog in its linear-counting range is within a reader or two.
      assert.ok(t.readers <= t.count && Math.abs(t.readers - w.readers.size) <= Math.max(2, w.readers.size * 0.03), `${key} readers ${t.readers} vs ${w.readers.size}`);
    }
  };

  /** Segments of visit k at the given sequences, every `gapMinutes` from the visit's start (visits start every `everyMinutes`). */
  const insertVisit = async (k: number, sequences: number[], everyMinutes = 53, gapMinutes = 50) => {
    const values = sequences.map((q) => sql`(${ws.id}, ${book.id}, ${`flow-${k}`}, ${k % 4 === 0 ? viewer : null}, ${q}, 'page_segment_completed',
      ${1 + ((((k * 7 + q * q + (q % 3 === 0 ? 0 : 1)) % 6) + 6) % 6)}, ${1000 + q}, 'direct', ${new Date(base + k * everyMinutes * 60_000 + q * gapMinutes * 60_000).toISOString()}::timestamptz)`);
    await svc.runtime.database.db.execute(sql`
      insert into interaction_events (workspace_id, book_id, session_id, viewer_id, sequence, event_type, page_number, active_ms, source_type, occurred_at)
      values ${sql.join(values, sql`, `)}`);
  };
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);

  before(async () => {
    svc = await startService({ worker: false, env: { ANALYTICS_EXACT_MAX_SEGMENTS: 0, ANALYTICS_ROLLUP_SETTLE_SECONDS: 0 } });
    ws = await svc.workspace();
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 7, name: 'Flow catalogue' });
    const inserted = await svc.runtime.database.db.execute(sql`insert into viewers (workspace_id, email, name) values (${ws.id}, 'flow@example.com', 'Flow') returning id`);
    viewer = Number((inserted as unknown as { rows: { id: number }[] }).rows[0]!.id);
    // 60 visits of 12 segments over about three days, many across UTC midnight; visit 3 lacks sequence 5 for now.
    for (const k of range(60)) await insertVisit(k, range(12).filter((q) => k !== 3 || q !== 5));
    await svc.runtime.services.analytics.flowRollups.catchUp();
  });
  after(() => svc.stop());

  it('answers whole UTC days and ranges that cut visits exactly as the raw segments do', async () => {
    await check({ date: '2026-03-01,2026-03-03' }, new Date('2026-03-01T00:00:00Z'), new Date('2026-03-04T00:00:00Z'));
    await check({ date: '2026-03-02' }, new Date('2026-03-02T00:00:00Z'), new Date('2026-03-03T00:00:00Z'));
    // The answer comes from the rollup rows: a change to them shows.
    const db = svc.runtime.database.db;
    await db.execute(sql`update flow_day_rollups set views = views + 1000 where book_id = ${book.id} and day = '2026-03-02' and from_page = 1 and to_page = 1`);
    const tampered = await svc.request('GET', '/v1/analytics/book-flow', { key: ws.key, query: { book_id: book.randomId, date: '2026-03-02' } });
    await db.execute(sql`update flow_day_rollups set views = views - 1000 where book_id = ${book.id} and day = '2026-03-02' and from_page = 1 and to_page = 1`);
    const want = expected(await loadSegments(), new Date('2026-03-02T00:00:00Z'), new Date('2026-03-03T00:00:00Z'));
    assert.equal(tampered.body.data.pages[0].views, want.pages.get(1)!.views + 1000);
  });

  it('adds the partial UTC days of a range in another time zone', async () => {
    await check({ date: '2026-03-02,2026-03-03', tz: 'Asia/Tokyo' }, new Date('2026-03-01T15:00:00Z'), new Date('2026-03-03T15:00:00Z'));
  });

  it('counts visits that go on above the watermark and a segment out of sequence order, before and after the fold', async () => {
    await insertVisit(3, [5]); // out of order: between 4 and 6, arrives after them
    await insertVisit(10, [12, 13]); // the visit goes on
    await insertVisit(61, range(5)); // a new visit
    await check({ date: '2026-03-01,2026-03-04' }, new Date('2026-03-01T00:00:00Z'), new Date('2026-03-05T00:00:00Z'));
    await check({ date: '2026-03-02,2026-03-03', tz: 'Asia/Tokyo' }, new Date('2026-03-01T15:00:00Z'), new Date('2026-03-03T15:00:00Z'));
    assert.ok((await svc.runtime.services.analytics.flowRollups.catchUp()) > 0);
    assert.equal(await svc.runtime.services.analytics.flowRollups.catchUp(), 0);
    await check({ date: '2026-03-01,2026-03-04' }, new Date('2026-03-01T00:00:00Z'), new Date('2026-03-05T00:00:00Z'));
    await check({ date: '2026-03-02' }, new Date('2026-03-02T00:00:00Z'), new Date('2026-03-03T00:00:00Z'));
    await check({ date: '2026-03-02,2026-03-03', tz: 'Asia/Tokyo' }, new Date('2026-03-01T15:00:00Z'), new Date('2026-03-03T15:00:00Z'));
  });

  it('joins month rows and day rows: whole months from the month rows, visits across month ends stitched', async () => {
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 7, name: 'Flow months catalogue' });
    // From 24 February (base - 5 days) to 5 April: a visit every 11 hours, 8 segments 2 hours apart (some across midnight and month ends).
    const start = -5 * 24 * 60 / 660;
    for (const k of range(90)) await insertVisit(Math.round(start) + k, range(8).filter((q) => k !== 40 || q !== 3), 660, 120);
    await svc.runtime.services.analytics.flowRollups.catchUp();
    await check({ date: '2026-03-02,2026-03-20' }, new Date('2026-03-02T00:00:00Z'), new Date('2026-03-21T00:00:00Z'));
    await check({ date: '2026-02-26,2026-02-28' }, new Date('2026-02-26T00:00:00Z'), new Date('2026-03-01T00:00:00Z'));
    await check({ date: '2026-02-26,2026-04-02' }, new Date('2026-02-26T00:00:00Z'), new Date('2026-04-03T00:00:00Z'));
    await check({ date: '2026-03-01,2026-03-31' }, new Date('2026-03-01T00:00:00Z'), new Date('2026-04-01T00:00:00Z'));
    await check({ date: '2026-02-27,2026-04-01', tz: 'America/New_York' }, new Date('2026-02-27T05:00:00Z'), new Date('2026-04-02T04:00:00Z'));
    await check({ date: 'all' }, new Date('2000-01-01T00:00:00Z'), new Date('2100-01-01T00:00:00Z'));
    // March comes from its month rows: a change to them shows.
    const db = svc.runtime.database.db;
    const before = await svc.request('GET', '/v1/analytics/book-flow', { key: ws.key, query: { book_id: book.randomId, date: '2026-02-26,2026-04-02' } });
    await db.execute(sql`update flow_month_rollups set views = views + 1000 where book_id = ${book.id} and day = '2026-03-01' and from_page = 2 and to_page = 2`);
    const tampered = await svc.request('GET', '/v1/analytics/book-flow', { key: ws.key, query: { book_id: book.randomId, date: '2026-02-26,2026-04-02' } });
    await db.execute(sql`update flow_month_rollups set views = views - 1000 where book_id = ${book.id} and day = '2026-03-01' and from_page = 2 and to_page = 2`);
    assert.equal(tampered.body.data.pages[1].views, before.body.data.pages[1].views + 1000);
    // Out of order inside March, and above the watermark; then folded.
    await insertVisit(Math.round(start) + 40, [3], 660, 120);
    await check({ date: '2026-02-26,2026-04-02' }, new Date('2026-02-26T00:00:00Z'), new Date('2026-04-03T00:00:00Z'));
    await svc.runtime.services.analytics.flowRollups.catchUp();
    await check({ date: '2026-02-26,2026-04-02' }, new Date('2026-02-26T00:00:00Z'), new Date('2026-04-03T00:00:00Z'));
    await check({ date: '2026-03-01,2026-03-31' }, new Date('2026-03-01T00:00:00Z'), new Date('2026-04-01T00:00:00Z'));
  });

  it('reads a range that ends after now (the presets) as open, the month so far from its month rows', async (t) => {
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 7, name: 'Flow this month' });
    // The last 40 days: visits at 00:00 and 12:00 UTC, 8 segments 10 minutes apart (none across midnight, whose
    // readers the day rows do not keep), the last one at least 20 minutes before now.
    const now = Date.now();
    const last = Math.floor((now - 90 * 60_000 - base) / (720 * 60_000));
    for (const k of range(80)) await insertVisit(last - k, range(8), 720, 10);
    await svc.runtime.services.analytics.flowRollups.catchUp();
    await insertVisit(last, [8], 720, 10); // the last visit goes on above the watermark, 10 minutes ago or earlier
    const today = Math.floor(now / 86_400_000) * 86_400_000;
    await check({ date: '30d' }, new Date(today - 29 * 86_400_000), new Date(today + 86_400_000));
    const month = `${new Date(today).toISOString().slice(0, 7)}-01`;
    if (now - Date.parse(month) < 14 * 3_600_000) return t.diagnostic(`${month} began less than 14 hours ago: no visit of this month to change yet`);
    // The current month's rows answer for it: a change to them shows.
    const db = svc.runtime.database.db;
    const rows = await db.execute(sql`select from_page from flow_month_rollups where book_id = ${book.id} and day = ${month}::date and from_page = to_page order by from_page limit 1`);
    const page = Number((rows as unknown as { rows: { from_page: number }[] }).rows[0]!.from_page);
    const views = async () => (await svc.request('GET', '/v1/analytics/book-flow', { key: ws.key, query: { book_id: book.randomId, date: '30d' } })).body.data.pages[page - 1].views as number;
    const honest = await views();
    await db.execute(sql`update flow_month_rollups set views = views + 1000 where book_id = ${book.id} and day = ${month}::date and from_page = ${page} and to_page = ${page}`);
    const tampered = await views();
    await db.execute(sql`update flow_month_rollups set views = views - 1000 where book_id = ${book.id} and day = ${month}::date and from_page = ${page} and to_page = ${page}`);
    assert.equal(tampered, honest + 1000);
  });
});
