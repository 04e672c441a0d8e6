/**
 * Reader event ingestion: a batch from one reader session becomes, in one
 * transaction,
 *  - the session's view event (created by its first batch; its totals kept
 *    current by every later one),
 *  - one interaction event per event (a re-sent event, same session and
 *    sequence number, is stored and counted once),
 *  - an audit event for each audit-relevant interaction.
 * The view row is locked by its upsert, so batches of one session are
 * applied one after the other and totals never race.
 *
 * No HTTP here: the caller has passed the reader gate, filtered bots and
 * counted rate limits (reader-events.routes.ts).
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../platform/db/database.ts';
import { ERRORS, type ErrorDetails } from '../../platform/errors.ts';
import { interactionEvents, leads, trackedLinks, viewers, viewEvents, type LeadFormField, type ViewEventRow } from './analytics.tables.ts';
import { AUDIT_EVENT_TYPES, recordAuditEvents, type AuditEventType } from './audit.ts';
import { UNKNOWN_PLACE, type Geography, type Geolocator } from './geography.ts';
import { MAX_SESSION_MS, type EventBatchInput, type InteractionEventType, type LeadSubmissionInput, type ReaderEventInput } from './reader-events.schemas.ts';
import { ensureViewer } from './viewers.ts';
import { rowsOf } from './analytics-sql.ts';

/** The book an event batch is for, as the reader gate found it. */
export interface EventBook {
  id: number;
  workspaceId: number;
  pageCount: number;
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

export class ReaderEventsService {
  private readonly db: Db;
  private readonly geo: Geolocator;

  constructor(deps: { db: Db; geolocator: Geolocator }) {
    this.db = deps.db;
    this.geo = deps.geolocator;
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

  /** Resolved before the transaction, so it stays short (and PGlite's one connection is never asked twice at once). */
  private async identity(origin: EventOrigin, context: Context): Promise<SessionIdentity> {
    const [trackedLinkId, place, viewerId] = await Promise.all([
      context?.tl ? this.trackedLinkId(origin.book.id, context.tl) : null,
      this.geo.locate(origin.ip).catch(() => UNKNOWN_PLACE),
      origin.viewerEmail ? ensureViewer(this.db, origin.book.workspaceId, origin.viewerEmail) : null,
    ]);
    return { trackedLinkId, place, viewerId, fromEmbedded: context?.embedded === true, sourceHost: hostOf(context?.referrer, origin.ownHost) };
  }

  private async trackedLinkId(bookId: number, slug: string): Promise<number | null> {
    const [row] = await this.db.select({ id: trackedLinks.id }).from(trackedLinks).where(and(eq(trackedLinks.bookId, bookId), eq(trackedLinks.slug, slug)));
    return row?.id ?? null;
  }

  /** Creates the session's view event or locks the existing one (the upsert holds the row until the transaction ends). */
  private async upsertView(tx: DbOrTx, origin: EventOrigin, sessionId: string, who: SessionIdentity): Promise<ViewEventRow> {
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
      })
      .onConflictDoUpdate({
        target: [viewEvents.bookId, viewEvents.sessionId],
        // Where the visit came from is fixed by its first batch; an identity learned later (gate, lead form) is kept.
        set: { viewerId: sql`coalesce(excluded.viewer_id, ${viewEvents.viewerId})` },
      })
      .returning();
    return view!;
  }

  private async viewerEmail(tx: DbOrTx, viewerId: number | null, known: string | null): Promise<string | null> {
    if (known || viewerId === null) return known;
    const [row] = await tx.select({ email: viewers.email }).from(viewers).where(eq(viewers.id, viewerId));
    return row?.email ?? null;
  }

