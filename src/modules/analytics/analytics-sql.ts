/**
 * What every analytics read shares: the filters of spec part 4 as SQL
 * conditions, and a statement timeout so one heavy request cannot hold the
 * database (each read runs in its own short transaction with
 * `SET LOCAL statement_timeout`; a query stopped by it answers 503 asking
 * for a narrower range instead of a 500).
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../platform/db/database.ts';
import { SQL_STATE, sqlStateOf } from '../../platform/db/sql-state.ts';
import { ERRORS } from '../../platform/errors.ts';
import type { DateRange } from './date-range.ts';

/** The filters of the analytics operations; each applies only where the operation lists it. */
export interface AnalyticsFilter {
  /** The book's internal id (resolved from its random_id within the caller's workspace). */
  bookId: number;
  range: DateRange;
  viewerId?: number | undefined;
  trackedLinkId?: number | undefined;
  sessionId?: string | undefined;
  pageNumber?: number | undefined;
  eventType?: string | undefined;
  /** `exclude_team`: the team's identified readers (members, listed addresses and domains), whose rows are left out. */
  excludeViewerIds?: readonly number[] | undefined;
  /** `version`: only what was read on this version of the book (docs/book-versions.md, "Analytics per version"). */
  version?: number | undefined;
  /**
   * `across_versions` (page figures, with `version`): the pages of earlier versions that match a page of
   * `version` (book_page_fingerprints), whose segments count under that page's number in `version`.
   */
  matchedPages?: readonly { version: number; page: number; as: number }[] | undefined;
}

/**
 * How a table knows the version read: its own `book_version` column (visits,
 * interaction events), the visit it belongs to (leads, by session), or the
 * interaction event it was copied from (audit events; gate decisions have no
 * version and are kept). Rows recorded before versions were tracked (null)
 * are version 1's: they predate any second version.
 */
export type VersionSource = 'column' | 'visit' | 'audit';

function versionCondition(alias: string, source: VersionSource, version: number): SQL {
  const t = sql.raw(alias);
  if (source === 'column') return sql`coalesce(${t}.book_version, 1) = ${version}`;
  if (source === 'visit') {
    return sql`exists (select 1 from view_events vv where vv.book_id = ${t}.book_id and vv.session_id = ${t}.session_id and coalesce(vv.book_version, 1) = ${version})`;
  }
  return sql`(${t}.source <> 'reader' or exists (select 1 from interaction_events ve where ve.id = ${t}.source_event_id and coalesce(ve.book_version, 1) = ${version}))`;
}

/** Whether a filter leaves any reader out: the rollups (which know no readers) cannot answer it. */
export const excludesReaders = (f: AnalyticsFilter) => f.excludeViewerIds !== undefined && f.excludeViewerIds.length > 0;

/** Whether the rollups (which know neither readers nor versions) can answer a filter's page or flow figures. */
export const rollupsCanAnswer = (f: AnalyticsFilter) => !excludesReaders(f) && f.version === undefined;

/** `alias.column = value` for each filter given, and the date range on `timeColumn`. */
export function filterConditions(alias: string, timeColumn: string, f: AnalyticsFilter, options: { session?: boolean; page?: boolean; eventType?: boolean; version?: VersionSource } = {}): SQL {
  const col = (name: string) => sql.raw(`${alias}.${name}`);
  const parts: SQL[] = [sql`${col('book_id')} = ${f.bookId}`];
  if (f.range.from) parts.push(sql`${col(timeColumn)} >= ${f.range.from.toISOString()}::timestamptz`);
  if (f.range.to) parts.push(sql`${col(timeColumn)} < ${f.range.to.toISOString()}::timestamptz`);
  if (f.viewerId !== undefined) parts.push(sql`${col('viewer_id')} = ${f.viewerId}`);
  if (f.trackedLinkId !== undefined) parts.push(sql`${col('tracked_link_id')} = ${f.trackedLinkId}`);
  if (f.excludeViewerIds && f.excludeViewerIds.length > 0) {
    parts.push(sql`(${col('viewer_id')} is null or ${col('viewer_id')} not in (${sql.join(f.excludeViewerIds.map((id) => sql`${id}`), sql`, `)}))`);
  }
  if (options.session && f.sessionId !== undefined) parts.push(sql`${col('session_id')} = ${f.sessionId}`);
  if (options.page && f.pageNumber !== undefined) parts.push(sql`${col('page_number')} = ${f.pageNumber}`);
  if (options.eventType && f.eventType !== undefined) parts.push(sql`${col('event_type')} = ${f.eventType}`);
  if (f.version !== undefined) parts.push(versionCondition(alias, options.version ?? 'column', f.version));
  return sql.join(parts, sql` and `);
}

/** Memory for one sort or hash of an analytics read (the pool bounds how many run at once). */
export const ANALYTICS_WORK_MEM = '32MB';

const isTimeout = (error: unknown) => sqlStateOf(error) === SQL_STATE.queryCanceled;

export class AnalyticsReader {
  readonly db: Db;
  readonly timeoutMs: number;

  constructor(deps: { db: Db; statementTimeoutMs: number }) {
    this.db = deps.db;
    this.timeoutMs = deps.statementTimeoutMs;
  }

  /**
   * Runs reads in one transaction whose statements are stopped after the
   * timeout (503 then), with ANALYTICS_WORK_MEM for their sorts and hash
   * aggregates: the readers ranking groups a month of a busy book's visits
   * (100,000 readers, about 22 MB), which spilled to disk at the server's
   * default 4 MB. One statement sets both (PGlite takes one per call).
   */
  async read<T>(run: (tx: DbOrTx) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction(async (tx) => {
        await tx.execute(sql`select set_config('statement_timeout', ${String(Math.max(0, Math.floor(this.timeoutMs)))}, true), set_config('work_mem', ${ANALYTICS_WORK_MEM}, true)`);
        return run(tx);
      });
    } catch (error) {
      if (isTimeout(error)) {
        throw ERRORS.unavailable(`The analytics query took longer than ${this.timeoutMs / 1000} s and was stopped. Narrow the date range or add filters, then retry.`);
      }
      throw error;
    }
  }

  /** Rows of a raw query, inside read(). */
  async rows<T>(query: SQL): Promise<T[]> {
    return this.read(async (tx) => rowsOf<T>(await tx.execute(query)));
  }
}

export function rowsOf<T>(result: unknown): T[] {
  return ((result as { rows?: unknown[] }).rows ?? (result as unknown[])) as T[];
}

/** A number from a driver value (node-postgres answers bigint and numeric as strings). */
export const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));
export const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
export const iso = (value: unknown): string => new Date(value as string | Date).toISOString();
/** ms → seconds as a number with millisecond precision. */
export const seconds = (ms: number): number => Math.round(ms) / 1000;
/** engagement_score on the wire: a string with one decimal. */
export const score = (value: unknown): string => (Math.round(num(value) * 10) / 10).toFixed(1);
