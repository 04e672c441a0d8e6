import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import { instant } from '../../platform/db/columns.ts';

/**
 * Who may convert an upload batch right now (conversion-lease.ts). One row per
 * batch while its conversion is unfinished: the run holding `token` renews
 * `expires_at` while it renders, and every page write checks the token in its
 * own transaction, so a run that lost its lease can no longer write.
 */
export const conversionLeases = pgTable('conversion_leases', {
  batchId: text('batch_id').primaryKey(),
  /** The holder's fencing token; a new run replaces it. */
  token: text('token').notNull(),
  /** The holding process (host:pid), for operators and the multi-process test. */
  owner: text('owner').notNull(),
  /** running: a run holds it until expires_at; requeued: the sweeper sent a new job after the lease expired. */
  state: text('state').notNull(),
  /** Runs started for this batch (1 for the first). */
  runs: integer('runs').notNull().default(1),
  /** Times the sweeper re-queued the batch after an expired lease. */
  requeues: integer('requeues').notNull().default(0),
  expiresAt: instant('expires_at').notNull(),
  renewedAt: instant('renewed_at').notNull().defaultNow(),
});
