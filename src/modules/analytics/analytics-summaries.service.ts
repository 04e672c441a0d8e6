/**
 * The aggregate analytics reads, all computed from the same facts so their
 * numbers agree:
 *  - page time comes from page_segment_completed events (page-performance,
 *    reader-pages, book-flow and their exports add up to the same active
 *    time for the same filter);
 *  - visits come from view_events (readers, reader-journey, the daily
 *    summary), whose duration is the session's own measure of active time.
 *
 * A "reader" is an identified viewer (viewer_id) across all their visits, or
 * else one anonymous visit (its session).
 */
import { sql, type SQL } from 'drizzle-orm';
import { ERRORS } from '../../platform/errors.ts';
import type { BookRow } from '../books/books.tables.ts';
import { filterConditions, rollupsCanAnswer, iso, num, rowsOf, score, seconds, type AnalyticsFilter, type AnalyticsReader } from './analytics-sql.ts';
import type { FlowRollups } from './flow-rollups.ts';
import { histogramMedian, hllCount, type PageRollups, type PageTotals } from './page-rollups.ts';

export interface PageSummary {
  id: number;
  book_id: string;
  page_number: number;
  unique_readers: number;
  total_active_ms: number;
  total_active_seconds: number;
  avg_active_ms_per_reader: number;
  avg_active_seconds_per_reader: number;
  avg_active_ms_per_segment: number;
  avg_active_seconds_per_segment: number;
  median_active_ms_per_segment: number;
  median_active_seconds_per_segment: number;
  total_segments: number;
}

export interface ReaderPageSummary {
  id: number;
  book_id: string;
  viewer_id: number;
  viewer_email?: string;
  page_number: number;
  total_active_ms: number;
  total_active_seconds: number;
  segments: number;
  avg_active_ms_per_segment: number;
  avg_active_seconds_per_segment: number;
  first_viewed_at: string;
  last_viewed_at: string;
}

export interface ReaderSummary {
  viewer_id: number | null;
  viewer_email: string | null;
  session_id: string | null;
  visits: number;
  pages_viewed: number;
  clicks: number;
  active_ms: number;
  active_seconds: number;
  duration_seconds: number;
  engagement_score: string;
  first_visit_at: string;
  last_visit_at: string;
}

export interface BookFlow {
  pages: { page_number: number; views: number; entries: number; exits: number }[];
  transitions: { from_page: number; to_page: number; count: number; readers: number }[];
}

/** The page segments a filter selects, with a reader key (viewer, else the anonymous session). */
function segments(f: AnalyticsFilter, extra: SQL = sql``): SQL {
  if (f.version !== undefined && f.matchedPages) return segmentsAcrossVersions(f, f.version, f.matchedPages, extra);
  return sql`
    select e.id, e.page_number, e.active_ms, e.viewer_id, e.session_id, e.sequence, e.occurred_at,
           case when e.viewer_id is null then 's:' || e.session_id else 'v:' || e.viewer_id end as reader
    from interaction_events e
    where ${filterConditions('e', 'occurred_at', f, { session: true, page: true })} and e.event_type = 'page_segment_completed' ${extra}`;
}

/**
 * The segments of `version` and those read on earlier versions' pages that
 * match one of its pages, numbered as in `version` (a page inserted before
 * them moved them on by one; their figures follow them).
 */
function segmentsAcrossVersions(f: AnalyticsFilter, version: number, matched: readonly { version: number; page: number; as: number }[], extra: SQL): SQL {
  const map = matched.length > 0
    ? sql.join(matched.map((m) => sql`(${m.version}::int, ${m.page}::int, ${m.as}::int)`), sql`, `)
    : sql`(0, 0, 0)`;
  return sql`
    select e.id, case when coalesce(e.book_version, 1) = ${version} then e.page_number else m.as_page end as page_number,
           e.active_ms, e.viewer_id, e.session_id, e.sequence, e.occurred_at,
           case when e.viewer_id is null then 's:' || e.session_id else 'v:' || e.viewer_id end as reader
    from interaction_events e
    left join (values ${map}) as m(v, p, as_page) on m.v = coalesce(e.book_version, 1) and m.p = e.page_number
    where ${filterConditions('e', 'occurred_at', { ...f, version: undefined }, { session: true })} and e.event_type = 'page_segment_completed'
      and (coalesce(e.book_version, 1) = ${version} or m.as_page is not null) ${extra}`;
}

const div = (a: number, b: number) => (b > 0 ? a / b : 0);

