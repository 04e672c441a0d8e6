/**
 * The analytics operations (spec part 4, and leads), one method each: resolves the
 * book within the caller's workspace (another workspace's book is "not
 * found", exactly like a missing one), reads `date`/`tz`, and asks the
 * events or summaries service. Filters naming another workspace's or book's
 * viewer, tracked link or visit simply match nothing: every read is bounded
 * by the book.
 */
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import { findWorkspaceBook } from '../books/books.service.ts';
import { versionPageCount } from '../books/book-versions.ts';
import { matchedPagesOf } from '../books/page-fingerprints.ts';
import type { BookRow } from '../books/books.tables.ts';
import { AnalyticsEventsService, type PageQuery } from './analytics-events.service.ts';
import { AnalyticsReader, type AnalyticsFilter } from './analytics-sql.ts';
import { AnalyticsSummariesService, type ReaderSort } from './analytics-summaries.service.ts';
import { parseDateRange } from './date-range.ts';
import { FlowRollups } from './flow-rollups.ts';
import { PageRollups } from './page-rollups.ts';
import { WorkspaceAnalyticsService } from './workspace-analytics.service.ts';

export interface Caller {
  workspaceId: number;
}

/** The query parameters the operations share (each operation's schema says which it accepts). */
export interface AnalyticsQuery {
  book_id: string;
  date?: string | undefined;
  tz?: string | undefined;
  viewer_id?: number | undefined;
  tracked_link_id?: number | undefined;
  session_id?: string | undefined;
  page_number?: number | undefined;
  event_type?: string | undefined;
  source_host?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
  /** Leave out the team's own visits (members, and the addresses and domains of the analytics settings). */
  exclude_team?: boolean | undefined;
  /** Only what was read on this version of the book. */
  version?: number | undefined;
  /** Page figures: also count matching pages of earlier versions under `version`'s (default: the current version's) page numbers. */
  across_versions?: boolean | undefined;
}

export const DEFAULT_LIMIT = 100;

export class AnalyticsQueriesService {
  private readonly db: Db;
  readonly events: AnalyticsEventsService;
  readonly summaries: AnalyticsSummariesService;
  /** The page-segment day rollups (kept by the analytics.rollup job). */
  readonly rollups: PageRollups;
  /** The book-flow day rollups (kept by the same job). */
  readonly flowRollups: FlowRollups;
  /** The workspace-level figures (the application's overview) and the analytics settings. */
  readonly workspace: WorkspaceAnalyticsService;

  constructor(deps: { db: Db; statementTimeoutMs: number; exactMaxSegments?: number; rollupSettleMs?: number }) {
    this.db = deps.db;
    const reader = new AnalyticsReader(deps);
    this.rollups = new PageRollups({ db: deps.db, settleMs: deps.rollupSettleMs });
    this.flowRollups = new FlowRollups({ db: deps.db, settleMs: deps.rollupSettleMs });
    this.events = new AnalyticsEventsService(reader);
    this.workspace = new WorkspaceAnalyticsService(deps);
    this.summaries = new AnalyticsSummariesService(reader, { rollups: this.rollups, flowRollups: this.flowRollups, exactMaxSegments: deps.exactMaxSegments ?? 200_000 });
  }

  /** The book and the filter of a query; the date is checked before the book is looked up. */
  async scope(caller: Caller, q: AnalyticsQuery): Promise<{ book: BookRow; filter: AnalyticsFilter }> {
    const range = parseDateRange(q.date, q.tz);
    const found = await findWorkspaceBook(this.db, caller.workspaceId, q.book_id);
    const version = q.version ?? (q.across_versions ? found.currentVersion : undefined);
    // Per version, pages are that version's: the page list runs to its page count (0 for a version the book does not have).
    const book = version === undefined ? found : { ...found, pageCount: await versionPageCount(this.db, found, version) };
    return {
      book,
      filter: {
        bookId: book.id, range, viewerId: q.viewer_id, trackedLinkId: q.tracked_link_id,
        sessionId: q.session_id, pageNumber: q.page_number, eventType: q.event_type,
        excludeViewerIds: q.exclude_team ? await this.workspace.teamViewerIds(caller.workspaceId) : undefined,
        version,
        matchedPages: q.across_versions && version !== undefined ? await matchedPagesOf(this.db, found.id, version) : undefined,
      },
    };
  }

  private page(q: AnalyticsQuery): PageQuery {
    return { cursor: q.cursor, limit: q.limit ?? DEFAULT_LIMIT };
  }

  async auditLog(caller: Caller, q: AnalyticsQuery) {
    const { book, filter } = await this.scope(caller, q);
    return this.events.auditLog(book, filter, this.page(q));
  }

  async interactionEvents(caller: Caller, q: AnalyticsQuery) {
    const { book, filter } = await this.scope(caller, q);
    const page = await this.events.interactionEvents(book, filter, this.page(q));
    return { ...page, data: page.data.map(({ tracked_link_name: _, ...record }) => record) };
  }

  async viewEvents(caller: Caller, q: AnalyticsQuery) {
    const { book, filter } = await this.scope(caller, q);
    return this.events.viewEvents(book, { ...filter, sourceHost: q.source_host }, this.page(q));
  }

  async leads(caller: Caller, q: AnalyticsQuery) {
    const { book, filter } = await this.scope(caller, q);
    return this.events.leadRecords(book, filter, this.page(q));
  }

  async pagePerformance(caller: Caller, q: AnalyticsQuery) {
    const { book, filter } = await this.scope(caller, q);
    return { data: await this.summaries.pagePerformance(book, filter) };
  }

  async readerPages(caller: Caller, q: AnalyticsQuery) {
    const { book, filter } = await this.scope(caller, q);
    return { data: await this.summaries.readerPages(book, filter) };
  }

  async bookFlow(caller: Caller, q: AnalyticsQuery) {
    const { book, filter } = await this.scope(caller, q);
    return this.summaries.bookFlow(book, filter);
  }

  async readers(caller: Caller, q: AnalyticsQuery & { include_anonymous?: boolean | undefined; sort?: ReaderSort | undefined }) {
    const { book, filter } = await this.scope(caller, q);
    return this.summaries.readers(book, filter, { includeAnonymous: q.include_anonymous ?? false, sort: q.sort ?? 'recent', cursor: q.cursor, limit: q.limit ?? DEFAULT_LIMIT });
  }

  async readingSessionPages(caller: Caller, q: { book_id: string; view_event_id: number; version?: number | undefined }) {
    const book = await findWorkspaceBook(this.db, caller.workspaceId, q.book_id);
    return this.events.visitPages(book, q.view_event_id, q.version);
  }

  async readerJourney(caller: Caller, q: { viewer_id?: number | undefined; session_id?: string | undefined; date?: string | undefined; tz?: string | undefined; version?: number | undefined }) {
    if (q.viewer_id === undefined && q.session_id === undefined) {
      throw ERRORS.validation({ viewer_id: ['Give viewer_id or session_id: the journey is of one reader.'] });
    }
    const range = parseDateRange(q.date, q.tz);
    return { data: await this.summaries.readerJourney(caller.workspaceId, { viewerId: q.viewer_id, sessionId: q.session_id, range, version: q.version }) };
  }
}
