import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { instant } from '../../platform/db/columns.ts';

export const workspaces = pgTable('workspaces', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  name: text('name').notNull(),
  slug: text('slug').notNull(),
  /** free | pro | company: see src/platform/auth/plans.ts. */
  plan: text('plan').notNull().default('free'),
  /** The connector may replace a generated signup name once. */
  canRename: boolean('can_rename').notNull().default(true),
  /** IANA zone the analytics days begin in when a call gives no `tz` (the application's date ranges too). */
  timeZone: text('time_zone').notNull().default('UTC'),
  /** Readers the `exclude_team` analytics filter leaves out besides members: e-mail addresses and domains, lower case. */
  analyticsTeamExclusions: text('analytics_team_exclusions').array().notNull().default([]),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('workspaces_slug_key').on(t.slug)]);

export const apiKeys = pgTable('api_keys', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  /** live | test, as in the key's prefix. */
  mode: text('mode').notNull(),
  /** The first characters of the key's random part, stored in clear to find the row; never enough to use the key. */
  lookupId: text('lookup_id').notNull(),
  /** SHA-256 of the whole key (hex). The key itself is never stored. */
  secretHash: text('secret_hash').notNull(),
  scopes: text('scopes').array().notNull(),
  rotatedFromId: integer('rotated_from_id'),
  /** The person who made it in the application; null for the CLI, the bootstrap and the connector. */
  createdByUserId: integer('created_by_user_id'),
  /** After this instant the key answers 401 (a chosen expiry, or the end of a rotation's overlap). */
  expiresAt: instant('expires_at'),
  lastUsedAt: instant('last_used_at'),
  revokedAt: instant('revoked_at'),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [
  uniqueIndex('api_keys_lookup_id_key').on(t.lookupId),
  index('api_keys_workspace_idx').on(t.workspaceId),
]);

/**
 * The workspace's audit trail of people and keys: who (a person, a key or the
 * operator's CLI) did what to which member, invitation or key, and when.
 */
export const workspaceAuditEvents = pgTable('workspace_audit_events', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  /** user | api_key | operator */
  actorType: text('actor_type').notNull(),
  actorUserId: integer('actor_user_id'),
  actorKeyId: integer('actor_key_id'),
  /** The actor as shown (an e-mail address, a key prefix, "operator"), kept when the actor is gone. */
  actorLabel: text('actor_label').notNull(),
  /** api_key.created, api_key.rotated, api_key.revoked, member.role_changed, member.removed, invitation.sent, … */
  action: text('action').notNull(),
  targetType: text('target_type').notNull(),
  targetId: text('target_id').notNull(),
  metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [index('workspace_audit_events_workspace_idx').on(t.workspaceId, t.id)]);

export type Workspace = typeof workspaces.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;