export type ReaderSort = 'recent' | 'engagement';

interface ReaderCursor {
  s: ReaderSort;
  v: number | string;
  k: number;
}

export class AnalyticsSummariesService {
  private readonly reader: AnalyticsReader;
  private readonly rollups: PageRollups | undefined;
  private readonly flowRollups: FlowRollups | undefined;
  private readonly exactMaxSegments: number;

  constructor(reader: AnalyticsReader, options: { rollups?: PageRollups; flowRollups?: FlowRollups; exactMaxSegments?: number } = {}) {
    this.reader = reader;
    this.rollups = options.rollups;
    this.flowRollups = options.flowRollups;
    this.exactMaxSegments = options.exactMaxSegments ?? Number.POSITIVE_INFINITY;
  }

  /**
   * One summary per page of the book (pages nobody read included, with
   * zeros). Exact (percentile_cont, count distinct) while the range holds up
   * to exactMaxSegments segments or a reader, session or tracked-link filter
   * is given; above that, from the day rollups (page-rollups.ts): counts and
   * sums still exact, median within 1.1 %, unique_readers a HyperLogLog
   * estimate (standard error 2.3 %).
   */
  async pagePerformance(book: BookRow, f: AnalyticsFilter): Promise<PageSummary[]> {
    const rollups = this.rollups;
    if (rollups && f.viewerId === undefined && f.trackedLinkId === undefined && f.sessionId === undefined && rollupsCanAnswer(f)) {
      const pages = await this.reader.read(async (tx) => {
        const totals = await rollups.pageTotals(async (query) => rowsOf(await tx.execute(query)), f.bookId, f.range, f.pageNumber);
        let segmentCount = 0;
        for (const t of totals?.values() ?? []) segmentCount += t.segments;
        return totals && segmentCount > this.exactMaxSegments ? totals : null;
      });
      if (pages) return this.pageSummariesFromTotals(book, f, pages);
    }
    const rows = await this.reader.rows<Record<string, unknown>>(sql`
      with s as (${segments(f)}),
      per_page as (
        select page_number, count(*) as segments, sum(active_ms)::float8 as total,
               percentile_cont(0.5) within group (order by active_ms) as median,
               count(distinct viewer_id) + count(distinct session_id) filter (where viewer_id is null) as readers
        from s group by page_number)
      select g.page_number, coalesce(p.segments, 0) as segments, coalesce(p.total, 0) as total, coalesce(p.median, 0) as median,
             coalesce(p.readers, 0) as readers
      from generate_series(1, greatest(${book.pageCount}::int, (select coalesce(max(page_number), 0) from s))) as g(page_number)
      left join per_page p using (page_number)
      ${f.pageNumber !== undefined ? sql`where g.page_number = ${f.pageNumber}` : sql``}
      order by g.page_number`);
    return rows.map((r) => {
      const total = num(r.total);
      const readers = num(r.readers);
      const segs = num(r.segments);
      const median = num(r.median);
      const perReader = Math.round(div(total, readers));
      const perSegment = Math.round(div(total, segs));
      return {
        id: num(r.page_number), book_id: book.randomId, page_number: num(r.page_number), unique_readers: readers,
        total_active_ms: total, total_active_seconds: seconds(total),
        avg_active_ms_per_reader: perReader, avg_active_seconds_per_reader: seconds(perReader),
        avg_active_ms_per_segment: perSegment, avg_active_seconds_per_segment: seconds(perSegment),
        median_active_ms_per_segment: Math.round(median), median_active_seconds_per_segment: median / 1000,
        total_segments: segs,
      };
    });
  }

  private pageSummariesFromTotals(book: BookRow, f: AnalyticsFilter, pages: Map<number, PageTotals>): PageSummary[] {
    const last = Math.max(book.pageCount, ...pages.keys());
    const numbers = f.pageNumber !== undefined ? (f.pageNumber <= last ? [f.pageNumber] : []) : Array.from({ length: last }, (_, i) => i + 1);
    return numbers.map((n) => {
      const t = pages.get(n);
      const total = t?.totalMs ?? 0;
      const segs = t?.segments ?? 0;
      const readers = t && segs > 0 ? hllCount(t.readers) : 0;
      const median = t ? histogramMedian(t.histogram, segs) : 0;
      const perReader = Math.round(div(total, readers));
      const perSegment = Math.round(div(total, segs));
      return {
        id: n, book_id: book.randomId, page_number: n, unique_readers: readers,
        total_active_ms: total, total_active_seconds: seconds(total),
        avg_active_ms_per_reader: perReader, avg_active_seconds_per_reader: seconds(perReader),
        avg_active_ms_per_segment: perSegment, avg_active_seconds_per_segment: seconds(perSegment),
        median_active_ms_per_segment: Math.round(median), median_active_seconds_per_segment: Math.round(median) / 1000,
        total_segments: segs,
      };
    });
  }

