/**
 * `readers` sort=recent walks the visits newest first instead of summarising
 * every reader of the range: paged with small limits (readers with visits on
 * both sides of a cursor, equal visit times, anonymous visits), every page
 * must be what the summaries computed here from the raw visits give, with no
 * reader missing or twice.
 */
import assert from 'node:assert/strict';
import { sql } from 'drizzle-orm';
import { after, before, describe, it } from 'node:test';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';

describe('readers sorted by recent visit', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let book: Awaited<ReturnType<typeof insertBook>>;
  const viewers: number[] = [];

  before(async () => {
    svc = await startService({ worker: false, env: { RATE_LIMIT_WORKSPACE_PER_MINUTE: 0, RATE_LIMIT_ENDPOINT_PER_MINUTE: 0 } });
    ws = await svc.workspace();
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 6, name: 'Readers catalogue' });
    const db = svc.runtime.database.db;
    const made = await db.execute(sql`insert into viewers (workspace_id, email, name) select ${ws.id}, 'r' || g || '@example.com', 'R' || g from generate_series(1, 12) g returning id`);
    viewers.push(...(made as unknown as { rows: { id: number }[] }).rows.map((r) => Number(r.id)));
    // 90 visits over March: 12 readers coming back at scattered times (some at the very same instant), every fourth visit anonymous.
    const values = Array.from({ length: 90 }, (_, g) => {
      const viewer = g % 4 === 3 ? null : viewers[(g * 5) % 12]!;
      const at = new Date(Date.parse('2026-03-01T00:00:00Z') + ((g * 7919) % 89) * 8 * 3_600_000 - (g % 10 === 0 ? 0 : g * 1000));
      return sql`(${ws.id}, ${book.id}, ${`rs-${g}`}, ${viewer}, ${g % 3}, ${1000 * g}, ${g}, ${(g % 17) * 3.5}, ${`{${1 + (g % 6)},${1 + ((g + 2) % 6)}}`}::int[], ${at.toISOString()}::timestamptz)`;
    });
    await db.execute(sql`
      insert into view_events (workspace_id, book_id, session_id, viewer_id, clicks, active_ms, duration_seconds, engagement_score, pages_seen, recorded_at)
      values ${sql.join(values, sql`, `)}`);
  });
  after(() => svc.stop());

  const expected = async (from: string, to: string) => {
    const result = await svc.runtime.database.db.execute(sql`
      select id, viewer_id, session_id, clicks, active_ms, duration_seconds, pages_seen, recorded_at from view_events
      where book_id = ${book.id} and recorded_at >= ${from}::timestamptz and recorded_at < ${to}::timestamptz`);
    const readers = new Map<number, { k: number; visits: number; clicks: number; active: number; pages: Set<number>; first: number; last: number }>();
    for (const v of (result as unknown as { rows: Record<string, unknown>[] }).rows) {
      const k = v.viewer_id === null ? -Number(v.id) : Number(v.viewer_id);
      const at = new Date(v.recorded_at as string).getTime();
      const r = readers.get(k) ?? { k, visits: 0, clicks: 0, active: 0, pages: new Set<number>(), first: at, last: at };
      r.visits++;
      r.clicks += Number(v.clicks);
      r.active += Number(v.active_ms);
      for (const p of v.pages_seen as number[]) r.pages.add(p);
      r.first = Math.min(r.first, at);
      r.last = Math.max(r.last, at);
      readers.set(k, r);
    }
    return [...readers.values()].sort((a, b) => b.last - a.last || b.k - a.k);
  };

  for (const anonymous of [false, true]) {
    it(`pages through every reader in order${anonymous ? ', anonymous visits included' : ''}`, async () => {
      for (const [date, from, to] of [['2026-03-01,2026-03-31', '2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z'], ['2026-03-05,2026-03-20', '2026-03-05T00:00:00Z', '2026-03-21T00:00:00Z']] as const) {
        const want = (await expected(from, to)).filter((r) => anonymous || r.k > 0);
        assert.ok(want.length > 5);
        for (const limit of [1, 2, 5]) {
          const got: Record<string, unknown>[] = [];
          let cursor: string | null = null;
          do {
            const res: { status: number; body: { data: Record<string, unknown>[]; meta: { next_cursor: string | null } } } = await svc.request('GET', '/v1/analytics/readers', { key: ws.key, query: { book_id: book.randomId, date, limit, ...(anonymous ? { include_anonymous: true } : {}), ...(cursor ? { cursor } : {}) } });
            assert.equal(res.status, 200, JSON.stringify(res.body));
            got.push(...res.body.data);
            cursor = res.body.meta.next_cursor;
          } while (cursor);
          assert.deepEqual(got.map((r) => [r.viewer_id, r.visits, r.clicks, r.active_ms, r.pages_viewed, r.first_visit_at, r.last_visit_at]),
            want.map((r) => [r.k > 0 ? r.k : null, r.visits, r.clicks, r.active, r.pages.size, new Date(r.first).toISOString(), new Date(r.last).toISOString()]), `${date} limit ${limit}`);
        }
      }
    });
  }
});
