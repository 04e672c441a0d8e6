/**
 * The records of spec part 2 that the analytics operations answer, built
 * from raw rows. The exports write the same records as CSV, so a query and
 * its export never disagree on a value.
 */
import { iso, num, numOrNull, score, seconds } from './analytics-sql.ts';

export interface AuditLogEventRecord {
  id: string;
  source: string;
  source_event_id: number;
  book_id: string;
  viewer_id: number | null;
  viewer_email: string;
  event_type: string;
  page_number: number | null;
  active_ms: number | null;
  active_seconds: number | null;
  reason: string;
  metadata: Record<string, unknown> | string | null;
  occurred_at: string | null;
}

export function auditRecord(row: Record<string, unknown>, bookRandomId: string): AuditLogEventRecord {
  const activeMs = numOrNull(row.active_ms);
  return {
    id: String(row.id),
    source: row.source as string,
    source_event_id: num(row.source_event_id),
    book_id: bookRandomId,
    viewer_id: numOrNull(row.viewer_id),
    viewer_email: (row.viewer_email as string | null) ?? '',
    event_type: row.event_type as string,
    page_number: numOrNull(row.page_number),
    active_ms: activeMs,
    active_seconds: activeMs === null ? null : seconds(activeMs),
    reason: (row.reason as string | null) ?? '',
    metadata: (row.metadata as AuditLogEventRecord['metadata']) ?? null,
    occurred_at: row.occurred_at ? iso(row.occurred_at) : null,
  };
}

export interface InteractionEventRecord {
  id: number;
  book_id: string;
  viewer_id: number | null;
  viewer_email?: string;
  tracked_link_id: number | null;
  session_id: string;
  event_type: string;
  page_number: number | null;
  active_ms: number | null;
  active_seconds: number | null;
  exit_reason: string;
  source_type: string;
  source_host: string | null;
  country: string | null;
  region: string | null;
  city: string | null;
  latitude: number | null;
  longitude: number | null;
  metadata: unknown[] | null;
  occurred_at: string;
  created_at: string;
}

const place = (row: Record<string, unknown>) => ({
  country: (row.country as string | null) ?? null,
  region: (row.region as string | null) ?? null,
  city: (row.city as string | null) ?? null,
  latitude: numOrNull(row.latitude),
  longitude: numOrNull(row.longitude),
});

export function interactionRecord(row: Record<string, unknown>, bookRandomId: string): InteractionEventRecord {
  const activeMs = numOrNull(row.active_ms);
  return {
    id: num(row.id),
    book_id: bookRandomId,
    viewer_id: numOrNull(row.viewer_id),
    ...(row.viewer_email ? { viewer_email: row.viewer_email as string } : {}),
    tracked_link_id: numOrNull(row.tracked_link_id),
    session_id: row.session_id as string,
    event_type: row.event_type as string,
    page_number: numOrNull(row.page_number),
    active_ms: activeMs,
    active_seconds: activeMs === null ? null : seconds(activeMs),
    exit_reason: (row.exit_reason as string | null) ?? '',
    source_type: row.source_type as string,
    source_host: (row.source_host as string | null) ?? null,
    ...place(row),
    metadata: (row.metadata as unknown[] | null) ?? null,
    occurred_at: iso(row.occurred_at),
    created_at: iso(row.created_at),
  };
}

export interface ViewEventRecord {
  id: number;
  book_id: string;
  book_title?: string;
  viewer_id: number | null;
  viewer_email?: string;
  session_id: string;
  tracked_link?: { id: number; name: string; slug: string } | null;
  source_host: string | null;
  from_embedded: boolean;
  impressions: number;
  reads: number;
  clicks: number;
  pages_viewed: number;
  duration_seconds: number;
  engagement_score: string;
  country: string | null;
  region: string | null;
  city: string | null;
  latitude: number | null;
  longitude: number | null;
  recorded_at: string;
  updated_at: string;
}

export function viewRecord(row: Record<string, unknown>, bookRandomId: string, bookTitle: string): ViewEventRecord {
  return {
    id: num(row.id),
    book_id: bookRandomId,
    book_title: bookTitle,
    viewer_id: numOrNull(row.viewer_id),
    ...(row.viewer_email ? { viewer_email: row.viewer_email as string } : {}),
    session_id: row.session_id as string,
    tracked_link: row.tracked_link_id === null || row.tracked_link_id === undefined
      ? null
      : { id: num(row.tracked_link_id), name: row.tracked_link_name as string, slug: row.tracked_link_slug as string },
    source_host: (row.source_host as string | null) ?? null,
    from_embedded: Boolean(row.from_embedded),
    impressions: num(row.impressions),
    reads: num(row.reads),
    clicks: num(row.clicks),
    pages_viewed: num(row.pages_viewed),
    duration_seconds: num(row.duration_seconds),
    engagement_score: score(row.engagement_score),
    ...place(row),
    recorded_at: iso(row.recorded_at),
    updated_at: iso(row.updated_at),
  };
}
