/**
 * The catalog render's view of the catalogs area: items by key (in the order
 * asked) or every available item, mapped to what the renderer draws. Reads
 * through the catalogs area's own read functions (catalog-reads.ts), so the
 * workspace scoping is theirs.
 */
import type { DbOrTx } from '../../platform/db/database.ts';
import { availableItems, findWorkspaceCatalog, itemsByKeys } from '../catalogs/catalog-reads.ts';
import type { CatalogItemRow } from '../catalogs/catalogs.tables.ts';
import type { RenderProduct } from './pdf-layout.ts';
import type { CatalogItemsSource } from './render-book.job.ts';

/** A render without `items` takes the catalog's available items, at most this many (the spec's `items` maximum). */
export const CATALOG_RENDER_MAX_ITEMS = 250;

export function toRenderProduct(row: CatalogItemRow): RenderProduct {
  return {
    key: row.externalItemKey,
    title: row.title ?? row.sku ?? row.externalItemKey,
    price: row.price,
    regularPrice: row.regularPrice,
    salePrice: row.salePrice,
    currency: row.currency,
    url: row.url,
    sku: row.sku,
    stockStatus: row.stockStatus,
    available: row.available,
    description: row.shortDescription ?? row.description,
    image: row.image ?? row.gallery?.[0] ?? null,
  };
}

export function catalogItemsSource(db: DbOrTx): CatalogItemsSource {
  return {
    async itemsForRender(workspaceId, catalogId, keys) {
      const catalog = await findWorkspaceCatalog(db, workspaceId, catalogId);
      const rows = keys ? (await itemsByKeys(db, workspaceId, catalogId, keys)).items : await availableItems(db, workspaceId, catalogId, { limit: CATALOG_RENDER_MAX_ITEMS });
      return { catalogName: catalog.name, items: rows.map(toRenderProduct) };
    },
  };
}
