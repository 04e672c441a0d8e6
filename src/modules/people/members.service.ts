/**
 * Members and invitations of a workspace. Every operation acts on the
 * caller's own workspace (the auth context's): another workspace's member or
 * invitation answers like a missing one. Nobody grants a role above their
 * own, and the last owner cannot leave, be removed or be demoted.
 */
import { and, asc, count, eq, gt, isNull, sql } from 'drizzle-orm';
import type { PersonContext } from '../../platform/auth/auth-context.ts';
import { isRole, roleAtLeast, roleRank, ROLES, type Role } from '../../platform/auth/roles.ts';
import { hashToken, randomToken } from '../../platform/auth/tokens.ts';
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import type { Mailer } from '../../platform/mail/mailer.ts';
import { recordAudit, type Actor } from '../workspaces/audit-trail.service.ts';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import { OAuthService } from '../oauth/oauth.service.ts';
import { normalizeEmail, type AccountsService, type StartedSession } from './accounts.service.ts';
import { invitations, memberships, users, type InvitationRow } from './people.tables.ts';

const INVITATION_TTL_MS = 7 * 86_400_000;

export interface MemberView {
  user_id: number;
  email: string;
  name: string | null;
  role: string;
  joined_at: string;
  you: boolean;
}

export interface InvitationView {
  id: number;
  email: string;
  role: string;
  invited_by: { id: number; email: string } | null;
  created_at: string;
  expires_at: string;
}

/** The caller as the members service needs them: their workspace, role and audit identity. */
export interface Caller {
  workspaceId: number;
  person: PersonContext & { role: Role };
}

function actorOf(caller: Caller): Actor {
  return { type: 'user', userId: caller.person.userId, label: caller.person.email };
}

function parseRole(value: unknown): Role {
  if (typeof value !== 'string' || !isRole(value)) throw ERRORS.validation({ role: [`The role must be one of ${ROLES.join(', ')}.`] });
  return value;
}

export class MembersService {
  private readonly db: Db;
  private readonly mailer: Mailer;
  private readonly accounts: AccountsService;
  private readonly publicBaseUrl: string;

  constructor(options: { db: Db; mailer: Mailer; accounts: AccountsService; publicBaseUrl: string }) {
    this.db = options.db;
    this.mailer = options.mailer;
    this.accounts = options.accounts;
    this.publicBaseUrl = options.publicBaseUrl;
  }

  async list(workspaceId: number, you: number | null): Promise<MemberView[]> {
    const rows = await this.db
      .select({ userId: users.id, email: users.email, name: users.name, role: memberships.role, joinedAt: memberships.createdAt })
      .from(memberships).innerJoin(users, eq(users.id, memberships.userId))
      .where(eq(memberships.workspaceId, workspaceId))
      .orderBy(asc(users.email));
    return rows.map((r) => ({ user_id: r.userId, email: r.email, name: r.name, role: r.role, joined_at: r.joinedAt.toISOString(), you: r.userId === you }));
  }

