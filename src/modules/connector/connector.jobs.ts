/** The connector's job: shop/redact deletes the shop's data after the webhook has answered (idempotent: a finished event is skipped). */
import { Type } from 'typebox';
import { defineJob } from '../../platform/jobs/queue.ts';
import type { ConnectorService } from './connector.service.ts';

declare module '../../platform/jobs/queue.ts' {
  interface JobPayloads {
    'connector.shop-redact': { eventId: number };
  }
}

export function connectorJobs(connector: ConnectorService) {
  return [
    defineJob({
      name: 'connector.shop-redact',
      version: 1,
      schema: Type.Object({ eventId: Type.Integer({ minimum: 1 }) }),
      retryLimit: 10,
      handle: async ({ eventId }) => connector.runShopRedaction(eventId),
    }),
  ];
}
