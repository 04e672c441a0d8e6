/**
 * Reader event ingestion: a batch from one reader session stores
 *  - the session's view event (created by its first batch; its totals kept
 *    current by every later one),
 *  - one interaction event per event (a re-sent event, same session and
 *    sequence number, is stored and counted once),
 *  - an audit event for each audit-relevant interaction.
 *
 * Group commit (ingest-groups.ts): the batches that arrive together in one
 * process are stored in one transaction of four statements whatever their
 * number: one upserting every session's view and inserting all events, one
 * writing every changed view's totals (computed here, per batch, from the
 * row the upsert returned), one reading the audited viewers' addresses and
 * one inserting the audit events. A batch's answer waits for its group's
 * commit. The upsert takes the view rows in (book, session) order, so groups
 * of several processes lock them in the same order (no deadlock); a view row
 * stays locked until the group commits, so the batches of one session (never
 * two in a group) are applied one after the other and totals never race. A
 * group that fails is retried batch by batch: a batch stored alone is a
 * group of one, the same statements.
 *
 * No HTTP here: the caller has passed the reader gate, filtered bots and
 * counted rate limits (reader-events.routes.ts).
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import { BatchedLookup } from '../../platform/db/batched-lookup.ts';
import type { Db, DbOrTx } from '../../platform/db/database.ts';
import { SQL_STATE, sqlStateOf } from '../../platform/db/sql-state.ts';
import { ERRORS, type ErrorDetails } from '../../platform/errors.ts';
import { bookVersions, books } from '../books/books.tables.ts';
import { interactionEvents, leads, trackedLinks, viewers, viewEvents, type LeadFormField, type ViewEventRow } from './analytics.tables.ts';
import { AUDIT_EVENT_TYPES, recordAuditEvents, type AuditEventType } from './audit.ts';
import { UNKNOWN_PLACE, type Geography, type Geolocator } from './geography.ts';
import { MAX_SESSION_MS, type EventBatchInput, type InteractionEventType, type LeadSubmissionInput, type ReaderEventInput } from './reader-events.schemas.ts';
import { ensureViewer, ensureViewers } from './viewers.ts';
import { rowsOf } from './analytics-sql.ts';
import { GroupCommit, type GroupCommitStats } from './ingest-groups.ts';

/** The book an event batch is for, as the reader gate found it. */
export interface EventBook {
  id: number;
  workspaceId: number;
  pageCount: number;
  /** The book's current version (docs/book-versions.md); 1 when not given. */
  currentVersion?: number;
}

export interface EventOrigin {
  book: EventBook;
  /** The reader's address when the access gate identified them. */
  viewerEmail: string | null;
  /** Used for geography only; never stored. */
  ip: string;
  /** The service's own host: a referrer on it is no source. */
  ownHost?: string;
  now?: Date;
}

export interface IngestResult {
  received: number;
  stored: number;
}

/** Events ingested here can never be lead submissions: those come with their lead (submitLead). */
const CLICK_TYPES = new Set<InteractionEventType>(['link_clicked', 'checkout_redirect_clicked']);
const AUDITED = new Set<string>(AUDIT_EVENT_TYPES);
/** How far back a client's clock may place an event (a beacon sent late, a tab woken from sleep). */
const MAX_EVENT_AGE_MS = 24 * 60 * 60 * 1000;
/** A visit counts as a read once the reader saw two pages or stayed ten seconds. */
const READ_MIN_PAGES = 2;
const READ_MIN_ACTIVE_MS = 10_000;
/** Engagement: seconds of attention per page seen that count as full attention. */
const ENGAGED_SECONDS_PER_PAGE = 10;
const ENGAGED_CLICKS = 2;

/**
 * engagement_score, 0-100 with one decimal:
 *   50 × share of the book's pages seen
 * + 35 × min(1, active seconds per page seen / 10)
 * + 15 × min(1, clicks / 2)
 */
export function engagementScore(input: { pagesViewed: number; pageCount: number; activeMs: number; clicks: number }): number {
  const pageShare = input.pageCount > 0 ? Math.min(1, input.pagesViewed / input.pageCount) : 0;
  const attention = input.pagesViewed > 0 ? Math.min(1, input.activeMs / 1000 / input.pagesViewed / ENGAGED_SECONDS_PER_PAGE) : 0;
  const clicking = Math.min(1, input.clicks / ENGAGED_CLICKS);
  return Math.round((50 * pageShare + 35 * attention + 15 * clicking) * 10) / 10;
}