  private async member(workspaceId: number, userId: number, db: Pick<Db, 'select'> = this.db) {
    const [row] = await db
      .select({ userId: users.id, email: users.email, name: users.name, role: memberships.role, joinedAt: memberships.createdAt })
      .from(memberships).innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)))
      .for('update', { of: memberships });
    if (!row) throw ERRORS.notFound('Member');
    return row;
  }

  private async ownerCount(workspaceId: number, db: Pick<Db, 'select'>): Promise<number> {
    const [row] = await db.select({ n: count() }).from(memberships).where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.role, 'owner')));
    return row?.n ?? 0;
  }

  async changeRole(caller: Caller, userId: number, roleInput: unknown): Promise<MemberView> {
    const role = parseRole(roleInput);
    if (!roleAtLeast(caller.person.role, 'admin')) throw ERRORS.forbidden('Only admins and owners change roles.');
    if (roleRank(role) > roleRank(caller.person.role)) throw ERRORS.forbidden(`You cannot grant the ${role} role: it is above your own (${caller.person.role}).`);
    return this.db.transaction(async (tx) => {
      // Owners are counted under a lock on the workspace row, so two demotions cannot both pass the last-owner check.
      await tx.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, caller.workspaceId)).for('update');
      const target = await this.member(caller.workspaceId, userId, tx);
      if (target.role === 'owner' && caller.person.role !== 'owner') throw ERRORS.forbidden('Only an owner changes an owner\'s role.');
      if (target.role === 'owner' && role !== 'owner' && (await this.ownerCount(caller.workspaceId, tx)) <= 1) {
        throw ERRORS.conflict('The last owner cannot be demoted: make another member an owner first.');
      }
      await tx.update(memberships).set({ role }).where(and(eq(memberships.workspaceId, caller.workspaceId), eq(memberships.userId, userId)));
      await recordAudit(tx, caller.workspaceId, actorOf(caller), { action: 'member.role_changed', targetType: 'member', targetId: userId, metadata: { email: target.email, from: target.role, to: role } });
      return { user_id: target.userId, email: target.email, name: target.name, role, joined_at: target.joinedAt.toISOString(), you: target.userId === caller.person.userId };
    });
  }

  /** Removes a member (admins and owners; their sessions in this workspace end at once), or the caller themselves (leaving; their sessions move to another of their workspaces). */
  async remove(caller: Caller, userId: number): Promise<void> {
    const self = userId === caller.person.userId;
    if (!self && !roleAtLeast(caller.person.role, 'admin')) throw ERRORS.forbidden('Only admins and owners remove members.');
    await this.db.transaction(async (tx) => {
      await tx.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, caller.workspaceId)).for('update');
      const target = await this.member(caller.workspaceId, userId, tx);
      if (!self && target.role === 'owner' && caller.person.role !== 'owner') throw ERRORS.forbidden('Only an owner removes an owner.');
      if (target.role === 'owner' && (await this.ownerCount(caller.workspaceId, tx)) <= 1) {
        throw ERRORS.conflict(self ? 'You are the last owner: make another member an owner before you leave.' : 'The last owner cannot be removed.');
      }
      await tx.delete(memberships).where(and(eq(memberships.workspaceId, caller.workspaceId), eq(memberships.userId, userId)));
      // Removed: their sessions there end at once. Leaving: the person stays signed in, moved to another workspace (or none).
      if (self) await this.accounts.moveSessionsOutOf(tx, userId, caller.workspaceId);
      else await this.accounts.endSessionsInWorkspace(tx, userId, caller.workspaceId);
      // Their OAuth grants and tokens in this workspace go either way (the token lookup also checks the membership).
      await OAuthService.revokeMember(tx, userId, caller.workspaceId);
      await recordAudit(tx, caller.workspaceId, actorOf(caller), { action: self ? 'member.left' : 'member.removed', targetType: 'member', targetId: userId, metadata: { email: target.email, role: target.role } });
    });
  }

  /** Adds a person (creating the account) or changes their role: the operator's way in, no checks of a caller. */
  async addByOperator(workspaceId: number, emailInput: unknown, roleInput: unknown, actor: Actor): Promise<{ userId: number; email: string; role: Role }> {
    const email = normalizeEmail(emailInput);
    const role = parseRole(roleInput);
    return this.db.transaction(async (tx) => {
      const [ws] = await tx.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, workspaceId));
      if (!ws) throw ERRORS.notFound('Workspace');
      const user = await this.accounts.findOrCreateUser(email, tx);
      await tx.insert(memberships).values({ workspaceId, userId: user.id, role })
        .onConflictDoUpdate({ target: [memberships.workspaceId, memberships.userId], set: { role } });
      await recordAudit(tx, workspaceId, actor, { action: 'member.added', targetType: 'member', targetId: user.id, metadata: { email, role } });
      return { userId: user.id, email, role };
    });
  }

  async listInvitations(workspaceId: number): Promise<InvitationView[]> {
    const rows = await this.db.select({ invitation: invitations, inviter: { id: users.id, email: users.email } })
      .from(invitations).leftJoin(users, eq(users.id, invitations.invitedByUserId))
      .where(and(eq(invitations.workspaceId, workspaceId), isNull(invitations.acceptedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, sql`now()`)))
      .orderBy(asc(invitations.id));
    return rows.map((r) => this.invitationView(r.invitation, r.inviter));
  }

  private invitationView(i: InvitationRow, inviter: { id: number; email: string } | null): InvitationView {
    return { id: i.id, email: i.email, role: i.role, invited_by: inviter, created_at: i.createdAt.toISOString(), expires_at: i.expiresAt.toISOString() };
  }

  private assertMayInvite(caller: Caller, role: Role): void {
    if (!roleAtLeast(caller.person.role, 'admin')) throw ERRORS.forbidden('Only admins and owners invite people.');
    if (roleRank(role) > roleRank(caller.person.role)) throw ERRORS.forbidden(`You cannot invite with the ${role} role: it is above your own (${caller.person.role}).`);
  }

  async invite(caller: Caller, input: { email: unknown; role: unknown }): Promise<InvitationView> {
    const email = normalizeEmail(input.email);
    const role = parseRole(input.role);
    this.assertMayInvite(caller, role);
    const [existing] = await this.db.select({ userId: users.id }).from(memberships).innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.workspaceId, caller.workspaceId), eq(users.email, email)));
    if (existing) throw ERRORS.conflict(`${email} is already a member of this workspace.`, { email: ['Already a member.'] });
    const token = randomToken();
    const row = await this.db.transaction(async (tx) => {
      // One pending invitation per address: a new one replaces the old.
      await tx.update(invitations).set({ revokedAt: new Date() })
        .where(and(eq(invitations.workspaceId, caller.workspaceId), eq(invitations.email, email), isNull(invitations.acceptedAt), isNull(invitations.revokedAt)));
      const [created] = await tx.insert(invitations).values({
        workspaceId: caller.workspaceId, email, role, tokenHash: hashToken(token), invitedByUserId: caller.person.userId,
        expiresAt: new Date(Date.now() + INVITATION_TTL_MS),
      }).returning();
      await recordAudit(tx, caller.workspaceId, actorOf(caller), { action: 'invitation.sent', targetType: 'invitation', targetId: created!.id, metadata: { email, role } });
      return created!;
    });
    await this.mailInvitation(row, token, caller.person.email);
    return this.invitationView(row, { id: caller.person.userId, email: caller.person.email });
  }

  /** A new link for a pending invitation (the old link stops working) and seven more days. */
  async resend(caller: Caller, invitationId: number): Promise<InvitationView> {
    const pending = await this.pendingInvitation(caller.workspaceId, invitationId);
    this.assertMayInvite(caller, parseRole(pending.role));
    const token = randomToken();
    const [row] = await this.db.update(invitations)
      .set({ tokenHash: hashToken(token), expiresAt: new Date(Date.now() + INVITATION_TTL_MS), updatedAt: new Date() })
      .where(eq(invitations.id, pending.id)).returning();
    await recordAudit(this.db, caller.workspaceId, actorOf(caller), { action: 'invitation.resent', targetType: 'invitation', targetId: pending.id, metadata: { email: pending.email } });
    await this.mailInvitation(row!, token, caller.person.email);
    const [inviter] = row!.invitedByUserId ? await this.db.select({ id: users.id, email: users.email }).from(users).where(eq(users.id, row!.invitedByUserId)) : [];
    return this.invitationView(row!, inviter ?? null);
  }

  async revoke(caller: Caller, invitationId: number): Promise<void> {
    if (!roleAtLeast(caller.person.role, 'admin')) throw ERRORS.forbidden('Only admins and owners revoke invitations.');
    const pending = await this.pendingInvitation(caller.workspaceId, invitationId);
    await this.db.update(invitations).set({ revokedAt: new Date(), updatedAt: new Date() }).where(eq(invitations.id, pending.id));
    await recordAudit(this.db, caller.workspaceId, actorOf(caller), { action: 'invitation.revoked', targetType: 'invitation', targetId: pending.id, metadata: { email: pending.email } });
  }

  private async pendingInvitation(workspaceId: number, invitationId: number): Promise<InvitationRow> {
    const [row] = await this.db.select().from(invitations)
      .where(and(eq(invitations.id, invitationId), eq(invitations.workspaceId, workspaceId), isNull(invitations.acceptedAt), isNull(invitations.revokedAt)));
    if (!row) throw ERRORS.notFound('Invitation');
    return row;
  }

  /**
   * Accepts an invitation (once, within seven days): the link proves the
   * address, so the account is created when needed, the membership added,
   * and a session started in the invitation's workspace.
   */
  async accept(token: string, meta: { userAgent?: string }): Promise<StartedSession> {
    const accepted = await this.db.transaction(async (tx) => {
      const [invitation] = await tx.update(invitations).set({ acceptedAt: new Date(), updatedAt: new Date() })
        .where(and(eq(invitations.tokenHash, hashToken(token)), isNull(invitations.acceptedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, sql`now()`)))
        .returning();
      if (!invitation) throw ERRORS.gone('This invitation has already been used, was revoked or has expired. Ask for a new one.');
      const user = await this.accounts.findOrCreateUser(invitation.email, tx);
      // Already a member (invited twice, or added by the operator): keep the higher of the two roles.
      const [current] = await tx.select().from(memberships).where(and(eq(memberships.workspaceId, invitation.workspaceId), eq(memberships.userId, user.id)));
      const role = current && isRole(current.role) && roleRank(current.role) >= roleRank(parseRole(invitation.role)) ? current.role : invitation.role;
      await tx.insert(memberships).values({ workspaceId: invitation.workspaceId, userId: user.id, role })
        .onConflictDoUpdate({ target: [memberships.workspaceId, memberships.userId], set: { role } });
      await recordAudit(tx, invitation.workspaceId, { type: 'user', userId: user.id, label: user.email }, { action: 'invitation.accepted', targetType: 'invitation', targetId: invitation.id, metadata: { email: user.email, role } });
      return { userId: user.id, workspaceId: invitation.workspaceId };
    });
    return this.accounts.startSession(accepted.userId, { userAgent: meta.userAgent, workspaceId: accepted.workspaceId });
  }

  private async mailInvitation(invitation: InvitationRow, token: string, inviterEmail: string): Promise<void> {
    const [ws] = await this.db.select({ name: workspaces.name }).from(workspaces).where(eq(workspaces.id, invitation.workspaceId));
    const link = `${this.publicBaseUrl}/app/invitations/accept?token=${token}`;
    await this.mailer.send({
      to: invitation.email,
      workspaceId: invitation.workspaceId,
      subject: `You are invited to ${ws?.name ?? 'a workspace'} on Flipbook`,
      text: `${inviterEmail} invited you to join ${ws?.name ?? 'their workspace'} on Flipbook as ${invitation.role}.\n\nAccept the invitation:\n\n${link}\n\nThe link works once, within 7 days.`,
    });
  }
}
