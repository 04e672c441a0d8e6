/**
 * page-performance over ranges holding whole UTC months: the month rows
 * (page_month_rollups) answer those months, the day rows the days around
 * them, raw rows the partial days and what is above each watermark. Checked
 * against sums computed here from the raw rows (the medians and readers are
 * approximate on this path and checked in page-rollups.test.ts).
 */
import assert from 'node:assert/strict';
import { sql } from 'drizzle-orm';
import { after, before, describe, it } from 'node:test';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';

describe('page-performance month rollups', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let book: Awaited<ReturnType<typeof insertBook>>;

  const insertSegments = async (first: number, count: number, start: string, everySeconds: number) => {
    await svc.runtime.database.db.execute(sql`
      insert into interaction_events (workspace_id, book_id, session_id, viewer_id, sequence, event_type, page_number, active_ms, source_type, occurred_at)
      select ${ws.id}, ${book.id}, 'm-' || (g % 53), null, g, 'page_segment_completed', 1 + g % 3, 200 + (g * 7919) % 30000, 'direct',
             ${start}::timestamptz + (g - ${first}) * ${`${everySeconds} seconds`}::interval
      from generate_series(${first}::int, ${first + count - 1}::int) g`);
  };

  const check = async (query: Record<string, string>, from: string, to: string) => {
    const response = await svc.request('GET', '/v1/analytics/page-performance', { key: ws.key, query: { book_id: book.randomId, ...query } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const result = await svc.runtime.database.db.execute(sql`
      select page_number, count(*)::int as n, sum(active_ms)::int as total from interaction_events
      where book_id = ${book.id} and occurred_at >= ${from}::timestamptz and occurred_at < ${to}::timestamptz group by 1`);
    const want = new Map((result as unknown as { rows: { page_number: number; n: number; total: number }[] }).rows.map((r) => [Number(r.page_number), r]));
    assert.ok(want.size > 0);
    for (const row of response.body.data as { page_number: number; total_segments: number; total_active_ms: number }[]) {
      const w = want.get(row.page_number);
      assert.deepEqual([row.total_segments, row.total_active_ms], [w?.n ?? 0, w?.total ?? 0], `page ${row.page_number} ${JSON.stringify(query)}`);
    }
  };

  before(async () => {
    svc = await startService({ worker: false, env: { ANALYTICS_EXACT_MAX_SEGMENTS: 0, ANALYTICS_ROLLUP_SETTLE_SECONDS: 0 } });
    ws = await svc.workspace();
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 3, name: 'Months catalogue' });
    // 20 February to 11 April, a segment every 40 minutes.
    await insertSegments(1, 1800, '2026-02-20T00:00:00Z', 2400);
    await svc.runtime.services.analytics.rollups.catchUp();
  });
  after(() => svc.stop());

  it('adds whole months from the month rows and the days around them from the day rows', async () => {
    await check({ date: '2026-02-25,2026-04-05' }, '2026-02-25T00:00:00Z', '2026-04-06T00:00:00Z');
    await check({ date: '2026-03-01,2026-03-31' }, '2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z');
    await check({ date: '2026-02-20,2026-03-31', tz: 'America/New_York' }, '2026-02-20T05:00:00Z', '2026-04-01T04:00:00Z');
    await check({ date: 'all' }, '2000-01-01T00:00:00Z', '2100-01-01T00:00:00Z');
    // The answer for March comes from its month rows: a change to them shows.
    const db = svc.runtime.database.db;
    await db.execute(sql`update page_month_rollups set total_ms = total_ms + 1000 where book_id = ${book.id} and day = '2026-03-01' and page_number = 1`);
    const tampered = await svc.request('GET', '/v1/analytics/page-performance', { key: ws.key, query: { book_id: book.randomId, date: '2026-02-25,2026-04-05'} });
    await db.execute(sql`update page_month_rollups set total_ms = total_ms - 1000 where book_id = ${book.id} and day = '2026-03-01' and page_number = 1`);
    const honest = await svc.request('GET', '/v1/analytics/page-performance', { key: ws.key, query: { book_id: book.randomId, date: '2026-02-25,2026-04-05'} });
    assert.equal(tampered.status, 200, JSON.stringify(tampered.body));
    assert.equal(tampered.body.data[0].total_active_ms, honest.body.data[0].total_active_ms + 1000, 'page 1 (first row)');
  });

  it('counts what is above the watermarks in every span', async () => {
    await insertSegments(5001, 50, '2026-03-10T10:00:00Z', 60); // late, inside the month span
    await insertSegments(6001, 50, '2026-02-27T10:00:00Z', 60); // late, inside the day span
    await check({ date: '2026-02-25,2026-04-05' }, '2026-02-25T00:00:00Z', '2026-04-06T00:00:00Z');
    await svc.runtime.services.analytics.rollups.catchUp();
    await check({ date: '2026-02-25,2026-04-05' }, '2026-02-25T00:00:00Z', '2026-04-06T00:00:00Z');
  });

  it('reads a range that ends after now (the presets) as open, the month so far from its month row', async (t) => {
    const now = Date.now();
    const hour = 3_600_000;
    // Every 3 hours over the last 45 days, the last one an hour ago: nothing lies after now, as the ingest guarantees.
    await insertSegments(10_001, 360, new Date(now - hour - 359 * 3 * hour).toISOString(), 3 * 3600);
    await svc.runtime.services.analytics.rollups.catchUp();
    const today = new Date(Math.floor(now / 86_400_000) * 86_400_000);
    // Above the watermarks, and today (UTC) even just after midnight, so that `today` has segments to compare: the last
    // half hour, or the part of today gone by, spread over 5 segments that all lie before now.
    const sinceMidnight = now - today.getTime();
    if (sinceMidnight < 10_000) return t.diagnostic('the UTC day began less than 10 s ago: nothing of today to read yet');
    const recent = Math.min(30 * 60_000, sinceMidnight - 5_000);
    await insertSegments(20_001, 5, new Date(now - recent).toISOString(), Math.max(1, Math.floor(recent / 6_000)));
    const from = new Date(today.getTime() - 29 * 86_400_000).toISOString();
    const to = new Date(today.getTime() + 86_400_000).toISOString();
    await check({ date: '30d' }, from, to);
    await check({ date: 'today' }, today.toISOString(), to);
    // A range that ended before now is not opened: yesterday's answer does not include today's segments.
    const yesterday = new Date(today.getTime() - 86_400_000).toISOString().slice(0, 10);
    await check({ date: yesterday }, new Date(today.getTime() - 86_400_000).toISOString(), today.toISOString());
    const month = `${today.toISOString().slice(0, 7)}-01`;
    if (now - Date.parse(month) < 6 * hour) return t.diagnostic(`${month} began less than 6 hours ago: no segment of this month to change yet`);
    // The current month's row answers for it: a change to it shows (before, its days came from the day rows).
    const db = svc.runtime.database.db;
    const page1 = async () => (await svc.request('GET', '/v1/analytics/page-performance', { key: ws.key, query: { book_id: book.randomId, date: '30d' } })).body.data[0].total_active_ms as number;
    const honest = await page1();
    await db.execute(sql`update page_month_rollups set total_ms = total_ms + 1000 where book_id = ${book.id} and day = ${month}::date and page_number = 1`);
    const tampered = await page1();
    await db.execute(sql`update page_month_rollups set total_ms = total_ms - 1000 where book_id = ${book.id} and day = ${month}::date and page_number = 1`);
    assert.equal(tampered, honest + 1000);
  });
});
