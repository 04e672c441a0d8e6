import { Type } from 'typebox';
import { defineJob } from '../../platform/jobs/queue.ts';
import type { WebhooksService } from './webhooks.service.ts';

declare module '../../platform/jobs/queue.ts' {
  interface JobPayloads {
    'webhooks.retention': { reason?: string };
  }
}

/** Hourly: finished deliveries older than WEBHOOK_DELIVERY_RETENTION_DAYS leave the delivery log (pending ones never do). */
export function webhookRetentionJob(webhooks: WebhooksService, retentionDays: number) {
  return defineJob({
    name: 'webhooks.retention',
    version: 1,
    schema: Type.Object({ reason: Type.Optional(Type.String()) }),
    cron: '17 * * * *',
    concurrency: 1,
    async handle(_payload, { log }) {
      const removed = await webhooks.purgeDeliveries(new Date(Date.now() - retentionDays * 24 * 60 * 60 * 1000));
      log.info({ removed }, 'webhook delivery retention done');
      return { removed };
    },
  });
}
