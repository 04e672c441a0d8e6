/**
 * The analytics operations of spec part 4: scope analytics:read and the
 * Company plan (the guard checks both from `config`); leads on every plan. Each handler reads its
 * validated query and calls one method of AnalyticsQueriesService.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import { authOf } from '../../platform/http/route-config.ts';
import { CursorMeta } from '../../platform/http/schemas.ts';
import type { AnalyticsQueriesService } from './analytics-queries.service.ts';
import { workspaceAnalyticsRoutes } from './workspace-analytics.routes.ts';
import {
  AuditLogEvent, AuditLogQuery, BookFlow, Lead, LeadsQuery, BookFlowQuery, InteractionEvent, InteractionEventsQuery, PagePerformanceQuery, PageSummary,
  ReaderJourney, ReaderJourneyQuery, ReaderPageSummary, ReaderPagesQuery, ReaderSummary, ReadersQuery, ReadingSessionPagesQuery,
  ViewEvent, ViewEventsQuery, VisitMeta, VisitPage, examples,
} from './analytics.schemas.ts';

const config = { scope: 'analytics:read' as const, feature: 'analytics' as const };
const tags = ['Analytics'];
const FILTERS =
  ' `date` is read in `tz` (see the parameter); `viewer_id`, `tracked_link_id` of another workspace or book match nothing. ' +
  'A statement running longer than ANALYTICS_STATEMENT_TIMEOUT_MS is stopped and answers 503 ServiceUnavailableException: narrow the date range.';
const PAGED = ' Cursor-paginated (`limit` 1-500, default 100; follow `meta.next_cursor` while `meta.has_more`): rows inserted while paging never cause gaps or repeats.';

/** Beyond the shared error responses: the book is named in the query, and a statement can time out. */
export const ANALYTICS_ERRORS = {
  404: { description: "The book (book_id) is not one of this workspace's (ModelNotFoundException), exactly like a missing one.", $ref: 'ErrorEnvelope#' },
  503: { description: 'The query ran longer than ANALYTICS_STATEMENT_TIMEOUT_MS and was stopped (ServiceUnavailableException): narrow the date range.', $ref: 'ErrorEnvelope#' },
};

const list = (item: TSchema, example: unknown) => Type.Object({ data: Type.Array(item), meta: CursorMeta }, { examples: [{ data: [example], meta: { next_cursor: null, has_more: false } }] });
const whole = (item: TSchema, example: unknown) => Type.Object({ data: Type.Array(item) }, { examples: [{ data: [example] }] });

