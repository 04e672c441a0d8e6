/**
 * book-flow at scale: page views, entries, exits and page-to-page moves per
 * book and UTC day (flow_day_rollups) and month, kept by the `analytics.rollup` job
 * beside the page rollups, so a month of a busy book is a few thousand rows
 * instead of a window over millions of segments.
 *
 * A visit's flow is not additive: its moves follow the reader's sequence,
 * and a segment that arrives late (a lower sequence, a later batch) changes
 * them. So the fold works per visit, not per event: for every visit a batch
 * touches it reads the visit's segments (the (book, session, sequence)
 * index), subtracts the contribution of those it had already folded (ids at
 * or below the old watermark) and adds the contribution of all of them. The
 * contribution is a pure function of the segment set, so nothing per visit
 * is stored. The fold does this in the database, one statement per batch
 * (foldDeltas); Node only merges the move sketches.
 *
 * Days: a visit's segments in sequence order are cut into runs of one UTC
 * day; each run counts in its day (its first page an entry, its last an
 * exit). Where one run follows another, a link row (flow_day_links: day,
 * previous run's day, last page → first page) lets a range holding both
 * days stitch them back (one exit and one entry fewer, one move more), so
 * whole-day ranges answer exactly what the window over the raw rows does.
 * The same fold keeps month rows (flow_month_rollups, runs cut by UTC
 * month): a range's whole months come from them, the days around from the
 * day rows, and the day links join the pieces (all links of the range but
 * those inside a month the month rows hold whole).
 *
 * The query adds what the rollup lacks the same way, per visit: the visits
 * with segments above the watermark or in the partial UTC days at the
 * range's edges lose their rolled contribution and get their exact one from
 * the raw rows.
 *
 * What is approximate: transition `readers` (distinct readers cannot be
 * merged across days) is a HyperLogLog estimate, at most the count; a reader
 * whose only pass over a move was later undone by an out-of-order segment
 * stays in that move's sketch. Views, entries, exits and move counts are
 * exact (when a visit's days follow its sequence order, which they do unless
 * a reader's clock jumps back across midnight).
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/database.ts';
import { rowsOf, num } from './analytics-sql.ts';
import { hllAdd, hllCount, hllMerge, readerKeySql } from './page-rollups.ts';
import { claimBatch, finishBatch, foldPace, openEndIfFuture, type FoldPace } from './rollup-batches.ts';

const STATE = 'page_flow';
const DAY_MS = 86_400_000;
const M = 2048;

export interface FlowSegment { id: number; sequence: number; page: number; at: Date; reader: string }

interface Cell { day: string; from: number; to: number; views: number; entries: number; exits: number; moves: number; readers: Uint8Array | null }
interface Link { day: string; prevDay: string; from: number; to: number; n: number }

/** The deltas of a fold or a query, keyed by day and page pair (from = to: the page's own row). */
class FlowDelta {
  readonly cells = new Map<string, Cell>();
  readonly links = new Map<string, Link>();

  cell(day: string, from: number, to: number): Cell {
    const key = `${day}|${from}|${to}`;
    let c = this.cells.get(key);
    if (!c) this.cells.set(key, (c = { day, from, to, views: 0, entries: 0, exits: 0, moves: 0, readers: null }));
    return c;
  }

  link(day: string, prevDay: string, from: number, to: number, n: number): void {
    const key = `${day}|${prevDay}|${from}|${to}`;
    const l = this.links.get(key);
    if (l) l.n += n;
    else this.links.set(key, { day, prevDay, from, to, n });
  }

  reader(c: Cell, reader: string): void {
    c.readers ??= new Uint8Array(M);
    hllAdd(c.readers, reader);
  }

