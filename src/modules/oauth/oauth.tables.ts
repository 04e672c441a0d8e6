/**
 * OAuth: the apps a workspace registers, and what the authorization server
 * (oidc-provider) keeps between requests, through its adapter
 * (oauth-adapter.ts): one table keyed by model and id. The ids of tokens and
 * codes (the bearer values themselves) are stored only as their SHA-256.
 */
import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { instant } from '../../platform/db/columns.ts';
import { users } from '../people/people.tables.ts';
import { workspaces } from '../workspaces/workspaces.tables.ts';

export const oauthApps = pgTable('oauth_apps', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  /** Null for an app made by dynamic client registration (RFC 7591): it belongs to no workspace. */
  workspaceId: integer('workspace_id').references(() => workspaces.id, { onDelete: 'cascade' }),
  clientId: text('client_id').notNull(),
  name: text('name').notNull(),
  redirectUris: text('redirect_uris').array().notNull().default(sql`'{}'::text[]`),
  /** A public client (no secret: PKCE alone) or a confidential one. */
  public: boolean('public').notNull(),
  /** A confidential app's secret, as its SHA-256 (hex): the secret itself is shown once. */
  secretHash: text('secret_hash'),
  /** The registration's metadata for a dynamically registered client. */
  metadata: jsonb('metadata').$type<Record<string, unknown>>(),
  createdByUserId: integer('created_by_user_id').references(() => users.id, { onDelete: 'set null' }),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('oauth_apps_client_id_key').on(t.clientId), index('oauth_apps_workspace_idx').on(t.workspaceId)]);

export type OAuthAppRow = typeof oauthApps.$inferSelect;

export const oauthModels = pgTable('oauth_models', {
  /** oidc-provider's model name: AccessToken, RefreshToken, AuthorizationCode, DeviceCode, Grant, Interaction, Session, … */
  model: text('model').notNull(),
  /** The model's id; for a token or a code (a bearer value), its SHA-256 in hex. */
  id: text('id').notNull(),
  payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
  grantId: text('grant_id'),
  userCode: text('user_code'),
  uid: text('uid'),
  clientId: text('client_id'),
  /** Parsed from the payload's accountId (`<userId>:<workspaceId>`), so a member's removal finds their tokens. */
  userId: integer('user_id'),
  workspaceId: integer('workspace_id'),
  expiresAt: instant('expires_at'),
  consumedAt: instant('consumed_at'),
}, (t) => [
  primaryKey({ columns: [t.model, t.id] }),
  index('oauth_models_grant_idx').on(t.grantId),
  index('oauth_models_user_code_idx').on(t.userCode),
  index('oauth_models_uid_idx').on(t.uid),
  index('oauth_models_member_idx').on(t.workspaceId, t.userId),
  index('oauth_models_client_idx').on(t.clientId),
]);
