/**
 * The workspace-level analytics the application's overview shows, and the
 * two workspace settings they depend on (the time zone days begin in, and
 * who counts as the team):
 *
 *  - summary: views (visits), unique readers, reading time, leads and link
 *    clicks over a range, with the same figures for the previous period of
 *    the same length;
 *  - views over time: visits per day, week (from Monday) or month of the
 *    workspace's time zone, every bucket of the range listed;
 *  - top books, tracked links and embedding sites by visits.
 *
 * Every figure is of visits (view events) whose visit began in the range,
 * except link clicks (interaction events `link_clicked` that occurred in it)
 * and leads (lead forms submitted in it): each equals what the book-level
 * operations and exports list for the same range. `book_id` narrows all of
 * them to one book, so a book's screen shows the same figures.
 *
 * `exclude_team`: a visit, click or lead is the team's when its identified
 * reader's address (a lead identifies its reader by the address typed) is a member's (the people of the workspace), or is listed
 * in the workspace's `team_exclusions`, or its domain is. Anonymous visits are
 * never the team's (nothing tells who they are).
 */
import { eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import { findWorkspaceBook } from '../books/books.service.ts';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import { AnalyticsReader, num } from './analytics-sql.ts';
import { isTimeZone, parseDateRange, startOfDay, type DateRange } from './date-range.ts';

export type Interval = 'day' | 'week' | 'month';

export interface WorkspaceAnalyticsQuery {
  date?: string | undefined;
  tz?: string | undefined;
  book_id?: string | undefined;
  exclude_team?: boolean | undefined;
  tracked_link_id?: number | undefined;
}

export interface Figures {
  views: number;
  unique_readers: number;
  reading_seconds: number;
  leads: number;
  link_clicks: number;
}

export interface AnalyticsSettings {
  time_zone: string;
  team_exclusions: string[];
}

/** Settings limits: a list a person manages by hand. */
export const MAX_TEAM_EXCLUSIONS = 200;
const ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** An address (`ann@acme.com`) or a domain (`acme.com`, `@acme.com` accepted), lower case; null when neither. */
export function normalizeExclusion(entry: string): string | null {
  const value = entry.trim().toLowerCase().replace(/^@/, '');
  if (value.includes('@')) return ADDRESS.test(value) && value.length <= 254 ? value : null;
  return DOMAIN.test(value) ? value : null;
}

interface Scope {
  workspaceId: number;
  range: DateRange;
  bookId: number | null;
  trackedLinkId?: number | undefined;
  excludeTeam: boolean;
  teamList: string[];
}

const DAY_MS = 86_400_000;
/**
 * Unique readers of the visits `ve`: identified readers plus anonymous visits' sessions. The same count as
 * `count(distinct coalesce('v' || viewer_id, 's' || session_id))`, without building a string per visit: the
 * integers are counted apart and only anonymous rows' sessions are compared (200,000 visits on PostgreSQL: 140-190 ms instead of 260-270).
 */
const UNIQUE_READERS = sql`(count(distinct ve.viewer_id) + count(distinct ve.session_id) filter (where ve.viewer_id is null))`;
/**
 * The same count over the visits of one book (a group of one book, or a scope with `book_id`): a session is one visit
 * of a book (the unique (book_id, session_id) index), so its anonymous visits are their count, without sorting their
 * session ids (100,000 visits on PostgreSQL: 25-50 ms instead of 75-100).
 */
const UNIQUE_READERS_OF_A_BOOK = sql`(count(distinct ve.viewer_id) + count(*) filter (where ve.viewer_id is null))`;
const uniqueReaders = (s: Scope) => (s.bookId !== null ? UNIQUE_READERS_OF_A_BOOK : UNIQUE_READERS);
/** How recent a visit's last batch must be for it to count as reading now. */
export const READING_NOW_WINDOW_S = 120;
/** How long ago a visit may have begun and still count as reading now (a page load is one visit). */
export const READING_NOW_MAX_VISIT_H = 24;

/** The civil date (YYYY-MM-DD) of an instant in a zone. */
function civilDate(instant: Date, tz: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(instant);
}

function parseCivil(text: string) {
  const [y, m, d] = text.split('-').map(Number) as [number, number, number];
  return { y, m, d };
}

const civil = (t: Date) => `${t.getUTCFullYear()}-${String(t.getUTCMonth() + 1).padStart(2, '0')}-${String(t.getUTCDate()).padStart(2, '0')}`;

/** The first day of the bucket holding a civil date (weeks begin on Monday, as PostgreSQL's date_trunc). */
function bucketOf(day: string, interval: Interval): string {
  const { y, m, d } = parseCivil(day);
  if (interval === 'day') return day;
  if (interval === 'month') return civil(new Date(Date.UTC(y, m - 1, 1)));
  const t = new Date(Date.UTC(y, m - 1, d));
  return civil(new Date(t.getTime() - ((t.getUTCDay() + 6) % 7) * DAY_MS));
}

function nextBucket(start: string, interval: Interval): string {
  const { y, m, d } = parseCivil(start);
  if (interval === 'day') return civil(new Date(Date.UTC(y, m - 1, d + 1)));
  if (interval === 'week') return civil(new Date(Date.UTC(y, m - 1, d + 7)));
  return civil(new Date(Date.UTC(y, m, 1)));
}

/** Daily up to 92 days, weekly up to 400 (a year), monthly beyond: 12 to about 90 points. */
export function intervalFor(days: number): Interval {
  if (days <= 92) return 'day';
  if (days <= 400) return 'week';
  return 'month';
}

export class WorkspaceAnalyticsService {
  private readonly db: Db;
  private readonly reader: AnalyticsReader;

  constructor(deps: { db: Db; statementTimeoutMs: number }) {
    this.db = deps.db;
    this.reader = new AnalyticsReader(deps);
  }

  async settings(workspaceId: number): Promise<AnalyticsSettings> {
    const [row] = await this.db.select({ timeZone: workspaces.timeZone, list: workspaces.analyticsTeamExclusions }).from(workspaces).where(eq(workspaces.id, workspaceId));
    if (!row) throw ERRORS.notFound('Workspace');
    return { time_zone: row.timeZone, team_exclusions: row.list };
  }

  async updateSettings(workspaceId: number, body: { time_zone?: string | undefined; team_exclusions?: string[] | undefined }): Promise<AnalyticsSettings> {
    const set: Partial<typeof workspaces.$inferInsert> = {};
    const problems: Record<string, string[]> = {};
    if (body.time_zone !== undefined) {
      if (!isTimeZone(body.time_zone)) problems.time_zone = ['The time_zone must be an IANA time zone name such as UTC or Europe/Paris.'];
      else set.timeZone = new Intl.DateTimeFormat('en-US', { timeZone: body.time_zone }).resolvedOptions().timeZone;
    }
    if (body.team_exclusions !== undefined) {
      const normalized = body.team_exclusions.map((entry) => ({ entry, value: normalizeExclusion(entry) }));
      const bad = normalized.filter((n) => n.value === null).map((n) => n.entry);
      if (bad.length > 0) problems.team_exclusions = [`Each entry must be an e-mail address (ann@acme.com) or a domain (acme.com); not: ${bad.slice(0, 5).join(', ')}.`];
      else set.analyticsTeamExclusions = [...new Set(normalized.map((n) => n.value!))];
    }
    if (Object.keys(problems).length > 0) throw ERRORS.validation(problems);
    if (Object.keys(set).length > 0) await this.db.update(workspaces).set({ ...set, updatedAt: new Date() }).where(eq(workspaces.id, workspaceId));
    return this.settings(workspaceId);
  }

  /** The workspace's identified readers who are the team: a member's address, a listed one, or of a listed domain. */
  async teamViewerIds(workspaceId: number): Promise<number[]> {
    const settings = await this.settings(workspaceId);
    const s: Scope = { workspaceId, range: { from: null, to: null, tz: 'UTC' }, bookId: null, excludeTeam: true, teamList: settings.team_exclusions };
    const rows = await this.reader.rows<{ id: unknown }>(sql`select tv.id from viewers tv where tv.workspace_id = ${workspaceId} and ${this.teamAddress(s, sql.raw('tv.email'))} order by tv.id`);
    return rows.map((r) => num(r.id));
  }

  /** The range in `tz`, or in the workspace's zone when none is given; the book resolved within the workspace. */
  private async scope(workspaceId: number, q: WorkspaceAnalyticsQuery, now?: Date): Promise<Scope> {
    const settings = await this.settings(workspaceId);
    const range = parseDateRange(q.date, q.tz ?? settings.time_zone, now);
    const bookId = q.book_id === undefined ? null : (await findWorkspaceBook(this.db, workspaceId, q.book_id)).id;
    return { workspaceId, range, bookId, trackedLinkId: q.tracked_link_id, excludeTeam: q.exclude_team ?? false, teamList: settings.team_exclusions };
  }

  /**
   * Without `book_id`, the workspace's books named as such: interaction events are indexed by book (book, type, time),
   * not by workspace, so the workspace's link clicks are read book by book from that index instead of scanning every event.
   */
  private workspaceBooks(s: Scope, alias: string): SQL {
    return sql`${sql.raw(`${alias}.book_id`)} in (select wb.id from books wb where wb.workspace_id = ${s.workspaceId})`;
  }

  /** True (as SQL) when an address is the team's: a member's, listed, or of a listed domain. */
  private teamAddress(s: Scope, email: SQL): SQL {
    const listed = s.teamList.length === 0 ? sql`false` : sql`(lower(${email}) in (${sql.join(s.teamList.map((e) => sql`${e}`), sql`, `)}) or split_part(lower(${email}), '@', 2) in (${sql.join(s.teamList.map((e) => sql`${e}`), sql`, `)}))`;
    return sql`(${listed} or lower(${email}) in (select lower(u.email) from memberships m join users u on u.id = m.user_id where m.workspace_id = ${s.workspaceId}))`;
  }

  /** Rows of `alias` (with workspace_id, book_id, viewer_id and `timeColumn`) in the scope. */
  private where(s: Scope, alias: string, timeColumn: string, range: DateRange = s.range, options: { byBooks?: boolean } = {}): SQL {
    const col = (name: string) => sql.raw(`${alias}.${name}`);
    // A book (found within the workspace by scope()) scopes the rows alone, as in the book operations (filterConditions):
    // without workspace_id, which no (book, …) index holds, the link clicks are an index-only scan of the (book, type, time)
    // index instead of a heap fetch per click (33,000 clicks over 90 days on PostgreSQL: 34 ms instead of 275 ms, cold).
    // `byBooks`: without a book, the workspace's books named (workspaceBooks) scope the rows the same way.
    const parts: SQL[] = s.bookId !== null ? [sql`${col('book_id')} = ${s.bookId}`]
      : options.byBooks ? [this.workspaceBooks(s, alias)] : [sql`${col('workspace_id')} = ${s.workspaceId}`];
    // Visits, interaction events and leads all keep the tracked link they came through; another workspace's matches nothing.
    if (s.trackedLinkId !== undefined) parts.push(sql`${col('tracked_link_id')} = ${s.trackedLinkId}`);
    if (range.from) parts.push(sql`${col(timeColumn)} >= ${range.from.toISOString()}::timestamptz`);
    if (range.to) parts.push(sql`${col(timeColumn)} < ${range.to.toISOString()}::timestamptz`);
    if (s.excludeTeam) parts.push(sql`not exists (select 1 from viewers tv where tv.id = ${col('viewer_id')} and ${this.teamAddress(s, sql.raw('tv.email'))})`);
    return sql.join(parts, sql` and `);
  }

  private async figures(s: Scope, range: DateRange): Promise<Figures> {
    const [row] = await this.reader.rows<Record<string, unknown>>(sql`
      -- One pass over the range's visits for the three figures of visits.
      select v.views, v.unique_readers, v.reading_seconds,
        (select count(*) from leads l where ${this.where(s, 'l', 'created_at', range)}) as leads,
        (select count(*) from interaction_events ie where ie.event_type = 'link_clicked' and ${this.where(s, 'ie', 'occurred_at', range, { byBooks: true })}) as link_clicks
      from (select count(*) as views, ${uniqueReaders(s)} as unique_readers, coalesce(sum(ve.duration_seconds), 0) as reading_seconds
            from view_events ve where ${this.where(s, 've', 'recorded_at', range)}) v`);
    return { views: num(row!.views), unique_readers: num(row!.unique_readers), reading_seconds: num(row!.reading_seconds), leads: num(row!.leads), link_clicks: num(row!.link_clicks) };
  }

  /** The period of the same length just before a bounded range (same number of days in the zone). */
  static previousRange(range: DateRange): DateRange | null {
    if (!range.from || !range.to) return null;
    const first = civilDate(range.from, range.tz);
    const days = Math.round((Date.parse(`${civilDate(new Date(range.to.getTime() - 1), range.tz)}T00:00:00Z`) - Date.parse(`${first}T00:00:00Z`)) / DAY_MS) + 1;
    const { y, m, d } = parseCivil(first);
    return { from: startOfDay(parseCivil(civil(new Date(Date.UTC(y, m - 1, d - days)))), range.tz), to: range.from, tz: range.tz };
  }

  async summary(workspaceId: number, q: WorkspaceAnalyticsQuery, now?: Date) {
    const s = await this.scope(workspaceId, q, now);
    const previous = WorkspaceAnalyticsService.previousRange(s.range);
    // Both periods at once: on PostgreSQL two pooled connections (PGlite runs them in turn).
    const [current, before] = await Promise.all([this.figures(s, s.range), previous ? this.figures(s, previous) : null]);
    return {
      data: current,
      meta: {
        time_zone: s.range.tz,
        from: s.range.from?.toISOString() ?? null,
        to: s.range.to?.toISOString() ?? null,
        previous: previous && before ? { from: previous.from!.toISOString(), to: previous.to!.toISOString(), ...before } : null,
      },
    };
  }

  async viewsOverTime(workspaceId: number, q: WorkspaceAnalyticsQuery & { interval?: Interval | undefined }, now: Date = new Date()) {
    const s = await this.scope(workspaceId, q, now);
    const tz = s.range.tz;
    let first = s.range.from ? civilDate(s.range.from, tz) : null;
    const last = s.range.to ? civilDate(new Date(s.range.to.getTime() - 1), tz) : civilDate(now, tz);
    if (first === null) {
      const [row] = await this.reader.rows<{ first: unknown }>(sql`select min(ve.recorded_at) as first from view_events ve where ${this.where(s, 've', 'recorded_at')}`);
      first = row?.first ? civilDate(new Date(row.first as string), tz) : last;
    }
    const days = Math.round((Date.parse(`${last}T00:00:00Z`) - Date.parse(`${first}T00:00:00Z`)) / DAY_MS) + 1;
    const interval = q.interval ?? intervalFor(days);
    // Grouped by the bucket's timestamp, formatted once per bucket: grouping by the text (to_char of every visit) sorted
    // 100,000 strings (90 days of one book on PostgreSQL: p50 60-80 ms instead of 90-110).
    const rows = await this.reader.rows<{ period: string; views: unknown; unique_readers: unknown; reading_seconds: unknown }>(sql`
      select to_char(b.bucket, 'YYYY-MM-DD') as period, b.views, b.unique_readers, b.reading_seconds from (
        select date_trunc(${interval}, ve.recorded_at at time zone ${tz}) as bucket,
               count(*) as views,
               ${uniqueReaders(s)} as unique_readers,
               coalesce(sum(ve.duration_seconds), 0) as reading_seconds
        from view_events ve where ${this.where(s, 've', 'recorded_at')}
        group by 1) b`);
    const found = new Map(rows.map((r) => [r.period, r]));
    const data: { period: string; views: number; unique_readers: number; reading_seconds: number }[] = [];
    for (let period = bucketOf(first, interval); period <= last; period = nextBucket(period, interval)) {
      const r = found.get(period);
      data.push({ period, views: num(r?.views), unique_readers: num(r?.unique_readers), reading_seconds: num(r?.reading_seconds) });
    }
    return { data, meta: { interval, time_zone: tz, today: civilDate(now, tz) } };
  }

  /**
   * Visits open now: a batch arrived in the last READING_NOW_WINDOW_S seconds
   * (the reader sends one every 10 s while events happen) and the visit has
   * not ended (no `session_ended` yet). A reader idle on one page sends
   * nothing, so it leaves the count after the window. Only visits begun in the
   * last READING_NOW_MAX_VISIT_H hours are looked at, so the count reads that
   * slice of the (workspace, recorded_at) index, not every visit the workspace
   * ever had (a page load kept open and read again after a day is not counted).
   */
  async readingNow(workspaceId: number, q: Pick<WorkspaceAnalyticsQuery, 'book_id' | 'exclude_team'>, now: Date = new Date()) {
    const s = await this.scope(workspaceId, { book_id: q.book_id, exclude_team: q.exclude_team });
    const since = new Date(now.getTime() - READING_NOW_WINDOW_S * 1000).toISOString();
    const begun = new Date(now.getTime() - READING_NOW_MAX_VISIT_H * 3_600_000).toISOString();
    const [row] = await this.reader.rows<{ n: unknown }>(sql`
      select count(*) as n from view_events ve
      where ${this.where(s, 've', 'recorded_at')} and ve.recorded_at >= ${begun}::timestamptz and ve.updated_at >= ${since}::timestamptz and ve.exit_reason is null`);
    return { data: { sessions: num(row?.n), window_seconds: READING_NOW_WINDOW_S, at: now.toISOString() } };
  }

  async topBooks(workspaceId: number, q: WorkspaceAnalyticsQuery & { limit?: number | undefined }) {
    const s = await this.scope(workspaceId, q);
    const rows = await this.reader.rows<Record<string, unknown>>(sql`
      select b.random_id, b.name, count(*) as views,
             ${UNIQUE_READERS_OF_A_BOOK} as unique_readers,
             coalesce(sum(ve.duration_seconds), 0) as reading_seconds
      from view_events ve join books b on b.id = ve.book_id
      where ${this.where(s, 've', 'recorded_at')}
      group by b.id, b.random_id, b.name order by views desc, b.id limit ${q.limit ?? 10}`);
    return { data: rows.map((r) => ({ book_id: String(r.random_id), name: String(r.name), ...counts(r) })) };
  }

  async topTrackedLinks(workspaceId: number, q: WorkspaceAnalyticsQuery & { limit?: number | undefined }) {
    const s = await this.scope(workspaceId, q);
    const rows = await this.reader.rows<Record<string, unknown>>(sql`
      select tl.id, tl.name, tl.slug, b.random_id, b.name as book_name, count(*) as views,
             ${uniqueReaders(s)} as unique_readers,
             coalesce(sum(ve.duration_seconds), 0) as reading_seconds
      from view_events ve join tracked_links tl on tl.id = ve.tracked_link_id join books b on b.id = ve.book_id
      where ${this.where(s, 've', 'recorded_at')}
      group by tl.id, tl.name, tl.slug, b.random_id, b.name order by views desc, tl.id limit ${q.limit ?? 10}`);
    return {
      data: rows.map((r) => ({ tracked_link_id: num(r.id), name: String(r.name), slug: String(r.slug), book_id: String(r.random_id), book_name: String(r.book_name), ...counts(r) })),
    };
  }

  async topEmbeddingSites(workspaceId: number, q: WorkspaceAnalyticsQuery & { limit?: number | undefined }) {
    const s = await this.scope(workspaceId, q);
    const rows = await this.reader.rows<Record<string, unknown>>(sql`
      select ve.source_host, count(*) as views,
             ${uniqueReaders(s)} as unique_readers,
             coalesce(sum(ve.duration_seconds), 0) as reading_seconds
      from view_events ve
      where ve.from_embedded and ve.source_host is not null and ${this.where(s, 've', 'recorded_at')}
      group by ve.source_host order by views desc, ve.source_host limit ${q.limit ?? 10}`);
    return { data: rows.map((r) => ({ host: String(r.source_host), ...counts(r) })) };
  }
}

const counts = (r: Record<string, unknown>) => ({ views: num(r.views), unique_readers: num(r.unique_readers), reading_seconds: num(r.reading_seconds) });