/** The host of a URL, lower-cased, or null. Only the host of a referrer is ever kept. */
export function hostOf(url: string | undefined, ownHost?: string): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
    const host = parsed.hostname.toLowerCase().slice(0, 255);
    return host && host !== ownHost ? host : null;
  } catch {
    return null;
  }
}

function clampTime(at: number | undefined, now: Date): Date {
  if (at === undefined) return now;
  return new Date(Math.min(now.getTime(), Math.max(at, now.getTime() - MAX_EVENT_AGE_MS)));
}

type Context = EventBatchInput['context'];

interface SessionIdentity {
  trackedLinkId: number | null;
  sourceHost: string | null;
  fromEmbedded: boolean;
  place: Geography;
  viewerId: number | null;
}

/**
 * How batches are grouped (ingest-groups.ts). PostgreSQL: 2 groups in flight (one commits while the next forms), up to
 * 200 batches or 4,000 events. PGlite: its one connection takes one group at a time, and a group holds it for the whole
 * transaction, so groups stay short (20 batches, 400 events: about 100 ms under load) and the webhook lane keeps its turns.
 */
export interface IngestGrouping {
  groupsInFlight: number;
  maxBatches: number;
  maxEvents: number;
}
export const POSTGRES_GROUPING: IngestGrouping = { groupsInFlight: 2, maxBatches: 200, maxEvents: 4000 };
export const PGLITE_GROUPING: IngestGrouping = { groupsInFlight: 1, maxBatches: 20, maxEvents: 400 };

/** Names of the batched look-ups' keys (BatchedLookup reads each name once per turn). */
const trackedLinkName = (key: { bookId: number; slug: string }) => `${key.bookId}:${key.slug}`;
const gateViewerName = (key: { workspaceId: number; email: string }) => `${key.workspaceId}:${key.email}`;

export class ReaderEventsService {
  private readonly db: Db;
  private readonly geo: Geolocator;
  private readonly groups: GroupCommit<PendingBatch, number>;
  private readonly trackedLinks: BatchedLookup<{ bookId: number; slug: string }, number>;
  private readonly gateViewers: BatchedLookup<{ workspaceId: number; email: string }, number>;

  constructor(deps: { db: Db; geolocator: Geolocator; grouping?: IngestGrouping }) {
    this.db = deps.db;
    this.geo = deps.geolocator;
    this.trackedLinks = new BatchedLookup((keys) => this.loadTrackedLinks(keys), trackedLinkName);
    this.gateViewers = new BatchedLookup((keys) => this.ensureGateViewers(keys), gateViewerName);
    const grouping = deps.grouping ?? PGLITE_GROUPING;
    this.groups = new GroupCommit({
      key: (batch) => viewKey(batch.book.id, batch.sessionId),
      weight: (batch) => batch.events.length,
      store: (batches) => this.db.transaction((tx) => storeBatches(tx, batches)),
      maxInFlight: grouping.groupsInFlight,
      maxItems: grouping.maxBatches,
      maxWeight: grouping.maxEvents,
    });
  }

  /** How the batches were grouped so far (tests, benchmarks). */
  groupStats(): GroupCommitStats {
    return { ...this.groups.stats };
  }

  /** Checks what the schema cannot: pages within the book, one event per sequence number, no lead without its form. */
  private check(events: ReaderEventInput[], pageCount: number): void {
    const details: ErrorDetails = {};
    const seen = new Set<number>();
    events.forEach((event, i) => {
      const add = (field: string, message: string) => (details[`events.${i}.${field}`] ??= []).push(message);
      if (event.page !== undefined && event.page > pageCount) add('page', `The page must be between 1 and ${pageCount}.`);
      if (seen.has(event.seq)) add('seq', 'Another event of this batch has the same seq.');
      seen.add(event.seq);
      if (event.type === 'page_segment_completed' && (event.page === undefined || event.active_ms === undefined)) {
        add('page', 'A page_segment_completed event needs page and active_ms.');
      }
      if (event.type === 'lead_form_submitted') add('type', 'Lead forms are sent to POST /read/{id}/lead, which records this event.');
    });
    if (Object.keys(details).length > 0) throw ERRORS.validation(details);
  }