  /**
   * A visit's contribution (segments in sequence order) times `sign`, cut
   * into runs of one `bucket` (a UTC day or month; null: one run, the exact
   * answer of a query), each counted under its bucket. With `links`, a link
   * per run boundary (its actual days). `keep` drops what falls on other days.
   */
  add(segments: FlowSegment[], sign: 1 | -1, bucket: ((at: Date) => string) | null, options: { keep?: (day: string) => boolean; links?: boolean } = {}): void {
    const keep = options.keep ?? (() => true);
    let prev: { page: number; key: string; day: string } | null = null;
    for (const s of segments) {
      const day = dayOf(s.at);
      const key = bucket ? bucket(s.at) : '';
      if (!prev || prev.key !== key) {
        if (prev) {
          if (keep(prev.day)) this.cell(prev.key, prev.page, prev.page).exits += sign;
          if (options.links && keep(day) && keep(prev.day)) this.link(day, prev.day, prev.page, s.page, sign);
        }
        if (keep(day)) this.cell(key, s.page, s.page).entries += sign;
      } else if (prev.page !== s.page && keep(day)) {
        const move = this.cell(key, prev.page, s.page);
        move.moves += sign;
        if (sign > 0) this.reader(move, s.reader);
      }
      if (keep(day)) this.cell(key, s.page, s.page).views += sign;
      prev = { page: s.page, key, day };
    }
    if (prev && keep(prev.day)) this.cell(prev.key, prev.page, prev.page).exits += sign;
  }
}

const dayOf = (instant: Date) => instant.toISOString().slice(0, 10);
const monthOf = (instant: Date) => `${instant.toISOString().slice(0, 7)}-01`;
const bySequence = (a: FlowSegment, b: FlowSegment) => a.sequence - b.sequence;
const readerKey = (viewerId: unknown, sessionId: unknown) => (viewerId === null || viewerId === undefined ? `s:${sessionId as string}` : `v:${num(viewerId)}`);

/** A HyperLogLog sketch as text: sparse (`~` + index/rank triples) while few registers are set, else the dense registers. */
export function encodeSketch(registers: Uint8Array): string {
  const set: number[] = [];
  for (let i = 0; i < M; i++) if (registers[i]) set.push(i);
  if (set.length * 3 >= M) return Buffer.from(registers).toString('base64');
  const bytes = Buffer.alloc(set.length * 3);
  set.forEach((i, k) => {
    bytes.writeUInt16BE(i, k * 3);
    bytes[k * 3 + 2] = registers[i]!;
  });
  return `~${bytes.toString('base64')}`;
}

export function mergeSketch(into: Uint8Array, text: string): void {
  if (!text.startsWith('~')) return hllMerge(into, new Uint8Array(Buffer.from(text, 'base64')));
  const bytes = Buffer.from(text.slice(1), 'base64');
  for (let k = 0; k + 2 < bytes.length; k += 3) {
    const i = bytes.readUInt16BE(k);
    if (bytes[k + 2]! > into[i]!) into[i] = bytes[k + 2]!;
  }
}

export interface FlowTotals {
  pages: Map<number, { views: number; entries: number; exits: number }>;
  transitions: { from_page: number; to_page: number; count: number; readers: number }[];
  segments: number;
}

type Run = <T>(query: ReturnType<typeof sql>) => Promise<T[]>;

const SEGMENT = sql`event_type = 'page_segment_completed' and page_number is not null`;

/** All page segments of the given visits (book, session), by the (book, session, sequence) index. */
async function visitSegments(run: Run, visits: { bookId: number; sessionId: string }[], upTo?: number): Promise<Map<string, FlowSegment[]>> {
  const out = new Map<string, FlowSegment[]>();
  for (let i = 0; i < visits.length; i += 2000) {
    const chunk = visits.slice(i, i + 2000);
    const rows = await run<{ book_id: unknown; session_id: string; id: unknown; sequence: unknown; page_number: unknown; occurred_at: string | Date; viewer_id: unknown }>(sql`
      select e.book_id, e.session_id, e.id, e.sequence, e.page_number, e.occurred_at, e.viewer_id
      from unnest(${`{${chunk.map((v) => v.bookId).join(',')}}`}::int[], ${`{${chunk.map((v) => `"${v.sessionId.replace(/["\\]/g, '\\$&')}"`).join(',')}}`}::text[]) as t(book_id, session_id)
      join interaction_events e on e.book_id = t.book_id and e.session_id = t.session_id
      where e.${SEGMENT} ${upTo !== undefined ? sql`and e.id <= ${upTo}` : sql``}`);
    for (const r of rows) {
      const key = `${num(r.book_id)}|${r.session_id}`;
      let list = out.get(key);
      if (!list) out.set(key, (list = []));
      list.push({ id: num(r.id), sequence: num(r.sequence), page: num(r.page_number), at: new Date(r.occurred_at), reader: readerKey(r.viewer_id, r.session_id) });
    }
  }
  for (const list of out.values()) list.sort(bySequence);
  return out;
}

