/**
 * The eight CSV exports: the same reads as the analytics operations, with
 * the same filters, walked in batches of EXPORT_BATCH_ROWS (keyset pages,
 * each batch its own short statement, so the whole result is never in
 * memory and one connection is never held for the whole download; works
 * alike on PGlite and PostgreSQL). Each batch is one CSV chunk (csvStream);
 * a client that disconnects stops the walk after the batch being read.
 *
 * The large ones (interaction events, audit log, access audit) select cells
 * the database formats (csv-cells.ts); on PostgreSQL that select runs as
 * one COPY streamed to the client (copy-out.ts: no row parsing or
 * formatting in Node, about four times less CPU per MB), on PGlite or when
 * every COPY slot is taken it is walked in batches: the same bytes.
 *
 * The book and filters are checked before the first byte is sent (and a
 * COPY has sent its first bytes), so a wrong book or date answers a JSON
 * error, not a broken file. Timestamps are ISO 8601 UTC; text typed by
 * readers or customers goes through safeText or typedTextCell (formula
 * injection).
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Readable } from 'node:stream';
import type { CopyOut } from '../../platform/db/copy-out.ts';
import { slugFromName } from './tracked-links.service.ts';
import type { BookRow } from '../books/books.tables.ts';
import type { AnalyticsQueriesService, AnalyticsQuery, Caller } from './analytics-queries.service.ts';
import type { Page, PageQuery } from './analytics-events.service.ts';
import type { AnalyticsFilter } from './analytics-sql.ts';
import type { AnalyticsReader } from './analytics-sql.ts';
import { filterConditions, iso, num, score } from './analytics-sql.ts';
import { safeText, type Cell, type CsvExport } from './csv.ts';
import { doubleCell, integerCell, isoCell, jsonCell, secondsCell, textCell, typedTextCell } from './csv-cells.ts';

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

/** ISO 8601 UTC with microseconds (to_char): exact for the keyset of the batched reads. */
const ISO_MICROS = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';

/** A select list of cells named by their columns (the batched path reads them by name, COPY by position). */
function cellList(cells: Record<string, SQL>, columns: readonly string[]): SQL {
  return sql.join(columns.map((column) => sql`${cells[column]!} as ${sql.identifier(column)}`), sql`, `);
}

/** The interaction-events export's cells, all formatted by the database (csv-cells.ts). */
const INTERACTION_CELLS: Record<(typeof EXPORT_COLUMNS.interactions)[number], SQL> = {
  id: integerCell(sql`e.id`),
  occurred_at: isoCell(sql`e.occurred_at`),
  event_type: textCell(sql`e.event_type`),
  session_id: typedTextCell(sql`e.session_id`),
  viewer_id: integerCell(sql`e.viewer_id`),
  viewer_email: typedTextCell(sql`v.email`),
  page_number: integerCell(sql`e.page_number`),
  active_ms: integerCell(sql`e.active_ms`),
  active_seconds: secondsCell(sql`e.active_ms`),
  exit_reason: textCell(sql`e.exit_reason`),
  source_type: textCell(sql`e.source_type`),
  source_host: typedTextCell(sql`e.source_host`),
  tracked_link_id: integerCell(sql`e.tracked_link_id`),
  tracked_link_name: typedTextCell(sql`l.name`),
  country: textCell(sql`e.country`),
  region: typedTextCell(sql`e.region`),
  city: typedTextCell(sql`e.city`),
  latitude: doubleCell(sql`e.latitude`),
  longitude: doubleCell(sql`e.longitude`),
  metadata: jsonCell(sql`e.metadata`),
  created_at: isoCell(sql`e.created_at`),
};

/** The audit-log export's cells (the access audit's too). */
const AUDIT_CELLS: Record<(typeof EXPORT_COLUMNS.audit)[number], SQL> = {
  id: integerCell(sql`a.id`),
  occurred_at: isoCell(sql`a.occurred_at`),
  event_type: textCell(sql`a.event_type`),
  source: textCell(sql`a.source`),
  source_event_id: integerCell(sql`a.source_event_id`),
  viewer_id: integerCell(sql`a.viewer_id`),
  viewer_email: typedTextCell(sql`a.viewer_email`),
  page_number: integerCell(sql`a.page_number`),
  active_ms: integerCell(sql`a.active_ms`),
  active_seconds: secondsCell(sql`a.active_ms`),
  reason: typedTextCell(sql`a.reason`),
  metadata: jsonCell(sql`a.metadata`),
};