export const analyticsRoutes: FastifyPluginAsyncTypebox<{ analytics: AnalyticsQueriesService }> = async (app, { analytics }) => {
  for (const schema of [AuditLogEvent, InteractionEvent, Lead, ViewEvent, PageSummary, ReaderPageSummary, ReaderSummary, BookFlow, ReaderJourney]) app.addSchema(schema);
  const ref = (id: string) => Type.Ref(id);
  await app.register(workspaceAnalyticsRoutes, { workspace: analytics.workspace });

  app.get('/analytics/audit-log', {
    schema: {
      operationId: 'getAuditLog', tags, summary: "A book's audit log",
      description:
        'Access-gate decisions (`access_requested`, `access_granted`, `access_rejected`) and the reader actions that matter for compliance ' +
        '(`document_downloaded`, `link_clicked`, `lead_form_submitted`, `form_widget_opened`, `checkout_widget_opened`, and the ninth value, ' +
        '`checkout_redirect_clicked`: a click through a checkout widget to the shop), chronological (oldest first).' + PAGED + FILTERS,
      querystring: AuditLogQuery, response: { ...ANALYTICS_ERRORS, 200: list(ref('AuditLogEvent'), examples.audit) },
    },
    config,
  }, async (request) => analytics.auditLog(authOf(request), request.query));

  app.get('/analytics/book-flow', {
    schema: {
      operationId: 'getBookFlow', tags, summary: 'How readers move through a book',
      description:
        "Page-to-page transitions within visits: a visit's page segments in the reader's own order; each change of page is a transition " +
        '(`from_page` → `to_page`, with `count` and distinct `readers`), most frequent first. Per page: `views` (segments), `entries` (visits that began ' +
        'there) and `exits` (visits whose last page it was); every page of the book is listed. `meta.visits` counts the visits with at least one page segment. ' +
        'Exact while the range holds up to 200,000 page segments (ANALYTICS_EXACT_MAX_SEGMENTS) or a `viewer_id`, `session_id`, `tracked_link_id`, `page_number` or `version` filter is given; ' +
        'above that from per-day rollups: views, entries, exits and transition counts still exact, transition `readers` a HyperLogLog estimate.' + FILTERS,
      querystring: BookFlowQuery,
      response: { ...ANALYTICS_ERRORS, 200: Type.Object({ data: ref('BookFlow'), meta: Type.Object({ visits: Type.Integer() }) }, { examples: [{ data: examples.flow, meta: { visits: 300 } }] }) },
    },
    config,
  }, async (request) => analytics.bookFlow(authOf(request), request.query));

  app.get('/analytics/book-view-events', {
    schema: {
      operationId: 'getBookViewEvents', tags, summary: "A book's visits (view events)",
      description: 'One view event per reader visit, newest first, with `book_title`, `viewer_email` when identified and the `tracked_link` it came through.' + PAGED + FILTERS,
      querystring: ViewEventsQuery, response: { ...ANALYTICS_ERRORS, 200: list(ref('ViewEvent'), examples.view) },
    },
    config,
  }, async (request) => analytics.viewEvents(authOf(request), request.query));

  app.get('/analytics/interaction-events', {
    schema: {
      operationId: 'getInteractionEvents', tags, summary: "A book's interaction events",
      description: 'Every event the reader reported, chronological (oldest first; the time is the reader\'s clock, clamped on arrival).' + PAGED + FILTERS,
      querystring: InteractionEventsQuery, response: { ...ANALYTICS_ERRORS, 200: list(ref('InteractionEvent'), examples.interaction) },
    },
    config,
  }, async (request) => analytics.interactionEvents(authOf(request), request.query));

  app.get('/analytics/leads', {
    schema: {
      operationId: 'getLeads', tags, summary: "A book's captured leads",
      description:
        "Lead form submissions, oldest first, the rows of the leads export (GET /exports/books/{book}/leads) as JSON; `date` selects by submission time, `version` by the visit's version. " +
        "On every plan (scope analytics:read only): the leads are the customer's own captured data. Optional fields the form did not ask for, or left empty, are null." + PAGED + FILTERS,
      querystring: LeadsQuery, response: { ...ANALYTICS_ERRORS, 200: list(ref('Lead'), examples.lead) },
    },
    // No `feature`: on every plan, like the leads export.
    config: { scope: 'analytics:read' as const },
  }, async (request) => analytics.leads(authOf(request), request.query));

  app.get('/analytics/page-performance', {
    schema: {
      operationId: 'getPagePerformance', tags, summary: 'Engagement per page, all readers',
      description:
        'One page summary per page of the book (pages nobody read included, with zeros), from `page_segment_completed` events: a reader is an identified viewer, ' +
        'or an anonymous visit. Segment counts and active-time totals are always exact; they equal the sum of reader-pages rows for identified readers and the page-performance export of the same filter. ' +
        'Medians and `unique_readers` are exact while the range holds up to 200,000 page segments (ANALYTICS_EXACT_MAX_SEGMENTS) or a `viewer_id`, `session_id`, `tracked_link_id` or `version` filter is given; ' +
        'above that they come from per-day rollups: the median within 1.1 % (log histogram), `unique_readers` a HyperLogLog estimate (standard error 2.3 %). ' +
        'Events of the last minutes and partial days of a range in another time zone are always counted (read from the raw events).' + FILTERS,
      querystring: PagePerformanceQuery, response: { ...ANALYTICS_ERRORS, 200: whole(ref('PageSummary'), examples.page) },
    },
    config,
  }, async (request) => analytics.pagePerformance(authOf(request), request.query));

  app.get('/analytics/reader-journey', {
    schema: {
      operationId: 'getReaderJourney', tags, summary: "One reader's visits across the workspace's books",
      description:
        'Give `viewer_id` (an identified reader) or `session_id` (a visit: its identified reader, else that anonymous visit alone); without either, 422. ' +
        "A viewer of another workspace, or a session unknown in this workspace, is 404. Books in the order of their last visit (oldest first); `date` selects visits. " +
        'Every leaf is a string (spec part 2); `engagement_score` is the average over the visits.',
      querystring: ReaderJourneyQuery,
      response: {
        ...ANALYTICS_ERRORS,
        404: { description: "The viewer_id is not one of this workspace's readers, or the session_id no visit of it (ModelNotFoundException).", $ref: 'ErrorEnvelope#' },
        200: Type.Object({ data: ref('ReaderJourney') }, { examples: [{ data: examples.journey }] }) },
    },
    config,
  }, async (request) => analytics.readerJourney(authOf(request), request.query));

  app.get('/analytics/reader-pages', {
    schema: {
      operationId: 'getReaderPages', tags, summary: 'Engagement per identified reader and page',
      description:
        'One summary per identified reader and page they spent time on (anonymous visits have no reader to attribute to; page-performance counts them), ' +
        'ordered by viewer then page, not paginated (the export streams large books).' + FILTERS,
      querystring: ReaderPagesQuery, response: { ...ANALYTICS_ERRORS, 200: whole(ref('ReaderPageSummary'), examples.readerPage) },
    },
    config,
  }, async (request) => analytics.readerPages(authOf(request), request.query));

  app.get('/analytics/readers', {
    schema: {
      operationId: 'getReaders', tags, summary: 'One engagement summary per reader',
      description:
        "One summary per identified reader over the visits the filter selects (visits, distinct pages, clicks, active time as the visits' own measure, average " +
        'engagement, first and last visit). `include_anonymous=true` adds each anonymous visit as a reader of its own (`viewer_id` null, its `session_id`). ' +
        '`sort=recent` (default) lists the latest visit first, `engagement` the highest score first. A reader whose summary changes while you page may move ' +
        'before your cursor; no reader is listed twice in one pass.' + PAGED + FILTERS,
      querystring: ReadersQuery, response: { ...ANALYTICS_ERRORS, 200: list(ref('ReaderSummary'), examples.reader) },
    },
    config,
  }, async (request) => analytics.readers(authOf(request), request.query));

  app.get('/analytics/reading-session-pages', {
    schema: {
      operationId: 'getReadingSessionPages', tags, summary: "One visit's pages in order",
      description:
        "The visit's page segments in the order the reader saw them (`position` 1, 2, …, a page seen twice appears twice) with their active time; `meta` has the visit's totals. " +
        'A visit of another book or workspace matches nothing: empty `data` and `meta.found` false.',
      querystring: ReadingSessionPagesQuery,
      response: {
        ...ANALYTICS_ERRORS,
        200: Type.Object({ data: Type.Array(VisitPage), meta: VisitMeta }, {
          examples: [{
            data: [{ position: 1, page_number: 1, active_ms: 4000, active_seconds: 4, viewed_at: '2026-03-02T10:12:04.000Z' }],
            meta: { view_event_id: 3301, found: true, session_id: '6f1c2a9e-5b1d-4f7e-9a0c-2d8e1f3b4a5c', viewer_id: 31, pages: 1, distinct_pages: 1, total_active_ms: 4000, total_active_seconds: 4, duration_seconds: 4, recorded_at: '2026-03-02T10:12:00.000Z' },
          }],
        }),
      },
    },
    config,
  }, async (request) => analytics.readingSessionPages(authOf(request), request.query));
};
