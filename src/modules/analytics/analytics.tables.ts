/**
 * What readers did. Three event tables, all written by the reader's event
 * ingestion and read by the analytics queries:
 *  - view_events: one row per reader visit (a reader session), its totals kept
 *    current as the visit's events arrive;
 *  - interaction_events: every event the reader reports (spec part 2);
 *  - audit_events: the subset that matters for compliance (access gate,
 *    downloads, clicks, forms), as spec part 4's audit log lists them.
 *
 * The analytics queries filter by book and time, or book and reader, so both
 * pairs are indexed. At scale, interaction_events and audit_events are the
 * tables to partition by month on occurred_at (PostgreSQL declarative range
 * partitioning; the primary key then becomes (id, occurred_at)): old months
 * can be detached and archived without touching current ones.
 */
import { bigint, boolean, date, doublePrecision, index, integer, jsonb, pgTable, primaryKey, real, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { books } from '../books/books.tables.ts';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import { instant } from '../../platform/db/columns.ts';

const id64 = () => bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity();

/** A shareable reader URL (preview_url?tl=slug) whose visits are attributed to it. */
export const trackedLinks = pgTable('tracked_links', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  slug: text('slug').notNull(),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('tracked_links_book_slug_key').on(t.bookId, t.slug)]);

/** An identified reader of a workspace: known only through the access gate or a form they filled in. */
export const viewers = pgTable('viewers', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  email: text('email').notNull(),
  name: text('name'),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('viewers_workspace_email_key').on(t.workspaceId, t.email)]);

const geography = {
  country: text('country'),
  region: text('region'),
  city: text('city'),
  latitude: doublePrecision('latitude'),
  longitude: doublePrecision('longitude'),
};