  /**
   * Per identified reader and page, ordered by viewer then page. `after`
   * (viewer, page) and `limit` walk it in batches for the export; the
   * operation answers it whole. `id` is the reader's first segment on the
   * page (stable, unique).
   */
  async readerPages(book: BookRow, f: AnalyticsFilter, batch?: { after?: [number, number]; limit: number }): Promise<ReaderPageSummary[]> {
    const after = batch?.after ? sql`where (g.viewer_id, g.page_number) > (${batch.after[0]}, ${batch.after[1]})` : sql``;
    const rows = await this.reader.rows<Record<string, unknown>>(sql`
      select g.*, v.email as viewer_email from (
        select viewer_id, page_number, min(id) as id, count(*) as segments, sum(active_ms)::float8 as total,
               min(occurred_at) as first_at, max(occurred_at) as last_at
        from (${segments(f, sql`and e.viewer_id is not null`)}) s group by viewer_id, page_number
      ) g left join viewers v on v.id = g.viewer_id
      ${after}
      order by g.viewer_id, g.page_number ${batch ? sql`limit ${batch.limit}` : sql``}`);
    return rows.map((r) => {
      const total = num(r.total);
      const perSegment = Math.round(div(total, num(r.segments)));
      return {
        id: num(r.id), book_id: book.randomId, viewer_id: num(r.viewer_id), ...(r.viewer_email ? { viewer_email: r.viewer_email as string } : {}),
        page_number: num(r.page_number), total_active_ms: total, total_active_seconds: seconds(total), segments: num(r.segments),
        avg_active_ms_per_segment: perSegment, avg_active_seconds_per_segment: seconds(perSegment),
        first_viewed_at: iso(r.first_at), last_viewed_at: iso(r.last_at),
      };
    });
  }

  /**
   * Page-to-page moves within visits: a visit's page segments in the reader's
   * order; each change of page is a transition (from_page → to_page). A
   * visit's first page is an entry, its last an exit; `views` counts segments.
   * Exact from the raw segments up to exactMaxSegments in the range or with a
   * reader, session, tracked-link or page filter; above, from the day
   * rollups (flow-rollups.ts): views, entries, exits and counts still exact,
   * transition `readers` a HyperLogLog estimate.
   */
  async bookFlow(book: BookRow, f: AnalyticsFilter): Promise<{ data: BookFlow; meta: { visits: number } }> {
    const flow = this.flowRollups;
    if (flow && f.viewerId === undefined && f.trackedLinkId === undefined && f.sessionId === undefined && f.pageNumber === undefined && rollupsCanAnswer(f)) {
      const totals = await this.reader.read(async (tx) => {
        const t = await flow.flowTotals(async (query) => rowsOf(await tx.execute(query)), f.bookId, f.range);
        return t && t.segments > this.exactMaxSegments ? t : null;
      });
      if (totals) return this.flowAnswer(book, totals.pages, totals.transitions);
    }
    // One pass over the segments: the window runs once, pages and transitions come out of the same rows.
    const rows = await this.reader.rows<Record<string, unknown>>(sql`
      with s as (${segments(f)}),
      o as materialized (
        select page_number, reader, lag(page_number) over w as prev, lead(page_number) over w as next
        from s window w as (partition by session_id order by sequence))
      select 'page' as kind, page_number as a, null::int as b, count(*) as n,
             count(*) filter (where prev is null) as entries, count(*) filter (where next is null) as exits
      from o group by page_number
      union all
      select 'move', prev, page_number, count(*), count(distinct reader), null from o
      where prev is not null and prev <> page_number group by prev, page_number`);
    const seen = new Map<number, { views: number; entries: number; exits: number }>();
    const transitions: BookFlow['transitions'] = [];
    for (const r of rows) {
      if (r.kind === 'page') seen.set(num(r.a), { views: num(r.n), entries: num(r.entries), exits: num(r.exits) });
      else transitions.push({ from_page: num(r.a), to_page: num(r.b), count: num(r.n), readers: num(r.entries) });
    }
    return this.flowAnswer(book, seen, transitions);
  }

