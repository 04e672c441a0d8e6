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

export function createJobDefinitions(deps: { database: Database; storage: Storage; services: Services; config: Readonly<Config> }): JobDefinition[] {
  const { config } = deps;
  return [
    maintenanceJob(deps.database.db),
    convertBookJob({
      db: deps.database.db,
      storage: deps.storage,
      widths: config.pageWidths,
      concurrency: config.CONVERSION_THREADS || undefined,
      officeTimeoutMs: config.OFFICE_TIMEOUT_MS,
      leaseMs: config.CONVERSION_LEASE_SECONDS * 1000,
    }),
    ...bookLifecycleJobs(deps.services.books),
    bulkSettingsJob(deps.services.bulkSettings),
  ] as JobDefinition[];
}