/**
 * One export read through the database's cells: its select, either as one
 * COPY or walked in keyset batches (occurred_at with microseconds, id) in
 * the same order.
 */
interface CellSelect {
  columns: readonly string[];
  cells: Record<string, SQL>;
  /** The table's alias; it has `occurred_at` and `id`. */
  alias: string;
  /** From and where, `after` appended to the conditions. */
  source: (after: SQL) => SQL;
}

export type ExportQuery = AnalyticsQuery & { include_anonymous?: boolean | undefined };

export class ExportsService {
  private readonly analytics: AnalyticsQueriesService;
  private readonly reader: AnalyticsReader;
  private readonly batchRows: number;
  private readonly copyOut: CopyOut | null;
  /** Exports streaming now, and batches read since start (observability; tests watch a disconnect stop the reads). */
  active = 0;
  batchesRead = 0;

  /** `copyOut`: PostgreSQL's COPY for the large exports (null: batches only, as on PGlite). */
  constructor(deps: { analytics: AnalyticsQueriesService; reader: AnalyticsReader; batchRows: number; copyOut?: CopyOut | null }) {
    this.analytics = deps.analytics;
    this.reader = deps.reader;
    this.batchRows = deps.batchRows;
    this.copyOut = deps.copyOut ?? null;
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

  private make(book: BookRow, kind: string, q: ExportQuery, columns: readonly string[], rows: () => AsyncGenerator<Cell[][]>, copied?: Readable | null): CsvExport {
    const csv: CsvExport = { filename: this.filename(book, kind, q.date), columns, rows: () => this.tracked(rows()) };
    if (copied) {
      this.active++;
      copied.once('close', () => this.active--);
      csv.copied = copied;
    }
    return csv;
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
    const access = options.accessOnly ? sql`and a.event_type in ('access_requested', 'access_granted', 'access_rejected')` : sql``;
    return this.cellExport(book, options.accessOnly ? 'access-audit' : 'audit-log', q, {
      columns: EXPORT_COLUMNS.audit, cells: AUDIT_CELLS, alias: 'a',
      source: (after) => sql`from audit_events a where ${filterConditions('a', 'occurred_at', filter, { eventType: true, version: 'audit' })} ${access} ${after}`,
    });
  }

  /** The events of GET /analytics/interaction-events with their viewer's email and link's name. */
  async interactionEvents(caller: Caller, q: ExportQuery): Promise<CsvExport> {
    const { book, filter } = await this.analytics.scope(caller, q);
    return this.cellExport(book, 'interaction-events', q, {
      columns: EXPORT_COLUMNS.interactions, cells: INTERACTION_CELLS, alias: 'e',
      source: (after) => sql`from interaction_events e
        left join viewers v on v.id = e.viewer_id
        left join tracked_links l on l.id = e.tracked_link_id
        where ${filterConditions('e', 'occurred_at', filter, { session: true, page: true, eventType: true })} ${after}`,
    });
  }

  /** COPY when a slot is free (PostgreSQL), else the batches: the same cells, the same order, the same bytes. */
  private async cellExport(book: BookRow, kind: string, q: ExportQuery, select: CellSelect): Promise<CsvExport> {
    const t = sql.raw(select.alias);
    const copied = await this.copyOut?.csv(sql`select ${cellList(select.cells, select.columns)} ${select.source(sql``)} order by ${t}.occurred_at, ${t}.id`);
    return this.make(book, kind, q, select.columns, () => this.cellBatches(select), copied);
  }

  /** The batched path: the cells of the COPY's select (already text), plus the keyset. */
  private async *cellBatches(select: CellSelect): AsyncGenerator<Cell[][]> {
    const { columns } = select;
    const t = sql.raw(select.alias);
    const list = cellList(select.cells, columns);
    let after = sql``;
    for (;;) {
      const rows = await this.reader.rows<Record<string, string | null>>(sql`
        select ${list}, to_char(${t}.occurred_at at time zone 'UTC', ${ISO_MICROS}) as key_time, ${t}.id as key_id
        ${select.source(after)}
        order by ${t}.occurred_at, ${t}.id limit ${this.batchRows}`);
      this.batchesRead++;
      const cells = new Array<Cell[]>(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        cells[i] = columns.map((column) => row[column]);
      }
      yield cells;
      const last = rows[rows.length - 1];
      if (!last || rows.length < this.batchRows) return;
      after = sql`and (${t}.occurred_at, ${t}.id) > (${last.key_time}::timestamptz, ${last.key_id})`;
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