  /**
   * Resolved before the transaction, so it stays short (and PGlite's one
   * connection is never asked twice at once). The tracked links and gate
   * viewers of the batches arriving in one event-loop turn are each read or
   * created with one statement (BatchedLookup): a newsletter's readers all
   * come through the same link at once.
   */
  private async identity(origin: EventOrigin, context: Context): Promise<SessionIdentity> {
    const [trackedLinkId, place, viewerId] = await Promise.all([
      context?.tl ? this.trackedLinks.get({ bookId: origin.book.id, slug: context.tl }).then((id) => id ?? null) : null,
      this.geo.locate(origin.ip).catch(() => UNKNOWN_PLACE),
      origin.viewerEmail ? this.gateViewers.get({ workspaceId: origin.book.workspaceId, email: origin.viewerEmail.trim().toLowerCase() }).then((id) => id!) : null,
    ]);
    return { trackedLinkId, place, viewerId, fromEmbedded: context?.embedded === true, sourceHost: hostOf(context?.referrer, origin.ownHost) };
  }

  /** Tracked link ids by book and slug (named by trackedLinkName). */
  private async loadTrackedLinks(keys: { bookId: number; slug: string }[]): Promise<Map<string, number>> {
    const wanted = JSON.stringify(keys.map((key) => ({ b: key.bookId, s: key.slug })));
    const rows = rowsOf<{ book_id: unknown; slug: string; id: unknown }>(await this.db.execute(sql`
      select t.book_id, t.slug, t.id from jsonb_to_recordset(${wanted}::jsonb) as k(b int, s text)
      join ${trackedLinks} t on t.book_id = k.b and t.slug = k.s`));
    return new Map(rows.map((r) => [trackedLinkName({ bookId: Number(r.book_id), slug: r.slug }), Number(r.id)]));
  }

  /** Viewer ids by workspace and address (named by gateViewerName), created when new (ensureViewer for many addresses in one statement). */
  private async ensureGateViewers(keys: { workspaceId: number; email: string }[]): Promise<Map<string, number>> {
    const rows = await ensureViewers(this.db, keys);
    return new Map(rows.map((r) => [gateViewerName(r), r.id]));
  }

  /** Creates the session's view event or locks the existing one (the upsert holds the row until the transaction ends). */
  private async upsertView(tx: DbOrTx, origin: EventOrigin, sessionId: string, who: SessionIdentity, bookVersion: number): Promise<ViewEventRow> {
    const [view] = await tx
      .insert(viewEvents)
      .values({
        workspaceId: origin.book.workspaceId,
        bookId: origin.book.id,
        sessionId,
        viewerId: who.viewerId,
        trackedLinkId: who.trackedLinkId,
        sourceHost: who.sourceHost,
        fromEmbedded: who.fromEmbedded,
        ...who.place,
        bookVersion,
      })
      .onConflictDoUpdate({
        target: [viewEvents.bookId, viewEvents.sessionId],
        // Where the visit came from is fixed by its first batch; an identity learned later (gate, lead form) is kept.
        set: { viewerId: sql`coalesce(excluded.viewer_id, ${viewEvents.viewerId})` },
      })
      .returning();
    return view!;
  }

  /** Stores a batch (with the others of its group); answers how many of its events were new. */
  /**
   * The version the reader shows (its `ver`), with that version's page count: a reader opened before the book switched to a new
   * version keeps sending events about the pages it shows, which are checked and recorded as that version's. The current version
   * when it sends none or one the book does not have.
   */
  private async versionRead(book: EventBook, reported: number | undefined): Promise<{ version: number; book: EventBook }> {
    const current = book.currentVersion ?? 1;
    if (reported === undefined || reported === current) return { version: current, book };
    const [older] = await this.db.select({ pageCount: bookVersions.pageCount }).from(bookVersions)
      .where(and(eq(bookVersions.bookId, book.id), eq(bookVersions.number, reported)));
    return older ? { version: reported, book: { ...book, pageCount: older.pageCount } } : { version: current, book };
  }

