/**
 * Liveness and fencing for conversions, which pg-boss 11 cannot give: its jobs
 * have an expiry (30 minutes for a conversion, which a 1,000-page document may
 * need) but no heartbeat, so a worker killed mid-conversion left its book
 * `processing` for the whole expiry, and a shorter expiry started long, healthy
 * runs a second time, the two runs overwriting each other's pages.
 *
 * - **Lease:** a run first takes the batch's row in `conversion_leases` with a
 *   fresh token, and renews `expires_at` every quarter of the lease while it
 *   renders. A lease is free when it is missing, released, re-queued, or past
 *   its time.
 * - **Fencing:** every write a run makes (its pages, progress, the final
 *   state) goes through `lease.write`, one transaction that first reads the
 *   row `FOR SHARE` with the run's token. A newer run replaces the token under
 *   the row lock, after the old run's in-flight writes commit, so once it holds
 *   the lease no write of the old run can land. The old run sees its lease lost
 *   (on a write or a renewal), stops rendering and removes what it stored.
 * - **Sweeper:** every worker process looks, every half lease, for leases whose
 *   time ran out with the batch still unfinished (the holder died: kill -9,
 *   power loss, a frozen process) and sends a new `books.convert` job in the
 *   same transaction, `FOR UPDATE SKIP LOCKED` so one sweeper takes each.
 *   A dead worker's book is thus picked up within about 1.5 leases (30 s by
 *   default) plus the queue's polling, instead of the job's 30-minute expiry.
 *   The dead run's own pg-boss job still expires later; its retry finds the
 *   batch finished and stops.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db, DbOrTx } from '../../platform/db/database.ts';
import type { JobQueue } from '../../platform/jobs/queue.ts';
import { uploadBatches } from './books.tables.ts';
import { conversionLeases } from './conversion-lease.tables.ts';

export class ConversionLeaseLostError extends Error {
  override name = 'ConversionLeaseLostError';
  constructor(batchId: string) {
    super(`The conversion lease of batch ${batchId} was taken over by another run; this run stops`);
  }
}

export function isLeaseLost(error: unknown): error is ConversionLeaseLostError {
  return error instanceof ConversionLeaseLostError;
}

export interface ConversionLease {
  readonly batchId: string;
  readonly token: string;
  /** Aborted when the lease is found lost (by a renewal or a fenced write). */
  readonly signal: AbortSignal;
  /** Runs `fn` in a transaction that holds the lease row (shared): it commits only while this run owns the batch. */
  write<T>(fn: (tx: DbOrTx) => Promise<T>): Promise<T>;
  /** Inside a fenced write: the batch is finished (completed, failed, cancelled); the row goes. */
  finish(tx: DbOrTx): Promise<void>;
  /** Stops renewing and frees the lease for the job's retry (shutdown, a retryable error). */
  release(): Promise<void>;
  /** Stops renewing (after finish). */
  stop(): void;
}

const OWNER = `${os.hostname()}:${process.pid}`;
const leaseExpiry = (ttlMs: number) => sql`now() + ${ttlMs} * interval '1 millisecond'`;

/**
 * Takes the batch's lease for a new run, or answers null when a live run holds
 * it (this job is then a duplicate: that run, or the sweeper if it dies, owns
 * the batch).
 */
