/**
 * The eight CSV exports: the same reads as the analytics operations, with
 * the same filters, walked in batches of EXPORT_BATCH_ROWS (keyset pages,
 * each batch its own short statement, so the whole result is never in
 * memory and one connection is never held for the whole download; works
 * alike on PGlite and PostgreSQL). Each batch is one CSV chunk (csvStream);
 * a client that disconnects stops the walk after the batch being read.
 *
 * The book and filters are checked before the first byte is sent, so a
 * wrong book or date answers a JSON error, not a broken file. Timestamps
 * are ISO 8601 UTC; text typed by readers or customers goes through
 * safeText (formula injection).
 */
import { sql } from 'drizzle-orm';
import { slugFromName } from './tracked-links.service.ts';
import type { BookRow } from '../books/books.tables.ts';
import type { AnalyticsQueriesService, AnalyticsQuery, Caller } from './analytics-queries.service.ts';
import type { Page, PageQuery } from './analytics-events.service.ts';
import type { AnalyticsFilter } from './analytics-sql.ts';
import type { AnalyticsReader } from './analytics-sql.ts';
import { filterConditions, iso, num, score, seconds } from './analytics-sql.ts';
import { safeJson, safeText, type Cell, type CsvExport } from './csv.ts';

export const EXPORT_COLUMNS = {
  analytics: ['date', 'visits', 'impressions', 'reads', 'clicks', 'readers', 'identified_readers', 'pages_viewed', 'duration_seconds', 'average_engagement_score'],
  audit: ['id', 'occurred_at', 'event_type', 'source', 'source_event_id', 'viewer_id', 'viewer_email', 'page_number', 'active_ms', 'active_seconds', 'reason', 'metadata'],
  interactions: [
    'id', 'occurred_at', 'event_type', 'session_id', 'viewer_id', 'viewer_email', 'page_number', 'active_ms', 'active_seconds', 'exit_reason', 'source_type',
    'source_host', 'tracked_link_id', 'tracked_link_name', 'country', 'region', 'city', 'latitude', 'longitude', 'metadata', 'created_at',
  ],
  leads: ['id', 'submitted_at', 'name', 'email', 'phone', 'company', 'message', 'viewer_id', 'session_id', 'tracked_link_id', 'tracked_link_name'],
  pages: [
    'page_number', 'unique_readers', 'total_segments', 'total_active_ms', 'total_active_seconds', 'avg_active_ms_per_reader', 'avg_active_seconds_per_reader',
    'avg_active_ms_per_segment', 'avg_active_seconds_per_segment', 'median_active_ms_per_segment', 'median_active_seconds_per_segment',
  ],
  readerPages: [
    'viewer_id', 'viewer_email', 'page_number', 'segments', 'total_active_ms', 'total_active_seconds', 'avg_active_ms_per_segment', 'avg_active_seconds_per_segment',
    'first_viewed_at', 'last_viewed_at',
  ],
  readers: ['viewer_id', 'viewer_email', 'session_id', 'visits', 'pages_viewed', 'clicks', 'active_ms', 'active_seconds', 'duration_seconds', 'engagement_score', 'first_visit_at', 'last_visit_at'],
} as const;

/** ISO 8601 UTC with microseconds (to_char): exact for the keyset, cut to milliseconds for the cell. */
const ISO_MICROS = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';
const millis = (t: string): string => `${t.slice(0, 23)}Z`;

interface InteractionExportRow {
  id: string | number;
  t: string;
  event_type: string;
  session_id: string;
  viewer_id: number | null;
  viewer_email: string | null;
  page_number: number | null;
  active_ms: number | null;
  exit_reason: string | null;
  source_type: string;
  source_host: string | null;
  tracked_link_id: number | null;
  tracked_link_name: string | null;
  country: string | null;
  region: string | null;
  city: string | null;
  latitude: number | null;
  longitude: number | null;
  metadata: unknown;
  c: string;
}

export type ExportQuery = AnalyticsQuery & { include_anonymous?: boolean | undefined };

export class ExportsService {
  private readonly analytics: AnalyticsQueriesService;
  private readonly reader: AnalyticsReader;
  private readonly batchRows: number;
  /** Exports streaming now, and batches read since start (observability; tests watch a disconnect stop the reads). */
  active = 0;
  batchesRead = 0;