  private flowAnswer(book: BookRow, seen: Map<number, { views: number; entries: number; exits: number }>, transitions: BookFlow['transitions']) {
    transitions.sort((x, y) => y.count - x.count || x.from_page - y.from_page || x.to_page - y.to_page);
    const last = Math.max(book.pageCount, ...seen.keys());
    const pages = Array.from({ length: last }, (_, i) => ({ page_number: i + 1, ...(seen.get(i + 1) ?? { views: 0, entries: 0, exits: 0 }) }));
    const visits = pages.reduce((n, p) => n + p.entries, 0);
    return { data: { pages, transitions }, meta: { visits } };
  }

  /**
   * One summary per reader over the visits the filter selects: identified
   * readers by viewer_id; with includeAnonymous, each anonymous visit too.
   * `recent` sorts by last visit, `engagement` by the average engagement
   * score of the reader's visits; both newest/highest first, then by key.
   * Two steps, so the full summary (distinct pages, email, sums) is computed
   * for the page of readers answered only: first the keys of that page, then
   * their summaries by the (book, viewer, time) index. `recent` finds its
   * keys by walking the visits newest first on the (book, time) index until
   * the page is full (a reader's newest visit in the range is its last_at),
   * so it reads about `limit` visits, not the range; `engagement` needs
   * every reader's average, from a lean aggregate of two columns.
   */
  async readers(
    book: BookRow, f: AnalyticsFilter, options: { includeAnonymous: boolean; sort: ReaderSort; cursor?: string | undefined; limit: number },
  ): Promise<{ data: ReaderSummary[]; meta: { next_cursor: string | null; has_more: boolean } }> {
    const cursor = decodeReaderCursor(options.sort, options.cursor);
    const where = sql`${filterConditions('w', 'recorded_at', f, { session: true })} ${options.includeAnonymous ? sql`` : sql`and w.viewer_id is not null`}`;
    const want = options.limit + 1;
    const rows = await this.reader.read(async (tx) => {
      const q = async <T>(query: SQL) => rowsOf<T>(await tx.execute(query));
      let keys: number[];
      if (options.sort === 'recent') {
        keys = await recentReaderKeys(q, where, cursor, want);
      } else {
        const top = await q<{ k: unknown }>(sql`
          select k from (select coalesce(w.viewer_id::bigint, -w.id) as k, avg(w.engagement_score)::float8 as engagement
                         from view_events w where ${where} group by 1) r
          ${cursor ? sql`where (r.engagement, r.k) < (${cursor.v}::float8, ${cursor.k})` : sql``}
          order by r.engagement desc, r.k desc limit ${want}`);
        keys = top.map((t) => num(t.k));
      }
      if (keys.length === 0) return [];
      const viewers = keys.filter((k) => k > 0);
      const visits = keys.filter((k) => k < 0).map((k) => -k);
      const sortKey = options.sort === 'recent' ? sql`r.last_at` : sql`r.engagement`;
      return q<Record<string, unknown>>(sql`
        with w as materialized (select w.id, w.viewer_id, w.session_id, w.clicks, w.active_ms, w.duration_seconds, w.engagement_score, w.recorded_at, w.pages_seen
                  from view_events w where ${where}
                  and (w.viewer_id = any(${`{${viewers.join(',')}}`}::int[]) or w.id = any(${`{${visits.join(',')}}`}::bigint[]))),
        r as (select coalesce(w.viewer_id::bigint, -w.id) as k, max(w.viewer_id) as viewer_id,
                     max(w.session_id) filter (where w.viewer_id is null) as session_id,
                     count(*) as visits, sum(w.clicks) as clicks, sum(w.active_ms)::float8 as active_ms, sum(w.duration_seconds) as duration,
                     avg(w.engagement_score)::float8 as engagement, min(w.recorded_at) as first_at, max(w.recorded_at) as last_at
              from w group by 1),
        p as (select coalesce(w.viewer_id::bigint, -w.id) as k, count(distinct page) as pages from w, unnest(w.pages_seen) as page group by 1)
        select r.*, coalesce(p.pages, 0) as pages, v.email as viewer_email
        from r left join p using (k) left join viewers v on v.id = r.viewer_id
        order by ${sortKey} desc, r.k desc`);
    });
    const hasMore = rows.length > options.limit;
    const kept = hasMore ? rows.slice(0, options.limit) : rows;
    const last = kept[kept.length - 1];
    const next = hasMore && last
      ? Buffer.from(JSON.stringify({ s: options.sort, v: options.sort === 'recent' ? iso(last.last_at) : num(last.engagement), k: num(last.k) })).toString('base64url')
      : null;
    return {
      data: kept.map((r) => ({
        viewer_id: r.viewer_id === null ? null : num(r.viewer_id), viewer_email: (r.viewer_email as string | null) ?? null,
        session_id: (r.session_id as string | null) ?? null, visits: num(r.visits), pages_viewed: num(r.pages), clicks: num(r.clicks),
        active_ms: num(r.active_ms), active_seconds: seconds(num(r.active_ms)), duration_seconds: num(r.duration),
        engagement_score: score(r.engagement), first_visit_at: iso(r.first_at), last_visit_at: iso(r.last_at),
      })),
      meta: { has_more: hasMore, next_cursor: next },
    };
  }

