/** Request and response shapes of the catalog operations (spec parts 2 and 4, "Catalogs"). */
import { Type } from 'typebox';
import { DateTime, Nullable, cursorQuery } from '../../platform/http/schemas.ts';
import { CATALOG_ITEM_STATUSES, CATALOG_SOURCES, CATALOG_STATUSES, STOCK_STATUSES, SYNC_JOB_STATUSES, SYNC_JOB_TYPES } from './catalogs.records.ts';
import { ITEM_FIELDS } from './item-input.ts';

const oneOf = (values: readonly string[]) => values.map((v) => `\`${v}\``).join(', ');

export const Catalog = Type.Object({
  id: Type.Integer(),
  workspace_id: Type.Integer(),
  name: Type.String(),
  source: Type.String({ description: `Where the products come from: ${oneOf(CATALOG_SOURCES)}.` }),
  external_id: Nullable(Type.String({ description: "The catalog's id in its source system (a shop domain, a store id)." })),
  source_url: Nullable(Type.String({ description: 'The product feed imported in the background, and re-imported when the operator turns the scheduled re-sync on.' })),
  status: Type.String({
    description: `${oneOf(CATALOG_STATUSES)}. \`importing\`: a feed import is queued or running (its items appear as they are applied); \`active\`: items can be read and rendered; ` +
      '`failed`: the feed import failed and the catalog has no items (see `last_sync_error`). `DELETE` answers the removed catalog with `deleted`.',
  }),
  metadata: Nullable(Type.Array(Type.String(), { description: 'Free labels given at creation.' })),
  template_key: Nullable(Type.String()),
  last_synced_at: Type.String({ format: 'date-time', description: 'When a finished sync job last wrote items; the creation time until then.' }),
  last_sync_status: Nullable(Type.String({ description: 'Status of the last finished sync job: `completed` or `failed`; null before one finished.' })),
  last_sync_error: Nullable(Type.String({ description: 'Why the last sync job failed, or how many of its items were refused.' })),
  created_at: DateTime,
  updated_at: DateTime,
}, { $id: 'Catalog', title: 'Catalog' });

const Attribute = Type.Object({ name: Type.String(), value: Type.String() });
const LocationStock = Type.Object({ location: Type.String(), quantity: Type.Integer(), available: Type.Boolean() });

export const CatalogItem = Type.Object({
  id: Type.Integer(),
  catalog_id: Type.Integer(),
  workspace_id: Type.Integer(),
  source: Type.String({ description: "The catalog's source when the item was written." }),
  external_item_key: Type.String({ description: 'The key the item is upserted by, unique in the catalog (a variant id, an SKU, a Merchant Center `id`).' }),
  external_product_id: Type.String({ description: 'The product the item belongs to (the key unless given): variants of one product share it.' }),
  external_variant_id: Nullable(Type.String()),
  sku: Nullable(Type.String()),
  title: Nullable(Type.String()),
  status: Nullable(Type.String({ description: `${oneOf(CATALOG_ITEM_STATUSES)}. Items a complete feed import no longer lists become \`archived\` and unavailable (not deleted).` })),
  product_type: Nullable(Type.String()),
  price: Nullable(Type.String({ description: 'The current price as a decimal string ("19.90"), never a float; in `currency`.' })),
  regular_price: Nullable(Type.String({ description: 'Decimal string.' })),
  sale_price: Nullable(Type.String({ description: 'Decimal string.' })),
  currency: Nullable(Type.String({ description: 'ISO 4217 code ("EUR").' })),
  image: Nullable(Type.String()),
  url: Nullable(Type.String()),
  description: Nullable(Type.String()),
  short_description: Nullable(Type.String()),
  stock_status: Nullable(Type.String({ description: `${oneOf(STOCK_STATUSES)}.` })),
  stock_quantity: Nullable(Type.Integer()),
  available: Nullable(Type.Boolean({ description: 'Null until availability is known.' })),
  gallery: Nullable(Type.Array(Type.String(), { description: 'More image URLs, in order.' })),
  categories: Nullable(Type.Array(Type.String(), { description: 'Category paths ("Women > Shoes"), in order.' })),
  payload: Nullable(Type.Array(Attribute, { description: 'Further attributes (`payload.<name>=<value>`): `{ name, value }` in the order given.' })),
  raw_payload: Nullable(Type.Array(Type.Unknown(), { description: 'The record as received, as a one-element array: the strings sent to bulk upsert, or the feed entry as read.' })),
  availability: Nullable(Type.Array(LocationStock, { description: 'Stock per location (`availability=<location>:<quantity>`): `{ location, quantity, available }`.' })),
  last_sync_status: Nullable(Type.String({ description: '`synced`, or `failed` when the last update sent for the item was refused (the item kept its values).' })),
  last_sync_error: Nullable(Type.String()),
  last_synced_at: Type.String({ format: 'date-time', description: 'When the content last changed.' }),
  last_availability_synced_at: Type.String({ format: 'date-time', description: 'When availability last changed.' }),
  created_at: DateTime,
  updated_at: DateTime,
}, { $id: 'CatalogItem', title: 'Catalog item' });

