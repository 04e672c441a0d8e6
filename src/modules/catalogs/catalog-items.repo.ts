/**
 * Writing items: one statement per batch of up to 500, fed from one jsonb
 * value (the sync job's stored input), so a batch costs a handful of round
 * trips whatever its size.
 *
 * Order safety: content and availability each carry the source's instant
 * (snapshot_at). A row is changed only by an update strictly newer than what
 * it holds, so an older update arriving late is ignored and a repeated one
 * (same instant) changes nothing. updated_at, last_synced_at and
 * last_availability_synced_at move only when a value really changed.
 *
 * Rows are written in key order (upsert) or locked in id order (patch), so
 * two batches over the same items wait for each other instead of deadlocking.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../platform/db/database.ts';
import type { AvailabilityChange, ItemContent } from './item-input.ts';

/** One item of an upsert, as stored in the sync job's input. */
export interface UpsertRow {
  /** external_item_key */
  k: string;
  c: ItemContent;
  /** Availability fields the item carried, or null. */
  a: AvailabilityChange | null;
  /** content hash */
  h: string;
  /** snapshot instant (ISO) */
  s: string;
  /** the record as received */
  r: unknown;
}

/** One item of an availability update, as stored in the sync job's input. */
export interface AvailabilityRow {
  k: string;
  a: AvailabilityChange;
  s: string;
}

function rowsOf<T>(result: unknown): T[] {
  return (result as { rows: T[] }).rows;
}

const CONTENT_COLUMNS = [
  'external_product_id', 'external_variant_id', 'sku', 'title', 'status', 'product_type', 'price', 'regular_price', 'sale_price',
  'currency', 'image', 'url', 'description', 'short_description', 'gallery', 'categories', 'payload', 'raw_payload',
] as const;
const JSON_COLUMNS = new Set(['gallery', 'categories', 'payload']);

/**
 * Inserts or updates the items of `input` (a SQL expression giving a jsonb
 * array of UpsertRow) in one statement. Returns how many rows were written
 * (inserted, or updated by a newer snapshot).
 */
export async function upsertItems(db: DbOrTx, target: { catalogId: number; workspaceId: number; source: string }, input: SQL): Promise<number> {
  const newer = sql.raw('excluded.snapshot_at > catalog_items.snapshot_at');
  const availabilityNewer = sql.raw('excluded.availability_snapshot_at > catalog_items.availability_snapshot_at');
  const contentSet = CONTENT_COLUMNS.map((c) => `${c} = case when excluded.snapshot_at > catalog_items.snapshot_at then excluded.${c} else catalog_items.${c} end`).join(',\n      ');
  const contentChanged = 'excluded.snapshot_at > catalog_items.snapshot_at and excluded.content_hash <> catalog_items.content_hash';
  const availabilityChanged = `excluded.availability_snapshot_at > catalog_items.availability_snapshot_at and
        (excluded.available, excluded.stock_status, coalesce(excluded.stock_quantity, catalog_items.stock_quantity), coalesce(excluded.availability, catalog_items.availability))
        is distinct from (catalog_items.available, catalog_items.stock_status, catalog_items.stock_quantity, catalog_items.availability)`;
  const contentSelect = CONTENT_COLUMNS.filter((c) => c !== 'raw_payload')
    .map((c) => (JSON_COLUMNS.has(c) ? `nullif(x.c->'${c}', 'null'::jsonb)` : `x.c->>'${c}'`))
    .join(', ');
  const result = await db.execute(sql`
    insert into catalog_items (
      catalog_id, workspace_id, source, external_item_key,
      ${sql.raw(CONTENT_COLUMNS.join(', '))},
      available, stock_status, stock_quantity, availability,
      last_sync_status, last_sync_error, content_hash, snapshot_at, availability_snapshot_at,
      last_synced_at, last_availability_synced_at, created_at, updated_at)
    select ${target.catalogId}, ${target.workspaceId}, ${target.source}, x.k,
      ${sql.raw(contentSelect)}, jsonb_build_array(x.r),
      (x.a->>'available')::boolean, x.a->>'stock_status', (x.a->>'stock_quantity')::integer, nullif(x.a->'availability', 'null'::jsonb),
      'synced', null, x.h, x.s, case when x.a is null then 'epoch'::timestamptz else x.s end,
      now(), now(), now(), now()
    from jsonb_to_recordset(${input}) as x(k text, c jsonb, a jsonb, h text, s timestamptz, r jsonb)
    order by x.k
    on conflict (catalog_id, external_item_key) do update set
      ${sql.raw(contentSet)},
      content_hash = case when ${newer} then excluded.content_hash else catalog_items.content_hash end,
      last_sync_status = case when ${newer} then 'synced' else catalog_items.last_sync_status end,
      last_sync_error = case when ${newer} then null else catalog_items.last_sync_error end,
      available = case when ${availabilityNewer} then excluded.available else catalog_items.available end,
      stock_status = case when ${availabilityNewer} then excluded.stock_status else catalog_items.stock_status end,
      stock_quantity = case when ${availabilityNewer} then coalesce(excluded.stock_quantity, catalog_items.stock_quantity) else catalog_items.stock_quantity end,
      availability = case when ${availabilityNewer} then coalesce(excluded.availability, catalog_items.availability) else catalog_items.availability end,
      last_synced_at = case when ${sql.raw(contentChanged)} then now() else catalog_items.last_synced_at end,
      last_availability_synced_at = case when ${sql.raw(availabilityChanged)} then now() else catalog_items.last_availability_synced_at end,
      updated_at = case when (${sql.raw(contentChanged)}) or (${sql.raw(availabilityChanged)}) then now() else catalog_items.updated_at end,
      snapshot_at = greatest(excluded.snapshot_at, catalog_items.snapshot_at),
      availability_snapshot_at = greatest(excluded.availability_snapshot_at, catalog_items.availability_snapshot_at)
    where ${newer} or ${availabilityNewer}
    returning 1`);
  return rowsOf(result).length;
}

