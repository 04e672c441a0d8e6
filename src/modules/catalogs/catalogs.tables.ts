/**
 * Product catalogs (spec part 2: Catalog, Catalog item, Catalog sync job).
 *
 * - An item is keyed by (catalog, external_item_key). Content and
 *   availability carry their own snapshot instants, so an update older than
 *   what is stored is ignored and a repeated one changes nothing (see
 *   catalog-items.repo.ts).
 * - Prices are decimal strings as the source wrote them ("19.90"), with the
 *   ISO 4217 currency beside them: never floats.
 * - A sync job holds the items it still has to apply (`input`), so the work
 *   survives a crash: the pg-boss job only names the sync job. `input` is
 *   cleared when the job finishes.
 *
 * Other areas read items through CatalogsService (catalogs.service.ts):
 * findCatalog, itemsByKeys, availableItems; the content area renders books
 * from them and records the catalog in books.external_catalog_id.
 */
import { boolean, index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import { instant } from '../../platform/db/columns.ts';

/** One entry of an item's `payload`: a named attribute the source gave (color, size, brand, gtin…). */
export interface CatalogItemAttribute {
  name: string;
  value: string;
}

/** Stock at one location (store, warehouse) of an item's `availability`. */
export interface CatalogItemLocationStock {
  location: string;
  quantity: number;
  available: boolean;
}

/** One refused item of a sync job: its position in the request (or feed), the field, and why. */
export interface CatalogSyncError {
  index: number;
  external_item_key: string | null;
  field: string;
  message: string;
}

export const catalogs = pgTable('catalogs', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  /** shopify | woocommerce | bigcommerce | wordpress | google_merchant | custom (CATALOG_SOURCES). */
  source: text('source').notNull(),
  externalId: text('external_id'),
  /** A product feed imported in the background and, with CATALOG_RESYNC_INTERVAL_MINUTES, re-imported. */
  sourceUrl: text('source_url'),
  /** importing | active | failed (CATALOG_STATUSES). */
  status: text('status').notNull(),
  metadata: jsonb('metadata').$type<string[]>(),
  templateKey: text('template_key'),
  /** When items last changed through a finished sync job; the creation time until then. */
  lastSyncedAt: instant('last_synced_at').notNull().defaultNow(),
  /** Status of the last finished sync job (completed | failed), null before one finished. */
  lastSyncStatus: text('last_sync_status'),
  lastSyncError: text('last_sync_error'),
  /** When the last feed import was started: the scheduled re-sync counts its interval from here. */
  feedImportedAt: instant('feed_imported_at'),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
}, (t) => [
  index('catalogs_workspace_id_idx').on(t.workspaceId, t.id),
]);

export const catalogItems = pgTable('catalog_items', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  catalogId: integer('catalog_id').notNull().references(() => catalogs.id, { onDelete: 'cascade' }),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  source: text('source').notNull(),
  externalItemKey: text('external_item_key').notNull(),
  externalProductId: text('external_product_id').notNull(),
  externalVariantId: text('external_variant_id'),
  sku: text('sku'),
  title: text('title'),
  /** active | draft | archived (CATALOG_ITEM_STATUSES). */
  status: text('status'),
  productType: text('product_type'),
  /** Decimal strings ("19.90"), never floats; in `currency`. */
  price: text('price'),
  regularPrice: text('regular_price'),
  salePrice: text('sale_price'),
  /** ISO 4217, upper case. */
  currency: text('currency'),
  image: text('image'),
  url: text('url'),
  description: text('description'),
  shortDescription: text('short_description'),
  /** in_stock | out_of_stock | preorder | backorder (STOCK_STATUSES). */
  stockStatus: text('stock_status'),
  stockQuantity: integer('stock_quantity'),
  available: boolean('available'),
  /** Image URLs after `image`, in order. */
  gallery: jsonb('gallery').$type<string[]>(),
  /** Category paths ("Women > Shoes"), in order. */
  categories: jsonb('categories').$type<string[]>(),
  payload: jsonb('payload').$type<CatalogItemAttribute[]>(),
  /** The record as received: [the strings sent] or [the feed entry]. */
  rawPayload: jsonb('raw_payload').$type<unknown[]>(),
  availability: jsonb('availability').$type<CatalogItemLocationStock[]>(),
  /** synced | failed: failed when the last update sent for this item was refused (the item kept its values). */
  lastSyncStatus: text('last_sync_status'),
  lastSyncError: text('last_sync_error'),
  /** SHA-256 of the content fields: an update with the same content moves neither updated_at nor last_synced_at. */
  contentHash: text('content_hash').notNull(),
  /** The source's instant of the content stored; older updates are ignored. */
  snapshotAt: instant('snapshot_at').notNull(),
  /** The source's instant of the availability stored; older availability updates are ignored. */
  availabilitySnapshotAt: instant('availability_snapshot_at').notNull(),
  lastSyncedAt: instant('last_synced_at').notNull().defaultNow(),
  lastAvailabilitySyncedAt: instant('last_availability_synced_at').notNull().defaultNow(),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
}, (t) => [
  uniqueIndex('catalog_items_catalog_key_key').on(t.catalogId, t.externalItemKey),
  index('catalog_items_catalog_id_idx').on(t.catalogId, t.id),
]);

export const catalogSyncJobs = pgTable('catalog_sync_jobs', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  catalogId: integer('catalog_id').notNull().references(() => catalogs.id, { onDelete: 'cascade' }),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  /** bulk_upsert | availability_update | feed_import (SYNC_JOB_TYPES). */
  type: text('type').notNull(),
  /** queued | running | completed | failed (SYNC_JOB_STATUSES). */
  status: text('status').notNull(),
  total: integer('total').notNull().default(0),
  processed: integer('processed').notNull().default(0),
  accepted: integer('accepted').notNull().default(0),
  failed: integer('failed').notNull().default(0),
  errors: jsonb('errors').$type<CatalogSyncError[]>().notNull().default([]),
  /** Items still to apply (validated, normalised); null once finished. */
  input: jsonb('input').$type<unknown[]>(),
  /** The instant the items describe (the request's snapshot_at, or when it arrived / the feed was fetched). */
  snapshotAt: instant('snapshot_at').notNull().defaultNow(),
  /** feed_import: api (POST /catalogs) | schedule (the re-sync). */
  trigger: text('trigger'),
  startedAt: instant('started_at'),
  finishedAt: instant('finished_at'),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
}, (t) => [
  index('catalog_sync_jobs_catalog_id_idx').on(t.catalogId, t.id),
]);

export type CatalogRow = typeof catalogs.$inferSelect;
export type CatalogItemRow = typeof catalogItems.$inferSelect;
export type CatalogSyncJobRow = typeof catalogSyncJobs.$inferSelect;