  /** Visits per calendar day in the range's time zone (the analytics summary export), oldest day first. */
  async daily(f: AnalyticsFilter): Promise<Record<string, unknown>[]> {
    return this.reader.rows(sql`
      select to_char(w.recorded_at at time zone ${f.range.tz}, 'YYYY-MM-DD') as day, count(*) as visits, sum(w.impressions) as impressions,
             sum(w.reads) as reads, sum(w.clicks) as clicks, count(distinct coalesce(w.viewer_id::bigint, -w.id)) as readers,
             count(distinct w.viewer_id) as identified_readers, sum(w.pages_viewed) as pages_viewed, sum(w.duration_seconds) as duration_seconds,
             avg(w.engagement_score)::float8 as engagement
      from view_events w where ${filterConditions('w', 'recorded_at', f, { session: true })}
      group by 1 order by 1`);
  }

  /**
   * One reader's visits across the workspace's books (every leaf a string,
   * as the spec says). The reader is the viewer_id, or the reader of the
   * visit session_id names (its viewer when identified, else that one
   * anonymous visit). Books in the order of their last visit, oldest first.
   */
  async readerJourney(workspaceId: number, input: { viewerId?: number | undefined; sessionId?: string | undefined; range: AnalyticsFilter['range']; version?: number | undefined }) {
    return this.reader.read(async (tx) => {
      const q = async (query: SQL) => ((await tx.execute(query)) as unknown as { rows: Record<string, unknown>[] }).rows;
      let viewer: { id: number; email: string } | null = null;
      let sessionOnly: string | null = null;
      if (input.viewerId !== undefined) {
        const [row] = await q(sql`select id, email from viewers where id = ${input.viewerId} and workspace_id = ${workspaceId}`);
        if (!row) throw ERRORS.notFound('Viewer');
        viewer = { id: num(row.id), email: row.email as string };
      }
      if (input.sessionId !== undefined) {
        const [visit] = await q(sql`
          select w.viewer_id, v.email from view_events w left join viewers v on v.id = w.viewer_id
          where w.workspace_id = ${workspaceId} and w.session_id = ${input.sessionId} order by w.id limit 1`);
        if (!visit || (viewer && visit.viewer_id !== null && num(visit.viewer_id) !== viewer.id) || (viewer && visit.viewer_id === null)) throw ERRORS.notFound('Reader session');
        if (!viewer && visit.viewer_id !== null) viewer = { id: num(visit.viewer_id), email: visit.email as string };
        if (!viewer) sessionOnly = input.sessionId;
      }
      const who = viewer ? sql`w.viewer_id = ${viewer.id}` : sql`w.session_id = ${sessionOnly}`;
      const range = [
        input.range.from ? sql`and w.recorded_at >= ${input.range.from.toISOString()}::timestamptz` : sql``,
        input.range.to ? sql`and w.recorded_at < ${input.range.to.toISOString()}::timestamptz` : sql``,
        // Version numbers are each book's own: `version` keeps the visits that started on that number of their book.
        input.version !== undefined ? sql`and coalesce(w.book_version, 1) = ${input.version}` : sql``,
      ];
      const books = await q(sql`
        select b.random_id, b.name, count(*) as visits, sum(w.pages_viewed) as pages, sum(w.duration_seconds) as duration,
               avg(w.engagement_score)::float8 as engagement, sum(w.engagement_score)::float8 as engagement_sum, max(w.recorded_at) as last_at
        from view_events w join books b on b.id = w.book_id
        where w.workspace_id = ${workspaceId} and ${who} ${range[0]} ${range[1]} ${range[2]}
        group by b.random_id, b.name order by max(w.recorded_at), b.random_id`);
      const visits = books.reduce((n, b) => n + num(b.visits), 0);
      const sum = (field: string) => books.reduce((n, b) => n + num(b[field]), 0);
      return {
        viewer: { id: viewer ? String(viewer.id) : '', email: viewer?.email ?? '' },
        aggregates: {
          total_books: String(books.length),
          total_pages_viewed: String(sum('pages')),
          total_duration_seconds: String(sum('duration')),
          overall_engagement_score: score(visits > 0 ? sum('engagement_sum') / visits : 0),
        },
        books: books.map((b) => ({
          book_id: b.random_id as string, title: b.name as string, visits: String(num(b.visits)), pages_viewed: String(num(b.pages)),
          duration_seconds: String(num(b.duration)), engagement_score: score(b.engagement), last_visit: iso(b.last_at),
        })),
      };
    });
  }
}

