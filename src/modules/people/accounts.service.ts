/**
 * Accounts and sessions: signing in (a mailed link or a password), the
 * server-side sessions behind the application's cookie, and what a person
 * sees of their own account. Knows nothing of HTTP: the routes hand it the
 * token from the cookie and set the cookie from what it returns.
 */
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { and, asc, eq, gt, isNull, ne, sql } from 'drizzle-orm';
import type { AuthContext, PersonContext } from '../../platform/auth/auth-context.ts';
import { isPlan, type Plan } from '../../platform/auth/plans.ts';
import { isRole, ROLE_SCOPES, type Role } from '../../platform/auth/roles.ts';
import { hashToken, randomToken } from '../../platform/auth/tokens.ts';
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import type { Mailer } from '../../platform/mail/mailer.ts';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import { memberships, signInLinks, users, userSessions, type SessionRow, type UserRow } from './people.tables.ts';

export interface AccountsOptions {
  db: Db;
  mailer: Mailer;
  publicBaseUrl: string;
  signInLinkTtlMinutes: number;
  sessionTtlDays: number;
  /** AUTH_PASSWORDS */
  passwords: boolean;
}

export interface WorkspaceMembershipView {
  id: number;
  name: string;
  slug: string;
  plan: string;
  role: string;
}

export interface AccountView {
  user: { id: number; email: string; name: string | null; has_password: boolean; created_at: string };
  workspaces: WorkspaceMembershipView[];
  active_workspace: WorkspaceMembershipView | null;
  csrf_token: string;
  session: { id: number; created_at: string; expires_at: string };
}

export interface SessionView {
  id: number;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  user_agent: string | null;
  current: boolean;
}

/** A new session: the plain token goes into the cookie, once. */
export interface StartedSession {
  token: string;
  session: SessionRow;
  expiresAt: Date;
}

export interface SessionMeta {
  userAgent?: string;
  /** Make this workspace active when the person belongs to it (an accepted invitation's). */
  workspaceId?: number;
}

export interface ResolvedSession {
  person: PersonContext;
  /** The active workspace as an auth context, when the person still belongs to it. */
  auth: AuthContext | null;
}

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;
const TOUCH_RESOLUTION_MS = 60_000;
/** OWASP's argon2id minimum (19 MiB, 2 passes, 1 lane), the library's defaults made explicit. */
const ARGON2_OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;
const PASSWORD_MIN = 10;
const PASSWORD_MAX = 256;

/** Lower-cased and checked: an e-mail address is an account's identity. */
export function normalizeEmail(input: unknown, field = 'email'): string {
  const email = typeof input === 'string' ? input.trim().toLowerCase() : '';
  if (!email || email.length > 254 || !EMAIL_PATTERN.test(email)) throw ERRORS.validation({ [field]: ['Enter an e-mail address such as ann@example.com.'] });
  return email;
}

export class AccountsService {
  private readonly db: Db;
  private readonly options: AccountsOptions;
  /** Sessions whose last_seen_at was written recently (one write a minute per busy session). */
  private readonly touched = new Map<number, number>();
  /** A hash to verify against when the address has no password, so both cases take the same time. */
  private readonly decoyHash: Promise<string>;

  constructor(options: AccountsOptions) {
    this.db = options.db;
    this.options = options;
    this.decoyHash = options.passwords ? argon2Hash(randomToken(), ARGON2_OPTIONS) : Promise.resolve('');
  }

  get signInLinkTtlMinutes(): number {
    return this.options.signInLinkTtlMinutes;
  }

  get passwordsEnabled(): boolean {
    return this.options.passwords;
  }

  async findOrCreateUser(email: string, db: Pick<Db, 'insert' | 'select'> = this.db): Promise<UserRow> {
    const [created] = await db.insert(users).values({ email }).onConflictDoNothing().returning();
    if (created) return created;
    const [existing] = await db.select().from(users).where(eq(users.email, email));
    return existing!;
  }

  async findUserByEmail(email: string): Promise<UserRow | null> {
    const [row] = await this.db.select().from(users).where(eq(users.email, email));
    return row ?? null;
  }

  /** A one-time link that signs `email` in (creating the account on use); not mailed. */
  async issueSignInLink(email: string): Promise<string> {
    const token = randomToken();
    await this.db.insert(signInLinks).values({
      email,
      tokenHash: hashToken(token),
      expiresAt: new Date(Date.now() + this.options.signInLinkTtlMinutes * 60_000),
    });
    return `${this.options.publicBaseUrl}/app/sign-in/verify?token=${token}`;
  }

  /** Mails a sign-in link. The same whether or not the address has an account: the link creates it. */
  async sendSignInLink(emailInput: unknown): Promise<void> {
    const email = normalizeEmail(emailInput);
    const link = await this.issueSignInLink(email);
    const minutes = this.options.signInLinkTtlMinutes;
    await this.options.mailer.send({
      to: email,
      subject: 'Your sign-in link for Flipbook',
      text: `Open this link to sign in to Flipbook:\n\n${link}\n\nIt works once, within ${minutes} minutes. If you did not ask for it, ignore this message.`,
    });
  }