const SyncError = Type.Object({
  index: Type.Integer({ description: 'Position of the item in the request (or the feed), from 0.' }),
  external_item_key: Nullable(Type.String()),
  field: Type.String({ description: 'The field at fault (`item` for the item as a whole, `source_url` for the feed).' }),
  message: Type.String(),
});

export const CatalogSyncJob = Type.Object({
  id: Type.Integer(),
  catalog_id: Type.Integer(),
  type: Type.String({ description: `${oneOf(SYNC_JOB_TYPES)}.` }),
  status: Type.String({
    description: `${oneOf(SYNC_JOB_STATUSES)}. \`completed\` means every item was handled (some may have been refused: see \`progress.failed\` and \`errors\`); ` +
      '`failed` means the job could not do its work (a feed that could not be fetched or read).',
  }),
  progress: Type.Object({
    total: Type.Integer({ description: 'Items in the request or feed.' }),
    processed: Type.Integer({ description: 'Items handled so far (refused ones included).' }),
    accepted: Type.Integer({ description: 'Items applied, or found already current (an older or repeated update changes nothing and is still accepted).' }),
    failed: Type.Integer({ description: 'Items refused; each has an entry in `errors`.' }),
  }),
  errors: Type.Array(SyncError, { description: 'Refused items (the first 1,000).' }),
  snapshot_at: Type.String({ format: 'date-time', description: 'The instant the items describe: the request\'s snapshot_at, when it arrived, or when the feed was fetched.' }),
  started_at: Nullable(DateTime),
  finished_at: Nullable(DateTime),
  created_at: DateTime,
  updated_at: DateTime,
}, { $id: 'CatalogSyncJob', title: 'Catalog sync job' });

export const exampleCatalog = {
  id: 7, workspace_id: 3, name: 'Spring collection', source: 'google_merchant', external_id: 'merchant-1234567',
  source_url: 'https://shop.example.com/feeds/google.xml', status: 'active', metadata: ['spring', 'de'], template_key: null,
  last_synced_at: '2026-11-22T10:00:04.120Z', last_sync_status: 'completed', last_sync_error: null,
  created_at: '2026-11-22T10:00:00.000Z', updated_at: '2026-11-22T10:00:04.120Z',
};

export const exampleItem = {
  id: 901, catalog_id: 7, workspace_id: 3, source: 'custom', external_item_key: 'tee-blue-m', external_product_id: 'tee', external_variant_id: 'tee-blue-m',
  sku: 'TEE-BL-M', title: 'Organic tee, blue, M', status: 'active', product_type: 'T-shirts', price: '19.90', regular_price: '24.90', sale_price: '19.90',
  currency: 'EUR', image: 'https://shop.example.com/img/tee-blue.jpg', url: 'https://shop.example.com/p/tee?variant=blue-m', description: 'Soft organic cotton.',
  short_description: null, stock_status: 'in_stock', stock_quantity: 12, available: true,
  gallery: ['https://shop.example.com/img/tee-blue-back.jpg'], categories: ['Men > T-shirts'],
  payload: [{ name: 'color', value: 'blue' }, { name: 'size', value: 'M' }],
  raw_payload: [['external_item_key=tee-blue-m', 'external_product_id=tee', '…']],
  availability: [{ location: 'Berlin store', quantity: 4, available: true }, { location: 'Warehouse', quantity: 8, available: true }],
  last_sync_status: 'synced', last_sync_error: null, last_synced_at: '2026-11-22T10:00:04.120Z', last_availability_synced_at: '2026-11-22T11:30:00.000Z',
  created_at: '2026-11-22T10:00:04.120Z', updated_at: '2026-11-22T11:30:00.000Z',
};

