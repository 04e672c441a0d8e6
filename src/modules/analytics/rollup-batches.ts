/**
 * What every rollup fold shares (page-rollups.ts, flow-rollups.ts): the next
 * batch of interaction event ids above a watermark, claimed under the state
 * row's lock, so a batch and its watermark commit together and two workers
 * never fold the same batch.
 *
 * The bound looks no further than the batch: the settle check (no row
 * younger than settleMs, whose lower ids may still be committing) reads the
 * batch's ids, not every id above the watermark (by id, without an index on
 * created_at, that was a scan of everything not yet folded on every batch:
 * quadratic while a fold catches up).
 */
import { sql } from 'drizzle-orm';
import { rowsOf, num } from './analytics-sql.ts';

type Tx = { execute: (query: ReturnType<typeof sql>) => Promise<unknown> };

export interface Batch { from: number; bound: number }

/** How a fold walks the events: ids per batch, and how old a row must be before it is folded. */
export interface FoldPace { batchRows: number; settleMs: number }

/** 200,000 ids a batch (one transaction of a few seconds at most); rows younger than 10 s wait for the next run. */
export function foldPace(options: Partial<FoldPace>): FoldPace {
  return { batchRows: options.batchRows ?? 200_000, settleMs: options.settleMs ?? 10_000 };
}

/** Locks the state row `name` and answers the batch (from, bound] to fold, or null when caught up. */
export async function claimBatch(tx: Tx, name: string, batchRows: number, settleMs: number): Promise<Batch | null> {
  await tx.execute(sql`insert into analytics_rollup_state (name) values (${name}) on conflict do nothing`);
  const [state] = rowsOf<{ watermark: unknown }>(await tx.execute(sql`select watermark from analytics_rollup_state where name = ${name} for update`));
  const from = num(state!.watermark);
  const top = from + batchRows;
  // The highest id of the batch, and below the first row younger than settleMs: a lower id may still be committing.
  const [limits] = rowsOf<{ bound: unknown }>(await tx.execute(sql`
    select least(
      coalesce((select max(id) from interaction_events where id > ${from} and id <= ${top}), ${from}),
      coalesce((select min(id) - 1 from interaction_events where id > ${from} and id <= ${top} and created_at > now() - ${`${settleMs} milliseconds`}::interval), ${top}::bigint)
    ) as bound`));
  const bound = num(limits!.bound);
  return bound > from ? { from, bound } : null;
}

/** Moves the watermark of `name` to the batch's bound (inside the batch's transaction). */
export async function finishBatch(tx: Tx, name: string, batch: Batch): Promise<number> {
  await tx.execute(sql`update analytics_rollup_state set watermark = ${batch.bound}, updated_at = now() where name = ${name}`);
  return batch.bound - batch.from;
}

/** Clock difference between service processes that the open-end rule below tolerates. */
const CLOCK_MARGIN_MS = 5 * 60_000;

/**
 * The range a rollup read may use: the ingest stores every event at or
 * before its process's clock (clampTime in reader-events.service.ts), so no
 * event lies after now, and a range ending later than now (every preset ends
 * with today) holds what the open range from its start holds. Read open, the
 * month so far comes from its one month row per page instead of a row per
 * day (30 days: about 9 day rows and a month row per page, not 31 day rows).
 */
export function openEndIfFuture<R extends { to: Date | null }>(range: R, now = Date.now()): R {
  return range.to !== null && range.to.getTime() > now + CLOCK_MARGIN_MS ? { ...range, to: null } : range;
}
