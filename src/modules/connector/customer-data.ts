/**
 * What a workspace holds about one customer (a reader), found by e-mail
 * address, for the platform's privacy topics: collect it (data request) or
 * remove it (redaction). Only this workspace's rows are read or touched, and
 * only rows that name exactly this address.
 *
 * Redaction:
 *  - lead submissions: deleted;
 *  - access-list entries for the address: deleted, except a book's last
 *    entry, which is replaced by a placeholder that nobody can sign in with
 *    (`redacted-<id>@redacted.invalid`), so removing a reader never opens a
 *    private book to everyone;
 *  - the reader's identity in analytics (viewers): deleted, which leaves
 *    their views and events anonymous (viewer_id null) so totals stay right;
 *    the address copied into audit events is blanked;
 *  - sign-in links and mails to the address: deleted.
 */
import { and, count, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../platform/db/database.ts';
import { magicLinks, subscribers } from '../access/access.tables.ts';
import { auditEvents, interactionEvents, leads, viewEvents, viewers } from '../analytics/analytics.tables.ts';
import { books } from '../books/books.tables.ts';
import { mailMessages } from '../../platform/mail/mail.tables.ts';

export type CustomerCounts = Record<'leads' | 'access_list_entries' | 'viewers' | 'audit_events' | 'magic_links' | 'mail_messages', number>;

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Rows that name the address, per kind, with the viewer ids. */
async function scope(db: DbOrTx, workspaceId: number, email: string) {
  const viewerRows = await db.select({ id: viewers.id, name: viewers.name, createdAt: viewers.createdAt }).from(viewers)
    .where(and(eq(viewers.workspaceId, workspaceId), eq(viewers.email, email)));
  const viewerIds = viewerRows.map((v) => v.id);
  const auditWhere = and(
    eq(auditEvents.workspaceId, workspaceId),
    viewerIds.length ? sql`(${auditEvents.viewerEmail} = ${email} or ${inArray(auditEvents.viewerId, viewerIds)})` : eq(auditEvents.viewerEmail, email),
  );
  return { viewerRows, viewerIds, auditWhere };
}

/** Assembles what the workspace holds about the address (a data request). */
export async function collectCustomerData(db: DbOrTx, workspaceId: number, rawEmail: string) {
  const email = normaliseEmail(rawEmail);
  const { viewerRows, viewerIds, auditWhere } = await scope(db, workspaceId, email);
  const leadRows = await db
    .select({ book_id: books.randomId, name: leads.name, email: leads.email, fields: leads.fields, created_at: leads.createdAt })
    .from(leads).innerJoin(books, eq(books.id, leads.bookId))
    .where(and(eq(leads.workspaceId, workspaceId), sql`lower(${leads.email}) = ${email}`));
  const entries = await db
    .select({ book_id: books.randomId, email: subscribers.value, created_at: subscribers.createdAt })
    .from(subscribers).innerJoin(books, eq(books.id, subscribers.bookId))
    .where(and(eq(subscribers.workspaceId, workspaceId), eq(subscribers.type, 'email'), eq(subscribers.value, email)));
  const audit = await db
    .select({ book_id: books.randomId, event_type: auditEvents.eventType, occurred_at: auditEvents.occurredAt })
    .from(auditEvents).innerJoin(books, eq(books.id, auditEvents.bookId)).where(auditWhere).orderBy(auditEvents.id).limit(10_000);
  const views = viewerIds.length
    ? await db.select({ book_id: books.randomId, recorded_at: viewEvents.recordedAt, pages_viewed: viewEvents.pagesViewed, duration_seconds: viewEvents.durationSeconds, country: viewEvents.country, city: viewEvents.city })
      .from(viewEvents).innerJoin(books, eq(books.id, viewEvents.bookId)).where(inArray(viewEvents.viewerId, viewerIds)).orderBy(viewEvents.id).limit(10_000)
    : [];
  const [{ n: interactions } = { n: 0 }] = viewerIds.length
    ? await db.select({ n: count() }).from(interactionEvents).where(inArray(interactionEvents.viewerId, viewerIds))
    : [{ n: 0 }];
  const [{ n: links } = { n: 0 }] = await db.select({ n: count() }).from(magicLinks).where(and(eq(magicLinks.workspaceId, workspaceId), eq(magicLinks.email, email)));
  const [{ n: mails } = { n: 0 }] = await db.select({ n: count() }).from(mailMessages).where(and(eq(mailMessages.workspaceId, workspaceId), eq(mailMessages.to, email)));
  const iso = (d: Date) => d.toISOString();
  const data = {
    email,
    leads: leadRows.map((l) => ({ ...l, created_at: iso(l.created_at) })),
    access_list_entries: entries.map((e) => ({ ...e, created_at: iso(e.created_at) })),
    viewer: viewerRows[0] ? { email, name: viewerRows[0].name, first_seen_at: iso(viewerRows[0].createdAt) } : null,
    views: views.map((v) => ({ ...v, recorded_at: iso(v.recorded_at) })),
    interaction_events: interactions,
    audit_events: audit.map((a) => ({ ...a, occurred_at: iso(a.occurred_at) })),
    sign_in_links: links,
    mail_messages: mails,
  };
  const counts: CustomerCounts = {
    leads: leadRows.length, access_list_entries: entries.length, viewers: viewerRows.length,
    audit_events: audit.length, magic_links: links, mail_messages: mails,
  };
  return { data, counts };
}

/** Removes or anonymises what the workspace holds about the address; counts the rows touched per kind. */
export async function redactCustomer(db: DbOrTx, workspaceId: number, rawEmail: string): Promise<CustomerCounts> {
  const email = normaliseEmail(rawEmail);
  const { viewerIds, auditWhere } = await scope(db, workspaceId, email);
  const removedLeads = await db.delete(leads).where(and(eq(leads.workspaceId, workspaceId), sql`lower(${leads.email}) = ${email}`)).returning({ id: leads.id });

  const entries = await db.select({ id: subscribers.id, bookId: subscribers.bookId }).from(subscribers)
    .where(and(eq(subscribers.workspaceId, workspaceId), eq(subscribers.type, 'email'), eq(subscribers.value, email))).for('update');
  for (const entry of entries) {
    const [{ n } = { n: 0 }] = await db.select({ n: count() }).from(subscribers).where(eq(subscribers.bookId, entry.bookId));
    if (n > 1) await db.delete(subscribers).where(eq(subscribers.id, entry.id));
    else await db.update(subscribers).set({ value: `redacted-${entry.id}@redacted.invalid` }).where(eq(subscribers.id, entry.id));
  }

  const audit = await db.update(auditEvents).set({ viewerEmail: '' }).where(auditWhere).returning({ id: auditEvents.id });
  const removedViewers = viewerIds.length ? await db.delete(viewers).where(inArray(viewers.id, viewerIds)).returning({ id: viewers.id }) : [];
  const links = await db.delete(magicLinks).where(and(eq(magicLinks.workspaceId, workspaceId), eq(magicLinks.email, email))).returning({ id: magicLinks.id });
  const mails = await db.delete(mailMessages).where(and(eq(mailMessages.workspaceId, workspaceId), eq(mailMessages.to, email))).returning({ id: mailMessages.id });
  return {
    leads: removedLeads.length, access_list_entries: entries.length, viewers: removedViewers.length,
    audit_events: audit.length, magic_links: links.length, mail_messages: mails.length,
  };
}