  /** Stores a batch; answers how many of its events were new. */
  async ingest(origin: EventOrigin, batch: EventBatchInput): Promise<IngestResult> {
    this.check(batch.events, origin.book.pageCount);
    const now = origin.now ?? new Date();
    const who = await this.identity(origin, batch.context);
    const stored = await this.db.transaction(async (tx) => {
      const { view, inserted } = await upsertViewAndInsert(tx, origin, batch.session_id, who, batch.events.map((event) => ({
        seq: event.seq,
        type: event.type,
        page: event.page ?? null,
        active_ms: event.active_ms ?? null,
        exit_reason: event.type === 'session_ended' ? (event.exit_reason ?? 'closed') : null,
        metadata: event.metadata ? [event.metadata] : null,
        at: clampTime(event.at, now).toISOString(),
      })));

      await this.updateTotals(tx, view, origin.book.pageCount, inserted, batch.active_ms, now);

      const audited = inserted.filter((e) => AUDITED.has(e.eventType));
      if (audited.length > 0) {
        const email = await this.viewerEmail(tx, view.viewerId, origin.viewerEmail);
        await recordAuditEvents(tx, audited.map((e) => ({
          workspaceId: view.workspaceId,
          bookId: view.bookId,
          source: 'reader' as const,
          sourceEventId: e.id,
          eventType: e.eventType as AuditEventType,
          viewerId: view.viewerId,
          viewerEmail: email,
          trackedLinkId: view.trackedLinkId,
          pageNumber: e.pageNumber,
          activeMs: e.activeMs,
          metadata: (e.metadata?.[0] as Record<string, unknown> | undefined) ?? null,
          occurredAt: e.occurredAt,
        })));
      }
      return inserted.length;
    });
    return { received: batch.events.length, stored };
  }

  /** Folds newly stored events into the view's totals. */
  private async updateTotals(
    tx: DbOrTx, view: SessionView, pageCount: number,
    added: { eventType: string; pageNumber: number | null; activeMs: number | null; exitReason: string | null }[],
    sessionActiveMs: number | undefined, now: Date,
  ): Promise<void> {
    if (added.length === 0 && (sessionActiveMs === undefined || sessionActiveMs <= view.activeMs)) return;
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
    // Raw SQL: this runs once per batch, and the query builder's CPU was a visible share of a batch's (README).
    const score = engagementScore({ pagesViewed: pagesSeen.length, pageCount, activeMs, clicks });
    await tx.execute(sql`
      update view_events set pages_seen = ${`{${pagesSeen.join(',')}}`}::int[], pages_viewed = ${pagesSeen.length}::int, clicks = ${clicks}::int,
             reads = ${Math.max(view.reads, reads)}::int, active_ms = ${activeMs}::int, duration_seconds = ${Math.round(activeMs / 1000)}::int,
             exit_reason = ${exitReason}::text, engagement_score = ${score}::real, updated_at = ${now.toISOString()}::timestamptz
      where id = ${view.id}`);
  }

