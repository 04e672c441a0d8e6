/**
 * page-performance from the day rollups (ANALYTICS_EXACT_MAX_SEGMENTS=0 so
 * every range takes the rollup path), over HTTP, against an independent
 * computation over the raw rows in the test: counts and active time equal,
 * medians within the histogram's 1.1 %, unique readers within the
 * HyperLogLog bound; the latest events (above the watermark), a late event,
 * a time-zone range with partial UTC days, and a rollup run repeated.
 */
import assert from 'node:assert/strict';
import { sql } from 'drizzle-orm';
import { after, before, describe, it } from 'node:test';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';

interface Segment { page: number; ms: number; reader: string; at: Date }

describe('page-performance rollups', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let book: Awaited<ReturnType<typeof insertBook>>;
  let segments: Segment[] = [];
  const base = Date.parse('2026-03-01T00:00:00Z');

  const loadSegments = async () => {
    const result = await svc.runtime.database.db.execute(sql`
      select page_number, active_ms, viewer_id, session_id, occurred_at from interaction_events
      where book_id = ${book.id} and event_type = 'page_segment_completed'`);
    segments = ((result as unknown as { rows: Record<string, unknown>[] }).rows).map((r) => ({
      page: Number(r.page_number), ms: Number(r.active_ms),
      reader: r.viewer_id === null ? `s:${r.session_id as string}` : `v:${Number(r.viewer_id)}`, at: new Date(r.occurred_at as string),
    }));
  };

  /** The spec's page summary computed here from the raw rows: exact median (percentile_cont) and distinct readers. */
  const expected = (from: Date, to: Date) => {
    const pages = new Map<number, { ms: number[]; readers: Set<string> }>();
    for (const s of segments) {
      if (s.at < from || s.at >= to) continue;
      const p = pages.get(s.page) ?? { ms: [], readers: new Set() };
      p.ms.push(s.ms);
      p.readers.add(s.reader);
      pages.set(s.page, p);
    }
    return new Map([...pages].map(([page, p]) => {
      const sorted = [...p.ms].sort((a, b) => a - b);
      const n = sorted.length;
      const median = (sorted[Math.floor((n - 1) / 2)]! + sorted[Math.ceil((n - 1) / 2)]!) / 2;
      return [page, { segments: n, total: sorted.reduce((a, b) => a + b, 0), median, readers: p.readers.size }];
    }));
  };

  const check = async (query: Record<string, string>, from: Date, to: Date) => {
    const response = await svc.request('GET', '/v1/analytics/page-performance', { key: ws.key, query: { book_id: book.randomId, ...query } });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const want = expected(from, to);
    assert.ok(want.size > 0);
    for (const row of response.body.data as Record<string, number>[]) {
      const w = want.get(row.page_number!) ?? { segments: 0, total: 0, median: 0, readers: 0 };
      assert.equal(row.total_segments, w.segments, `page ${row.page_number} segments`);
      assert.equal(row.total_active_ms, w.total, `page ${row.page_number} active time`);
      assert.ok(Math.abs(row.median_active_ms_per_segment! - w.median) <= w.median * 0.011 + 1, `page ${row.page_number} median ${row.median_active_ms_per_segment} vs ${w.median}`);
      // HyperLogLog in its linear-counting range (a few hundred readers, 2,048 registers): within 3 % here.
      assert.ok(Math.abs(row.unique_readers! - w.readers) <= Math.max(2, w.readers * 0.03), `page ${row.page_number} readers ${row.unique_readers} vs ${w.readers}`);
    }
  };

  const insertSegments = async (first: number, count: number, at: (g: string) => ReturnType<typeof sql>) => {
    await svc.runtime.database.db.execute(sql`
      insert into interaction_events (workspace_id, book_id, session_id, viewer_id, sequence, event_type, page_number, active_ms, source_type, occurred_at)
      select ${ws.id}, ${book.id}, 'sess-' || (g % 97), null, g, 'page_segment_completed', 1 + g % 4, 300 + (g * 7919) % 40000, 'direct', ${at('g')}
      from generate_series(${first}::int, ${first + count - 1}::int) g`);
  };

  before(async () => {
    svc = await startService({ worker: false, env: { ANALYTICS_EXACT_MAX_SEGMENTS: 0, ANALYTICS_ROLLUP_SETTLE_SECONDS: 0 } });
    ws = await svc.workspace();
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 5, name: 'Rollup catalogue' });
    // 4,000 segments over four days, every 86.4 s, from 97 anonymous sessions; page 5 never read.
    await insertSegments(1, 4000, (g) => sql`${new Date(base).toISOString()}::timestamptz + (${sql.raw(g)} * interval '86.4 seconds')`);
    await svc.runtime.services.analytics.rollups.catchUp();
    await loadSegments();
  });
  after(() => svc.stop());

  it('answers whole UTC days from the rollup: sums exact, medians and readers within their bounds, unread pages zero', async () => {
    await check({ date: '2026-03-01,2026-03-03' }, new Date('2026-03-01T00:00:00Z'), new Date('2026-03-04T00:00:00Z'));
    const response = await svc.request('GET', '/v1/analytics/page-performance', { key: ws.key, query: { book_id: book.randomId, date: '2026-03-01,2026-03-04' } });
    const unread = response.body.data.find((p: { page_number: number }) => p.page_number === 5);
    assert.deepEqual([unread.total_segments, unread.unique_readers, unread.median_active_ms_per_segment], [0, 0, 0]);
  });

  it('adds the partial UTC days of a range in another time zone from the raw events', async () => {
    // Tokyo days start at 15:00 UTC the day before.
    await check({ date: '2026-03-02,2026-03-03', tz: 'Asia/Tokyo' }, new Date('2026-03-01T15:00:00Z'), new Date('2026-03-03T15:00:00Z'));
  });

  it('counts events above the watermark and late events, and a repeated rollup run changes nothing', async () => {
    // Late: occurred on 2 March, arrives now; new: 4 March. Not rolled up yet: read raw.
    await insertSegments(10_001, 300, (g) => sql`timestamptz '2026-03-02T06:00:00Z' + (${sql.raw(g)} - 10000) * interval '1 second'`);
    await insertSegments(20_001, 200, (g) => sql`timestamptz '2026-03-04T06:00:00Z' + (${sql.raw(g)} - 20000) * interval '1 second'`);
    await loadSegments();
    await check({ date: '2026-03-01,2026-03-04' }, new Date('2026-03-01T00:00:00Z'), new Date('2026-03-05T00:00:00Z'));
    assert.ok((await svc.runtime.services.analytics.rollups.catchUp()) > 0);
    assert.equal(await svc.runtime.services.analytics.rollups.catchUp(), 0);
    await check({ date: '2026-03-01,2026-03-04' }, new Date('2026-03-01T00:00:00Z'), new Date('2026-03-05T00:00:00Z'));
    await check({ date: '2026-03-02' }, new Date('2026-03-02T00:00:00Z'), new Date('2026-03-03T00:00:00Z'));
  });
});
