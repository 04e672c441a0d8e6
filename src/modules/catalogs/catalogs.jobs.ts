/**
 * The catalog jobs: `catalogs.sync` applies one sync job (bulk upsert,
 * availability update or feed import); `catalogs.resync` runs on a schedule
 * and queues feed imports that are due (only registered when
 * CATALOG_RESYNC_INTERVAL_MINUTES > 0). Both are safe to run again: item
 * writes are order-safe and idempotent, and a finished sync job is skipped.
 */
import { Type } from 'typebox';
import { defineJob } from '../../platform/jobs/queue.ts';
import type { CatalogsService } from './catalogs.service.ts';

declare module '../../platform/jobs/queue.ts' {
  interface JobPayloads {
    'catalogs.sync': { syncJobId: number };
    'catalogs.resync': Record<string, never>;
  }
}

export function catalogJobs(catalogs: CatalogsService, options: { resyncIntervalMinutes: number }) {
  const jobs = [
    defineJob({
      name: 'catalogs.sync',
      version: 1,
      schema: Type.Object({ syncJobId: Type.Integer({ minimum: 1 }) }),
      retryLimit: 5,
      // A 50,000-item feed takes a minute or two; a stuck one is handed to another worker after this.
      expireInSeconds: 30 * 60,
      handle: async ({ syncJobId }, ctx) => catalogs.runSyncJob(syncJobId, ctx.signal),
    }),
  ];
  if (options.resyncIntervalMinutes > 0) {
    jobs.push(defineJob({
      name: 'catalogs.resync',
      version: 1,
      schema: Type.Object({}),
      retryLimit: 0,
      cron: '* * * * *',
      handle: async () => ({ queued: await catalogs.queueDueResyncs() }),
    }) as never);
  }
  return jobs;
}
