/**
 * The three event streams the webhooks fan out, each read by id after a
 * position: the domain-event outbox, reader interaction events, and the audit
 * events of the access gate (the reader's own audit events are copies of
 * interaction events, delivered once from there). Each row becomes a
 * `WebhookEvent`: what a subscription matches on and the envelope it gets.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../platform/db/database.ts';
import { ACCESS_EVENT_TYPES, DOMAIN_EVENT_TYPES, INTERACTION_EVENT_TYPES } from './event-types.ts';
import type { WebhookEnvelope } from './providers.ts';

export type StreamName = 'domain' | 'interaction' | 'audit';

export interface WebhookEvent {
  /** Position in its stream. */
  seq: number;
  eventId: string;
  workspaceId: number;
  type: string;
  /** For filters: the book's random_id, the tracked link's id. */
  bookHandle: string | null;
  trackedLinkId: number | null;
  envelope: WebhookEnvelope;
}

type Row = Record<string, unknown>;

export function rowsOf<T = Row>(result: unknown): T[] {
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

const iso = (value: unknown): string | null => (value == null ? null : new Date(value as string | Date).toISOString());
const num = (value: unknown): number | null => (value == null ? null : Number(value));

export interface StreamDefinition {
  name: StreamName;
  table: string;
  types: readonly string[];
  /** Rows (with what their payload needs) where `where` holds, in id order. */
  select(where: SQL, limit: number, newestFirst?: boolean): SQL;
  toEvent(row: Row): WebhookEvent | null;
}

/** spec part 2, Interaction event. */
export function interactionData(row: Row): Record<string, unknown> {
  const activeMs = num(row.active_ms);
  const data: Record<string, unknown> = {
    id: Number(row.id), book_id: row.book_random_id, viewer_id: num(row.viewer_id), tracked_link_id: num(row.tracked_link_id),
    session_id: row.session_id, event_type: row.event_type, page_number: num(row.page_number), active_ms: activeMs,
    active_seconds: activeMs === null ? null : Math.round(activeMs / 100) / 10, exit_reason: row.exit_reason ?? '',
    source_type: row.source_type, source_host: row.source_host ?? null, country: row.country ?? null, region: row.region ?? null,
    city: row.city ?? null, latitude: num(row.latitude), longitude: num(row.longitude), metadata: row.metadata ?? null,
    occurred_at: iso(row.occurred_at), created_at: iso(row.created_at),
  };
  if (row.viewer_email) data.viewer_email = row.viewer_email;
  return data;
}

/** spec part 2, Audit log event. */
export function auditData(row: Row): Record<string, unknown> {
  const activeMs = num(row.active_ms);
  return {
    id: `${row.source}-${row.id}`, source: row.source, source_event_id: Number(row.source_event_id), book_id: row.book_random_id,
    viewer_id: num(row.viewer_id), viewer_email: row.viewer_email ?? '', event_type: row.event_type, page_number: num(row.page_number),
    active_ms: activeMs, active_seconds: activeMs === null ? null : Math.round(activeMs / 100) / 10, reason: row.reason ?? '',
    metadata: row.metadata ?? null, occurred_at: iso(row.occurred_at),
  };
}

export const STREAMS: Record<StreamName, StreamDefinition> = {
  domain: {
    name: 'domain',
    table: 'domain_events',
    types: DOMAIN_EVENT_TYPES,
    select: (where, limit, newestFirst = false) => sql`select e.id, e.event_id, e.workspace_id, e.type, e.payload, e.occurred_at from domain_events e where ${where} order by e.id ${newestFirst ? sql`desc` : sql`asc`} limit ${limit}`,
    toEvent(row) {
      const payload = (row.payload ?? {}) as Record<string, unknown>;
      return {
        seq: Number(row.id), eventId: String(row.event_id), workspaceId: Number(row.workspace_id), type: String(row.type),
        bookHandle: typeof payload.book_id === 'string' ? payload.book_id : null, trackedLinkId: null,
        envelope: { type: String(row.type), timestamp: iso(row.occurred_at)!, data: payload },
      };
    },
  },
  interaction: {
    name: 'interaction',
    table: 'interaction_events',
    types: INTERACTION_EVENT_TYPES,
    select: (where, limit, newestFirst = false) => sql`select e.*, b.random_id as book_random_id, v.email as viewer_email
      from interaction_events e join books b on b.id = e.book_id left join viewers v on v.id = e.viewer_id
      where ${where} order by e.id ${newestFirst ? sql`desc` : sql`asc`} limit ${limit}`,
    toEvent(row) {
      return {
        seq: Number(row.id), eventId: `evt_ie_${row.id}`, workspaceId: Number(row.workspace_id), type: String(row.event_type),
        bookHandle: String(row.book_random_id), trackedLinkId: num(row.tracked_link_id),
        envelope: { type: String(row.event_type), timestamp: iso(row.occurred_at)!, data: interactionData(row) },
      };
    },
  },
  audit: {
    name: 'audit',
    table: 'audit_events',
    types: ACCESS_EVENT_TYPES,
    select: (where, limit, newestFirst = false) => sql`select e.*, b.random_id as book_random_id
      from audit_events e join books b on b.id = e.book_id where ${where} order by e.id ${newestFirst ? sql`desc` : sql`asc`} limit ${limit}`,
    toEvent(row) {
      // Reader-sourced audit events are the interaction events again: delivered from that stream.
      if (row.source !== 'gate') return null;
      return {
        seq: Number(row.id), eventId: `evt_ae_${row.id}`, workspaceId: Number(row.workspace_id), type: String(row.event_type),
        bookHandle: String(row.book_random_id), trackedLinkId: num(row.tracked_link_id),
        envelope: { type: String(row.event_type), timestamp: iso(row.occurred_at)!, data: auditData(row) },
      };
    },
  },
};

export function streamOf(type: string): StreamDefinition | null {
  return Object.values(STREAMS).find((s) => s.types.includes(type)) ?? null;
}

/** The workspace's most recent events of a type, newest first (sample events). */
export async function recentEvents(db: DbOrTx, workspaceId: number, type: string, limit: number): Promise<WebhookEvent[]> {
  const stream = streamOf(type);
  if (!stream) return [];
  const typeColumn = stream.name === 'domain' ? sql`e.type` : sql`e.event_type`;
  const extra = stream.name === 'audit' ? sql` and e.source = 'gate'` : sql``;
  const rows = rowsOf(await db.execute(stream.select(sql`e.workspace_id = ${workspaceId} and ${typeColumn} = ${type}${extra}`, limit, true)));
  return rows.map((r) => stream.toEvent(r)).filter((e): e is WebhookEvent => e !== null);
}