export const exampleSyncJob = {
  id: 41, catalog_id: 7, type: 'bulk_upsert', status: 'queued', progress: { total: 3, processed: 1, accepted: 0, failed: 1 },
  errors: [{ index: 2, external_item_key: 'cap-red', field: 'price', message: '"12,50" is not a price: write a decimal with a dot ("19.90"), optionally followed by a currency ("19.90 EUR").' }],
  snapshot_at: '2026-11-22T10:00:00.000Z', started_at: null, finished_at: null, created_at: '2026-11-22T10:00:00.010Z', updated_at: '2026-11-22T10:00:00.010Z',
};

export const CatalogParams = Type.Object({ catalog: Type.Integer({ minimum: 1, maximum: 2147483647 }) });
export const ItemParams = Type.Object({ catalog: Type.Integer({ minimum: 1, maximum: 2147483647 }), item: Type.Integer({ minimum: 1, maximum: 2147483647 }) });
export const SyncJobParams = Type.Object({ catalog: Type.Integer({ minimum: 1, maximum: 2147483647 }), syncJob: Type.Integer({ minimum: 1, maximum: 2147483647 }) });

export const ListCatalogsQuery = Type.Object(cursorQuery(200, 25));
export const ListItemsQuery = Type.Object({
  ...cursorQuery(200, 25),
  available: Type.Optional(Type.Boolean({ description: 'Only items with this `available` value.' })),
  'filter[q]': Type.Optional(Type.String({ maxLength: 255, description: 'Only items whose title or `external_item_key` contains every word (at most 10), ignoring case.' })),
});
export const ListSyncJobsQuery = Type.Object(cursorQuery(100, 10));

export const CreateCatalogBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  external_id: Type.Optional(Type.String({ maxLength: 255 })),
  metadata: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 })),
  source: Type.Optional(Type.Union(CATALOG_SOURCES.map((s) => Type.Literal(s)), { description: `${oneOf(CATALOG_SOURCES)}; default \`custom\`.` })),
  source_url: Type.Optional(Type.String({ format: 'uri', maxLength: 2048, description: 'A product feed to import (https; see the operation\'s description for the formats).' })),
  template_key: Type.Optional(Type.String({ maxLength: 255 })),
}, { additionalProperties: false });

const ItemStrings = Type.Array(Type.String({ maxLength: 70_000 }), { minItems: 1, maxItems: 300, description: 'One item: `field=value` strings.' });

export const BulkUpsertBody = Type.Object({
  items: Type.Array(ItemStrings, { minItems: 1, maxItems: 500 }),
  snapshot_at: Type.Optional(Type.String({ format: 'date-time', description: 'The instant the items describe in the source (default: when the request arrives). Items holding a newer snapshot keep their values. An item may carry its own `snapshot_at=`.' })),
}, { additionalProperties: false });

export const AvailabilityBody = Type.Object({
  items: Type.Array(ItemStrings, { minItems: 1, maxItems: 500 }),
  snapshot_at: Type.Optional(Type.String({ format: 'date-time', description: 'The instant the availability describes (default: when the request arrives). Items holding newer availability keep it.' })),
}, { additionalProperties: false });

export const SyncSummary = Type.Object({
  summary: Type.Object({
    total_items: Type.Integer(),
    accepted_items: Type.Integer({ description: 'Items that passed the checks and were queued.' }),
    failed_items: Type.Integer({ description: 'Items refused by the checks (each in `errors`); more may be refused by the job (see the sync job).' }),
    errors: Type.Array(SyncError),
    status: Type.String({ description: "The sync job's status now." }),
  }),
  sync_job: Type.Ref('CatalogSyncJob'),
});

export const ITEM_LAYOUT_DOC =
  'Each item is an array of `field=value` strings (split at the first `=`), in any order: ' +
  `fields ${ITEM_FIELDS.map((f) => `\`${f}\``).join(', ')}, and \`payload.<name>\` for further attributes. ` +
  '`gallery`, `categories` and `availability` repeat to add entries; `availability` is `<location>:<quantity>`. ' +
  'Prices are decimals with a dot (`19.90`), with `currency=EUR` or written `19.90 EUR`; never floats. ' +
  '`available` is `true`/`false`; `stock_status` one of ' + oneOf(STOCK_STATUSES) + ' (`instock`, `in stock`, `onbackorder` are read too); `status` one of ' + oneOf(CATALOG_ITEM_STATUSES) + '. ' +
  'Unknown fields, a field given twice, or a key given twice in one request refuse that item (reported in `errors` with its index) and never the others.';
