/**
 * Product catalogs of a workspace: catalogs, their items and sync jobs.
 * Every query is confined to the caller's workspace; another workspace's
 * catalog, item or sync job is "not found".
 */
import type { Db } from '../../platform/db/database.ts';
import { availableItems, findWorkspaceCatalog, itemsByKeys } from './catalog-reads.ts';
import type { CatalogItemRow, CatalogRow } from './catalogs.tables.ts';

export interface Caller {
  workspaceId: number;
}

export class CatalogsService {
  private readonly db: Db;

  constructor(deps: { db: Db }) {
    this.db = deps.db;
  }

  /** The workspace's catalog row; 404 ModelNotFoundException otherwise. */
  findCatalog(caller: Caller, catalogId: number): Promise<CatalogRow> {
    return findWorkspaceCatalog(this.db, caller.workspaceId, catalogId);
  }

  /** Items by external_item_key, in the order asked; unknown keys in `missing`. 404 for another workspace's catalog. */
  itemsByKeys(caller: Caller, catalogId: number, keys: string[]): Promise<{ items: CatalogItemRow[]; missing: string[] }> {
    return itemsByKeys(this.db, caller.workspaceId, catalogId, keys);
  }

  /** Available, active items in id order (pages with afterId). 404 for another workspace's catalog. */
  availableItems(caller: Caller, catalogId: number, options: { limit: number; afterId?: number }): Promise<CatalogItemRow[]> {
    return availableItems(this.db, caller.workspaceId, catalogId, options);
  }
}