  /** Uses a sign-in link (once, before it expires) and starts a session. */
  async signInWithLink(token: string, meta: SessionMeta): Promise<StartedSession> {
    const [link] = await this.db.update(signInLinks)
      .set({ usedAt: new Date() })
      .where(and(eq(signInLinks.tokenHash, hashToken(token)), isNull(signInLinks.usedAt), gt(signInLinks.expiresAt, sql`now()`)))
      .returning({ email: signInLinks.email });
    if (!link) throw ERRORS.gone('This sign-in link has already been used or has expired. Ask for a new one.');
    const user = await this.findOrCreateUser(link.email);
    return this.startSession(user.id, meta);
  }

  async signInWithPassword(emailInput: unknown, password: string, meta: SessionMeta): Promise<StartedSession> {
    if (!this.options.passwords) throw ERRORS.forbidden('Password sign-in is turned off on this server (AUTH_PASSWORDS); use a sign-in link or a passkey.');
    const email = normalizeEmail(emailInput);
    const user = await this.findUserByEmail(email);
    const stored = user?.passwordHash ?? (await this.decoyHash);
    const matches = await argon2Verify(stored, password).catch(() => false);
    if (!user?.passwordHash || !matches) throw ERRORS.unauthenticated('The e-mail address or password is wrong.');
    return this.startSession(user.id, meta);
  }