  constructor(deps: { analytics: AnalyticsQueriesService; reader: AnalyticsReader; batchRows: number }) {
    this.analytics = deps.analytics;
    this.reader = deps.reader;
    this.batchRows = deps.batchRows;
  }

  private filename(book: BookRow, kind: string, date: string | undefined): string {
    const range = date && date !== 'all' ? `-${date.replace(',', '_to_')}` : '';
    return `${slugFromName(book.name) || 'book'}-${book.randomId}-${kind}${range}.csv`;
  }

  /** Counts the walk as active while it runs, however it ends. */
  private async *tracked(rows: AsyncGenerator<Cell[][]>): AsyncGenerator<Cell[][]> {
    this.active++;
    try {
      yield* rows;
    } finally {
      this.active--;
    }
  }

  /** Walks a keyset-paginated read batch after batch. */
  private async *pages<T>(read: (page: PageQuery) => Promise<Page<T>>, toCells: (row: T) => Cell[]): AsyncGenerator<Cell[][]> {
    let cursor: string | undefined;
    do {
      const page = await read({ cursor, limit: this.batchRows });
      this.batchesRead++;
      yield page.data.map(toCells);
      cursor = page.meta.next_cursor ?? undefined;
    } while (cursor);
  }

  private make(book: BookRow, kind: string, q: ExportQuery, columns: readonly string[], rows: () => AsyncGenerator<Cell[][]>): CsvExport {
    return { filename: this.filename(book, kind, q.date), columns, rows: () => this.tracked(rows()) };
  }

  async analyticsSummary(caller: Caller, q: ExportQuery): Promise<CsvExport> {
    const { book, filter } = await this.analytics.scope(caller, q);
    const summaries = this.analytics.summaries;
    const batches = () => this.batchesRead++;
    return this.make(book, 'analytics', q, EXPORT_COLUMNS.analytics, async function* () {
      const days = await summaries.daily(filter);
      batches();
      yield days.map((d): Cell[] => [d.day as string, num(d.visits), num(d.impressions), num(d.reads), num(d.clicks), num(d.readers), num(d.identified_readers), num(d.pages_viewed), num(d.duration_seconds), score(d.engagement)]);
    });
  }

  async auditLog(caller: Caller, q: ExportQuery, options: { accessOnly?: boolean } = {}): Promise<CsvExport> {
    const { book, filter } = await this.analytics.scope(caller, q);
    return this.make(book, options.accessOnly ? 'access-audit' : 'audit-log', q, EXPORT_COLUMNS.audit, () => this.pages(
      (page) => this.analytics.events.auditLog(book, filter, page, options),
      (e) => [e.id, e.occurred_at, e.event_type, e.source, e.source_event_id, e.viewer_id, safeText(e.viewer_email), e.page_number, e.active_ms, e.active_seconds,
        safeText(e.reason), typeof e.metadata === 'string' ? safeText(e.metadata) : safeJson(e.metadata)],
    ));
  }

  async interactionEvents(caller: Caller, q: ExportQuery): Promise<CsvExport> {
    const { book, filter } = await this.analytics.scope(caller, q);
    return this.make(book, 'interaction-events', q, EXPORT_COLUMNS.interactions, () => this.interactionRows(filter));
  }

  /**
   * The interaction events in the order of GET /analytics/interaction-events
   * (occurred_at, id), read by the export itself rather than through the
   * list's records: only the exported columns, the times formatted by the
   * database (text, with microseconds for the keyset; the cell keeps the
   * milliseconds, as the API's ISO strings), and each row mapped straight
   * to its cells. This read was most of the export's time.
   */
  private async *interactionRows(filter: AnalyticsFilter): AsyncGenerator<Cell[][]> {
    let after = sql``;
    for (;;) {
      const rows = await this.reader.rows<InteractionExportRow>(sql`
        select e.id, to_char(e.occurred_at at time zone 'UTC', ${ISO_MICROS}) as t, e.event_type, e.session_id, e.viewer_id, v.email as viewer_email,
               e.page_number, e.active_ms, e.exit_reason, e.source_type, e.source_host, e.tracked_link_id, l.name as tracked_link_name,
               e.country, e.region, e.city, e.latitude, e.longitude, e.metadata, to_char(e.created_at at time zone 'UTC', ${ISO_MICROS}) as c
        from interaction_events e
        left join viewers v on v.id = e.viewer_id
        left join tracked_links l on l.id = e.tracked_link_id
        where ${filterConditions('e', 'occurred_at', filter, { session: true, page: true, eventType: true })} ${after}
        order by e.occurred_at, e.id limit ${this.batchRows}`);
      this.batchesRead++;
      const cells = new Array<Cell[]>(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const e = rows[i]!;
        const activeMs = e.active_ms;
        cells[i] = [e.id, millis(e.t), e.event_type, safeText(e.session_id), e.viewer_id, safeText(e.viewer_email), e.page_number, activeMs,
          activeMs === null ? null : seconds(activeMs), e.exit_reason, e.source_type, safeText(e.source_host), e.tracked_link_id, safeText(e.tracked_link_name),
          e.country, safeText(e.region), safeText(e.city), e.latitude, e.longitude, safeJson(e.metadata), millis(e.c)];
      }
      yield cells;
      const last = rows[rows.length - 1];
      if (!last || rows.length < this.batchRows) return;
      after = sql`and (e.occurred_at, e.id) > (${last.t}::timestamptz, ${last.id})`;
    }
  }

