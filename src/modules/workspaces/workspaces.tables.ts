import { boolean, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { instant } from '../../platform/db/columns.ts';

export const workspaces = pgTable('workspaces', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  name: text('name').notNull(),
  slug: text('slug').notNull(),
  /** free | pro | company: see src/platform/auth/plans.ts. */
  plan: text('plan').notNull().default('free'),
  /** The connector may replace a generated signup name once. */
  canRename: boolean('can_rename').notNull().default(true),
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
  lastUsedAt: instant('last_used_at'),
  revokedAt: instant('revoked_at'),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [
  uniqueIndex('api_keys_lookup_id_key').on(t.lookupId),
  index('api_keys_workspace_idx').on(t.workspaceId),
]);

export type Workspace = typeof workspaces.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;

