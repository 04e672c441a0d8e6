/**
 * Reader visits written straight to the event tables (as the ingest stores
 * them), described by plain objects the tests also use to compute the
 * expected answers on their own.
 */
import { auditEvents, interactionEvents, leads, trackedLinks, viewers, viewEvents } from '../../src/modules/analytics/analytics.tables.ts';
import { engagementScore } from '../../src/modules/analytics/reader-events.service.ts';
import type { TestService } from '../helpers.ts';

export interface SeedVisit {
  session: string;
  viewerId: number | null;
  linkId: number | null;
  at: Date;
  /** [page, active ms] in the order the reader saw them; segment i occurs at `at` + (i + 1) × 10 s. */
  pages: [number, number][];
  clicks?: number;
  host?: string | null;
}

export interface SeededVisit extends SeedVisit {
  viewEventId: number;
  segmentIds: number[];
  segmentTimes: Date[];
}

export async function insertViewer(svc: TestService, workspaceId: number, email: string, name: string | null = null): Promise<number> {
  const [row] = await svc.runtime.database.db.insert(viewers).values({ workspaceId, email, name }).returning();
  return row!.id;
}

export async function insertLink(svc: TestService, workspaceId: number, bookId: number, name: string, slug: string): Promise<number> {
  const [row] = await svc.runtime.database.db.insert(trackedLinks).values({ workspaceId, bookId, name, slug }).returning();
  return row!.id;
}

export async function insertVisit(svc: TestService, book: { id: number; workspaceId: number; pageCount: number }, v: SeedVisit): Promise<SeededVisit> {
  const db = svc.runtime.database.db;
  const activeMs = v.pages.reduce((n, [, ms]) => n + ms, 0);
  const distinct = [...new Set(v.pages.map(([p]) => p))].sort((a, b) => a - b);
  const clicks = v.clicks ?? 0;
  const [view] = await db.insert(viewEvents).values({
    workspaceId: book.workspaceId, bookId: book.id, sessionId: v.session, viewerId: v.viewerId, trackedLinkId: v.linkId, sourceHost: v.host ?? null,
    reads: 1, clicks, pagesViewed: distinct.length, pagesSeen: distinct, activeMs, durationSeconds: Math.round(activeMs / 1000),
    engagementScore: engagementScore({ pagesViewed: distinct.length, pageCount: book.pageCount, activeMs, clicks }), country: 'FR', city: 'Paris',
    recordedAt: v.at, updatedAt: v.at,
  }).returning();
  const base = { workspaceId: book.workspaceId, bookId: book.id, viewEventId: view!.id, viewerId: v.viewerId, trackedLinkId: v.linkId, sessionId: v.session, sourceType: v.linkId ? 'tracked_link' : 'direct', sourceHost: v.host ?? null };
  const times = v.pages.map((_, i) => new Date(v.at.getTime() + (i + 1) * 10_000));
  const rows = [
    { ...base, sequence: 0, eventType: 'session_started', occurredAt: v.at },
    ...v.pages.map(([page, ms], i) => ({ ...base, sequence: i + 1, eventType: 'page_segment_completed', pageNumber: page, activeMs: ms, occurredAt: times[i]! })),
    ...Array.from({ length: clicks }, (_, i) => ({
      ...base, sequence: 100 + i, eventType: 'link_clicked', pageNumber: v.pages.at(-1)?.[0] ?? null, metadata: [{ url: 'https://shop.example/=cmd' }],
      occurredAt: new Date(v.at.getTime() + (v.pages.length + 1) * 10_000 + i),
    })),
  ];
  const inserted = await db.insert(interactionEvents).values(rows).returning();
  for (const e of inserted.filter((r) => r.eventType === 'link_clicked')) {
    await db.insert(auditEvents).values({
      workspaceId: book.workspaceId, bookId: book.id, source: 'reader', sourceEventId: e.id, viewerId: v.viewerId, trackedLinkId: v.linkId,
      eventType: 'link_clicked', pageNumber: e.pageNumber, metadata: { url: 'https://shop.example/=cmd' }, occurredAt: e.occurredAt,
    });
  }
  const segments = inserted.filter((r) => r.eventType === 'page_segment_completed').sort((a, b) => a.sequence - b.sequence);
  return { ...v, viewEventId: view!.id, segmentIds: segments.map((s) => s.id), segmentTimes: times };
}

export async function insertAudit(svc: TestService, book: { id: number; workspaceId: number }, values: { eventType: string; viewerId: number | null; email?: string; at: Date; reason?: string }) {
  const [row] = await svc.runtime.database.db.insert(auditEvents).values({
    workspaceId: book.workspaceId, bookId: book.id, source: 'gate', sourceEventId: 1, viewerId: values.viewerId, viewerEmail: values.email ?? '',
    eventType: values.eventType, reason: values.reason ?? '', occurredAt: values.at,
  }).returning();
  return row!;
}

export async function insertLead(svc: TestService, book: { id: number; workspaceId: number }, values: { name: string; email: string; fields?: Record<string, string>; at: Date; session?: string }) {
  const [row] = await svc.runtime.database.db.insert(leads).values({
    workspaceId: book.workspaceId, bookId: book.id, sessionId: values.session ?? 'lead-session', name: values.name, email: values.email, fields: values.fields ?? {}, createdAt: values.at,
  }).returning();
  return row!;
}

/** The expected page summaries, computed here independently of the service's SQL. */
export function expectedPages(visits: SeededVisit[], pageCount: number) {
  return Array.from({ length: pageCount }, (_, i) => {
    const page = i + 1;
    const segs: number[] = [];
    const readers = new Set<string>();
    for (const v of visits) {
      for (const [p, ms] of v.pages) {
        if (p !== page) continue;
        segs.push(ms);
        readers.add(v.viewerId === null ? `s${v.session}` : `v${v.viewerId}`);
      }
    }
    segs.sort((a, b) => a - b);
    const total = segs.reduce((n, ms) => n + ms, 0);
    const mid = Math.floor(segs.length / 2);
    const median = segs.length === 0 ? 0 : segs.length % 2 ? segs[mid]! : (segs[mid - 1]! + segs[mid]!) / 2;
    return { page_number: page, total_segments: segs.length, total_active_ms: total, unique_readers: readers.size, median };
  });
}
