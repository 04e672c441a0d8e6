/**
 * The row-by-row analytics reads: the audit log, interaction events, view
 * events (visits) and one visit's pages. Lists are keyset-paginated on
 * (time, id), so rows inserted while a client pages land before or after its
 * cursor and a page never skips or repeats one; the exports walk the same
 * pages in batches.
 *
 * Order: the audit log and interaction events are chronological (oldest
 * first, a timeline); view events newest first (the latest visits, as a
 * dashboard lists them).
 */
import { sql, type SQL } from 'drizzle-orm';
import { ERRORS } from '../../platform/errors.ts';
import type { BookRow } from '../books/books.tables.ts';
import { auditRecord, interactionRecord, viewRecord, type AuditLogEventRecord, type InteractionEventRecord, type ViewEventRecord } from './analytics-records.ts';
import { filterConditions, iso, num, seconds, type AnalyticsFilter, type AnalyticsReader } from './analytics-sql.ts';

export interface PageQuery {
  cursor?: string | undefined;
  limit: number;
}

export interface Page<T> {
  data: T[];
  meta: { next_cursor: string | null; has_more: boolean };
}

interface Cursor {
  s: string;
  t: string;
  i: number;
}

function decode(sortName: string, cursor: string | undefined): Cursor | null {
  if (!cursor) return null;
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Cursor;
    if (c.s !== sortName || !Number.isSafeInteger(c.i) || Number.isNaN(Date.parse(c.t))) throw new Error('mismatch');
    return c;
  } catch {
    throw ERRORS.validation({ cursor: ['The cursor is invalid or belongs to another operation; use meta.next_cursor of the previous page unchanged.'] });
  }
}

const encode = (sortName: string, time: unknown, id: unknown) => Buffer.from(JSON.stringify({ s: sortName, t: iso(time), i: num(id) })).toString('base64url');

/** A keyset page over (timeColumn, id) in one direction. */
async function keysetPage<T>(
  reader: AnalyticsReader, sortName: string, direction: 'asc' | 'desc', alias: string, timeColumn: string,
  build: (after: SQL, order: SQL, limit: number) => SQL, page: PageQuery, toRecord: (row: Record<string, unknown>) => T,
): Promise<Page<T>> {
  const cursor = decode(sortName, page.cursor);
  const key = sql.raw(`(${alias}.${timeColumn}, ${alias}.id)`);
  const after = cursor ? sql`and ${key} ${sql.raw(direction === 'asc' ? '>' : '<')} (${cursor.t}::timestamptz, ${cursor.i})` : sql``;
  const order = sql.raw(`${alias}.${timeColumn} ${direction}, ${alias}.id ${direction}`);
  const rows = await reader.rows<Record<string, unknown>>(build(after, order, page.limit + 1));
  const hasMore = rows.length > page.limit;
  const kept = hasMore ? rows.slice(0, page.limit) : rows;
  const last = kept[kept.length - 1];
  return {
    data: kept.map(toRecord),
    meta: { has_more: hasMore, next_cursor: hasMore && last ? encode(sortName, last[timeColumn], last.id) : null },
  };
}

export interface LeadRecord {
  id: number;
  book_id: string;
  submitted_at: string;
  name: string;
  email: string;
  phone: string | null;
  company: string | null;
  message: string | null;
  viewer_id: number | null;
  session_id: string;
  tracked_link_id: number | null;
  tracked_link_name: string | null;
}

function leadRecord(row: Record<string, unknown>, bookRandomId: string): LeadRecord {
  const fields = (row.fields ?? {}) as Record<string, string>;
  // An optional field left empty or not asked for is null (the CSV writes an empty cell for both).
  const field = (name: string) => (fields[name] ? fields[name] : null);
  return {
    id: num(row.id), book_id: bookRandomId, submitted_at: iso(row.created_at), name: row.name as string, email: row.email as string,
    phone: field('phone'), company: field('company'), message: field('message'),
    viewer_id: row.viewer_id === null ? null : num(row.viewer_id), session_id: row.session_id as string,
    tracked_link_id: row.tracked_link_id === null ? null : num(row.tracked_link_id), tracked_link_name: (row.tracked_link_name as string | null) ?? null,
  };
}

export const ACCESS_EVENT_TYPES = ['access_requested', 'access_granted', 'access_rejected'] as const;

export interface VisitPage {
  position: number;
  page_number: number;
  active_ms: number;
  active_seconds: number;
  viewed_at: string;
}

export interface VisitMeta {
  view_event_id: number;
  found: boolean;
  session_id: string | null;
  viewer_id: number | null;
  pages: number;
  distinct_pages?: number;
  total_active_ms: number;
  total_active_seconds: number;
  duration_seconds?: number;
  recorded_at: string | null;
}

export class AnalyticsEventsService {
  private readonly reader: AnalyticsReader;

  constructor(reader: AnalyticsReader) {
    this.reader = reader;
  }

