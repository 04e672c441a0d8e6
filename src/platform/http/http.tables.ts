import { bigint, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { workspaces } from '../../modules/workspaces/workspaces.tables.ts';
import { instant } from '../db/columns.ts';

/** First 2xx response of a write per workspace and Idempotency-Key (spec part 8). */
export const idempotencyKeys = pgTable('idempotency_keys', {
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  key: text('key').notNull(),
  /** SHA-256 of method, route and body: the same key with another request is refused. */
  fingerprint: text('fingerprint').notNull(),
  /** processing while the first request runs; completed once its 2xx response is stored. */
  state: text('state').notNull(),
  responseStatus: integer('response_status'),
  responseHeaders: jsonb('response_headers').$type<Record<string, string>>(),
  responseBody: text('response_body'),
  createdAt: instant('created_at').notNull().defaultNow(),
  /** Renewed every few seconds while the first request runs: a lock that stops being renewed died with its process. */
  renewedAt: instant('renewed_at'),
  expiresAt: instant('expires_at').notNull(),
}, (t) => [primaryKey({ columns: [t.workspaceId, t.key] }), index('idempotency_keys_expires_idx').on(t.expiresAt)]);

/** Fixed-window request counters shared by every API process (PostgreSQL store). */
export const rateLimitCounters = pgTable('rate_limit_counters', {
  key: text('key').notNull(),
  windowStart: bigint('window_start', { mode: 'number' }).notNull(),
  count: integer('count').notNull(),
  /** window_start + the window's length: windows of a minute and of an hour share the table, and each row is swept when its own window has ended. */
  windowEnd: bigint('window_end', { mode: 'number' }).notNull().default(0),
}, (t) => [primaryKey({ columns: [t.key, t.windowStart] })]);
