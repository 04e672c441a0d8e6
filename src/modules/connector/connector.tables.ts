/**
 * The e-commerce connector (spec part 4, "Connector operations").
 *
 * - connector_credentials: the API keys the operator made the connector's
 *   (`flipbook connector grant <keyId>`); a key rotated from one stays the
 *   connector's. Only such keys may call the connector operations.
 * - connector_events: every connector action, as its audit log: webhook
 *   deliveries (deduplicated on the platform's delivery id, with the action
 *   taken, the rows touched per kind and, for a data request, what the
 *   workspace holds about the customer) and workspace renames.
 */
import { bigint, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { apiKeys, workspaces } from '../workspaces/workspaces.tables.ts';
import { instant } from '../../platform/db/columns.ts';

export const connectorCredentials = pgTable('connector_credentials', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  apiKeyId: integer('api_key_id').notNull().references(() => apiKeys.id, { onDelete: 'cascade' }),
  /** shopify */
  platform: text('platform').notNull(),
  /** The shop this key acts for (acme.myshopify.com); null: any shop of the workspace. */
  shopDomain: text('shop_domain'),
  createdAt: instant('created_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('connector_credentials_api_key_key').on(t.apiKeyId)]);

export const connectorEvents = pgTable('connector_events', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  platform: text('platform').notNull(),
  /** webhook | workspace_name */
  kind: text('kind').notNull(),
  /** X-Shopify-Webhook-Id, or sha256:<hash of topic and payload> when the header is absent. Null for renames. */
  deliveryId: text('delivery_id'),
  topic: text('topic'),
  shopDomain: text('shop_domain'),
  shopId: bigint('shop_id', { mode: 'number' }),
  /** The key that made the call (the connector's). */
  apiKeyId: integer('api_key_id'),
  action: text('action').notNull(),
  /** completed | recorded | scheduled */
  status: text('status').notNull(),
  counts: jsonb('counts').$type<Record<string, number>>().notNull().default({}),
  /** customers/data_request: what is held about the customer; workspace_name: old and new name. Never logged. */
  details: jsonb('details').$type<Record<string, unknown>>(),
  createdAt: instant('created_at').notNull().defaultNow(),
  finishedAt: instant('finished_at'),
}, (t) => [
  uniqueIndex('connector_events_delivery_key').on(t.workspaceId, t.platform, t.deliveryId),
  index('connector_events_workspace_idx').on(t.workspaceId, t.id),
]);

export type ConnectorEventRow = typeof connectorEvents.$inferSelect;
