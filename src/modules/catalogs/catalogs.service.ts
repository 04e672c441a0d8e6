/**
 * Product catalogs of a workspace: catalogs, their items and sync jobs.
 * Every query is confined to the caller's workspace; another workspace's
 * catalog, item or sync job is "not found".
 *
 * Writes of items are asynchronous and durable: a request checks every item
 * up front (one bad item is reported and never fails the others), stores the
 * good ones in a sync job and enqueues the job in the same transaction; the
 * job applies them with one statement (catalog-items.repo.ts) and records
 * progress. Feed imports are sync jobs too, applied 500 items at a time.
 */
import { and, asc, desc, eq, getTableColumns, gt, ilike, inArray, lt, isNotNull, or, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import type { JobQueue } from '../../platform/jobs/queue.ts';
import type { OutboundClient } from '../../platform/outbound/outbound-client.ts';
import { availableItems, findWorkspaceCatalog, itemsByKeys } from './catalog-reads.ts';
import { archiveMissing, markFailed, patchAvailability, upsertItems, type AvailabilityRow, type UpsertRow } from './catalog-items.repo.ts';
import { toCatalogRecord, toItemRecord, toSyncJobRecord, type CatalogRecord, type CatalogSource, type SyncJobRecord, type SyncJobType } from './catalogs.records.ts';
import { catalogItems, catalogSyncJobs, catalogs, type CatalogItemRow, type CatalogRow, type CatalogSyncError, type CatalogSyncJobRow } from './catalogs.tables.ts';
import { FeedError, fetchFeed, type FeedLimits } from './feeds.ts';
import { contentHash, parseItems, type ParseMode } from './item-input.ts';

export interface Caller {
  workspaceId: number;
}

/** Items applied per statement (the API's batch size; feeds are cut into such chunks). */
export const CHUNK = 500;
/** Errors kept per sync job; the counts stay exact beyond it. */
const MAX_ERRORS = 1000;

export interface CreateCatalogInput {
  name: string;
  source?: CatalogSource;
  external_id?: string;
  metadata?: string[];
  source_url?: string;
  template_key?: string;
}

export interface SyncSummary {
  summary: { total_items: number; accepted_items: number; failed_items: number; errors: CatalogSyncError[]; status: string };
  sync_job: SyncJobRecord;
}

const ITEMS_ORDER = asc(catalogItems.id);
/** Words of an item search (`filter[q]`): enough for any name, few enough to keep the query cheap. */
const MAX_SEARCH_WORDS = 10;

function decodeIdCursor(cursor: string | undefined): number | null {
  if (!cursor) return null;
  const id = Number(Buffer.from(cursor, 'base64url').toString('utf8').replace(/^id:/, ''));
  if (!Number.isSafeInteger(id) || id < 0) throw ERRORS.validation({ cursor: ['The cursor is invalid; use meta.next_cursor of the previous page unchanged.'] });
  return id;
}
const encodeIdCursor = (id: number) => Buffer.from(`id:${id}`).toString('base64url');

/** The catalog's currency for feeds that name none: a `currency=EUR` entry of its metadata. */
function catalogCurrency(catalog: CatalogRow): string | null {
  const entry = catalog.metadata?.find((m) => /^currency=[A-Za-z]{3}$/.test(m.trim()));
  return entry ? entry.trim().slice('currency='.length).toUpperCase() : null;
}

export class CatalogsService {
  private readonly db: Db;
  private readonly queue: JobQueue;
  private readonly outbound: OutboundClient;
  private readonly feedLimits: FeedLimits;
  private readonly resyncIntervalMinutes: number;

  constructor(deps: { db: Db; queue: JobQueue; outbound: OutboundClient; feedLimits: FeedLimits; resyncIntervalMinutes: number }) {
    this.db = deps.db;
    this.queue = deps.queue;
    this.outbound = deps.outbound;
    this.feedLimits = deps.feedLimits;
    this.resyncIntervalMinutes = deps.resyncIntervalMinutes;
  }

  // --- reads other areas use -------------------------------------------------

  /** The workspace's catalog row; 404 ModelNotFoundException otherwise. */
  findCatalog(caller: Caller, catalogId: number): Promise<CatalogRow> {
    return findWorkspaceCatalog(this.db, caller.workspaceId, catalogId);
  }

  /** Items by external_item_key, in the order asked; unknown keys in `missing`. 404 for another workspace's catalog. */
  itemsByKeys(caller: Caller, catalogId: number, keys: string[]): Promise<{ items: CatalogItemRow[]; missing: string[] }> {
    return itemsByKeys(this.db, caller.workspaceId, catalogId, keys);
  }

  /** Active items not known to be unavailable, in id order (pages with afterId). 404 for another workspace's catalog. */
  availableItems(caller: Caller, catalogId: number, options: { limit: number; afterId?: number }): Promise<CatalogItemRow[]> {
    return availableItems(this.db, caller.workspaceId, catalogId, options);
  }

  // --- catalogs ----------------------------------------------------------------

  async list(caller: Caller, query: { cursor?: string; limit: number }) {
    const after = decodeIdCursor(query.cursor);
    const rows = await this.db
      .select()
      .from(catalogs)
      .where(and(eq(catalogs.workspaceId, caller.workspaceId), after === null ? undefined : gt(catalogs.id, after)))
      .orderBy(asc(catalogs.id))
      .limit(query.limit + 1);
    const hasMore = rows.length > query.limit;
    const page = rows.slice(0, query.limit);
    return { data: page.map(toCatalogRecord), meta: { next_cursor: hasMore ? encodeIdCursor(page[page.length - 1]!.id) : null, has_more: hasMore } };
  }

  async get(caller: Caller, catalogId: number): Promise<CatalogRecord> {
    return toCatalogRecord(await this.findCatalog(caller, catalogId));
  }

  /**
   * Creates a catalog. With `source_url`, the URL is checked against the
   * outbound policy now (422 on source_url when the service would not call
   * it) and a feed import is queued: the catalog is `importing` until it ends.
   */
  async create(caller: Caller, input: CreateCatalogInput): Promise<CatalogRecord> {
    const name = input.name.trim();
    if (!name) throw ERRORS.validation({ name: ['The name must not be blank.'] });
    if (input.source_url !== undefined) {
      try {
        await this.outbound.policy.checkTarget(input.source_url);
      } catch (error) {
        throw ERRORS.validation({ source_url: [(error as Error).message] });
      }
    }
    return this.db.transaction(async (tx) => {
      const [row] = await tx.insert(catalogs).values({
        workspaceId: caller.workspaceId,
        name,
        source: input.source ?? 'custom',
        externalId: input.external_id ?? null,
        sourceUrl: input.source_url ?? null,
        status: input.source_url ? 'importing' : 'active',
        metadata: input.metadata ?? null,
        templateKey: input.template_key ?? null,
      }).returning();
      if (input.source_url) await this.queueFeedImport(tx, row!, 'api');
      return toCatalogRecord(row!);
    });
  }

  private async queueFeedImport(tx: DbOrTx, catalog: CatalogRow, trigger: 'api' | 'schedule'): Promise<CatalogSyncJobRow> {
    const [job] = await tx.insert(catalogSyncJobs).values({
      catalogId: catalog.id, workspaceId: catalog.workspaceId, type: 'feed_import', status: 'queued', trigger,
    }).returning();
    await tx.update(catalogs).set({ feedImportedAt: new Date() }).where(eq(catalogs.id, catalog.id));
    await this.queue.send('catalogs.sync', { syncJobId: job!.id }, { tx });
    return job!;
  }

  /**
   * Removes the catalog with its items and sync jobs (foreign keys cascade).
   * Books rendered from it stay and keep `external_catalog_id`: it records
   * where they came from, and catalog ids are never reused.
   */
  async delete(caller: Caller, catalogId: number): Promise<CatalogRecord> {
    const [row] = await this.db
      .delete(catalogs)
      .where(and(eq(catalogs.workspaceId, caller.workspaceId), eq(catalogs.id, catalogId)))
      .returning();
    if (!row) throw ERRORS.notFound('Catalog');
    return { ...toCatalogRecord(row), status: 'deleted' };
  }

  // --- items -------------------------------------------------------------------

  /**
   * `q`: every word (split at spaces, at most 10) must appear in the title or the key, ignoring case:
   * what a person types to find "blue tee" among thousands of items.
   */
  async listItems(caller: Caller, catalogId: number, query: { cursor?: string; limit: number; available?: boolean; q?: string }) {
    await this.findCatalog(caller, catalogId);
    const after = decodeIdCursor(query.cursor);
    const words = (query.q ?? '').trim().split(/\s+/).filter(Boolean);
    if (words.length > MAX_SEARCH_WORDS) throw ERRORS.validation({ 'filter[q]': [`Search with at most ${MAX_SEARCH_WORDS} words.`] });
    const matches = words.map((word) => {
      const pattern = `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      return or(ilike(catalogItems.title, pattern), ilike(catalogItems.externalItemKey, pattern));
    });
    const rows = await this.db
      .select()
      .from(catalogItems)
      .where(and(
        eq(catalogItems.catalogId, catalogId),
        eq(catalogItems.workspaceId, caller.workspaceId),
        after === null ? undefined : gt(catalogItems.id, after),
        query.available === undefined ? undefined : eq(catalogItems.available, query.available),
        ...matches,
      ))
      .orderBy(ITEMS_ORDER)
      .limit(query.limit + 1);
    const hasMore = rows.length > query.limit;
    const page = rows.slice(0, query.limit);
    return { data: page.map(toItemRecord), meta: { next_cursor: hasMore ? encodeIdCursor(page[page.length - 1]!.id) : null, has_more: hasMore } };
  }

  async deleteItem(caller: Caller, catalogId: number, itemId: number) {
    await this.findCatalog(caller, catalogId);
    const [row] = await this.db
      .delete(catalogItems)
      .where(and(eq(catalogItems.id, itemId), eq(catalogItems.catalogId, catalogId), eq(catalogItems.workspaceId, caller.workspaceId)))
      .returning();
    if (!row) throw ERRORS.notFound('Catalog item');
    return {
      data: { message: `The item ${row.externalItemKey} was removed from the catalog.` },
      meta: { catalog_id: catalogId, item_id: row.id, external_item_key: row.externalItemKey },
    };
  }

  /** Bulk upsert (1-500 items): checked now, applied by a sync job. */
  bulkUpsert(caller: Caller, catalogId: number, input: { items: string[][]; snapshot_at?: string }): Promise<SyncSummary> {
    return this.queueItems(caller, catalogId, 'bulk_upsert', 'upsert', input);
  }

  /** Availability of existing items: checked now, applied by a sync job. */
  updateAvailability(caller: Caller, catalogId: number, input: { items: string[][]; snapshot_at?: string }): Promise<SyncSummary> {
    return this.queueItems(caller, catalogId, 'availability_update', 'availability', input);
  }

  private async queueItems(caller: Caller, catalogId: number, type: SyncJobType, mode: ParseMode, input: { items: string[][]; snapshot_at?: string }): Promise<SyncSummary> {
    const catalog = await this.findCatalog(caller, catalogId);
    const requestSnapshot = input.snapshot_at ? new Date(input.snapshot_at) : new Date();
    const parsed = parseItems(input.items.map((strings) => ({ strings })), mode);
    const rows = parsed.items.map(({ item, raw }) => {
      const s = (item.snapshotAt ?? requestSnapshot).toISOString();
      return mode === 'upsert'
        ? ({ k: item.key, c: item.content!, a: item.availability, h: contentHash(item.content!), s, r: raw } satisfies UpsertRow)
        : ({ k: item.key, a: item.availability!, s } satisfies AvailabilityRow);
    });
    const failures = parsed.errors.length;
    const done = rows.length === 0;
    const job = await this.db.transaction(async (tx) => {
      const now = new Date();
      const [job] = await tx.insert(catalogSyncJobs).values({
        catalogId: catalog.id,
        workspaceId: catalog.workspaceId,
        type,
        status: done ? 'completed' : 'queued',
        total: input.items.length,
        processed: failures,
        failed: failures,
        errors: parsed.errors.slice(0, MAX_ERRORS),
        input: done ? null : rows,
        snapshotAt: requestSnapshot,
        startedAt: done ? now : null,
        finishedAt: done ? now : null,
      }).returning();
      if (done) await this.finishCatalog(tx, catalog.id, job!);
      else await this.queue.send('catalogs.sync', { syncJobId: job!.id }, { tx });
      return job!;
    });
    return {
      summary: { total_items: input.items.length, accepted_items: rows.length, failed_items: failures, errors: parsed.errors.slice(0, MAX_ERRORS), status: job.status },
      sync_job: toSyncJobRecord(job),
    };
  }

  /** A catalog's sync jobs, newest first (the feed imports the service starts itself included), without their pending input. */
  async listSyncJobs(caller: Caller, catalogId: number, query: { cursor?: string; limit: number }) {
    await this.findCatalog(caller, catalogId);
    const before = decodeIdCursor(query.cursor);
    const { input: _input, ...columns } = getTableColumns(catalogSyncJobs);
    const rows = await this.db
      .select(columns)
      .from(catalogSyncJobs)
      .where(and(eq(catalogSyncJobs.catalogId, catalogId), eq(catalogSyncJobs.workspaceId, caller.workspaceId), before === null ? undefined : lt(catalogSyncJobs.id, before)))
      .orderBy(desc(catalogSyncJobs.id))
      .limit(query.limit + 1);
    const hasMore = rows.length > query.limit;
    const page = rows.slice(0, query.limit);
    return { data: page.map((row) => toSyncJobRecord({ ...row, input: null })), meta: { next_cursor: hasMore ? encodeIdCursor(page[page.length - 1]!.id) : null, has_more: hasMore } };
  }

  async getSyncJob(caller: Caller, catalogId: number, syncJobId: number): Promise<SyncJobRecord> {
    await this.findCatalog(caller, catalogId);
    const [row] = await this.db
      .select()
      .from(catalogSyncJobs)
      .where(and(eq(catalogSyncJobs.id, syncJobId), eq(catalogSyncJobs.catalogId, catalogId), eq(catalogSyncJobs.workspaceId, caller.workspaceId)));
    if (!row) throw ERRORS.notFound('Catalog sync job');
    return toSyncJobRecord(row);
  }

  // --- the job -----------------------------------------------------------------

  /** Runs a sync job (the `catalogs.sync` job). Safe to run again: writes are order-safe and idempotent. */
  async runSyncJob(syncJobId: number, signal: AbortSignal): Promise<{ outcome: string }> {
    const [job] = await this.db.select().from(catalogSyncJobs).where(eq(catalogSyncJobs.id, syncJobId));
    if (!job || job.status === 'completed' || job.status === 'failed') return { outcome: 'skipped' };
    const [catalog] = await this.db.select().from(catalogs).where(eq(catalogs.id, job.catalogId));
    if (!catalog) return { outcome: 'skipped' };
    await this.db.update(catalogSyncJobs)
      .set({ status: 'running', startedAt: sql`coalesce(${catalogSyncJobs.startedAt}, now())`, updatedAt: new Date() })
      .where(eq(catalogSyncJobs.id, job.id));
    if (job.type === 'feed_import') return this.runFeedImport(catalog, job, signal);

    const storedInput = sql`(select input from catalog_sync_jobs where id = ${job.id})`;
    const rows = (job.input ?? []) as { k: string }[];
    await this.db.transaction(async (tx) => {
      if (job.type === 'bulk_upsert') {
        await upsertItems(tx, { catalogId: catalog.id, workspaceId: catalog.workspaceId, source: catalog.source }, storedInput);
        await this.finishJob(tx, catalog.id, job, { accepted: rows.length, errors: [] });
      } else {
        const { missing } = await patchAvailability(tx, catalog.id, storedInput);
        const missingSet = new Set(missing);
        const index = new Map<string, number>();
        rows.forEach((r, i) => index.set(r.k, i));
        const errors: CatalogSyncError[] = missing.map((k) => ({
          index: this.requestIndex(job, index.get(k)!), external_item_key: k, field: 'external_item_key',
          message: 'The catalog has no item with this key; create it with items:bulk-upsert first.',
        }));
        await this.finishJob(tx, catalog.id, job, { accepted: rows.length - missingSet.size, errors });
      }
    });
    return { outcome: 'finished' };
  }

  /** The index in the request of the i-th accepted item (refused items were left out of the input). */
  private requestIndex(job: CatalogSyncJobRow, i: number): number {
    const refused = job.errors.map((e) => e.index).sort((a, b) => a - b);
    let index = i;
    for (const r of refused) if (r <= index) index++;
    return index;
  }

  /** Records the outcome of an API sync job (and marks items whose update was refused). */
  private async finishJob(tx: DbOrTx, catalogId: number, job: CatalogSyncJobRow, outcome: { accepted: number; errors: CatalogSyncError[] }): Promise<void> {
    const errors = [...job.errors, ...outcome.errors].sort((a, b) => a.index - b.index);
    await markFailed(tx, catalogId, errors.filter((e) => e.external_item_key && e.field !== 'external_item_key').map((e) => ({ k: e.external_item_key!, m: `${e.field}: ${e.message}` })));
    const [finished] = await tx.update(catalogSyncJobs).set({
      status: 'completed',
      processed: job.total,
      accepted: outcome.accepted,
      failed: job.failed + outcome.errors.length,
      errors: errors.slice(0, MAX_ERRORS),
      input: null,
      finishedAt: new Date(),
      updatedAt: new Date(),
    }).where(eq(catalogSyncJobs.id, job.id)).returning();
    await this.finishCatalog(tx, catalogId, finished!);
  }

  /** The catalog's last_sync_* from a finished job. */
  private async finishCatalog(tx: DbOrTx, catalogId: number, job: CatalogSyncJobRow, extra: Partial<typeof catalogs.$inferInsert> = {}): Promise<void> {
    const error = job.status === 'failed'
      ? (job.errors[0]?.message ?? 'The sync job failed.')
      : job.failed > 0 ? `${job.failed} of ${job.total} items were refused; see sync job ${job.id}.` : null;
    await tx.update(catalogs).set({
      lastSyncStatus: job.status,
      lastSyncError: error,
      ...(job.accepted > 0 ? { lastSyncedAt: new Date() } : {}),
      updatedAt: new Date(),
      ...extra,
    }).where(eq(catalogs.id, catalogId));
  }

  private async runFeedImport(catalog: CatalogRow, job: CatalogSyncJobRow, signal: AbortSignal): Promise<{ outcome: string }> {
    const snapshot = new Date();
    let feed;
    try {
      if (!catalog.sourceUrl) throw new FeedError('The catalog has no source_url.');
      feed = await fetchFeed(this.outbound, catalog.sourceUrl, this.feedLimits, { currency: catalogCurrency(catalog) }, signal);
    } catch (error) {
      if (!(error instanceof FeedError)) throw error;
      await this.db.transaction(async (tx) => {
        const [failed] = await tx.update(catalogSyncJobs).set({
          status: 'failed',
          errors: [{ index: 0, external_item_key: null, field: 'source_url', message: error.message }],
          finishedAt: new Date(),
          updatedAt: new Date(),
        }).where(eq(catalogSyncJobs.id, job.id)).returning();
        const [{ n } = { n: 0 }] = await tx.select({ n: sql<number>`count(*)::int` }).from(catalogItems).where(eq(catalogItems.catalogId, catalog.id));
        await this.finishCatalog(tx, catalog.id, failed!, { status: n > 0 ? 'active' : 'failed' });
      });
      return { outcome: 'failed' };
    }
    const total = feed.entries.length;
    await this.db.update(catalogSyncJobs).set({ total, processed: 0, accepted: 0, failed: 0, errors: [], snapshotAt: snapshot, updatedAt: new Date() })
      .where(eq(catalogSyncJobs.id, job.id));
    const errors: CatalogSyncError[] = [];
    let accepted = 0;
    let failed = 0;
    for (let offset = 0; offset < total; offset += CHUNK) {
      if (signal.aborted) throw new Error('shutdown: the feed import will run again');
      const parsed = parseItems(feed.entries.slice(offset, offset + CHUNK), 'upsert', offset);
      const rows: UpsertRow[] = parsed.items.map(({ item, raw }) => ({
        k: item.key, c: item.content!, a: item.availability, h: contentHash(item.content!), s: snapshot.toISOString(), r: raw,
      }));
      accepted += rows.length;
      failed += parsed.errors.length;
      errors.push(...parsed.errors);
      await this.db.transaction(async (tx) => {
        if (rows.length > 0) await upsertItems(tx, { catalogId: catalog.id, workspaceId: catalog.workspaceId, source: catalog.source }, sql`${JSON.stringify(rows)}::jsonb`);
        await tx.update(catalogSyncJobs).set({
          processed: Math.min(total, offset + CHUNK), accepted, failed, errors: errors.slice(0, MAX_ERRORS), updatedAt: new Date(),
        }).where(eq(catalogSyncJobs.id, job.id));
      });
    }
    if (feed.truncated) {
      errors.push({ index: total, external_item_key: null, field: 'source_url', message: `The feed lists more than ${this.feedLimits.maxItems} items (CATALOG_FEED_MAX_ITEMS); the first ${this.feedLimits.maxItems} were imported.` });
    }
    await this.db.transaction(async (tx) => {
      await markFailed(tx, catalog.id, errors.filter((e) => e.external_item_key && e.field !== 'external_item_key').map((e) => ({ k: e.external_item_key!, m: `${e.field}: ${e.message}` })));
      // Only a feed read whole says which items are gone.
      if (!feed.truncated) await archiveMissing(tx, catalog.id, snapshot);
      const [finished] = await tx.update(catalogSyncJobs).set({
        status: 'completed', errors: errors.slice(0, MAX_ERRORS), processed: total, accepted, failed, finishedAt: new Date(), updatedAt: new Date(),
      }).where(eq(catalogSyncJobs.id, job.id)).returning();
      await this.finishCatalog(tx, catalog.id, finished!, { status: 'active' });
    });
    return { outcome: 'finished' };
  }

  /**
   * The scheduled re-sync (CATALOG_RESYNC_INTERVAL_MINUTES > 0): queues a
   * feed import for every catalog with a source_url whose last import began
   * longer ago than the interval and that has no import queued or running.
   */
  async queueDueResyncs(): Promise<number> {
    if (this.resyncIntervalMinutes <= 0) return 0;
    const due = await this.db
      .select()
      .from(catalogs)
      .where(and(
        isNotNull(catalogs.sourceUrl),
        lt(catalogs.feedImportedAt, sql`now() - make_interval(mins => ${this.resyncIntervalMinutes})`),
        sql`not exists (select 1 from ${catalogSyncJobs} j where j.catalog_id = ${catalogs.id} and j.type = 'feed_import' and j.status in ('queued', 'running'))`,
      ))
      .orderBy(asc(catalogs.feedImportedAt))
      .limit(100);
    let queued = 0;
    for (const catalog of due) {
      await this.db.transaction(async (tx) => {
        const [locked] = await tx.select().from(catalogs).where(and(eq(catalogs.id, catalog.id), lt(catalogs.feedImportedAt, sql`now() - make_interval(mins => ${this.resyncIntervalMinutes})`))).for('update', { skipLocked: true });
        if (!locked) return;
        await this.queueFeedImport(tx, locked, 'schedule');
        queued++;
      });
    }
    return queued;
  }

  /** Every catalog of a source in a workspace (the connector's shop data). */
  async catalogIdsOfSource(db: DbOrTx, workspaceId: number, source: CatalogSource): Promise<number[]> {
    const rows = await db.select({ id: catalogs.id }).from(catalogs).where(and(eq(catalogs.workspaceId, workspaceId), eq(catalogs.source, source)));
    return rows.map((r) => r.id);
  }

  /** Deletes catalogs by id (with items and sync jobs); returns the numbers removed. */
  async deleteCatalogs(db: DbOrTx, workspaceId: number, ids: number[]): Promise<{ catalogs: number; items: number }> {
    if (ids.length === 0) return { catalogs: 0, items: 0 };
    const [{ n } = { n: 0 }] = await db.select({ n: sql<number>`count(*)::int` }).from(catalogItems).where(and(eq(catalogItems.workspaceId, workspaceId), inArray(catalogItems.catalogId, ids)));
    const removed = await db.delete(catalogs).where(and(eq(catalogs.workspaceId, workspaceId), inArray(catalogs.id, ids))).returning({ id: catalogs.id });
    return { catalogs: removed.length, items: n };
  }
}