  async setPassword(userId: number, password: string): Promise<void> {
    if (!this.options.passwords) throw ERRORS.forbidden('Passwords are turned off on this server (AUTH_PASSWORDS).');
    if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
      throw ERRORS.validation({ password: [`A password has ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`] });
    }
    const passwordHash = await argon2Hash(password, ARGON2_OPTIONS);
    await this.db.update(users).set({ passwordHash, updatedAt: new Date() }).where(eq(users.id, userId));
  }

  async startSession(userId: number, meta: SessionMeta): Promise<StartedSession> {
    const token = randomToken();
    const expiresAt = new Date(Date.now() + this.options.sessionTtlDays * 86_400_000);
    const activeWorkspaceId = await this.defaultWorkspace(userId, meta.workspaceId);
    const [session] = await this.db.insert(userSessions).values({
      userId,
      tokenHash: hashToken(token),
      csrfToken: randomToken(),
      activeWorkspaceId,
      userAgent: meta.userAgent?.slice(0, 512) ?? null,
      expiresAt,
    }).returning();
    return { token, session: session!, expiresAt };
  }

  /** The preferred workspace when the person belongs to it, else their first. */
  private async defaultWorkspace(userId: number, preferred?: number): Promise<number | null> {
    const rows = await this.db.select({ workspaceId: memberships.workspaceId }).from(memberships)
      .where(eq(memberships.userId, userId)).orderBy(asc(memberships.workspaceId));
    if (preferred !== undefined && rows.some((r) => r.workspaceId === preferred)) return preferred;
    return rows[0]?.workspaceId ?? null;
  }

  /**
   * The person behind a session token, with their role in the active
   * workspace, read in one statement on every request: nothing is cached, so
   * an ended session or a removed member is refused at once in every process.
   */
  async authenticate(token: string): Promise<ResolvedSession | null> {
    if (!token || token.length > 100) return null;
    const [row] = await this.db
      .select({ session: userSessions, email: users.email, role: memberships.role, workspace: workspaces })
      .from(userSessions)
      .innerJoin(users, eq(users.id, userSessions.userId))
      .leftJoin(memberships, and(eq(memberships.userId, userSessions.userId), eq(memberships.workspaceId, userSessions.activeWorkspaceId)))
      .leftJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
      .where(and(eq(userSessions.tokenHash, hashToken(token)), isNull(userSessions.endedAt), gt(userSessions.expiresAt, sql`now()`)));
    if (!row) return null;
    this.touch(row.session);
    const role: Role | null = row.role && isRole(row.role) && row.workspace ? row.role : null;
    const person: PersonContext = {
      userId: row.session.userId,
      email: row.email,
      sessionId: row.session.id,
      csrfToken: row.session.csrfToken,
      activeWorkspaceId: role ? row.session.activeWorkspaceId : null,
      role,
    };
    const ws = row.workspace;
    const auth: AuthContext | null = role && ws ? {
      workspaceId: ws.id,
      workspace: { name: ws.name, slug: ws.slug, canRename: ws.canRename },
      plan: (isPlan(ws.plan) ? ws.plan : 'free') as Plan,
      scopes: ROLE_SCOPES[role],
      method: 'session',
      keyId: null,
      keyPrefix: null,
      mode: null,
      person,
    } : null;
    return { person, auth };
  }

  /** Slides the session's expiry with use, at most one write a minute. */
  private touch(session: SessionRow): void {
    const now = Date.now();
    if (now - Math.max(session.lastSeenAt.getTime(), this.touched.get(session.id) ?? 0) < TOUCH_RESOLUTION_MS) return;
    this.touched.set(session.id, now);
    if (this.touched.size > 50_000) this.touched.clear();
    void this.db.update(userSessions)
      .set({ lastSeenAt: new Date(now), expiresAt: new Date(now + this.options.sessionTtlDays * 86_400_000) })
      .where(and(eq(userSessions.id, session.id), isNull(userSessions.endedAt)))
      .catch(() => this.touched.delete(session.id));
  }

  async account(person: PersonContext): Promise<AccountView> {
    const [user] = await this.db.select().from(users).where(eq(users.id, person.userId));
    const [session] = await this.db.select().from(userSessions).where(eq(userSessions.id, person.sessionId));
    if (!user || !session) throw ERRORS.unauthenticated('Your session has ended: sign in again.');
    const rows = await this.db
      .select({ id: workspaces.id, name: workspaces.name, slug: workspaces.slug, plan: workspaces.plan, role: memberships.role })
      .from(memberships).innerJoin(workspaces, eq(workspaces.id, memberships.workspaceId))
      .where(eq(memberships.userId, person.userId)).orderBy(asc(workspaces.name), asc(workspaces.id));
    return {
      user: { id: user.id, email: user.email, name: user.name, has_password: user.passwordHash !== null, created_at: user.createdAt.toISOString() },
      workspaces: rows,
      active_workspace: rows.find((w) => w.id === session.activeWorkspaceId) ?? null,
      csrf_token: session.csrfToken,
      session: { id: session.id, created_at: session.createdAt.toISOString(), expires_at: session.expiresAt.toISOString() },
    };
  }

  async updateProfile(userId: number, input: { name?: string | null }): Promise<void> {
    const name = input.name?.trim() || null;
    if (name && name.length > 200) throw ERRORS.validation({ name: ['A name has at most 200 characters.'] });
    await this.db.update(users).set({ name, updatedAt: new Date() }).where(eq(users.id, userId));
  }

  async setActiveWorkspace(person: PersonContext, workspaceId: number): Promise<void> {
    const [member] = await this.db.select().from(memberships)
      .where(and(eq(memberships.userId, person.userId), eq(memberships.workspaceId, workspaceId)));
    if (!member) throw ERRORS.notFound('Workspace');
    await this.db.update(userSessions).set({ activeWorkspaceId: workspaceId }).where(eq(userSessions.id, person.sessionId));
  }

  async listSessions(person: PersonContext): Promise<SessionView[]> {
    const rows = await this.db.select().from(userSessions)
      .where(and(eq(userSessions.userId, person.userId), isNull(userSessions.endedAt), gt(userSessions.expiresAt, sql`now()`)))
      .orderBy(asc(userSessions.id));
    return rows.map((s) => ({
      id: s.id,
      created_at: s.createdAt.toISOString(),
      last_seen_at: s.lastSeenAt.toISOString(),
      expires_at: s.expiresAt.toISOString(),
      user_agent: s.userAgent,
      current: s.id === person.sessionId,
    }));
  }

  /** Ends one of the person's sessions; another person's answers like a missing one. */
  async endSession(userId: number, sessionId: number): Promise<void> {
    const ended = await this.db.update(userSessions).set({ endedAt: new Date() })
      .where(and(eq(userSessions.id, sessionId), eq(userSessions.userId, userId), isNull(userSessions.endedAt)))
      .returning({ id: userSessions.id });
    if (ended.length === 0) throw ERRORS.notFound('Session');
  }

  /** Ends every session of the person, or every one but `except`. */
  async endAllSessions(userId: number, except?: number): Promise<number> {
    const ended = await this.db.update(userSessions).set({ endedAt: new Date() })
      .where(and(eq(userSessions.userId, userId), isNull(userSessions.endedAt), except === undefined ? undefined : ne(userSessions.id, except)))
      .returning({ id: userSessions.id });
    return ended.length;
  }

  async endSessionByToken(token: string): Promise<void> {
    await this.db.update(userSessions).set({ endedAt: new Date() }).where(and(eq(userSessions.tokenHash, hashToken(token)), isNull(userSessions.endedAt)));
  }

  /** Moves a person's sessions out of a workspace they left, to their first other workspace (or none). */
  async moveSessionsOutOf(db: Pick<Db, 'update'>, userId: number, workspaceId: number): Promise<void> {
    const next = sql`(select min(${memberships.workspaceId}) from ${memberships} where ${memberships.userId} = ${userId} and ${memberships.workspaceId} <> ${workspaceId})`;
    await db.update(userSessions).set({ activeWorkspaceId: next })
      .where(and(eq(userSessions.userId, userId), eq(userSessions.activeWorkspaceId, workspaceId), isNull(userSessions.endedAt)));
  }

  /** Ends the sessions a person has open in one workspace (they were removed from it). */
  async endSessionsInWorkspace(db: Pick<Db, 'update'>, userId: number, workspaceId: number): Promise<void> {
    await db.update(userSessions).set({ endedAt: new Date() })
      .where(and(eq(userSessions.userId, userId), eq(userSessions.activeWorkspaceId, workspaceId), isNull(userSessions.endedAt)));
  }
}