/**
 * Applies availability updates (a SQL expression giving a jsonb array of
 * AvailabilityRow) to the catalog's items that hold an older availability.
 * Fields an update leaves out keep their values. Returns the keys the
 * catalog does not hold.
 */
export async function patchAvailability(db: DbOrTx, catalogId: number, input: SQL): Promise<{ missing: string[]; written: number }> {
  const missing = rowsOf<{ k: string }>(await db.execute(sql`
    select x.k from jsonb_to_recordset(${input}) as x(k text)
    where not exists (select 1 from catalog_items i where i.catalog_id = ${catalogId} and i.external_item_key = x.k)`)).map((r) => r.k);
  const result = await db.execute(sql`
    with x as (select * from jsonb_to_recordset(${input}) as x(k text, a jsonb, s timestamptz)),
    n as (
      select i.id, x.s,
        case when x.a ? 'available' then (x.a->>'available')::boolean else i.available end as available,
        case when x.a ? 'stock_quantity' then (x.a->>'stock_quantity')::integer else i.stock_quantity end as stock_quantity,
        case when x.a ? 'stock_status' then x.a->>'stock_status' else i.stock_status end as stock_status,
        case when x.a ? 'availability' then x.a->'availability' else i.availability end as availability
      from catalog_items i join x on i.external_item_key = x.k
      where i.catalog_id = ${catalogId} and x.s > i.availability_snapshot_at
      order by i.id
      for update of i
    )
    update catalog_items i set
      available = n.available, stock_quantity = n.stock_quantity, stock_status = n.stock_status, availability = n.availability,
      availability_snapshot_at = n.s,
      last_availability_synced_at = case when (n.available, n.stock_quantity, n.stock_status, n.availability)
        is distinct from (i.available, i.stock_quantity, i.stock_status, i.availability) then now() else i.last_availability_synced_at end,
      updated_at = case when (n.available, n.stock_quantity, n.stock_status, n.availability)
        is distinct from (i.available, i.stock_quantity, i.stock_status, i.availability) then now() else i.updated_at end
    from n where i.id = n.id
    returning 1`);
  return { missing, written: rowsOf(result).length };
}

/** Marks the items named by refused updates (key → message): they keep their values, and say why the update failed. */
export async function markFailed(db: DbOrTx, catalogId: number, failures: { k: string; m: string }[]): Promise<void> {
  if (failures.length === 0) return;
  await db.execute(sql`
    update catalog_items i set last_sync_status = 'failed', last_sync_error = x.m
    from jsonb_to_recordset(${JSON.stringify(failures)}::jsonb) as x(k text, m text)
    where i.catalog_id = ${catalogId} and i.external_item_key = x.k`);
}

/**
 * After a complete feed import: items the feed no longer lists (their
 * content is older than the import) are archived and unavailable, not
 * deleted, so a product that comes back keeps its id.
 */
export async function archiveMissing(db: DbOrTx, catalogId: number, importSnapshot: Date): Promise<number> {
  const result = await db.execute(sql`
    update catalog_items set status = 'archived', available = false, stock_status = 'out_of_stock', updated_at = now(), last_synced_at = now()
    where catalog_id = ${catalogId} and snapshot_at < ${importSnapshot.toISOString()}::timestamptz and status is distinct from 'archived'
    returning 1`);
  return rowsOf(result).length;
}