  async ingest(origin: EventOrigin, batch: EventBatchInput): Promise<IngestResult> {
    const read = await this.versionRead(origin.book, batch.context?.ver);
    this.check(batch.events, read.book.pageCount);
    const now = origin.now ?? new Date();
    const stored = await this.withIdentity(origin, batch.context, (who) => this.groups.submit({
      book: read.book,
      bookVersion: read.version,
      sessionId: batch.session_id,
      who,
      viewerEmail: origin.viewerEmail,
      sessionActiveMs: batch.active_ms,
      now,
      events: batch.events.map((event) => ({
        seq: event.seq,
        type: event.type,
        page: event.page ?? null,
        active_ms: event.active_ms ?? null,
        exit_reason: event.type === 'session_ended' ? (event.exit_reason ?? 'closed') : null,
        metadata: event.metadata ? [event.metadata] : null,
        at: clampTime(event.at, now).toISOString(),
      })),
    }));
    return { received: batch.events.length, stored };
  }

  /**
   * A lead form submission: the lead, the reader identified by its address
   * for the rest of the session, and its lead_form_submitted interaction and
   * audit events. A re-sent submission (same session and seq) stores nothing
   * new. `fields` is the book's form: required fields must be filled, fields
   * it does not ask for must be absent.
   */
  async submitLead(origin: EventOrigin, fields: LeadFormField[], input: LeadSubmissionInput): Promise<{ stored: boolean }> {
    const read = await this.versionRead(origin.book, input.context?.ver);
    const values = checkLead(fields, input, read.book.pageCount);
    const now = origin.now ?? new Date();
    return this.withIdentity(origin, input.context, (who) => this.db.transaction(async (tx) => {
      // The address given in the form identifies the reader from now on (unless the gate already did).
      const formViewer = await ensureViewer(tx, origin.book.workspaceId, values.email, values.name || null);
      const view = await this.upsertView(tx, origin, input.session_id, { ...who, viewerId: who.viewerId ?? formViewer }, read.version);
      const [event] = await tx
        .insert(interactionEvents)
        .values({
          workspaceId: view.workspaceId, bookId: view.bookId, viewEventId: view.id, viewerId: view.viewerId, trackedLinkId: view.trackedLinkId,
          sessionId: view.sessionId, sequence: input.seq, eventType: 'lead_form_submitted', pageNumber: input.page ?? null,
          sourceType: view.trackedLinkId ? 'tracked_link' : view.fromEmbedded ? 'embed' : 'direct', sourceHost: view.sourceHost,
          country: view.country, region: view.region, city: view.city, latitude: view.latitude, longitude: view.longitude,
          metadata: null, bookVersion: read.version, occurredAt: now,
        })
        .onConflictDoNothing({ target: [interactionEvents.bookId, interactionEvents.sessionId, interactionEvents.sequence] })
        .returning();
      if (!event) return { stored: false };
      const [lead] = await tx
        .insert(leads)
        .values({
          workspaceId: view.workspaceId, bookId: view.bookId, viewerId: formViewer, trackedLinkId: view.trackedLinkId,
          sessionId: view.sessionId, name: values.name, email: values.email, fields: values.extra,
        })
        .returning({ id: leads.id });
      await recordAuditEvents(tx, [{
        workspaceId: view.workspaceId, bookId: view.bookId, source: 'reader', sourceEventId: event.id, eventType: 'lead_form_submitted',
        viewerId: formViewer, viewerEmail: values.email, trackedLinkId: view.trackedLinkId, pageNumber: event.pageNumber,
        metadata: { lead_id: lead!.id }, occurredAt: now,
      }]);
      return { stored: true };
    }));
  }

  /**
   * Stores with the session's identity, and answers a race with a deletion as
   * the request would have been answered a moment later. The gate let the
   * batch in and identity() resolved its viewer and tracked link before the
   * transaction; if one of those rows went meanwhile, the insert breaks a
   * foreign key. The book gone is a 404 (as the gate now says). A viewer or
   * tracked link gone (a redaction, a deleted link) is resolved again and the
   * batch stored once more, so nothing the reader sent is lost.
   */
  private async withIdentity<T>(origin: EventOrigin, context: Context, store: (who: SessionIdentity) => Promise<T>): Promise<T> {
    try {
      return await store(await this.identity(origin, context));
    } catch (error) {
      if (sqlStateOf(error) !== SQL_STATE.foreignKeyViolation) throw error;
      const [book] = await this.db.select({ id: books.id }).from(books).where(eq(books.id, origin.book.id));
      if (!book) throw ERRORS.notFound('Book');
      return store(await this.identity(origin, context));
    }
  }
}

