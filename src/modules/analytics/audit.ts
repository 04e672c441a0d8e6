/**
 * The audit log of spec part 4: access-gate decisions and the reader actions
 * that matter for compliance. Written in the same transaction as what it
 * records.
 */
import type { DbOrTx } from '../../platform/db/database.ts';
import { auditEvents } from './analytics.tables.ts';

/** The audit event types: spec part 4 lists eight and "one further value"; ours is checkout_redirect_clicked. */
export const AUDIT_EVENT_TYPES = [
  'access_requested',
  'access_granted',
  'access_rejected',
  'document_downloaded',
  'link_clicked',
  'lead_form_submitted',
  'form_widget_opened',
  'checkout_widget_opened',
  'checkout_redirect_clicked',
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export interface AuditEventInput {
  workspaceId: number;
  bookId: number;
  /** gate | reader */
  source: 'gate' | 'reader';
  sourceEventId: number;
  eventType: AuditEventType;
  viewerId?: number | null;
  viewerEmail?: string | null;
  trackedLinkId?: number | null;
  pageNumber?: number | null;
  activeMs?: number | null;
  reason?: string;
  metadata?: Record<string, unknown> | null;
  occurredAt?: Date;
}

export async function recordAuditEvents(db: DbOrTx, events: AuditEventInput[]): Promise<void> {
  if (events.length === 0) return;
  await db.insert(auditEvents).values(
    events.map((e) => ({
      workspaceId: e.workspaceId,
      bookId: e.bookId,
      source: e.source,
      sourceEventId: e.sourceEventId,
      eventType: e.eventType,
      viewerId: e.viewerId ?? null,
      viewerEmail: e.viewerEmail ?? '',
      trackedLinkId: e.trackedLinkId ?? null,
      pageNumber: e.pageNumber ?? null,
      activeMs: e.activeMs ?? null,
      reason: e.reason ?? '',
      metadata: e.metadata ?? null,
      occurredAt: e.occurredAt ?? new Date(),
    })),
  );
}
