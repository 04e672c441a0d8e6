/**
 * People and their ways in: accounts, memberships (one role per workspace),
 * sessions, sign-in links, passkeys, invitations. Every token is random and
 * stored only as its SHA-256 (`token_hash`); the plain value lives in a
 * cookie or a mailed link, never here.
 */
import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { instant } from '../../platform/db/columns.ts';
import { workspaces } from '../workspaces/workspaces.tables.ts';

export const users = pgTable('users', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  /** Lower-cased; the identity of the account. */
  email: text('email').notNull(),
  name: text('name'),
  /** argon2id (PHC string); null: no password set. Used only with AUTH_PASSWORDS=true. */
  passwordHash: text('password_hash'),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('users_email_key').on(t.email)]);

export const memberships = pgTable('memberships', {
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  /** owner | admin | editor | viewer: see src/platform/auth/roles.ts. */
  role: text('role').notNull(),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [primaryKey({ columns: [t.workspaceId, t.userId] }), index('memberships_user_idx').on(t.userId)]);

export const userSessions = pgTable('user_sessions', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  tokenHash: text('token_hash').notNull(),
  /** Sent back by the application in X-CSRF-Token on every cookie-authenticated write. */
  csrfToken: text('csrf_token').notNull(),
  activeWorkspaceId: integer('active_workspace_id').references(() => workspaces.id, { onDelete: 'set null' }),
  userAgent: text('user_agent'),
  createdAt: instant('created_at').notNull().defaultNow(),
  lastSeenAt: instant('last_seen_at').notNull().defaultNow(),
  expiresAt: instant('expires_at').notNull(),
  endedAt: instant('ended_at'),
}, (t) => [uniqueIndex('user_sessions_token_key').on(t.tokenHash), index('user_sessions_user_idx').on(t.userId)]);

export const signInLinks = pgTable('sign_in_links', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  tokenHash: text('token_hash').notNull(),
  email: text('email').notNull(),
  expiresAt: instant('expires_at').notNull(),
  usedAt: instant('used_at'),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('sign_in_links_token_key').on(t.tokenHash)]);

export const passkeys = pgTable('passkeys', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  userId: integer('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  /** base64url, as WebAuthn's JSON forms carry it. */
  credentialId: text('credential_id').notNull(),
  /** COSE public key, base64url. */
  publicKey: text('public_key').notNull(),
  counter: integer('counter').notNull().default(0),
  transports: text('transports').array().notNull().default(sql`'{}'::text[]`),
  backedUp: boolean('backed_up').notNull().default(false),
  name: text('name').notNull(),
  createdAt: instant('created_at').notNull().defaultNow(),
  lastUsedAt: instant('last_used_at'),
}, (t) => [uniqueIndex('passkeys_credential_key').on(t.credentialId), index('passkeys_user_idx').on(t.userId)]);

/** A WebAuthn challenge handed out and not yet answered (single use, short-lived). */
export const webauthnChallenges = pgTable('webauthn_challenges', {
  id: text('id').primaryKey(),
  challenge: text('challenge').notNull(),
  /** register: the signed-in person adding a passkey; authenticate: anyone signing in. */
  purpose: text('purpose').notNull(),
  userId: integer('user_id').references(() => users.id, { onDelete: 'cascade' }),
  expiresAt: instant('expires_at').notNull(),
});

export const invitations = pgTable('invitations', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  email: text('email').notNull(),
  role: text('role').notNull(),
  tokenHash: text('token_hash').notNull(),
  invitedByUserId: integer('invited_by_user_id').references(() => users.id, { onDelete: 'set null' }),
  expiresAt: instant('expires_at').notNull(),
  acceptedAt: instant('accepted_at'),
  revokedAt: instant('revoked_at'),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('invitations_token_key').on(t.tokenHash), index('invitations_workspace_idx').on(t.workspaceId)]);

export type UserRow = typeof users.$inferSelect;
export type SessionRow = typeof userSessions.$inferSelect;
export type InvitationRow = typeof invitations.$inferSelect;
export type PasskeyRow = typeof passkeys.$inferSelect;
