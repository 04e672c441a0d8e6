/** Catalogs, items and sync jobs (spec part 4, "Catalogs"). Render and templates belong to the content area. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authOf } from '../../platform/http/route-config.ts';
import { CursorMeta } from '../../platform/http/schemas.ts';
import type { CatalogsService } from './catalogs.service.ts';
import {
  AvailabilityBody, BulkUpsertBody, Catalog, CatalogItem, CatalogParams, CatalogSyncJob, CreateCatalogBody, ITEM_LAYOUT_DOC, ItemParams,
  ListCatalogsQuery, ListItemsQuery, ListSyncJobsQuery, SyncJobParams, SyncSummary, exampleCatalog, exampleItem, exampleSyncJob,
} from './catalogs.schemas.ts';

const CatalogRef = Type.Ref('Catalog');
const ItemRef = Type.Ref('CatalogItem');
const SyncJobRef = Type.Ref('CatalogSyncJob');
const TAGS = ['Catalogs'];
/** 500 items with long descriptions are larger than the API's usual JSON body limit. */
const ITEMS_BODY_LIMIT = 16 * 1024 * 1024;

const summaryExample = {
  data: {
    summary: { total_items: 3, accepted_items: 2, failed_items: 1, errors: exampleSyncJob.errors, status: 'queued' },
    sync_job: exampleSyncJob,
  },
};