  async leads(caller: Caller, q: ExportQuery): Promise<CsvExport> {
    const { book, filter } = await this.analytics.scope(caller, q);
    return this.make(book, 'leads', q, EXPORT_COLUMNS.leads, () => this.pages(
      (page) => this.analytics.events.leads(filter, page),
      (d) => {
        const fields = (d.fields ?? {}) as Record<string, string>;
        return [num(d.id), iso(d.created_at), safeText(d.name as string), safeText(d.email as string), safeText(fields.phone), safeText(fields.company),
          safeText(fields.message), d.viewer_id === null ? null : num(d.viewer_id), safeText(d.session_id as string),
          d.tracked_link_id === null ? null : num(d.tracked_link_id), safeText(d.tracked_link_name as string | null)];
      },
    ));
  }

  async pagePerformance(caller: Caller, q: ExportQuery): Promise<CsvExport> {
    const { book, filter } = await this.analytics.scope(caller, q);
    const summaries = this.analytics.summaries;
    const batches = () => this.batchesRead++;
    return this.make(book, 'page-performance', q, EXPORT_COLUMNS.pages, async function* () {
      const pages = await summaries.pagePerformance(book, filter);
      batches();
      yield pages.map((p): Cell[] => [p.page_number, p.unique_readers, p.total_segments, p.total_active_ms, p.total_active_seconds, p.avg_active_ms_per_reader, p.avg_active_seconds_per_reader,
          p.avg_active_ms_per_segment, p.avg_active_seconds_per_segment, p.median_active_ms_per_segment, p.median_active_seconds_per_segment]);
    });
  }

  async readerPages(caller: Caller, q: ExportQuery): Promise<CsvExport> {
    const { book, filter } = await this.analytics.scope(caller, q);
    return this.make(book, 'reader-pages', q, EXPORT_COLUMNS.readerPages, () => this.readerPageRows(book, filter));
  }

  private async *readerPageRows(book: BookRow, filter: AnalyticsFilter): AsyncGenerator<Cell[][]> {
    let after: [number, number] | undefined;
    for (;;) {
      const rows = await this.analytics.summaries.readerPages(book, filter, { after, limit: this.batchRows });
      this.batchesRead++;
      yield rows.map((r): Cell[] => [r.viewer_id, safeText(r.viewer_email), r.page_number, r.segments, r.total_active_ms, r.total_active_seconds, r.avg_active_ms_per_segment,
          r.avg_active_seconds_per_segment, r.first_viewed_at, r.last_viewed_at]);
      const last = rows[rows.length - 1];
      if (!last || rows.length < this.batchRows) return;
      after = [last.viewer_id, last.page_number];
    }
  }

  async readers(caller: Caller, q: ExportQuery): Promise<CsvExport> {
    const { book, filter } = await this.analytics.scope(caller, q);
    const includeAnonymous = q.include_anonymous ?? false;
    return this.make(book, 'readers', q, EXPORT_COLUMNS.readers, () => this.pages(
      (page) => this.analytics.summaries.readers(book, filter, { includeAnonymous, sort: 'recent', cursor: page.cursor, limit: page.limit }),
      (r) => [r.viewer_id, safeText(r.viewer_email), safeText(r.session_id), r.visits, r.pages_viewed, r.clicks, r.active_ms, r.active_seconds, r.duration_seconds,
        r.engagement_score, r.first_visit_at, r.last_visit_at],
    ));
  }
}
