/**
 * Outbound webhooks: subscriptions, one delivery row per (event, subscription)
 * and one attempt row per HTTP request made for it, and the relay's positions
 * in the event streams it fans out.
 *
 * The delivery row is the durable job: it is created by the relay in the same
 * transaction that moves the relay's position past its event, and the
 * dispatcher claims due rows (next_attempt_at) with a lease, so a crash loses
 * nothing and a delivery that succeeded is never sent again by a retry.
 */
import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import { instant } from '../../platform/db/columns.ts';

/** A filter as stored: internal ids, plus the handle (a book's random_id) so events of a deleted book still match. */
export interface StoredFilter {
  type: 'book' | 'tracked_link';
  id: number;
  /** book: its random_id; tracked_link: the random_id of its book. */
  book: string;
}

export const webhookSubscriptions = pgTable('webhook_subscriptions', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  provider: text('provider').notNull(),
  targetUrl: text('target_url').notNull(),
  eventTypes: text('event_types').array().notNull(),
  filters: jsonb('filters').$type<StoredFilter[]>().notNull().default([]),
  /** whsec_… encrypted with AES-256-GCM under a key derived from the service secret (iv.tag.ciphertext, base64url). */
  secretEncrypted: text('secret_encrypted').notNull(),
  /** The secret before the last rotation, still signed with until previous_secret_expires_at. */
  previousSecretEncrypted: text('previous_secret_encrypted'),
  previousSecretExpiresAt: instant('previous_secret_expires_at'),
  isActive: boolean('is_active').notNull().default(true),
  /** Why the service deactivated it (410 Gone, five days of failures); null when active or turned off by the workspace. */
  deactivatedReason: text('deactivated_reason'),
  deactivatedAt: instant('deactivated_at'),
  /** The first failed attempt since the last success: five days of only failures deactivates. */
  failingSince: instant('failing_since'),
  deliveriesCount: bigint('deliveries_count', { mode: 'number' }).notNull().default(0),
  /** Deleted subscriptions are kept (soft delete) so their delivery history stays listable. */
  deletedAt: instant('deleted_at'),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
}, (t) => [index('webhook_subscriptions_workspace_idx').on(t.workspaceId, t.createdAt)]);

export const webhookDeliveries = pgTable('webhook_deliveries', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  subscriptionId: integer('subscription_id').notNull().references(() => webhookSubscriptions.id, { onDelete: 'cascade' }),
  /** The event id: the webhook-id header, the same on every retry and redelivery. */
  eventId: text('event_id').notNull(),
  eventType: text('event_type').notNull(),
  /** The body exactly as the subscriber receives it (bytes are signed, so it is kept as text, not jsonb). */
  payload: text('payload').notNull(),
  /** pending (first attempt or a retry due at next_attempt_at) | succeeded | failed (gave up, or abandoned) */
  status: text('status').notNull().default('pending'),
  attempts: integer('attempts').notNull().default(0),
  /** Position in the retry schedule: reset by a redelivery, unlike attempts. */
  scheduleStep: integer('schedule_step').notNull().default(0),
  nextAttemptAt: instant('next_attempt_at'),
  /** Set while a dispatcher sends it: another one takes it only after the lease ran out (a crashed worker). */
  lockedUntil: instant('locked_until'),
  responseStatus: integer('response_status'),
  responseBody: text('response_body'),
  errorMessage: text('error_message'),
  lastAttemptAt: instant('last_attempt_at'),
  deliveredAt: instant('delivered_at'),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [
  uniqueIndex('webhook_deliveries_subscription_event_key').on(t.subscriptionId, t.eventId),
  index('webhook_deliveries_subscription_time_idx').on(t.subscriptionId, t.createdAt, t.id),
  index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`status = 'pending'`),
  index('webhook_deliveries_created_idx').on(t.createdAt),
]);

export const webhookDeliveryAttempts = pgTable('webhook_delivery_attempts', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  deliveryId: bigint('delivery_id', { mode: 'number' }).notNull().references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
  attempt: integer('attempt').notNull(),
  /** succeeded | failed */
  outcome: text('outcome').notNull(),
  responseStatus: integer('response_status'),
  responseBody: text('response_body'),
  errorMessage: text('error_message'),
  durationMs: integer('duration_ms').notNull(),
  attemptedAt: instant('attempted_at').notNull(),
}, (t) => [index('webhook_delivery_attempts_delivery_idx').on(t.deliveryId, t.attempt)]);

/**
 * Where the relay stands in each event stream (domain_events, interaction_events,
 * audit_events): every row with id <= position was fanned out, except the ids
 * in `gaps` (allocated by transactions not yet committed when they were passed),
 * which are looked at again until the transactions that could hold them ended.
 */
export const webhookRelayPositions = pgTable('webhook_relay_positions', {
  stream: text('stream').primaryKey(),
  position: bigint('position', { mode: 'number' }).notNull().default(0),
  /** [{ id, xmax, at }]: xmax is pg_snapshot_xmax when the gap was seen (a decimal string). */
  gaps: jsonb('gaps').$type<{ id: number; xmax: string; at: number }[]>().notNull().default([]),
  updatedAt: instant('updated_at').notNull().defaultNow(),
});

export type WebhookSubscriptionRow = typeof webhookSubscriptions.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
