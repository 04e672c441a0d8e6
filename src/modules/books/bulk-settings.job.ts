/**
 * The bulk settings job: one per batch, applying its items in order. Durable:
 * a batch interrupted by a crash or a shutdown is retried and carries on with
 * the first item not finished; an item's write is one transaction checked
 * against the book's revision, so it is never applied twice.
 */
import { Type } from 'typebox';
import { defineJob } from '../../platform/jobs/queue.ts';
import type { BulkSettingsService } from './bulk-settings.service.ts';

declare module '../../platform/jobs/queue.ts' {
  interface JobPayloads {
    'books.bulk-settings': { batchId: string };
  }
}

export function bulkSettingsJob(bulkSettings: BulkSettingsService) {
  return defineJob({
    name: 'books.bulk-settings',
    version: 1,
    schema: Type.Object({ batchId: Type.String({ minLength: 1, maxLength: 64 }) }),
    retryLimit: 5,
    // 100 items take seconds; a stuck database gets minutes before pg-boss hands the job to another worker.
    expireInSeconds: 10 * 60,
    handle: async ({ batchId }, ctx) => bulkSettings.run(batchId, ctx.signal),
  });
}