export async function acquireConversionLease(db: Db, batchId: string, options: { ttlMs: number; log: Logger }): Promise<ConversionLease | null> {
  const { ttlMs, log } = options;
  const token = randomBytes(12).toString('base64url');
  const [taken] = await db
    .insert(conversionLeases)
    .values({ batchId, token, owner: OWNER, state: 'running', expiresAt: leaseExpiry(ttlMs) })
    .onConflictDoUpdate({
      target: conversionLeases.batchId,
      set: { token, owner: OWNER, state: 'running', runs: sql`${conversionLeases.runs} + 1`, expiresAt: leaseExpiry(ttlMs), renewedAt: sql`now()` },
      setWhere: sql`${conversionLeases.state} <> 'running' or ${conversionLeases.expiresAt} < now()`,
    })
    .returning({ runs: conversionLeases.runs });
  if (!taken) return null;

  const lost = new AbortController();
  const held = and(eq(conversionLeases.batchId, batchId), eq(conversionLeases.token, token), eq(conversionLeases.state, 'running'));
  const markLost = () => {
    if (!lost.signal.aborted) {
      log.warn({ batchId }, 'conversion lease lost: another run took the batch over');
      lost.abort(new ConversionLeaseLostError(batchId));
    }
  };
  const renew = async () => {
    try {
      const renewed = await db
        .update(conversionLeases)
        .set({ expiresAt: leaseExpiry(ttlMs), renewedAt: sql`now()` })
        .where(held)
        .returning({ batchId: conversionLeases.batchId });
      if (renewed.length === 0) markLost();
    } catch (error) {
      // A failed renewal is retried at the next beat; the fence keeps writes safe meanwhile.
      log.warn({ err: error, batchId }, 'conversion lease renewal failed');
    }
  };
  const heartbeat = setInterval(() => void renew(), Math.max(250, Math.floor(ttlMs / 4)));
  heartbeat.unref();

  return {
    batchId,
    token,
    signal: lost.signal,
    async write(fn) {
      if (lost.signal.aborted) throw new ConversionLeaseLostError(batchId);
      try {
        return await db.transaction(async (tx) => {
          const [row] = await tx.select({ token: conversionLeases.token }).from(conversionLeases).where(held).for('share');
          if (!row) throw new ConversionLeaseLostError(batchId);
          return fn(tx);
        });
      } catch (error) {
        if (isLeaseLost(error)) markLost();
        throw error;
      }
    },
    async finish(tx) {
      clearInterval(heartbeat);
      await tx.delete(conversionLeases).where(and(eq(conversionLeases.batchId, batchId), eq(conversionLeases.token, token)));
    },
    async release() {
      clearInterval(heartbeat);
      await db
        .update(conversionLeases)
        .set({ state: 'released', expiresAt: leaseExpiry(ttlMs) })
        .where(held)
        .catch((error: unknown) => log.warn({ err: error, batchId }, 'conversion lease release failed; it expires by itself'));
    },
    stop() {
      clearInterval(heartbeat);
    },
  };
}

/**
 * One sweep: re-queues every unfinished batch whose lease ran out, and drops
 * leases of batches that are finished. Returns the re-queued batch ids.
 */
export async function sweepExpiredConversionLeases(db: Db, queue: JobQueue, ttlMs: number): Promise<string[]> {
  return db.transaction(async (tx) => {
    const expired = await tx
      .select({ batchId: conversionLeases.batchId, requeues: conversionLeases.requeues, status: uploadBatches.status })
      .from(conversionLeases)
      .leftJoin(uploadBatches, eq(uploadBatches.id, conversionLeases.batchId))
      .where(lt(conversionLeases.expiresAt, sql`now()`))
      .limit(100)
      .for('update', { of: conversionLeases, skipLocked: true });
    const unfinished = expired.filter((l) => l.status === 'queued' || l.status === 'processing');
    const finished = expired.filter((l) => !unfinished.includes(l)).map((l) => l.batchId);
    if (finished.length > 0) await tx.delete(conversionLeases).where(inArray(conversionLeases.batchId, finished));
    for (const lease of unfinished) {
      // Not 'running': the next run takes it at once. Its time restarts so that run has a lease's time to pick it up.
      await tx
        .update(conversionLeases)
        .set({ state: 'requeued', requeues: lease.requeues + 1, expiresAt: leaseExpiry(ttlMs) })
        .where(eq(conversionLeases.batchId, lease.batchId));
      await queue.send('books.convert', { batchId: lease.batchId }, { tx, singletonKey: `${lease.batchId}:requeue:${lease.requeues + 1}` });
    }
    return unfinished.map((l) => l.batchId);
  });
}

/** Runs the sweep every half lease in a worker process; returns the function that stops it. */
export function startConversionLeaseSweeper(options: { db: Db; queue: JobQueue; ttlMs: number; log: Logger }): () => void {
  const { db, queue, ttlMs, log } = options;
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      const requeued = await sweepExpiredConversionLeases(db, queue, ttlMs);
      if (requeued.length > 0) log.warn({ batchIds: requeued }, 'conversions whose worker stopped renewing their lease were re-queued');
    } catch (error) {
      log.warn({ err: error }, 'conversion lease sweep failed; retried at the next sweep');
    } finally {
      running = false;
    }
  }, Math.max(250, Math.floor(ttlMs / 2)));
  timer.unref();
  return () => clearInterval(timer);
}
