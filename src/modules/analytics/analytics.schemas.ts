/** Query and response shapes of the analytics operations (spec part 2 records; part 4 filters). */
import { Type, type TProperties } from 'typebox';
import { DateTime, Nullable } from '../../platform/http/schemas.ts';
import { AUDIT_EVENT_TYPES } from './audit.ts';
import { DATE_DESCRIPTION, TZ_DESCRIPTION } from './date-range.ts';
import { INTERACTION_EVENT_TYPES } from './reader-events.schemas.ts';

const Int32 = { minimum: 1, maximum: 2147483647 };
const BOOK_EXAMPLE = 'q0bS0fGx2t9M1cFqR7xN2A';

export const filters = {
  book_id: Type.String({ minLength: 1, maxLength: 64, description: "The book's random_id. Another workspace's book answers 404." }),
  date: Type.Optional(Type.String({ maxLength: 32, description: DATE_DESCRIPTION })),
  tz: Type.Optional(Type.String({ maxLength: 64, description: TZ_DESCRIPTION })),
  viewer_id: Type.Optional(Type.Integer({ ...Int32, description: 'Only this identified reader. A viewer of another workspace matches nothing.' })),
  tracked_link_id: Type.Optional(Type.Integer({ ...Int32, description: 'Only visits that came through this tracked link (of this book; another matches nothing).' })),
  session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Only this reader session (one visit).' })),
  page_number: Type.Optional(Type.Integer({ ...Int32, description: 'Only this page.' })),
  cursor: Type.Optional(Type.String({ maxLength: 512, description: 'Opaque cursor from `meta.next_cursor`.' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Page size, 1-500; default 100.' })),
  exclude_team: Type.Optional(Type.Boolean({
    default: false,
    description: "Leave out the team's own rows: those of identified readers whose address is a workspace member's or listed (address or domain) in the analytics settings' `team_exclusions`. Default false.",
  })),
  version: Type.Optional(Type.Integer({
    ...Int32,
    description: 'Only what was read on this version of the book (its number, as GET /v1/books/{book}/versions lists them): visits by the version they started on, ' +
      'events by the version the reader showed, leads by their visit, audit rows copied from a reader event by that event (access-gate decisions have no version and are kept). ' +
      'Page figures are numbered as in that version. Without it, every version counts. A version the book does not have matches nothing.',
  })),
};

const query = <T extends TProperties>(properties: T) => Type.Object(properties, { additionalProperties: false });
/** The book operations all take `version`. */
const withVersion = <T extends TProperties>(properties: T) => query({ ...properties, version });
const { book_id, date, tz, viewer_id, tracked_link_id, session_id, page_number, cursor, limit, exclude_team, version } = filters;

export const AuditLogQuery = withVersion({
  book_id, exclude_team, viewer_id, date, tz, tracked_link_id, limit, cursor,
  event_type: Type.Optional(Type.Union(AUDIT_EVENT_TYPES.map((t) => Type.Literal(t)), { description: 'One audit event type.' })),
});
export const InteractionEventsQuery = withVersion({
  book_id, exclude_team, viewer_id, page_number, session_id, date, tz, tracked_link_id, limit, cursor,
  event_type: Type.Optional(Type.Union(INTERACTION_EVENT_TYPES.map((t) => Type.Literal(t)), { description: 'One interaction event type.' })),
});
export const ViewEventsQuery = withVersion({
  book_id, exclude_team, date, tz, limit, cursor, viewer_id, session_id, tracked_link_id,
  source_host: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Only visits from this host (exact, case-insensitive; the host only, as stored).' })),
});
export const BookFlowQuery = withVersion({ book_id, date, tz, tracked_link_id, exclude_team });
export const acrossVersions = Type.Optional(Type.Boolean({
  default: false,
  description: 'Count, under the page numbers of `version` (default: the current version), what was read on earlier versions\' pages that match them: ' +
    'same text and a near image (docs/book-versions.md, "Pages across versions"). A page inserted before a page does not split its figures. Default false: that version only.',
}));
export const PagePerformanceQuery = withVersion({ book_id, date, tz, tracked_link_id, exclude_team, across_versions: acrossVersions });
export const ReaderPagesQuery = withVersion({ book_id, viewer_id, session_id, date, tz, tracked_link_id, page_number, exclude_team });
export const ReadersQuery = withVersion({
  book_id, exclude_team, viewer_id, session_id, date, tz, tracked_link_id, limit, cursor,
  include_anonymous: Type.Optional(Type.Boolean({ default: false, description: 'Also list each anonymous visit as a reader of its own. Default false: identified readers only.' })),
  sort: Type.Optional(Type.Union([Type.Literal('recent'), Type.Literal('engagement')], { default: 'recent', description: '`recent`: last visit first (default); `engagement`: highest average engagement first.' })),
});
export const LeadsQuery = withVersion({ book_id, exclude_team, date, tz, tracked_link_id, session_id, limit, cursor });
export const ReaderJourneyQuery = withVersion({ viewer_id, session_id, date, tz });
export const ReadingSessionPagesQuery = withVersion({
  book_id,
  view_event_id: Type.Integer({ minimum: 1, description: "The visit (a view event's id). A visit of another book or workspace matches nothing." }),
});

const place = {
  country: Nullable(Type.String({ description: 'ISO 3166-1 alpha-2.' })),
  region: Nullable(Type.String()),
  city: Nullable(Type.String()),
  latitude: Nullable(Type.Number()),
  longitude: Nullable(Type.Number()),
};

export const AuditLogEvent = Type.Object({
  id: Type.String(),
  source: Type.String({ description: '`gate` (the access gate) or `reader` (recorded from a reader event).' }),
  source_event_id: Type.Integer({ description: 'The interaction event (reader) or access request (gate) it was recorded from.' }),
  book_id: Type.String(),
  viewer_id: Nullable(Type.Integer()),
  viewer_email: Type.String({ description: 'Empty when the reader is anonymous.' }),
  event_type: Type.String(),
  page_number: Nullable(Type.Integer()),
  active_ms: Nullable(Type.Integer()),
  active_seconds: Nullable(Type.Number()),
  reason: Type.String(),
  metadata: Type.Union([Type.Null(), Type.Object({}, { additionalProperties: true }), Type.String()]),
  occurred_at: Nullable(DateTime),
}, { $id: 'AuditLogEvent', title: 'Audit log event' });

export const InteractionEvent = Type.Object({
  id: Type.Integer(),
  book_id: Type.String(),
  viewer_id: Nullable(Type.Integer()),
  viewer_email: Type.Optional(Type.String({ description: 'Present when the reader is identified.' })),
  tracked_link_id: Nullable(Type.Integer()),
  session_id: Type.String(),
  event_type: Type.String(),
  page_number: Nullable(Type.Integer()),
  active_ms: Nullable(Type.Integer()),
  active_seconds: Nullable(Type.Number()),
  exit_reason: Type.String({ description: 'On session_ended: closed, navigated, hidden or idle; otherwise empty.' }),
  source_type: Type.String({ description: 'tracked_link, embed or direct.' }),
  source_host: Nullable(Type.String()),
  ...place,
  metadata: Nullable(Type.Array(Type.Unknown())),
  occurred_at: DateTime,
  created_at: DateTime,
}, { $id: 'InteractionEvent', title: 'Interaction event' });

export const ViewEvent = Type.Object({
  id: Type.Integer(),
  book_id: Type.String(),
  book_title: Type.Optional(Type.String()),
  viewer_id: Nullable(Type.Integer()),
  viewer_email: Type.Optional(Type.String()),
  session_id: Type.String({ description: "The visit's reader session (the reader's own id for it): the `session_id` filter of the other book operations and of `reader-journey`." }),
  tracked_link: Type.Optional(Nullable(Type.Object({ id: Type.Integer(), name: Type.String(), slug: Type.String() }))),
  source_host: Nullable(Type.String()),
  from_embedded: Type.Boolean(),
  impressions: Type.Integer(),
  reads: Type.Integer(),
  clicks: Type.Integer(),
  pages_viewed: Type.Integer(),
  duration_seconds: Type.Integer(),
  engagement_score: Type.String({ description: '0-100 with one decimal, as a string.' }),
  ...place,
  recorded_at: DateTime,
  updated_at: DateTime,
}, { $id: 'ViewEvent', title: 'View event' });

export const PageSummary = Type.Object({
  id: Type.Integer({ description: 'The page number (one summary per page).' }),
  book_id: Type.String(),
  page_number: Type.Integer(),
  unique_readers: Type.Integer({ description: 'Identified readers plus anonymous visits that spent time on the page. Exact up to ANALYTICS_EXACT_MAX_SEGMENTS segments in the range (or with a reader, session or tracked-link filter); above, a HyperLogLog estimate (standard error 2.3 %).' }),
  total_active_ms: Type.Integer(),
  avg_active_ms_per_reader: Type.Integer(),
  avg_active_ms_per_segment: Type.Integer(),
  median_active_ms_per_segment: Type.Integer({ description: 'Median, rounded to the millisecond: exact up to ANALYTICS_EXACT_MAX_SEGMENTS segments in the range (or with a reader, session or tracked-link filter); above, from a log histogram, within 1.1 %.' }),
  total_segments: Type.Integer(),
  total_active_seconds: Type.Number(),
  avg_active_seconds_per_reader: Type.Number(),
  avg_active_seconds_per_segment: Type.Number(),
  median_active_seconds_per_segment: Type.Number({ description: 'The median in seconds (an exact median of an even count is the mean of the middle two); approximate like median_active_ms_per_segment.' }),
}, { $id: 'PageSummary', title: 'Page summary' });

export const ReaderPageSummary = Type.Object({
  id: Type.Integer({ description: "The id of the reader's first segment on the page (stable)." }),
  book_id: Type.String(),
  viewer_id: Type.Integer(),
  viewer_email: Type.Optional(Type.String()),
  page_number: Type.Integer(),
  total_active_ms: Type.Integer(),
  total_active_seconds: Type.Number(),
  segments: Type.Integer(),
  avg_active_ms_per_segment: Type.Integer(),
  avg_active_seconds_per_segment: Type.Number(),
  first_viewed_at: DateTime,
  last_viewed_at: DateTime,
}, { $id: 'ReaderPageSummary', title: 'Reader page summary' });

export const ReaderSummary = Type.Object({
  viewer_id: Nullable(Type.Integer({ description: 'Null for an anonymous visit (include_anonymous).' })),
  viewer_email: Nullable(Type.String()),
  session_id: Nullable(Type.String({ description: "An anonymous reader's session; null for identified readers." })),
  visits: Type.Integer(),
  pages_viewed: Type.Integer({ description: 'Distinct pages seen over the visits.' }),
  clicks: Type.Integer(),
  active_ms: Type.Integer({ description: 'Sum of the visits\' active time (the session\'s own measure).' }),
  active_seconds: Type.Number(),
  duration_seconds: Type.Integer(),
  engagement_score: Type.String({ description: 'Average engagement score of the visits, one decimal, as a string.' }),
  first_visit_at: DateTime,
  last_visit_at: DateTime,
}, { $id: 'ReaderSummary', title: 'Reader summary' });

export const BookFlow = Type.Object({
  pages: Type.Array(Type.Object({
    page_number: Type.Integer(),
    views: Type.Integer({ description: 'Page segments (times the page was on screen).' }),
    entries: Type.Integer({ description: 'Visits whose first page segment was this page.' }),
    exits: Type.Integer({ description: 'Visits whose last page segment was this page.' }),
  })),
  transitions: Type.Array(Type.Object({
    from_page: Type.Integer(),
    to_page: Type.Integer(),
    count: Type.Integer({ description: 'Times a reader went from from_page to to_page (consecutive segments of one visit on different pages).' }),
    readers: Type.Integer({ description: 'Distinct readers (viewer, else anonymous visit) who did. Exact up to ANALYTICS_EXACT_MAX_SEGMENTS segments in the range (or with a filter); above, a HyperLogLog estimate, never above `count`.' }),
  }), { description: 'Most frequent first.' }),
}, { $id: 'BookFlow', title: 'Book flow' });

const Str = Type.String();
export const ReaderJourney = Type.Object({
  viewer: Type.Object({ id: Str, email: Str }, { description: 'Empty strings for an anonymous session.' }),
  aggregates: Type.Object({ total_books: Str, total_pages_viewed: Str, total_duration_seconds: Str, overall_engagement_score: Str }),
  books: Type.Array(Type.Object({ book_id: Str, title: Str, visits: Str, pages_viewed: Str, duration_seconds: Str, engagement_score: Str, last_visit: Str })),
}, { $id: 'ReaderJourney', title: 'Reader journey' });

export const VisitPage = Type.Object({
  position: Type.Integer({ description: '1 for the first page segment of the visit.' }),
  page_number: Type.Integer(),
  active_ms: Type.Integer(),
  active_seconds: Type.Number(),
  viewed_at: DateTime,
});

export const VisitMeta = Type.Object({
  view_event_id: Type.Integer(),
  found: Type.Boolean({ description: 'False when the visit is not one of this book (then data is empty).' }),
  session_id: Nullable(Type.String()),
  viewer_id: Nullable(Type.Integer()),
  pages: Type.Integer({ description: 'Page segments listed.' }),
  distinct_pages: Type.Optional(Type.Integer()),
  total_active_ms: Type.Integer(),
  total_active_seconds: Type.Number(),
  duration_seconds: Type.Optional(Type.Integer()),
  recorded_at: Nullable(DateTime),
});

export const Lead = Type.Object({
  id: Type.Integer(),
  book_id: Type.String(),
  submitted_at: DateTime,
  name: Type.String({ description: 'Empty when the form did not ask for it.' }),
  email: Type.String(),
  phone: Nullable(Type.String({ description: 'Null when the form did not ask for it (or it was left empty).' })),
  company: Nullable(Type.String()),
  message: Nullable(Type.String()),
  viewer_id: Nullable(Type.Integer()),
  session_id: Type.String({ description: 'The visit the form was submitted in.' }),
  tracked_link_id: Nullable(Type.Integer()),
  tracked_link_name: Nullable(Type.String()),
}, { $id: 'Lead', title: 'Lead' });

export const examples = {
  lead: {
    id: 71, book_id: BOOK_EXAMPLE, submitted_at: '2026-03-02T10:16:02.000Z', name: 'Ana Lima', email: 'ana@example.com', phone: null, company: 'Lima & Co',
    message: null, viewer_id: 31, session_id: '6f1c2a9e-5b1d-4f7e-9a0c-2d8e1f3b4a5c', tracked_link_id: 12, tracked_link_name: 'March newsletter',
  },
  audit: {
    id: '5012', source: 'reader', source_event_id: 88121, book_id: BOOK_EXAMPLE, viewer_id: 31, viewer_email: 'ana@example.com',
    event_type: 'document_downloaded', page_number: 4, active_ms: null, active_seconds: null, reason: '', metadata: null, occurred_at: '2026-03-02T10:15:00.000Z',
  },
  interaction: {
    id: 88120, book_id: BOOK_EXAMPLE, viewer_id: 31, viewer_email: 'ana@example.com', tracked_link_id: 12, session_id: '6f1c2a9e-5b1d-4f7e-9a0c-2d8e1f3b4a5c',
    event_type: 'page_segment_completed', page_number: 4, active_ms: 12500, active_seconds: 12.5, exit_reason: '', source_type: 'tracked_link',
    source_host: 'shop.example.com', country: 'FR', region: 'Île-de-France', city: 'Paris', latitude: 48.8566, longitude: 2.3522, metadata: null,
    occurred_at: '2026-03-02T10:14:48.000Z', created_at: '2026-03-02T10:14:58.000Z',
  },
  view: {
    id: 3301, book_id: BOOK_EXAMPLE, book_title: 'Spring catalogue', viewer_id: 31, viewer_email: 'ana@example.com', session_id: '6f1c2a9e-5b1d-4f7e-9a0c-2d8e1f3b4a5c',
    tracked_link: { id: 12, name: 'March newsletter', slug: 'march-newsletter' }, source_host: 'shop.example.com', from_embedded: true,
    impressions: 1, reads: 1, clicks: 2, pages_viewed: 9, duration_seconds: 141, engagement_score: '83.5',
    country: 'FR', region: 'Île-de-France', city: 'Paris', latitude: 48.8566, longitude: 2.3522, recorded_at: '2026-03-02T10:12:00.000Z', updated_at: '2026-03-02T10:14:58.000Z',
  },
  page: {
    id: 4, book_id: BOOK_EXAMPLE, page_number: 4, unique_readers: 120, total_active_ms: 1512000, avg_active_ms_per_reader: 12600, avg_active_ms_per_segment: 10800,
    median_active_ms_per_segment: 9000, total_segments: 140, total_active_seconds: 1512, avg_active_seconds_per_reader: 12.6, avg_active_seconds_per_segment: 10.8, median_active_seconds_per_segment: 9,
  },
  readerPage: {
    id: 88120, book_id: BOOK_EXAMPLE, viewer_id: 31, viewer_email: 'ana@example.com', page_number: 4, total_active_ms: 25000, total_active_seconds: 25, segments: 2,
    avg_active_ms_per_segment: 12500, avg_active_seconds_per_segment: 12.5, first_viewed_at: '2026-03-02T10:14:48.000Z', last_viewed_at: '2026-03-05T08:01:10.000Z',
  },
  reader: {
    viewer_id: 31, viewer_email: 'ana@example.com', session_id: null, visits: 3, pages_viewed: 11, clicks: 2, active_ms: 402000, active_seconds: 402,
    duration_seconds: 402, engagement_score: '71.2', first_visit_at: '2026-03-02T10:12:00.000Z', last_visit_at: '2026-03-05T08:00:00.000Z',
  },
  flow: {
    pages: [{ page_number: 1, views: 300, entries: 280, exits: 40 }, { page_number: 2, views: 250, entries: 20, exits: 60 }],
    transitions: [{ from_page: 1, to_page: 2, count: 240, readers: 231 }, { from_page: 2, to_page: 1, count: 12, readers: 12 }],
  },
  journey: {
    viewer: { id: '31', email: 'ana@example.com' },
    aggregates: { total_books: '2', total_pages_viewed: '20', total_duration_seconds: '700', overall_engagement_score: '66.4' },
    books: [{ book_id: BOOK_EXAMPLE, title: 'Spring catalogue', visits: '3', pages_viewed: '14', duration_seconds: '402', engagement_score: '71.2', last_visit: '2026-03-05T08:00:00.000Z' }],
  },
};