interface DeltaRow {
  grain: 'd' | 'm' | 'l';
  book_id: number; day: string; prev_day: string | null; from_page: number; to_page: number;
  views: unknown; entries: unknown; exits: unknown; moves: unknown; n: unknown;
  readers: string[] | null; stored: string | null;
}

/**
 * The deltas of the batch (from, bound]: FlowDelta.add of the fold, in SQL.
 * For each visit the batch touches, its segments up to the bound count +1
 * and those up to the old watermark (already folded) -1, cut into runs of
 * one UTC day ('d') and of one UTC month ('m'). A segment is an entry where
 * its predecessor in sequence order is in another bucket (or none), an exit
 * where its successor is, a move (from the predecessor's page) where both
 * are in one bucket on different pages; a day link ('l') where two days
 * meet. A visit entirely above the old watermark has no -1 rows. Only
 * changed cells; a move cell's readers (those of its +1 moves) only when its
 * count changed, with the sketch stored for it.
 */
function foldDeltas(from: number, bound: number): ReturnType<typeof sql> {
  return sql`
    with batch as materialized (
      select book_id, session_id, id, sequence, page_number, occurred_at, viewer_id
      from interaction_events where id > ${from} and id <= ${bound} and ${SEGMENT}
    ), touched as (
      select distinct book_id, session_id from batch
    ), segments as materialized (
      -- A visit's segments up to the bound: the batch's own, and by the (book, session, sequence) index those already folded.
      select e.session_id, e.id, e.sequence, e.book_id, e.page_number as page, (e.occurred_at at time zone 'UTC')::date as day,
             date_trunc('month', e.occurred_at at time zone 'UTC')::date as month, ${readerKeySql('e')} as reader
      from (select * from batch
            union all
            select o.* from touched t cross join lateral (
              select book_id, session_id, id, sequence, page_number, occurred_at, viewer_id from interaction_events
              where book_id = t.book_id and session_id = t.session_id and id <= ${from} and ${SEGMENT} offset 0) o) e
    ), signed as (
      select 1 as sign, s.* from segments s
      union all
      select -1 as sign, s.* from segments s where s.id <= ${from}
    ), w as materialized (
      select sign, book_id, page, day, month, reader,
             lag(page) over v as prev_page, lag(day) over v as prev_day, lead(day) over v as next_day,
             lag(month) over v as prev_month, lead(month) over v as next_month
      from signed window v as (partition by sign, book_id, session_id collate "C" order by sequence)
    ), cells as (
      select 'd' as grain, book_id, day, page as from_page, page as to_page, sum(sign) as views,
             coalesce(sum(sign) filter (where prev_day is distinct from day), 0) as entries,
             coalesce(sum(sign) filter (where next_day is distinct from day), 0) as exits, 0 as moves, null::text[] as readers
      from w group by book_id, day, page
      union all
      select 'd', book_id, day, prev_page, page, 0, 0, 0, sum(sign), array_agg(reader) filter (where sign > 0)
      from w where prev_day = day and prev_page <> page group by book_id, day, prev_page, page
      union all
      select 'm', book_id, month, page, page, sum(sign),
             coalesce(sum(sign) filter (where prev_month is distinct from month), 0),
             coalesce(sum(sign) filter (where next_month is distinct from month), 0), 0, null::text[]
      from w group by book_id, month, page
      union all
      select 'm', book_id, month, prev_page, page, 0, 0, 0, sum(sign), array_agg(reader) filter (where sign > 0)
      from w where prev_month = month and prev_page <> page group by book_id, month, prev_page, page
    )
    select c.grain, c.book_id, c.day::text as day, null as prev_day, c.from_page, c.to_page, c.views, c.entries, c.exits, c.moves, null as n,
           case when c.moves <> 0 then c.readers end as readers,
           case when c.moves <> 0 and c.readers is not null then coalesce(d.readers, m.readers) end as stored
    from cells c
    left join flow_day_rollups d on c.grain = 'd' and c.moves <> 0 and c.readers is not null
      and d.book_id = c.book_id and d.day = c.day and d.from_page = c.from_page and d.to_page = c.to_page
    left join flow_month_rollups m on c.grain = 'm' and c.moves <> 0 and c.readers is not null
      and m.book_id = c.book_id and m.day = c.day and m.from_page = c.from_page and m.to_page = c.to_page
    where c.views <> 0 or c.entries <> 0 or c.exits <> 0 or c.moves <> 0
    union all
    select 'l', book_id, day::text, prev_day::text, prev_page, page, 0, 0, 0, 0, sum(sign), null, null
    from w where prev_day <> day group by book_id, day, prev_day, prev_page, page having sum(sign) <> 0`;
}