export const viewEvents = pgTable('view_events', {
  id: id64(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  /** The reader session (random, made by the reader page; not a cookie). */
  sessionId: text('session_id').notNull(),
  viewerId: integer('viewer_id').references(() => viewers.id, { onDelete: 'set null' }),
  trackedLinkId: integer('tracked_link_id').references(() => trackedLinks.id, { onDelete: 'set null' }),
  sourceHost: text('source_host'),
  fromEmbedded: boolean('from_embedded').notNull().default(false),
  impressions: integer('impressions').notNull().default(1),
  reads: integer('reads').notNull().default(0),
  clicks: integer('clicks').notNull().default(0),
  pagesViewed: integer('pages_viewed').notNull().default(0),
  /** Distinct pages seen, to count pages_viewed without double counting. */
  pagesSeen: integer('pages_seen').array().notNull().default([]),
  activeMs: bigint('active_ms', { mode: 'number' }).notNull().default(0),
  durationSeconds: integer('duration_seconds').notNull().default(0),
  engagementScore: real('engagement_score').notNull().default(0),
  exitReason: text('exit_reason'),
  ...geography,
  /** The book version the visit started on (docs/book-versions.md); null for visits recorded before versions. */
  bookVersion: integer('book_version'),
  recordedAt: instant('recorded_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
}, (t) => [
  uniqueIndex('view_events_book_session_key').on(t.bookId, t.sessionId),
  // INCLUDE (viewer_id, engagement_score, id) by custom migration 0019: `readers` ranks a range's readers from the index alone.
  index('view_events_book_time_idx').on(t.bookId, t.recordedAt),
  index('view_events_book_viewer_idx').on(t.bookId, t.viewerId, t.recordedAt),
  // Visits per tracked link (the tracked-links list) and the analytics' tracked_link_id filter.
  index('view_events_book_tracked_link_idx').on(t.bookId, t.trackedLinkId, t.recordedAt),
  // The reader journey: one reader's visits across a workspace's books, or the visit of a session.
  index('view_events_viewer_time_idx').on(t.viewerId, t.recordedAt),
  index('view_events_workspace_session_idx').on(t.workspaceId, t.sessionId),
  // The workspace-level analytics (summary, views over time, top books, links and sites) read a range of all the workspace's visits.
  index('view_events_workspace_time_idx').on(t.workspaceId, t.recordedAt),
]);

export const interactionEvents = pgTable('interaction_events', {
  id: id64(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  viewEventId: bigint('view_event_id', { mode: 'number' }).references(() => viewEvents.id, { onDelete: 'cascade' }),
  viewerId: integer('viewer_id').references(() => viewers.id, { onDelete: 'set null' }),
  trackedLinkId: integer('tracked_link_id').references(() => trackedLinks.id, { onDelete: 'set null' }),
  sessionId: text('session_id').notNull(),
  /** The reader's own sequence number within the session: a re-sent batch is not counted twice. */
  sequence: integer('sequence').notNull(),
  eventType: text('event_type').notNull(),
  pageNumber: integer('page_number'),
  activeMs: integer('active_ms'),
  exitReason: text('exit_reason'),
  /** direct | embed | tracked_link */
  sourceType: text('source_type').notNull(),
  sourceHost: text('source_host'),
  ...geography,
  metadata: jsonb('metadata').$type<unknown[]>(),
  /** The book version the reader showed (docs/book-versions.md); null for events recorded before versions. Not part of the spec's record. */
  bookVersion: integer('book_version'),
  occurredAt: instant('occurred_at').notNull(),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [
  uniqueIndex('interaction_events_session_sequence_key').on(t.bookId, t.sessionId, t.sequence),
  index('interaction_events_book_time_idx').on(t.bookId, t.occurredAt),
  index('interaction_events_book_viewer_idx').on(t.bookId, t.viewerId, t.occurredAt),
  // The event_type filter of the analytics (clicks, downloads among millions of page segments).
  index('interaction_events_book_type_time_idx').on(t.bookId, t.eventType, t.occurredAt),
  // Page segments are what page-performance, reader-pages and book-flow aggregate: a covering partial index
  // (interaction_events_segments_idx) is made in the custom migration (drizzle-kit cannot express INCLUDE).
]);

export const auditEvents = pgTable('audit_events', {
  id: id64(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  /** gate (the access gate) | reader (copied from an interaction event) */
  source: text('source').notNull(),
  /** The id of the row this event was recorded from (interaction event or magic link). */
  sourceEventId: bigint('source_event_id', { mode: 'number' }).notNull(),
  viewerId: integer('viewer_id').references(() => viewers.id, { onDelete: 'set null' }),
  viewerEmail: text('viewer_email').notNull().default(''),
  trackedLinkId: integer('tracked_link_id').references(() => trackedLinks.id, { onDelete: 'set null' }),
  eventType: text('event_type').notNull(),
  pageNumber: integer('page_number'),
  activeMs: integer('active_ms'),
  reason: text('reason').notNull().default(''),
  metadata: jsonb('metadata').$type<Record<string, unknown> | string | null>(),
  occurredAt: instant('occurred_at').notNull().defaultNow(),
}, (t) => [
  index('audit_events_book_time_idx').on(t.bookId, t.occurredAt),
  index('audit_events_book_viewer_idx').on(t.bookId, t.viewerId, t.occurredAt),
]);

/**
 * The page segments of one book, page and UTC day, summed by the rollup job
 * (page-rollups.ts) so page-performance reads a few thousand rows instead of
 * millions: counts and sums are exact; `histogram` (active_ms bin → count,
 * bins 2.2 % wide) gives the median within 1.1 %, `readers` (a HyperLogLog
 * sketch of the reader keys, 2,048 registers, base64) the unique readers
 * within a few percent. Only events up to the watermark are in it.
 */
export const pageDayRollups = pgTable('page_day_rollups', {
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  day: date('day', { mode: 'string' }).notNull(),
  pageNumber: integer('page_number').notNull(),
  segments: bigint('segments', { mode: 'number' }).notNull(),
  totalMs: bigint('total_ms', { mode: 'number' }).notNull(),
  histogram: jsonb('histogram').$type<Record<string, number>>().notNull(),
  readers: text('readers').notNull(),
}, (t) => [primaryKey({ columns: [t.bookId, t.day, t.pageNumber] })]);

/** The same per UTC month (`day` = the month's first day): a quarter or a year merges a few rows per page, not one per day. */
export const pageMonthRollups = pgTable('page_month_rollups', {
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  day: date('day', { mode: 'string' }).notNull(),
  pageNumber: integer('page_number').notNull(),
  segments: bigint('segments', { mode: 'number' }).notNull(),
  totalMs: bigint('total_ms', { mode: 'number' }).notNull(),
  histogram: jsonb('histogram').$type<Record<string, number>>().notNull(),
  readers: text('readers').notNull(),
}, (t) => [primaryKey({ columns: [t.bookId, t.day, t.pageNumber] })]);

/**
 * book-flow per book and UTC day (flow-rollups.ts): a row per page
 * (from_page = to_page: views, entries, exits) and per move between two pages
 * (moves, and `readers`, a HyperLogLog sketch as text, sparse while small).
 * Kept per visit by the rollup job: only visits up to the watermark are in it.
 */
export const flowDayRollups = pgTable('flow_day_rollups', {
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  day: date('day', { mode: 'string' }).notNull(),
  fromPage: integer('from_page').notNull(),
  toPage: integer('to_page').notNull(),
  views: bigint('views', { mode: 'number' }).notNull().default(0),
  entries: bigint('entries', { mode: 'number' }).notNull().default(0),
  exits: bigint('exits', { mode: 'number' }).notNull().default(0),
  moves: bigint('moves', { mode: 'number' }).notNull().default(0),
  readers: text('readers'),
}, (t) => [primaryKey({ columns: [t.bookId, t.day, t.fromPage, t.toPage] })]);

/** The same per UTC month (`day` = the month's first day; runs cut by month, joined across months by the day links). */
export const flowMonthRollups = pgTable('flow_month_rollups', {
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  day: date('day', { mode: 'string' }).notNull(),
  fromPage: integer('from_page').notNull(),
  toPage: integer('to_page').notNull(),
  views: bigint('views', { mode: 'number' }).notNull().default(0),
  entries: bigint('entries', { mode: 'number' }).notNull().default(0),
  exits: bigint('exits', { mode: 'number' }).notNull().default(0),
  moves: bigint('moves', { mode: 'number' }).notNull().default(0),
  readers: text('readers'),
}, (t) => [primaryKey({ columns: [t.bookId, t.day, t.fromPage, t.toPage] })]);

/**
 * Where a visit's segments cross from one UTC day (prev_day) to another:
 * its last page there and its first page here, counted, so a range holding
 * both days joins the two runs (one exit and one entry fewer, one move more).
 */
export const flowDayLinks = pgTable('flow_day_links', {
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  day: date('day', { mode: 'string' }).notNull(),
  prevDay: date('prev_day', { mode: 'string' }).notNull(),
  fromPage: integer('from_page').notNull(),
  toPage: integer('to_page').notNull(),
  n: bigint('n', { mode: 'number' }).notNull(),
}, (t) => [primaryKey({ columns: [t.bookId, t.day, t.prevDay, t.fromPage, t.toPage] })]);

/** How far each rollup has read interaction_events (by id): rows above the watermark are read raw by the queries. */
export const analyticsRollupState = pgTable('analytics_rollup_state', {
  name: text('name').primaryKey(),
  watermark: bigint('watermark', { mode: 'number' }).notNull().default(0),
  updatedAt: instant('updated_at').notNull().defaultNow(),
});

/** Lead form submissions, for the leads export. */
export const leads = pgTable('leads', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  bookId: integer('book_id').notNull().references(() => books.id, { onDelete: 'cascade' }),
  viewerId: integer('viewer_id').references(() => viewers.id, { onDelete: 'set null' }),
  trackedLinkId: integer('tracked_link_id').references(() => trackedLinks.id, { onDelete: 'set null' }),
  sessionId: text('session_id').notNull(),
  name: text('name').notNull(),
  email: text('email').notNull(),
  /** The optional fields the form asked for (phone, company, message). */
  fields: jsonb('fields').$type<Record<string, string>>().notNull().default({}),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [index('leads_book_time_idx').on(t.bookId, t.createdAt)]);

/** The fields a lead form may ask for; email is always asked and required (it is what makes a lead). */
export const LEAD_FORM_FIELDS = ['name', 'email', 'phone', 'company', 'message'] as const;
export type LeadFormFieldName = (typeof LEAD_FORM_FIELDS)[number];
export interface LeadFormField {
  name: LeadFormFieldName;
  required: boolean;
}

/** A book's lead form (at most one): shown in the reader once the reader reaches show_after_page, while enabled. */
export const leadForms = pgTable('lead_forms', {
  bookId: integer('book_id').primaryKey().references(() => books.id, { onDelete: 'cascade' }),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  enabled: boolean('enabled').notNull().default(false),
  title: text('title').notNull(),
  description: text('description'),
  /** In the order shown. */
  fields: jsonb('fields').$type<LeadFormField[]>().notNull(),
  showAfterPage: integer('show_after_page').notNull().default(1),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
});

export type TrackedLinkRow = typeof trackedLinks.$inferSelect;
export type ViewEventRow = typeof viewEvents.$inferSelect;
export type InteractionEventRow = typeof interactionEvents.$inferSelect;
export type LeadFormRow = typeof leadForms.$inferSelect;
