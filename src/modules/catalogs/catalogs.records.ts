/** The API's vocabulary of catalogs (spec part 2): value sets and row → record mapping. */
import type { CatalogItemRow, CatalogRow, CatalogSyncJobRow } from './catalogs.tables.ts';

/**
 * The spec's four platform slots plus `custom`, named as their users know
 * them: Shopify (the store), WordPress (the content system), WooCommerce and
 * BigCommerce (commerce platforms); google_merchant for Merchant Center feeds.
 */
export const CATALOG_SOURCES = ['shopify', 'woocommerce', 'bigcommerce', 'wordpress', 'google_merchant', 'custom'] as const;
export type CatalogSource = (typeof CATALOG_SOURCES)[number];

/** importing: a feed import is queued or running; active: items can be read; failed: the feed could not be imported and the catalog has no items. */
export const CATALOG_STATUSES = ['importing', 'active', 'failed'] as const;
export const CATALOG_ITEM_STATUSES = ['active', 'draft', 'archived'] as const;
export const STOCK_STATUSES = ['in_stock', 'out_of_stock', 'preorder', 'backorder'] as const;
export const SYNC_JOB_TYPES = ['bulk_upsert', 'availability_update', 'feed_import'] as const;
export const SYNC_JOB_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type SyncJobType = (typeof SYNC_JOB_TYPES)[number];

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

export function toCatalogRecord(row: CatalogRow) {
  return {
    id: row.id,
    workspace_id: row.workspaceId,
    name: row.name,
    source: row.source,
    external_id: row.externalId,
    source_url: row.sourceUrl,
    status: row.status,
    metadata: row.metadata,
    template_key: row.templateKey,
    last_synced_at: row.lastSyncedAt.toISOString(),
    last_sync_status: row.lastSyncStatus,
    last_sync_error: row.lastSyncError,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
export type CatalogRecord = ReturnType<typeof toCatalogRecord>;

export function toItemRecord(row: CatalogItemRow) {
  return {
    id: row.id,
    catalog_id: row.catalogId,
    workspace_id: row.workspaceId,
    source: row.source,
    external_item_key: row.externalItemKey,
    external_product_id: row.externalProductId,
    external_variant_id: row.externalVariantId,
    sku: row.sku,
    title: row.title,
    status: row.status,
    product_type: row.productType,
    price: row.price,
    regular_price: row.regularPrice,
    sale_price: row.salePrice,
    currency: row.currency,
    image: row.image,
    url: row.url,
    description: row.description,
    short_description: row.shortDescription,
    stock_status: row.stockStatus,
    stock_quantity: row.stockQuantity,
    available: row.available,
    gallery: row.gallery,
    categories: row.categories,
    payload: row.payload,
    raw_payload: row.rawPayload,
    availability: row.availability,
    last_sync_status: row.lastSyncStatus,
    last_sync_error: row.lastSyncError,
    last_synced_at: row.lastSyncedAt.toISOString(),
    last_availability_synced_at: row.lastAvailabilitySyncedAt.toISOString(),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
export type CatalogItemRecord = ReturnType<typeof toItemRecord>;

export function toSyncJobRecord(row: CatalogSyncJobRow) {
  return {
    id: row.id,
    catalog_id: row.catalogId,
    type: row.type,
    status: row.status,
    progress: { total: row.total, processed: row.processed, accepted: row.accepted, failed: row.failed },
    errors: row.errors,
    snapshot_at: row.snapshotAt.toISOString(),
    started_at: iso(row.startedAt),
    finished_at: iso(row.finishedAt),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
export type SyncJobRecord = ReturnType<typeof toSyncJobRecord>;