export class FlowRollups {
  private readonly db: Db;
  readonly batchRows: number;
  readonly settleMs: number;

  constructor(deps: { db: Db } & Partial<FoldPace>) {
    this.db = deps.db;
    ({ batchRows: this.batchRows, settleMs: this.settleMs } = foldPace(deps));
  }

  /**
   * Folds the visits of the next batch of interaction events above the
   * watermark. Answers the event ids moved past (0: caught up).
   *
   * One statement computes the batch's deltas in the database (foldDeltas)
   * and answers one row per changed cell and link, a move cell with its
   * readers and its stored sketch; the sketches merge here (HyperLogLog),
   * and one statement writes every row.
   */
  async step(): Promise<number> {
    return this.db.transaction(async (tx) => {
      const q: Run = async <T>(query: ReturnType<typeof sql>) => rowsOf<T>(await tx.execute(query));
      const batch = await claimBatch(tx, STATE, this.batchRows, this.settleMs);
      if (!batch) return 0;
      // The window's sort and the groupings hold a batch's segments in memory (the default 4 MB spilled them to disk).
      await tx.execute(sql`set local work_mem = '64MB'`);
      const rows = await q<DeltaRow>(foldDeltas(batch.from, batch.bound));
      const cells: Record<'d' | 'm', unknown[]> = { d: [], m: [] };
      const links: unknown[] = [];
      for (const r of rows) {
        if (r.grain === 'l') {
          links.push({ b: r.book_id, d: r.day, pd: r.prev_day, f: r.from_page, t: r.to_page, n: num(r.n) });
          continue;
        }
        let sketch: string | null = null;
        if (r.readers) {
          const registers = new Uint8Array(M);
          for (const reader of r.readers) hllAdd(registers, reader);
          if (r.stored) mergeSketch(registers, r.stored);
          sketch = encodeSketch(registers);
        }
        cells[r.grain].push({ b: r.book_id, d: r.day, f: r.from_page, t: r.to_page, v: num(r.views), e: num(r.entries), x: num(r.exits), m: num(r.moves), r: sketch });
      }
      if (rows.length > 0) {
        const upsert = (table: string, json: string) => sql`
          insert into ${sql.identifier(table)} as r (book_id, day, from_page, to_page, views, entries, exits, moves, readers)
          select x.b, x.d, x.f, x.t, x.v, x.e, x.x, x.m, x.r
          from jsonb_to_recordset(${json}::jsonb) as x(b int, d date, f int, t int, v bigint, e bigint, x bigint, m bigint, r text)
          on conflict (book_id, day, from_page, to_page) do update set views = r.views + excluded.views, entries = r.entries + excluded.entries,
            exits = r.exits + excluded.exits, moves = r.moves + excluded.moves, readers = coalesce(excluded.readers, r.readers)`;
        await tx.execute(sql`
          with days as (${upsert('flow_day_rollups', JSON.stringify(cells.d))}),
               months as (${upsert('flow_month_rollups', JSON.stringify(cells.m))})
          insert into flow_day_links as r (book_id, day, prev_day, from_page, to_page, n)
          select x.b, x.d, x.pd, x.f, x.t, x.n from jsonb_to_recordset(${JSON.stringify(links)}::jsonb) as x(b int, d date, pd date, f int, t int, n bigint)
          on conflict (book_id, day, prev_day, from_page, to_page) do update set n = r.n + excluded.n`);
      }
      return finishBatch(tx, STATE, batch);
    });
  }

  /** Runs steps until caught up (or `maxSteps`); answers the event ids moved past. */
  async catchUp(maxSteps = Number.POSITIVE_INFINITY): Promise<number> {
    let moved = 0;
    for (let i = 0; i < maxSteps; i++) {
      const n = await this.step();
      if (n === 0) break;
      moved += n;
    }
    return moved;
  }

