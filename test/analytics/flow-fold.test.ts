/**
 * The book-flow fold (flow-rollups.ts, its deltas computed in SQL) against
 * the rollup computed here from whole visits: segments of visits across UTC
 * midnight and a month end arrive in several rounds, out of sequence order,
 * and are folded in batches of a few events after each round, so visits
 * are folded new (all their segments above the old watermark: nothing to
 * subtract) and again (their folded segments subtracted, all of them added)
 * in every order. After each round the day rows, month rows and day links
 * must equal what the whole visits give.
 */
import assert from 'node:assert/strict';
import { sql } from 'drizzle-orm';
import { after, before, describe, it } from 'node:test';
import { FlowRollups } from '../../src/modules/analytics/flow-rollups.ts';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';

interface Segment { session: string; sequence: number; page: number; at: Date }

/** A small deterministic generator (mulberry32), so a failure replays. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const dayOf = (at: Date) => at.toISOString().slice(0, 10);
const monthOf = (at: Date) => `${at.toISOString().slice(0, 7)}-01`;

/** The rollup rows the whole visits give: per bucket a row per page and per move, and the day links. */
function expectedRollup(segments: Segment[]) {
  const visits = new Map<string, Segment[]>();
  for (const s of segments) visits.set(s.session, [...(visits.get(s.session) ?? []), s]);
  const grains = { days: new Map<string, number[]>(), months: new Map<string, number[]>() };
  const links = new Map<string, number>();
  const add = (rows: Map<string, number[]>, key: string, column: number) => {
    const row = rows.get(key) ?? rows.set(key, [0, 0, 0, 0]).get(key)!;
    row[column]!++;
  };
  for (const list of visits.values()) {
    list.sort((a, b) => a.sequence - b.sequence);
    for (const [rows, bucket] of [[grains.days, dayOf], [grains.months, monthOf]] as const) {
      list.forEach((s, i) => {
        const prev = list[i - 1];
        const next = list[i + 1];
        add(rows, `${bucket(s.at)}|${s.page}|${s.page}`, 0);
        if (!prev || bucket(prev.at) !== bucket(s.at)) add(rows, `${bucket(s.at)}|${s.page}|${s.page}`, 1);
        if (!next || bucket(next.at) !== bucket(s.at)) add(rows, `${bucket(s.at)}|${s.page}|${s.page}`, 2);
        if (prev && bucket(prev.at) === bucket(s.at) && prev.page !== s.page) add(rows, `${bucket(s.at)}|${prev.page}|${s.page}`, 3);
        if (rows === grains.days && prev && dayOf(prev.at) !== dayOf(s.at)) {
          const key = `${dayOf(s.at)}|${dayOf(prev.at)}|${prev.page}|${s.page}`;
          links.set(key, (links.get(key) ?? 0) + 1);
        }
      });
    }
  }
  return { days: grains.days, months: grains.months, links };
}

describe('book-flow fold', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let book: Awaited<ReturnType<typeof insertBook>>;
  let viewer: number;

  before(async () => {
    svc = await startService({ worker: false, env: { ANALYTICS_ROLLUP_SETTLE_SECONDS: 0 } });
    ws = await svc.workspace();
    book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 5, name: 'Fold catalogue' });
    const inserted = await svc.runtime.database.db.execute(sql`insert into viewers (workspace_id, email, name) values (${ws.id}, 'fold@example.com', 'Fold') returning id`);
    viewer = Number((inserted as unknown as { rows: { id: number }[] }).rows[0]!.id);
  });
  after(() => svc.stop());

  const stored = async (table: string) => {
    const result = await svc.runtime.database.db.execute(sql`
      select day::text as day, from_page, to_page, views, entries, exits, moves, readers from ${sql.identifier(table)} where book_id = ${book.id}`);
    const rows = new Map<string, number[]>();
    for (const r of (result as unknown as { rows: Record<string, unknown>[] }).rows) {
      const counts = [r.views, r.entries, r.exits, r.moves].map(Number);
      if (Number(r.moves) > 0) assert.ok(r.readers, `${table} ${String(r.day)} ${String(r.from_page)}>${String(r.to_page)} has a readers sketch`);
      if (counts.some((n) => n !== 0)) rows.set(`${String(r.day)}|${Number(r.from_page)}|${Number(r.to_page)}`, counts);
    }
    return rows;
  };

  it('equals the rollup of the whole visits after every round, segments arriving out of order across small batches', async () => {
    const next = random(11);
    const db = svc.runtime.database.db;
    // 40 visits from 31 March 21:00 UTC, 5-11 segments 23 minutes apart: many cross midnight, which is also the month's end.
    const segments: Segment[] = [];
    for (let k = 0; k < 40; k++) {
      const start = Date.parse('2026-03-31T21:00:00Z') + k * 7 * 60_000;
      const count = 5 + Math.floor(next() * 7);
      for (let q = 0; q < count; q++) segments.push({ session: `fold-${k}`, sequence: q, page: 1 + Math.floor(next() * 5), at: new Date(start + q * 23 * 60_000) });
    }
    // Four rounds of arrival, each a random part of the segments in random order.
    const rounds: Segment[][] = [[], [], [], []];
    for (const s of segments) rounds[Math.floor(next() * 4)]!.push(s);
    const fold = new FlowRollups({ db, batchRows: 7, settleMs: 0 });
    const arrived: Segment[] = [];
    for (const round of rounds) {
      round.sort(() => next() - 0.5);
      for (const s of round) {
        await db.execute(sql`
          insert into interaction_events (workspace_id, book_id, session_id, viewer_id, sequence, event_type, page_number, active_ms, source_type, occurred_at)
          values (${ws.id}, ${book.id}, ${s.session}, ${Number(s.session.slice(5)) % 3 === 0 ? viewer : null}, ${s.sequence}, 'page_segment_completed', ${s.page}, 1000, 'direct', ${s.at.toISOString()}::timestamptz)`);
        // Other event types between the segments: the fold skips them.
        if (next() < 0.2) {
          await db.execute(sql`
            insert into interaction_events (workspace_id, book_id, session_id, sequence, event_type, page_number, source_type, occurred_at)
            values (${ws.id}, ${book.id}, ${s.session}, ${1000 + s.sequence}, 'link_clicked', ${s.page}, 'direct', ${s.at.toISOString()}::timestamptz)`);
        }
      }
      arrived.push(...round);
      assert.ok((await fold.catchUp()) > 0);
      const want = expectedRollup(arrived);
      assert.deepEqual(await stored('flow_day_rollups'), want.days, 'day rows');
      assert.deepEqual(await stored('flow_month_rollups'), want.months, 'month rows');
      const links = await db.execute(sql`select day::text as day, prev_day::text as prev_day, from_page, to_page, n from flow_day_links where book_id = ${book.id} and n <> 0`);
      assert.deepEqual(new Map((links as unknown as { rows: Record<string, unknown>[] }).rows.map((r) => [`${String(r.day)}|${String(r.prev_day)}|${Number(r.from_page)}|${Number(r.to_page)}`, Number(r.n)])), want.links, 'day links');
    }
    const whole = expectedRollup(arrived);
    assert.ok(whole.months.size > 0 && [...whole.months.keys()].some((k) => k.startsWith('2026-04')) && whole.links.size > 0, 'visits crossed the month end');
  });
});
