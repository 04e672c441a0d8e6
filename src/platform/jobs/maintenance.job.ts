import { lt } from 'drizzle-orm';
import { Type } from 'typebox';
import type { Db } from '../db/database.ts';
import { rateLimitCounters } from '../http/http.tables.ts';
import { purgeExpiredIdempotencyKeys } from '../http/idempotency.ts';
import { defineJob } from './queue.ts';

declare module './queue.ts' {
  interface JobPayloads {
    'maintenance.purge': { reason?: string };
  }
}

/** Every 15 minutes: drop idempotency records past their TTL and rate-limit windows long closed. */
export function maintenanceJob(db: Db) {
  return defineJob({
    name: 'maintenance.purge',
    version: 1,
    schema: Type.Object({ reason: Type.Optional(Type.String()) }),
    cron: '*/15 * * * *',
    concurrency: 1,
    async handle(_payload, { log }) {
      const idempotency = await purgeExpiredIdempotencyKeys(db);
      const counters = await db.delete(rateLimitCounters).where(lt(rateLimitCounters.windowStart, Date.now() - 10 * 60_000)).returning({ key: rateLimitCounters.key });
      log.info({ idempotency, counters: counters.length }, 'maintenance purge done');
      return { idempotency, counters: counters.length };
    },
  });
}