/** A checked batch with its session's identity, waiting for its group. */
interface PendingBatch {
  book: EventBook;
  /** The version the batch's events are about (versionRead). */
  bookVersion: number;
  sessionId: string;
  who: SessionIdentity;
  viewerEmail: string | null;
  sessionActiveMs: number | undefined;
  now: Date;
  events: NewEvent[];
}

interface NewEvent {
  seq: number;
  type: string;
  page: number | null;
  active_ms: number | null;
  exit_reason: string | null;
  metadata: unknown[] | null;
  at: string;
}

interface StoredEvent {
  id: number;
  sequence: number;
  eventType: string;
  pageNumber: number | null;
  activeMs: number | null;
  exitReason: string | null;
  metadata: unknown[] | null;
  occurredAt: Date;
}

/** What a batch needs of its visit's view event. */
type SessionView = Pick<ViewEventRow, 'id' | 'workspaceId' | 'bookId' | 'sessionId' | 'viewerId' | 'trackedLinkId' | 'pagesSeen' | 'clicks' | 'activeMs' | 'reads' | 'exitReason'>;

/** A view's new totals, as the totals statement reads them. */
interface ViewTotals {
  id: number;
  pages_seen: number[];
  pages_viewed: number;
  clicks: number;
  reads: number;
  active_ms: number;
  duration_seconds: number;
  exit_reason: string | null;
  engagement_score: number;
  updated_at: string;
}

const parsed = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

/**
 * Stores a group of batches, of distinct (book, session), in the caller's
 * transaction; answers each batch's count of new events. Four statements
 * whatever the group's size (module header).
 */
async function storeBatches(tx: DbOrTx, batches: PendingBatch[]): Promise<number[]> {
  const { views, inserted } = await upsertViewsAndInsert(tx, batches);
  const totals: ViewTotals[] = [];
  const audited: { batch: PendingBatch; view: SessionView; events: StoredEvent[] }[] = [];
  const counts = batches.map((batch) => {
    const view = views.get(viewKey(batch.book.id, batch.sessionId))!;
    const added = inserted.get(view.id) ?? [];
    const changed = foldTotals(view, batch.book.pageCount, added, batch.sessionActiveMs, batch.now);
    if (changed) totals.push(changed);
    const events = added.filter((e) => AUDITED.has(e.eventType));
    if (events.length > 0) audited.push({ batch, view, events });
    return added.length;
  });
  await writeTotals(tx, totals);
  if (audited.length > 0) {
    // The address: the gate's, else the identified viewer's (one query for the group).
    const unknown = [...new Set(audited.filter((a) => !a.batch.viewerEmail && a.view.viewerId !== null).map((a) => a.view.viewerId!))];
    const emails = new Map(unknown.length === 0 ? [] : (await tx.select({ id: viewers.id, email: viewers.email }).from(viewers).where(inArray(viewers.id, unknown))).map((v) => [v.id, v.email]));
    await recordAuditEvents(tx, audited.flatMap(({ batch, view, events }) => events.map((e) => ({
      workspaceId: view.workspaceId,
      bookId: view.bookId,
      source: 'reader' as const,
      sourceEventId: e.id,
      eventType: e.eventType as AuditEventType,
      viewerId: view.viewerId,
      viewerEmail: batch.viewerEmail ?? (view.viewerId !== null ? (emails.get(view.viewerId) ?? null) : null),
      trackedLinkId: view.trackedLinkId,
      pageNumber: e.pageNumber,
      activeMs: e.activeMs,
      metadata: (e.metadata?.[0] as Record<string, unknown> | undefined) ?? null,
      occurredAt: e.occurredAt,
    }))));
  }
  return counts;
}

const viewKey = (bookId: number, sessionId: string) => `${bookId}\u0000${sessionId}`;

/**
 * Creates each session's view event or locks the existing one, and inserts
 * every batch's events joined to their view, in one statement (data-modifying
 * CTEs; the sessions and their events as one JSON parameter read by
 * jsonb_to_recordset, because building a many-row, 20-column insert with the
 * query builder cost more CPU than the database spent on it: README, "Reader
 * analytics"). The views are upserted in (book, session) order: the lock order
 * of every process. Where the visit came from is fixed by its first batch; an
 * identity learned later (gate, lead form) is kept. A re-sent event (same
 * book, session and sequence) is skipped; the new ones of each view are
 * returned in sequence order.
 */