  /**
   * The flow of a book over [from, to) from the rollup, with the visits the
   * rollup lacks or cuts (segments above the watermark, or in the partial
   * UTC days at the edges) taken from the raw rows; null when the range
   * holds no whole UTC day. `run` executes inside the caller's read transaction.
   */
  async flowTotals(run: Run, bookId: number, asked: { from: Date | null; to: Date | null }): Promise<FlowTotals | null> {
    const range = openEndIfFuture(asked);
    const fullFrom = range.from ? new Date(Math.ceil(range.from.getTime() / DAY_MS) * DAY_MS) : null;
    const fullTo = range.to ? new Date(Math.floor(range.to.getTime() / DAY_MS) * DAY_MS) : null;
    if (fullFrom && fullTo && fullFrom >= fullTo) return null;
    const [state] = await run<{ watermark: unknown }>(sql`select watermark from analytics_rollup_state where name = ${STATE}`);
    const watermark = num(state?.watermark);
    const fromDay = fullFrom ? dayOf(fullFrom) : null;
    const toDay = fullTo ? dayOf(fullTo) : null;
    const inDays = (day: string) => (fromDay === null || day >= fromDay) && (toDay === null || day < toDay);
    const days = (column: string) => sql`${fromDay ? sql`and ${sql.raw(column)} >= ${fromDay}::date` : sql``} ${toDay ? sql`and ${sql.raw(column)} < ${toDay}::date` : sql``}`;
    // Whole UTC months inside the whole days from the month rows, the days around them from the day rows (as page-performance).
    const monthFrom = fullFrom ? new Date(Date.UTC(fullFrom.getUTCFullYear(), fullFrom.getUTCMonth() + (fullFrom.getUTCDate() === 1 ? 0 : 1), 1)) : null;
    const monthTo = fullTo ? new Date(Date.UTC(fullTo.getUTCFullYear(), fullTo.getUTCMonth(), 1)) : null;
    const months = !monthFrom || !monthTo || monthFrom < monthTo;
    const monthFromDay = monthFrom ? dayOf(monthFrom) : null;
    const monthToDay = monthTo ? dayOf(monthTo) : null;
    const inMonths = (day: string) => months && (monthFromDay === null || day >= monthFromDay) && (monthToDay === null || day < monthToDay);
    const spans: { table: string; from: string | null; to: string | null }[] = [];
    if (months) {
      spans.push({ table: 'flow_month_rollups', from: monthFromDay, to: monthToDay });
      if (monthFromDay && (!fromDay || fromDay < monthFromDay)) spans.push({ table: 'flow_day_rollups', from: fromDay, to: monthFromDay });
      if (monthToDay && (!toDay || monthToDay < toDay)) spans.push({ table: 'flow_day_rollups', from: monthToDay, to: toDay });
    } else {
      spans.push({ table: 'flow_day_rollups', from: fromDay, to: toDay });
    }

    const pages = new Map<number, { views: number; entries: number; exits: number }>();
    const moves = new Map<string, { from: number; to: number; count: number; readers: Uint8Array }>();
    const page = (n: number) => {
      let p = pages.get(n);
      if (!p) pages.set(n, (p = { views: 0, entries: 0, exits: 0 }));
      return p;
    };
    const move = (from: number, to: number) => {
      const key = `${from}|${to}`;
      let m = moves.get(key);
      if (!m) moves.set(key, (m = { from, to, count: 0, readers: new Uint8Array(M) }));
      return m;
    };
    const apply = (d: FlowDelta) => {
      for (const c of d.cells.values()) {
        if (c.from === c.to) {
          const p = page(c.from);
          p.views += c.views;
          p.entries += c.entries;
          p.exits += c.exits;
        } else {
          const m = move(c.from, c.to);
          m.count += c.moves;
          if (c.readers) hllMerge(m.readers, c.readers);
        }
      }
    };

    // Sums in SQL; the sketches of the moves merged here (one per day and move). They come joined by commas in one text
    // per move (base64 has none): a text[] of 1,200 sketches of 2.7 KB took node-postgres's array parser 350 ms a request.
    const rolled = await run<{ from_page: unknown; to_page: unknown; views: unknown; entries: unknown; exits: unknown; moves: unknown; sketches: string | null }>(sql`
      select from_page, to_page, sum(views) as views, sum(entries) as entries, sum(exits) as exits, sum(moves) as moves,
             string_agg(readers, ',') filter (where readers is not null) as sketches
      from (${sql.join(spans.map((span) => sql`select from_page, to_page, views, entries, exits, moves, readers from ${sql.identifier(span.table)}
        where book_id = ${bookId} ${span.from ? sql`and day >= ${span.from}::date` : sql``} ${span.to ? sql`and day < ${span.to}::date` : sql``}`), sql` union all `)}) x
      group by from_page, to_page`);
    for (const r of rolled) {
      const from = num(r.from_page);
      const to = num(r.to_page);
      if (from === to) {
        const p = page(from);
        p.views += num(r.views);
        p.entries += num(r.entries);
        p.exits += num(r.exits);
      } else {
        const m = move(from, to);
        m.count += num(r.moves);
        if (r.sketches) for (const s of r.sketches.split(',')) mergeSketch(m.readers, s);
      }
    }
    // Runs of one visit on two days both in the range are one run again, except inside a month the month rows hold whole.
    const sameMonthRow = months
      ? sql`and not (date_trunc('month', day) = date_trunc('month', prev_day) ${monthFromDay ? sql`and day >= ${monthFromDay}::date` : sql``} ${monthToDay ? sql`and day < ${monthToDay}::date` : sql``})`
      : sql``;
    const links = await run<{ from_page: unknown; to_page: unknown; n: unknown }>(sql`
      select from_page, to_page, sum(n) as n from flow_day_links where book_id = ${bookId} ${days('day')} ${days('prev_day')} ${sameMonthRow} group by from_page, to_page`);
    for (const l of links) {
      const from = num(l.from_page);
      const to = num(l.to_page);
      const n = num(l.n);
      page(from).exits -= n;
      page(to).entries -= n;
      if (from !== to) move(from, to).count += n;
    }

    // The visits the rollup lacks or cuts: swap their rolled contribution for the exact one.
    const iso = (d: Date) => d.toISOString();
    const parts = [sql`select distinct session_id from interaction_events where id > ${watermark} and book_id = ${bookId} and ${SEGMENT}
      ${range.from ? sql`and occurred_at >= ${iso(range.from)}::timestamptz` : sql``} ${range.to ? sql`and occurred_at < ${iso(range.to)}::timestamptz` : sql``}`];
    if (range.from && fullFrom && range.from < fullFrom) parts.push(sql`select distinct session_id from interaction_events
      where book_id = ${bookId} and ${SEGMENT} and occurred_at >= ${iso(range.from)}::timestamptz and occurred_at < ${iso(fullFrom)}::timestamptz`);
    if (range.to && fullTo && fullTo < range.to) parts.push(sql`select distinct session_id from interaction_events
      where book_id = ${bookId} and ${SEGMENT} and occurred_at >= ${iso(fullTo)}::timestamptz and occurred_at < ${iso(range.to)}::timestamptz`);
    const touched = await run<{ session_id: string }>(sql.join(parts, sql` union `));
    if (touched.length > 0) {
      const visits = await visitSegments(run, touched.map((t) => ({ bookId, sessionId: t.session_id })));
      const d = new FlowDelta();
      for (const segments of visits.values()) {
        d.add(segments.filter((s) => s.id <= watermark), -1, (at) => (inMonths(dayOf(at)) ? monthOf(at) : dayOf(at)), { keep: inDays, links: true });
        d.add(segments.filter((s) => (!range.from || s.at >= range.from) && (!range.to || s.at < range.to)), 1, null);
      }
      // Their link rows (n = -1 here) undone the way the stored ones were applied above.
      for (const l of d.links.values()) {
        page(l.from).exits -= l.n;
        page(l.to).entries -= l.n;
        if (l.from !== l.to) move(l.from, l.to).count += l.n;
      }
      apply(d);
    }

    let segments = 0;
    for (const [n, p] of pages) {
      segments += p.views;
      if (!p.views && !p.entries && !p.exits) pages.delete(n);
    }
    const transitions = [...moves.values()].filter((m) => m.count > 0)
      .map((m) => ({ from_page: m.from, to_page: m.to, count: m.count, readers: Math.max(1, Math.min(m.count, hllCount(m.readers))) }));
    return { pages, transitions, segments };
  }
}