  /** The audit log, oldest first; `accessOnly` keeps the access gate's decisions (the access-audit export). */
  auditLog(book: BookRow, f: AnalyticsFilter, page: PageQuery, options: { accessOnly?: boolean } = {}): Promise<Page<AuditLogEventRecord>> {
    const access = options.accessOnly ? sql`and a.event_type in ('access_requested', 'access_granted', 'access_rejected')` : sql``;
    return keysetPage(this.reader, 'audit', 'asc', 'a', 'occurred_at', (after, order, limit) => sql`
      select a.* from audit_events a
      where ${filterConditions('a', 'occurred_at', f, { eventType: true, version: 'audit' })} ${access} ${after}
      order by ${order} limit ${limit}`, page, (row) => auditRecord(row, book.randomId));
  }

  interactionEvents(book: BookRow, f: AnalyticsFilter, page: PageQuery): Promise<Page<InteractionEventRecord & { tracked_link_name?: string | null }>> {
    return keysetPage(this.reader, 'interactions', 'asc', 'e', 'occurred_at', (after, order, limit) => sql`
      select e.*, v.email as viewer_email, l.name as tracked_link_name from interaction_events e
      left join viewers v on v.id = e.viewer_id
      left join tracked_links l on l.id = e.tracked_link_id
      where ${filterConditions('e', 'occurred_at', f, { session: true, page: true, eventType: true })} ${after}
      order by ${order} limit ${limit}`, page, (row) => ({ ...interactionRecord(row, book.randomId), tracked_link_name: (row.tracked_link_name as string | null) ?? null }));
  }

  /** Visits, newest first; `source_host` matches the host exactly (lower case, as stored). */
  viewEvents(book: BookRow, f: AnalyticsFilter & { sourceHost?: string | undefined }, page: PageQuery): Promise<Page<ViewEventRecord>> {
    const host = f.sourceHost !== undefined ? sql`and w.source_host = ${f.sourceHost.toLowerCase()}` : sql``;
    return keysetPage(this.reader, 'views', 'desc', 'w', 'recorded_at', (after, order, limit) => sql`
      select w.*, v.email as viewer_email, l.name as tracked_link_name, l.slug as tracked_link_slug from view_events w
      left join viewers v on v.id = w.viewer_id
      left join tracked_links l on l.id = w.tracked_link_id
      where ${filterConditions('w', 'recorded_at', f, { session: true })} ${host} ${after}
      order by ${order} limit ${limit}`, page, (row) => viewRecord(row, book.randomId, book.name));
  }

  /** Lead form submissions, oldest first (the leads export). `date` applies to when they were submitted. */
  leads(f: AnalyticsFilter, page: PageQuery): Promise<Page<Record<string, unknown>>> {
    return keysetPage(this.reader, 'leads', 'asc', 'd', 'created_at', (after, order, limit) => sql`
      select d.*, l.name as tracked_link_name from leads d left join tracked_links l on l.id = d.tracked_link_id
      where ${filterConditions('d', 'created_at', f, { session: true, version: 'visit' })} ${after}
      order by ${order} limit ${limit}`, page, (row) => row);
  }

  /** The leads of GET /analytics/leads: the same rows as the leads export, as records. */
  async leadRecords(book: BookRow, f: AnalyticsFilter, page: PageQuery): Promise<Page<LeadRecord>> {
    const rows = await this.leads(f, page);
    return { ...rows, data: rows.data.map((row) => leadRecord(row, book.randomId)) };
  }

  /**
   * One visit's pages in the order the reader saw them (its page segments by
   * the reader's sequence), with the visit's totals in meta. A visit of
   * another book or workspace matches nothing: empty data, `found: false`.
   */
  async visitPages(book: BookRow, viewEventId: number, version?: number): Promise<{ data: VisitPage[]; meta: VisitMeta }> {
    // With `version`, a visit that started on another version matches nothing, like a visit of another book.
    const ofVersion = version === undefined ? sql`` : sql`and coalesce(book_version, 1) = ${version}`;
    return this.reader.read(async (tx) => {
      const { rows: views } = (await tx.execute(sql`select * from view_events where id = ${viewEventId} and book_id = ${book.id} ${ofVersion}`)) as unknown as { rows: Record<string, unknown>[] };
      const view = views[0];
      if (!view) {
        return { data: [], meta: { view_event_id: viewEventId, found: false, session_id: null, viewer_id: null, pages: 0, total_active_ms: 0, total_active_seconds: 0, recorded_at: null } };
      }
      const { rows } = (await tx.execute(sql`
        select page_number, active_ms, occurred_at from interaction_events
        where book_id = ${book.id} and session_id = ${view.session_id as string} and event_type = 'page_segment_completed'
        order by sequence`)) as unknown as { rows: Record<string, unknown>[] };
      const data = rows.map((r, i) => ({ position: i + 1, page_number: num(r.page_number), active_ms: num(r.active_ms), active_seconds: seconds(num(r.active_ms)), viewed_at: iso(r.occurred_at) }));
      const total = data.reduce((sum, p) => sum + p.active_ms, 0);
      return {
        data,
        meta: {
          view_event_id: viewEventId, found: true, session_id: view.session_id as string, viewer_id: view.viewer_id === null ? null : num(view.viewer_id),
          pages: data.length, distinct_pages: num(view.pages_viewed), total_active_ms: total, total_active_seconds: seconds(total),
          duration_seconds: num(view.duration_seconds), recorded_at: iso(view.recorded_at),
        },
      };
    });
  }
}