async function upsertViewsAndInsert(tx: DbOrTx, batches: PendingBatch[]): Promise<{ views: Map<string, SessionView>; inserted: Map<number, StoredEvent[]> }> {
  const sessions = batches.map(({ book, bookVersion, sessionId, who, events }) => ({
    workspace_id: book.workspaceId, book_id: book.id, session_id: sessionId, viewer_id: who.viewerId, tracked_link_id: who.trackedLinkId,
    source_host: who.sourceHost, from_embedded: who.fromEmbedded, country: who.place.country, region: who.place.region, city: who.place.city,
    latitude: who.place.latitude, longitude: who.place.longitude, book_version: bookVersion, events,
  }));
  const result = await tx.execute(sql`
    with s as materialized (
      select * from jsonb_to_recordset(${JSON.stringify(sessions)}::jsonb)
        as s(workspace_id int, book_id int, session_id text, viewer_id int, tracked_link_id int, source_host text, from_embedded boolean,
             country text, region text, city text, latitude double precision, longitude double precision, book_version int, events jsonb)
    ), v as (
      insert into view_events (workspace_id, book_id, session_id, viewer_id, tracked_link_id, source_host, from_embedded, country, region, city, latitude, longitude, book_version)
      select workspace_id, book_id, session_id, viewer_id, tracked_link_id, source_host, from_embedded, country, region, city, latitude, longitude, book_version
      from s order by book_id, session_id
      on conflict (book_id, session_id) do update set viewer_id = coalesce(excluded.viewer_id, view_events.viewer_id)
      returning id, workspace_id, book_id, session_id, viewer_id, tracked_link_id, source_host, from_embedded, country, region, city, latitude, longitude,
                pages_seen, clicks, active_ms, reads, exit_reason
    ), e as (
      insert into interaction_events (workspace_id, book_id, view_event_id, viewer_id, tracked_link_id, session_id, sequence, event_type, page_number,
                                      active_ms, exit_reason, source_type, source_host, country, region, city, latitude, longitude, metadata, book_version, occurred_at)
      select v.workspace_id, v.book_id, v.id, v.viewer_id, v.tracked_link_id, v.session_id, x.seq, x.type, x.page, x.active_ms, x.exit_reason,
             case when v.tracked_link_id is not null then 'tracked_link' when v.from_embedded then 'embed' else 'direct' end,
             v.source_host, v.country, v.region, v.city, v.latitude, v.longitude, x.metadata, s.book_version, x.at
      from v join s on s.book_id = v.book_id and s.session_id = v.session_id
           cross join lateral jsonb_to_recordset(s.events)
           as x(seq int, type text, page int, active_ms int, exit_reason text, metadata jsonb, at timestamptz)
      on conflict (book_id, session_id, sequence) do nothing
      returning id, view_event_id, sequence, event_type, page_number, active_ms, exit_reason, metadata, occurred_at
    )
    select (select json_agg(json_build_object('id', id, 'workspace_id', workspace_id, 'book_id', book_id, 'session_id', session_id, 'viewer_id', viewer_id,
                                              'tracked_link_id', tracked_link_id, 'pages_seen', pages_seen, 'clicks', clicks, 'active_ms', active_ms,
                                              'reads', reads, 'exit_reason', exit_reason)) from v) as views,
           coalesce((select json_agg(e) from e), '[]'::json) as events`);
  const [row] = rowsOf<{ views: unknown; events: unknown }>(result);
  const views = new Map<string, SessionView>();
  for (const v of parsed(row!.views) as Record<string, unknown>[]) {
    const view: SessionView = {
      id: Number(v.id), workspaceId: v.workspace_id as number, bookId: v.book_id as number, sessionId: v.session_id as string,
      viewerId: v.viewer_id as number | null, trackedLinkId: v.tracked_link_id as number | null, pagesSeen: (v.pages_seen as number[] | null) ?? [],
      clicks: v.clicks as number, activeMs: Number(v.active_ms), reads: v.reads as number, exitReason: v.exit_reason as string | null,
    };
    views.set(viewKey(view.bookId, view.sessionId), view);
  }
  const inserted = new Map<number, StoredEvent[]>();
  for (const r of parsed(row!.events) as Record<string, unknown>[]) {
    const viewId = Number(r.view_event_id);
    let list = inserted.get(viewId);
    if (!list) inserted.set(viewId, (list = []));
    list.push({
      id: Number(r.id), sequence: r.sequence as number, eventType: r.event_type as string, pageNumber: r.page_number as number | null,
      activeMs: r.active_ms as number | null, exitReason: r.exit_reason as string | null, metadata: r.metadata as unknown[] | null,
      occurredAt: new Date(r.occurred_at as string),
    });
  }
  for (const list of inserted.values()) list.sort((a, b) => a.sequence - b.sequence);
  return { views, inserted };
}

