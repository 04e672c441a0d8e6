/**
 * `analytics.rollup`: every minute, folds the interaction events that arrived
 * since the last run into the page-segment day rollups (page-rollups.ts) and
 * the book-flow day rollups (flow-rollups.ts), each from its own watermark.
 * Safe to run again or on several workers: each batch and its watermark are
 * written in one transaction under a row lock.
 */
import { Type } from 'typebox';
import { defineJob } from '../../platform/jobs/queue.ts';
import type { FlowRollups } from './flow-rollups.ts';
import type { PageRollups } from './page-rollups.ts';

declare module '../../platform/jobs/queue.ts' {
  interface JobPayloads {
    'analytics.rollup': Record<string, never>;
  }
}

export function analyticsRollupJob(rollups: PageRollups, flow: FlowRollups) {
  return defineJob({
    name: 'analytics.rollup',
    version: 1,
    schema: Type.Object({}),
    retryLimit: 0,
    cron: '* * * * *',
    // A bounded run (50 batches of 200,000 events); the next minute goes on from the watermark.
    handle: async () => ({ events: await rollups.catchUp(50), flow_events: await flow.catchUp(50) }),
  });
}