export const catalogsRoutes: FastifyPluginAsyncTypebox<{ catalogs: CatalogsService }> = async (app, { catalogs }) => {
  app.addSchema(Catalog);
  app.addSchema(CatalogItem);
  app.addSchema(CatalogSyncJob);

  app.get('/catalogs', {
    schema: {
      operationId: 'listCatalogs', tags: TAGS, summary: "The workspace's catalogs",
      description: 'Oldest first, cursor-paginated (`limit` 1-200, default 25).',
      querystring: ListCatalogsQuery,
      response: { 200: Type.Object({ data: Type.Array(CatalogRef), meta: CursorMeta }, { examples: [{ data: [exampleCatalog], meta: { next_cursor: null, has_more: false } }] }) },
    },
    config: { scope: 'catalogs:read' },
  }, async (request) => catalogs.list(authOf(request), { cursor: request.query.cursor, limit: request.query.limit ?? 25 }));

  app.post('/catalogs', {
    schema: {
      operationId: 'createCatalog', tags: TAGS, summary: 'Create a catalog',
      description:
        'Answers 202 with the catalog. Without `source_url` the catalog is `active` at once and items come through `items:bulk-upsert`. ' +
        'With `source_url`, the URL is checked now (https and a public address, unless the operator allow-lists the host in OUTBOUND_ALLOWED_HOSTS; a refused URL is a 422 on `source_url`) ' +
        'and a `feed_import` sync job fetches and imports it in the background: the catalog is `importing` until the job ends. ' +
        'Feed formats, recognised from the content: Google Merchant Center RSS 2.0 / Atom XML (g: namespace) and its tab- or comma-separated file; ' +
        'a WooCommerce store\'s Store API (`/wp-json/wc/store/v1/products`) or REST API (`/wp-json/wc/v3/products`), followed page by page; ' +
        'Shopify\'s `/products.json` (an item per variant); plain JSON (an array of objects whose keys are item fields) and plain CSV (a header of item fields, `|` between list entries). ' +
        'The feed is limited in size (CATALOG_FEED_MAX_BYTES), time (CATALOG_FEED_TIMEOUT_MS) and items (CATALOG_FEED_MAX_ITEMS, 50,000 by default). ' +
        '`source` names the platform: `shopify`, `woocommerce`, `bigcommerce`, `wordpress`, `google_merchant` or `custom` (default).',
      body: CreateCatalogBody,
      response: { 202: Type.Object({ data: Type.Object({ catalog: CatalogRef }) }, { examples: [{ data: { catalog: { ...exampleCatalog, status: 'importing', last_sync_status: null } } }] }) },
    },
    config: { scope: 'catalogs:write' },
  }, async (request, reply) => {
    const catalog = await catalogs.create(authOf(request), request.body);
    reply.code(202);
    return { data: { catalog } };
  });

  app.get('/catalogs/:catalog', {
    schema: {
      operationId: 'getCatalog', tags: TAGS, summary: 'A catalog',
      params: CatalogParams,
      response: { 200: Type.Object({ data: Type.Object({ catalog: CatalogRef }) }, { examples: [{ data: { catalog: exampleCatalog } }] }) },
    },
    config: { scope: 'catalogs:read' },
  }, async (request) => ({ data: { catalog: await catalogs.get(authOf(request), request.params.catalog) } }));

  app.delete('/catalogs/:catalog', {
    schema: {
      operationId: 'deleteCatalog', tags: TAGS, summary: 'Delete a catalog',
      description: 'Removes the catalog with its items and sync jobs, and answers it with status `deleted`. Books already rendered from it stay, and keep `external_catalog_id` as a record of where they came from (ids are never reused).',
      params: CatalogParams,
      response: { 200: Type.Object({ data: Type.Object({ catalog: CatalogRef }) }, { examples: [{ data: { catalog: { ...exampleCatalog, status: 'deleted' } } }] }) },
    },
    config: { scope: 'catalogs:write' },
  }, async (request) => ({ data: { catalog: await catalogs.delete(authOf(request), request.params.catalog) } }));

  app.get('/catalogs/:catalog/items', {
    schema: {
      operationId: 'listCatalogItems', tags: TAGS, summary: "A catalog's items",
      description: 'In id order (creation), cursor-paginated (`limit` 1-200, default 25); `available` filters, and `filter[q]` searches the title and key (every word, ignoring case).',
      params: CatalogParams, querystring: ListItemsQuery,
      response: { 200: Type.Object({ data: Type.Array(ItemRef), meta: CursorMeta }, { examples: [{ data: [exampleItem], meta: { next_cursor: null, has_more: false } }] }) },
    },
    config: { scope: 'catalogs:read' },
  }, async (request) => catalogs.listItems(authOf(request), request.params.catalog, { cursor: request.query.cursor, limit: request.query.limit ?? 25, available: request.query.available, q: request.query['filter[q]'] }));

  app.patch('/catalogs/:catalog/items/availability', {
    bodyLimit: ITEMS_BODY_LIMIT,
    schema: {
      operationId: 'updateCatalogAvailability', tags: TAGS, summary: 'Update availability of items',
      description:
        'Up to 500 items, each `["external_item_key=<key>", …]` with any of `available=true|false`, `stock_quantity=<n>`, `stock_status=<status>`, `availability=<location>:<quantity>` (repeatable) and its own `snapshot_at=`. ' +
        'Fields left out keep their values; `available` and `stock_status` follow from a quantity when not given. ' +
        'Answers 202 with a summary of the checks and the sync job that applies the rest. Order-safe and idempotent: an item whose stored availability is newer than the update\'s `snapshot_at` keeps it, a repeated update changes nothing. ' +
        'A key the catalog does not hold is refused in the sync job\'s `errors`. ' + ITEM_LAYOUT_DOC,
      params: CatalogParams, body: AvailabilityBody,
      response: { 202: Type.Object({ data: SyncSummary }, { examples: [summaryExample] }) },
    },
    config: { scope: 'catalogs:write' },
  }, async (request, reply) => {
    const result = await catalogs.updateAvailability(authOf(request), request.params.catalog, request.body);
    reply.code(202);
    return { data: result };
  });

  app.delete('/catalogs/:catalog/items/:item', {
    schema: {
      operationId: 'deleteCatalogItem', tags: TAGS, summary: 'Remove an item',
      description: '`{item}` is the item\'s `id`. A later upsert of the same key creates it again.',
      params: ItemParams,
      response: {
        200: Type.Object({
          data: Type.Object({ message: Type.String() }),
          meta: Type.Object({ catalog_id: Type.Integer(), item_id: Type.Integer(), external_item_key: Type.String() }),
        }, { examples: [{ data: { message: 'The item tee-blue-m was removed from the catalog.' }, meta: { catalog_id: 7, item_id: 901, external_item_key: 'tee-blue-m' } }] }),
      },
    },
    config: { scope: 'catalogs:write' },
  }, async (request) => catalogs.deleteItem(authOf(request), request.params.catalog, request.params.item));

  app.post('/catalogs/:catalog/items::bulk-upsert', {
    bodyLimit: ITEMS_BODY_LIMIT,
    schema: {
      operationId: 'bulkUpsertCatalogItems', tags: TAGS, summary: 'Create or update items',
      description:
        '1-500 items keyed by `external_item_key`. Answers 202 with a summary of the checks and the sync job that writes the items (poll `GET /catalogs/{catalog}/sync-jobs/{syncJob}`). ' +
        'An upsert replaces the item\'s content (fields left out become null); availability fields change only when the item carries them. ' +
        'Order-safe and idempotent: an item holding content newer than the update\'s `snapshot_at` keeps it; a repeated upsert changes nothing (not even `updated_at`). ' +
        ITEM_LAYOUT_DOC +
        ' Example item: `["external_item_key=tee-blue-m", "external_product_id=tee", "title=Organic tee, blue, M", "price=19.90", "regular_price=24.90", "currency=EUR", "image=https://shop.example.com/img/tee-blue.jpg", "gallery=https://shop.example.com/img/tee-blue-back.jpg", "categories=Men > T-shirts", "payload.color=blue", "stock_quantity=12"]`.',
      params: CatalogParams, body: BulkUpsertBody,
      response: { 202: Type.Object({ data: SyncSummary }, { examples: [summaryExample] }) },
    },
    config: { scope: 'catalogs:write' },
  }, async (request, reply) => {
    const result = await catalogs.bulkUpsert(authOf(request), request.params.catalog, request.body);
    reply.code(202);
    return { data: result };
  });

  app.get('/catalogs/:catalog/sync-jobs', {
    schema: {
      operationId: 'listCatalogSyncJobs', tags: TAGS, summary: "A catalog's sync jobs",
      description: 'Newest first, cursor-paginated (`limit` 1-100, default 10): the jobs of writes through the API and the feed imports, including those the service starts itself (creation with `source_url`, the scheduled re-sync). The first is the latest; follow it with `GET /catalogs/{catalog}/sync-jobs/{syncJob}`.',
      params: CatalogParams, querystring: ListSyncJobsQuery,
      response: { 200: Type.Object({ data: Type.Array(SyncJobRef), meta: CursorMeta }, { examples: [{ data: [{ ...exampleSyncJob, type: 'feed_import', status: 'running' }], meta: { next_cursor: null, has_more: false } }] }) },
    },
    config: { scope: 'catalogs:read' },
  }, async (request) => catalogs.listSyncJobs(authOf(request), request.params.catalog, { cursor: request.query.cursor, limit: request.query.limit ?? 10 }));

  app.get('/catalogs/:catalog/sync-jobs/:syncJob', {
    schema: {
      operationId: 'getCatalogSyncJob', tags: TAGS, summary: 'A sync job',
      description: 'Progress (`total`, `processed`, `accepted`, `failed`) moves as the job works (feed imports 500 items at a time); `errors` names each refused item by its index, field and reason.',
      params: SyncJobParams,
      response: { 200: Type.Object({ data: Type.Object({ sync_job: SyncJobRef }) }, { examples: [{ data: { sync_job: { ...exampleSyncJob, status: 'completed', progress: { total: 3, processed: 3, accepted: 2, failed: 1 } } } }] }) },
    },
    config: { scope: 'catalogs:read' },
  }, async (request) => ({ data: { sync_job: await catalogs.getSyncJob(authOf(request), request.params.catalog, request.params.syncJob) } }));
};