/** Folds a batch's newly stored events into its view's totals; null when nothing changes. */
function foldTotals(
  view: SessionView, pageCount: number,
  added: { eventType: string; pageNumber: number | null; activeMs: number | null; exitReason: string | null }[],
  sessionActiveMs: number | undefined, now: Date,
): ViewTotals | null {
  if (added.length === 0 && (sessionActiveMs === undefined || sessionActiveMs <= view.activeMs)) return null;
  const pages = new Set(view.pagesSeen);
  let clicks = view.clicks;
  let segmentMs = 0;
  let exitReason = view.exitReason;
  for (const event of added) {
    if (event.eventType === 'page_segment_completed' && event.pageNumber !== null) {
      pages.add(event.pageNumber);
      segmentMs += event.activeMs ?? 0;
    }
    if (CLICK_TYPES.has(event.eventType as InteractionEventType)) clicks++;
    if (event.exitReason) exitReason = event.exitReason;
  }
  // The session's own measure of active time is the duration; without it, the time of the new segments adds up.
  const activeMs = Math.min(MAX_SESSION_MS, sessionActiveMs !== undefined ? Math.max(view.activeMs, sessionActiveMs) : view.activeMs + segmentMs);
  const pagesSeen = [...pages].sort((a, b) => a - b);
  const reads = pagesSeen.length >= READ_MIN_PAGES || activeMs >= READ_MIN_ACTIVE_MS ? 1 : 0;
  return {
    id: view.id, pages_seen: pagesSeen, pages_viewed: pagesSeen.length, clicks, reads: Math.max(view.reads, reads), active_ms: activeMs,
    duration_seconds: Math.round(activeMs / 1000), exit_reason: exitReason,
    engagement_score: engagementScore({ pagesViewed: pagesSeen.length, pageCount, activeMs, clicks }), updated_at: now.toISOString(),
  };
}

/** Writes the group's changed totals in one statement (raw SQL: the query builder's CPU was a visible share of a batch's, README). */
async function writeTotals(tx: DbOrTx, totals: ViewTotals[]): Promise<void> {
  if (totals.length === 0) return;
  await tx.execute(sql`
    update view_events v set pages_seen = t.pages_seen, pages_viewed = t.pages_viewed, clicks = t.clicks, reads = t.reads, active_ms = t.active_ms,
           duration_seconds = t.duration_seconds, exit_reason = t.exit_reason, engagement_score = t.engagement_score, updated_at = t.updated_at
    from jsonb_to_recordset(${JSON.stringify(totals)}::jsonb)
         as t(id bigint, pages_seen int[], pages_viewed int, clicks int, reads int, active_ms bigint, duration_seconds int, exit_reason text,
              engagement_score real, updated_at timestamptz)
    where v.id = t.id`);
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@.]{2,}$/;

/** The submitted values the form asks for, trimmed; a 422 naming each problem otherwise. */
export function checkLead(fields: LeadFormField[], input: LeadSubmissionInput, pageCount: number): { name: string; email: string; extra: Record<string, string> } {
  const details: ErrorDetails = {};
  const asked = new Map(fields.map((f) => [f.name, f.required]));
  const given: Record<string, string> = {};
  for (const name of ['name', 'email', 'phone', 'company', 'message'] as const) {
    const value = input[name]?.trim() ?? '';
    if (!asked.has(name)) {
      if (value) details[name] = ['This form does not ask for this field.'];
      continue;
    }
    if (!value && asked.get(name)) details[name] = [`The ${name} field is required.`];
    if (value) given[name] = value;
  }
  if (given.email && !EMAIL.test(given.email)) details.email = ['The email must be an e-mail address.'];
  if (input.page !== undefined && input.page > pageCount) details.page = [`The page must be between 1 and ${pageCount}.`];
  if (Object.keys(details).length > 0) throw ERRORS.validation(details);
  const { name = '', email = '', ...extra } = given;
  return { name, email: email.toLowerCase(), extra };
}