  /**
   * A lead form submission: the lead, the reader identified by its address
   * for the rest of the session, and its lead_form_submitted interaction and
   * audit events. A re-sent submission (same session and seq) stores nothing
   * new. `fields` is the book's form: required fields must be filled, fields
   * it does not ask for must be absent.
   */
  async submitLead(origin: EventOrigin, fields: LeadFormField[], input: LeadSubmissionInput): Promise<{ stored: boolean }> {
    const values = checkLead(fields, input, origin.book.pageCount);
    const now = origin.now ?? new Date();
    const who = await this.identity(origin, input.context);
    return this.db.transaction(async (tx) => {
      // The address given in the form identifies the reader from now on (unless the gate already did).
      const formViewer = await ensureViewer(tx, origin.book.workspaceId, values.email, values.name || null);
      const view = await this.upsertView(tx, origin, input.session_id, { ...who, viewerId: who.viewerId ?? formViewer });
      const [event] = await tx
        .insert(interactionEvents)
        .values({
          workspaceId: view.workspaceId, bookId: view.bookId, viewEventId: view.id, viewerId: view.viewerId, trackedLinkId: view.trackedLinkId,
          sessionId: view.sessionId, sequence: input.seq, eventType: 'lead_form_submitted', pageNumber: input.page ?? null,
          sourceType: view.trackedLinkId ? 'tracked_link' : view.fromEmbedded ? 'embed' : 'direct', sourceHost: view.sourceHost,
          country: view.country, region: view.region, city: view.city, latitude: view.latitude, longitude: view.longitude,
          metadata: null, occurredAt: now,
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
    });
  }
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
type SessionView = Pick<ViewEventRow, 'id' | 'workspaceId' | 'bookId' | 'viewerId' | 'trackedLinkId' | 'pagesSeen' | 'clicks' | 'activeMs' | 'reads' | 'exitReason'>;

const parsed = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);

/**
 * Creates the session's view event or locks the existing one, and inserts
 * the batch's events, in one statement (one round trip instead of two; the
 * events come as one JSON parameter read by jsonb_to_recordset, because
 * building a 10-row, 20-column insert with the query builder cost more CPU
 * than the database spent on it: README, "Reader analytics"). Where the visit
 * came from is fixed by its first batch; an identity learned later (gate,
 * lead form) is kept. A re-sent event (same book, session and sequence) is
 * skipped; the new ones are returned in sequence order.
 */
async function upsertViewAndInsert(
  tx: DbOrTx, origin: EventOrigin, sessionId: string, who: SessionIdentity, events: NewEvent[],
): Promise<{ view: SessionView; inserted: StoredEvent[] }> {
  const { place } = who;
  const result = await tx.execute(sql`
    with v as (
      insert into view_events (workspace_id, book_id, session_id, viewer_id, tracked_link_id, source_host, from_embedded, country, region, city, latitude, longitude)
      values (${origin.book.workspaceId}::int, ${origin.book.id}::int, ${sessionId}::text, ${who.viewerId}::int, ${who.trackedLinkId}::int, ${who.sourceHost}::text,
              ${who.fromEmbedded}::boolean, ${place.country}::text, ${place.region}::text, ${place.city}::text, ${place.latitude}::double precision,
              ${place.longitude}::double precision)
      on conflict (book_id, session_id) do update set viewer_id = coalesce(excluded.viewer_id, view_events.viewer_id)
      returning id, workspace_id, book_id, session_id, viewer_id, tracked_link_id, source_host, from_embedded, country, region, city, latitude, longitude,
                pages_seen, clicks, active_ms, reads, exit_reason
    ), e as (
      insert into interaction_events (workspace_id, book_id, view_event_id, viewer_id, tracked_link_id, session_id, sequence, event_type, page_number,
                                      active_ms, exit_reason, source_type, source_host, country, region, city, latitude, longitude, metadata, occurred_at)
      select v.workspace_id, v.book_id, v.id, v.viewer_id, v.tracked_link_id, v.session_id, x.seq, x.type, x.page, x.active_ms, x.exit_reason,
             case when v.tracked_link_id is not null then 'tracked_link' when v.from_embedded then 'embed' else 'direct' end,
             v.source_host, v.country, v.region, v.city, v.latitude, v.longitude, x.metadata, x.at
      from v, jsonb_to_recordset(${JSON.stringify(events)}::jsonb)
           as x(seq int, type text, page int, active_ms int, exit_reason text, metadata jsonb, at timestamptz)
      on conflict (book_id, session_id, sequence) do nothing
      returning id, sequence, event_type, page_number, active_ms, exit_reason, metadata, occurred_at
    )
    select (select row_to_json(v) from v) as view, coalesce((select json_agg(e) from e), '[]'::json) as events`);
  const [row] = rowsOf<{ view: unknown; events: unknown }>(result);
  const v = parsed(row!.view) as Record<string, unknown>;
  const view: SessionView = {
    id: Number(v.id), workspaceId: v.workspace_id as number, bookId: v.book_id as number, viewerId: v.viewer_id as number | null,
    trackedLinkId: v.tracked_link_id as number | null, pagesSeen: (v.pages_seen as number[] | null) ?? [], clicks: v.clicks as number,
    activeMs: Number(v.active_ms), reads: v.reads as number, exitReason: v.exit_reason as string | null,
  };
  const inserted = (parsed(row!.events) as Record<string, unknown>[])
    .map((r) => ({
      id: Number(r.id), sequence: r.sequence as number, eventType: r.event_type as string, pageNumber: r.page_number as number | null,
      activeMs: r.active_ms as number | null, exitReason: r.exit_reason as string | null, metadata: r.metadata as unknown[] | null,
      occurredAt: new Date(r.occurred_at as string),
    }))
    .sort((a, b) => a.sequence - b.sequence);
  return { view, inserted };
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
