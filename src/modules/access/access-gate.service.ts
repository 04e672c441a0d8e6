/**
 * The access gate: a reader of a book with an access list enters an
 * address; a listed address (or one at a listed domain) gets a single-use
 * sign-in link by mail; opening it starts a reader session. Every step is
 * written to the audit log (access_requested, access_granted,
 * access_rejected), and guessing is rate-limited per book and client, and
 * per address.
 */
import { createHash, randomBytes } from 'node:crypto';
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Db } from '../../platform/db/database.ts';
import type { ClientRateLimiter } from '../../platform/http/client-rate-limit.ts';
import type { Mailer } from '../../platform/mail/mailer.ts';
import { recordAuditEvents } from '../analytics/audit.ts';
import { ensureViewer } from '../analytics/viewers.ts';
import type { ReaderBook } from '../reader/reader.service.ts';
import type { AccessListsService } from './access-lists.service.ts';
import { canonicalEmail } from './access-entries.ts';
import { magicLinks } from './access.tables.ts';
import type { ReaderSessions } from './reader-session.ts';

export const DEFAULT_GATE_MESSAGE = 'This flipbook is available to invited readers. Enter your e-mail address and we will send you a link to open it.';
export const DEFAULT_REFUSAL_MESSAGE = 'This address does not have access to this flipbook. Ask its publisher for an invitation.';

/** Requests for links: per book and client, and per book and address. */
const LIMITS = {
  perClient: { max: 10, windowMs: 15 * 60_000 },
  perAddress: { max: 5, windowMs: 60 * 60_000 },
};

export type LinkRequestResult =
  | { outcome: 'sent'; email: string }
  | { outcome: 'refused'; email: string }
  | { outcome: 'invalid' }
  | { outcome: 'rate_limited'; retryAfterSeconds: number };

export type LinkOpenResult =
  | { outcome: 'granted'; email: string; cookie: string }
  | { outcome: 'expired' | 'used' | 'invalid' | 'not_listed' };

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class AccessGateService {
  private readonly db: Db;
  private readonly lists: AccessListsService;
  private readonly mailer: Mailer;
  private readonly sessions: ReaderSessions;
  private readonly limiter: ClientRateLimiter;
  private readonly linkTtlMs: number;
  private readonly publicBaseUrl: string;

  constructor(deps: { db: Db; lists: AccessListsService; mailer: Mailer; sessions: ReaderSessions; limiter: ClientRateLimiter; linkTtlMinutes: number; publicBaseUrl: string }) {
    this.db = deps.db;
    this.lists = deps.lists;
    this.mailer = deps.mailer;
    this.sessions = deps.sessions;
    this.limiter = deps.limiter;
    this.linkTtlMs = deps.linkTtlMinutes * 60_000;
    this.publicBaseUrl = deps.publicBaseUrl;
  }

  async requestLink(book: ReaderBook, input: { email: string; ip: string }): Promise<LinkRequestResult> {
    const email = canonicalEmail(input.email);
    if (!email) return { outcome: 'invalid' };
    const bookId = book.row.id;
    const retryAfter = await this.limiter.hit([
      { bucket: `gate:${bookId}:client`, subject: this.limiter.clientKey(input.ip), ...LIMITS.perClient },
      { bucket: `gate:${bookId}:address`, subject: email, ...LIMITS.perAddress },
    ]);
    if (retryAfter !== null) return { outcome: 'rate_limited', retryAfterSeconds: retryAfter };

    const audit = { workspaceId: book.row.workspaceId, bookId, source: 'gate' as const, viewerEmail: email };
    if (!(await this.lists.admits(bookId, email))) {
      // No row stands behind a refusal: source_event_id 0.
      await recordAuditEvents(this.db, [{ ...audit, sourceEventId: 0, eventType: 'access_rejected', reason: 'not_listed' }]);
      return { outcome: 'refused', email };
    }
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + this.linkTtlMs);
    await this.db.transaction(async (tx) => {
      const viewerId = await ensureViewer(tx, book.row.workspaceId, email);
      const [link] = await tx.insert(magicLinks).values({ workspaceId: book.row.workspaceId, bookId, email, tokenHash: hashToken(token), expiresAt }).returning({ id: magicLinks.id });
      await recordAuditEvents(tx, [{ ...audit, viewerId, sourceEventId: link!.id, eventType: 'access_requested', metadata: { expires_at: expiresAt.toISOString() } }]);
    });
    const url = `${this.publicBaseUrl}/read/${book.row.randomId}/access/${token}`;
    const minutes = Math.round(this.linkTtlMs / 60_000);
    await this.mailer.send({
      workspaceId: book.row.workspaceId,
      to: email,
      subject: `Your link to "${book.row.name}"`,
      text:
        `Open "${book.row.name}" with this link:\n\n${url}\n\n` +
        `The link works once and expires in ${minutes} minutes. If you did not ask for it, ignore this message.\n`,
    });
    return { outcome: 'sent', email };
  }

  /** Opens a sign-in link: single use, before its expiry, and only while the address is still on the list. */
  async openLink(book: ReaderBook, token: string): Promise<LinkOpenResult> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return { outcome: 'invalid' };
    const hash = hashToken(token);
    const [link] = await this.db.select().from(magicLinks).where(and(eq(magicLinks.tokenHash, hash), eq(magicLinks.bookId, book.row.id)));
    if (!link) return { outcome: 'invalid' };
    const audit = { workspaceId: book.row.workspaceId, bookId: book.row.id, source: 'gate' as const, sourceEventId: link.id, viewerEmail: link.email };
    const refuse = async (outcome: 'expired' | 'used' | 'not_listed') => {
      await recordAuditEvents(this.db, [{ ...audit, eventType: 'access_rejected', reason: outcome === 'used' ? 'link_used' : outcome === 'expired' ? 'link_expired' : 'not_listed' }]);
      return { outcome };
    };
    if (!(await this.lists.admits(book.row.id, link.email))) return refuse('not_listed');
    const granted = await this.db.transaction(async (tx) => {
      // The conditional update is the single-use guarantee: of two concurrent opens, one wins.
      const [used] = await tx
        .update(magicLinks)
        .set({ usedAt: new Date() })
        .where(and(eq(magicLinks.id, link.id), isNull(magicLinks.usedAt), gt(magicLinks.expiresAt, new Date())))
        .returning();
      if (!used) return false;
      const viewerId = await ensureViewer(tx, book.row.workspaceId, link.email);
      await recordAuditEvents(tx, [{ ...audit, viewerId, eventType: 'access_granted' }]);
      return true;
    });
    if (!granted) return refuse(link.usedAt ? 'used' : link.expiresAt <= new Date() ? 'expired' : 'used');
    return { outcome: 'granted', email: link.email, cookie: this.sessions.issue(book.row.randomId, link.email) };
  }
}
