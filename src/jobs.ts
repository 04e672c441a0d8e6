/** Every background job of the service, with its handler. The queue refuses a name registered twice. */
import type { Config } from './platform/config/env.ts';
import type { Database } from './platform/db/database.ts';
import type { JobDefinition } from './platform/jobs/queue.ts';
import { maintenanceJob } from './platform/jobs/maintenance.job.ts';
import type { Services } from './services.ts';
import type { Storage } from './platform/storage/storage.ts';
import { convertBookJob } from './modules/books/convert-book.job.ts';
import { bookLifecycleJobs } from './modules/books/book-lifecycle.jobs.ts';
import { bulkSettingsJob } from './modules/books/bulk-settings.job.ts';
import { renderBookJob } from './modules/content/render-book.job.ts';
import { catalogItemsSource } from './modules/content/catalog-items-source.ts';
import { catalogJobs } from './modules/catalogs/catalogs.jobs.ts';
import { analyticsRollupJob } from './modules/analytics/analytics.jobs.ts';
import { connectorJobs } from './modules/connector/connector.jobs.ts';
import { webhookRetentionJob } from './modules/webhooks/webhooks.jobs.ts';
import { backgroundRenderWorkerPool, renderWorkerPool } from './modules/conversion/render-worker-pool.ts';

export function createJobDefinitions(deps: { database: Database; storage: Storage; services: Services; config: Readonly<Config> }): JobDefinition[] {
  const { config } = deps;
  renderWorkerPool.configure({ idleTimeoutMs: config.RENDER_IDLE_TIMEOUT_MS });
  backgroundRenderWorkerPool.configure({ idleTimeoutMs: config.RENDER_IDLE_TIMEOUT_MS });
  return [
    maintenanceJob(deps.database.db),
    convertBookJob({
      db: deps.database.db,
      storage: deps.storage,
      widths: config.pageWidths,
      onDemandWidths: config.onDemandWidths,
      concurrency: config.CONVERSION_THREADS || undefined,
      backgroundConcurrency: config.CONVERSION_BACKGROUND_THREADS || config.CONVERSION_THREADS || undefined,
      officeTimeoutMs: config.OFFICE_TIMEOUT_MS,
      officeMemoryLimitMb: config.OFFICE_MEMORY_LIMIT_MB,
      archiveLimits: { maxUncompressedBytes: config.OFFICE_MAX_UNCOMPRESSED_MB * 1024 * 1024, maxRatio: config.OFFICE_MAX_COMPRESSION_RATIO, maxEntries: 10_000 },
      maxPages: config.MAX_PAGES_PER_BOOK,
      leaseMs: config.CONVERSION_LEASE_SECONDS * 1000,
      versionsKept: config.BOOK_VERSIONS_KEPT,
    }),
    ...bookLifecycleJobs(deps.services.books),
    bulkSettingsJob(deps.services.bulkSettings),
    renderBookJob({
      db: deps.database.db,
      storage: deps.storage,
      widths: config.pageWidths,
      onDemandWidths: config.onDemandWidths,
      concurrency: config.CONVERSION_THREADS || undefined,
      officeTimeoutMs: config.OFFICE_TIMEOUT_MS,
      outbound: deps.services.outbound,
      catalogItems: catalogItemsSource(deps.database.db),
    }),
    ...catalogJobs(deps.services.catalogs, { resyncIntervalMinutes: config.CATALOG_RESYNC_INTERVAL_MINUTES }),
    ...connectorJobs(deps.services.connector),
    webhookRetentionJob(deps.services.webhooks, config.WEBHOOK_DELIVERY_RETENTION_DAYS),
    analyticsRollupJob(deps.services.analytics.rollups, deps.services.analytics.flowRollups),
  ] as JobDefinition[];
}
