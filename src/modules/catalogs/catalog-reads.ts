/**
 * Reading catalogs and items, confined to one workspace. Other areas (the
 * content area's `POST /catalogs/{catalog}/render`) use these functions or
 * the CatalogsService methods that wrap them; another workspace's catalog is
 * "not found" exactly like a missing one.
 */
import { and, asc, eq, gt, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import { catalogItems, catalogs, type CatalogItemRow, type CatalogRow } from './catalogs.tables.ts';

/** The workspace's catalog, or 404 ModelNotFoundException. */
export async function findWorkspaceCatalog(db: DbOrTx, workspaceId: number, catalogId: number, options: { lock?: boolean } = {}): Promise<CatalogRow> {
  if (!Number.isSafeInteger(catalogId) || catalogId < 1 || catalogId > 2147483647) throw ERRORS.notFound('Catalog');
  const query = db.select().from(catalogs).where(and(eq(catalogs.workspaceId, workspaceId), eq(catalogs.id, catalogId)));
  const [row] = options.lock ? await query.for('update') : await query;
  if (!row) throw ERRORS.notFound('Catalog');
  return row;
}

/**
 * The catalog's items with these external_item_keys, in the order of `keys`
 * (duplicates kept once); keys the catalog does not hold are returned in
 * `missing`. 404 when the catalog is not the workspace's.
 */
export async function itemsByKeys(db: DbOrTx, workspaceId: number, catalogId: number, keys: string[]): Promise<{ items: CatalogItemRow[]; missing: string[] }> {
  await findWorkspaceCatalog(db, workspaceId, catalogId);
  const wanted = [...new Set(keys)];
  if (wanted.length === 0) return { items: [], missing: [] };
  const rows = await db
    .select()
    .from(catalogItems)
    .where(and(eq(catalogItems.catalogId, catalogId), eq(catalogItems.workspaceId, workspaceId), inArray(catalogItems.externalItemKey, wanted)));
  const byKey = new Map(rows.map((r) => [r.externalItemKey, r]));
  return { items: wanted.filter((k) => byKey.has(k)).map((k) => byKey.get(k)!), missing: wanted.filter((k) => !byKey.has(k)) };
}

/**
 * The catalog's available items (status active, and available true or not
 * known: only items known to be unavailable are left out), oldest first
 * (id order), at most `limit`, after item id `afterId` when given. 404 when
 * the catalog is not the workspace's.
 */
export async function availableItems(db: DbOrTx, workspaceId: number, catalogId: number, options: { limit: number; afterId?: number }): Promise<CatalogItemRow[]> {
  await findWorkspaceCatalog(db, workspaceId, catalogId);
  return db
    .select()
    .from(catalogItems)
    .where(and(
      eq(catalogItems.catalogId, catalogId),
      eq(catalogItems.workspaceId, workspaceId),
      sql`${catalogItems.available} is not false`,
      eq(catalogItems.status, 'active'),
      options.afterId ? gt(catalogItems.id, options.afterId) : undefined,
    ))
    .orderBy(asc(catalogItems.id))
    .limit(options.limit);
}