/**
 * The keys of the `want` readers with the latest last visit below the
 * cursor: visits newest first ((book, time) index, in batches), each reader
 * taken at its first visit met. Below a cursor, a reader met there whose
 * last visit is above it was on an earlier page and is skipped. Stops once
 * `want` readers are held and the walk is past the last one's time (ties
 * included).
 */
async function recentReaderKeys(q: <T>(query: SQL) => Promise<T[]>, where: SQL, cursor: ReaderCursor | null, want: number): Promise<number[]> {
  const batch = Math.max(200, want * 2);
  const found = new Map<number, number>(); // key → last visit (ms)
  const seen = new Set<number>();
  let after: { at: Date; id: number } | null = null;
  for (;;) {
    const rows: { id: unknown; viewer_id: unknown; recorded_at: string | Date }[] = await q(sql`
      select w.id, w.viewer_id, w.recorded_at from view_events w where ${where}
      ${cursor ? sql`and w.recorded_at <= ${cursor.v}::timestamptz` : sql``}
      ${after ? sql`and (w.recorded_at, w.id) < (${after.at.toISOString()}::timestamptz, ${after.id})` : sql``}
      order by w.recorded_at desc, w.id desc limit ${batch}`);
    const fresh: { k: number; at: number }[] = [];
    for (const r of rows) {
      const k = r.viewer_id === null ? -num(r.id) : num(r.viewer_id);
      if (seen.has(k)) continue;
      seen.add(k);
      const at = new Date(r.recorded_at).getTime();
      if (cursor && (at > Date.parse(cursor.v as string) || (at === Date.parse(cursor.v as string) && k >= cursor.k))) continue;
      fresh.push({ k, at });
    }
    // A reader first met below the cursor may have a later visit above it: then its last_at is above and it was listed before.
    const identified = fresh.filter((c) => c.k > 0).map((c) => c.k);
    const above = cursor && identified.length > 0
      ? new Set((await q<{ viewer_id: unknown }>(sql`
          select distinct w.viewer_id from view_events w where ${where} and w.viewer_id = any(${`{${identified.join(',')}}`}::int[])
          and w.recorded_at > ${cursor.v}::timestamptz`)).map((r) => num(r.viewer_id)))
      : new Set<number>();
    for (const c of fresh) if (!above.has(c.k)) found.set(c.k, c.at);
    const ranked = [...found].sort((a, b) => b[1] - a[1] || b[0] - a[0]);
    const lastRow = rows[rows.length - 1];
    if (!lastRow || rows.length < batch) return ranked.slice(0, want).map(([k]) => k);
    after = { at: new Date(lastRow.recorded_at), id: num(lastRow.id) };
    if (ranked.length >= want && after.at.getTime() < ranked[want - 1]![1]) return ranked.slice(0, want).map(([k]) => k);
  }
}

function decodeReaderCursor(sort: ReaderSort, cursor: string | undefined): ReaderCursor | null {
  if (!cursor) return null;
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as ReaderCursor;
    const valueOk = sort === 'recent' ? typeof c.v === 'string' && !Number.isNaN(Date.parse(c.v)) : typeof c.v === 'number';
    if (c.s !== sort || !valueOk || !Number.isSafeInteger(c.k)) throw new Error('mismatch');
    return c;
  } catch {
    throw ERRORS.validation({ cursor: ['The cursor is invalid or belongs to another sort; use meta.next_cursor of the previous page unchanged.'] });
  }
}
