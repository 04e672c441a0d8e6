/**
 * Durable background jobs on pg-boss, in PostgreSQL or in embedded PGlite.
 *
 * - Job names and payloads are typed through the JobPayloads registry, which
 *   each area extends by declaration merging next to its job definitions.
 * - Payloads carry `$version` and are validated before a handler runs; a
 *   payload that cannot be valid goes to the dead-letter queue, not round the
 *   retry loop.
 * - A job can be enqueued inside the transaction that makes it necessary.
 * - A job sent to start now wakes its workers at once, in every process
 *   (a NOTIFY on JOBS_CHANNEL, delivered when the sending transaction
 *   commits), instead of waiting for their next poll: a conversion starts
 *   within milliseconds of its upload, not up to half a second later.
 * - On shutdown running handlers are told to stop (AbortSignal); a job that
 *   did not finish fails with reason "shutdown" and is retried by a worker.
 * - pg-boss keeps a failed job's error in its table (serialize-error: every
 *   enumerable property, the cause included). A Drizzle error carries the
 *   statement's parameters (addresses, token hashes), so what a handler throws
 *   is stored as its scrubbed name, message, causes and stack only, the same
 *   facts the log gets (serializeError).
 */
import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { Database, DbOrTx, SqlRunner } from '../db/database.ts';
import { serializeError } from '../logger.ts';

/** Job name → payload type. Areas add their jobs with `declare module`. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface JobPayloads {}
export type JobName = keyof JobPayloads & string;

/** The NOTIFY channel a send wakes workers through; the payload is the job's name. */
export const JOBS_CHANNEL = 'flipbook_jobs';

export interface JobContext {
  jobId: string;
  /** Aborted when the process shuts down: stop and let the job be retried. */
  signal: AbortSignal;
  log: Logger;
  /** How many times this job has been retried before this run. */
  retryCount: number;
}

export interface JobDefinition<S extends TSchema = TSchema> {
  name: string;
  /** Bump when the payload shape changes incompatibly; older payloads are dead-lettered. */
  version: number;
  schema: S;
  /** Parallel handlers per worker process. Default: WORKER_CONCURRENCY. */
  concurrency?: number;
  retryLimit?: number;
  retryDelaySeconds?: number;
  expireInSeconds?: number;
  /** Cron expression (UTC) when the job runs on a schedule. */
  cron?: string;
  /**
   * Called in a process that works on this job when one is about to be sent (expect()): a chance to get ready
   * while the request that leads to it is still arriving (start renderer processes while an upload streams in).
   */
  prepare?(): void;
  handle(payload: Static<S>, ctx: JobContext): Promise<unknown>;
}

export function defineJob<S extends TSchema>(definition: JobDefinition<S>): JobDefinition<S> {
  return definition;
}

export interface SendOptions {
  /** Enqueue inside this transaction: the job exists only if the transaction commits. */
  tx?: DbOrTx;
  /** At most one queued job with this key at a time (dedupe). */
  singletonKey?: string;
  startAfter?: Date | number;
}

const DEAD_LETTER_SUFFIX = '.dead';

/** What pg-boss stores of a failed run: the error's type, message and causes' messages, and stack, with values scrubbed. */
export class StoredJobError extends Error {
  constructor(error: unknown) {
    const facts = serializeError(error) as { type?: string; message?: string; stack?: string; code?: unknown; cause?: unknown };
    const causes: string[] = [];
    for (let cause = facts.cause as typeof facts | undefined; cause && causes.length < 5; cause = cause.cause as typeof facts | undefined) {
      if (typeof cause === 'object' && cause.message) causes.push(`${cause.type ?? 'Error'}: ${cause.message}`);
    }
    super([facts.message ?? String(facts), ...causes.map((c) => `caused by ${c}`)].join('\n'));
    this.name = facts.type ?? 'Error';
    this.stack = facts.stack ?? this.message;
  }
}

class ShutdownError extends Error {
  override name = 'ShutdownError';
  constructor() {
    super('shutdown: the worker stopped before the job finished; it will be retried');
  }
}

/** The client of a Drizzle transaction, as the positional-SQL runner pg-boss needs. */
function runnerForTransaction(tx: DbOrTx): SqlRunner {
  const client = (tx as unknown as { session: { client: { query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> } } }).session.client;
  return { executeSql: (text, values) => client.query(text, values ?? []) };
}

export class JobQueue {
  private readonly boss: PgBoss;
  private readonly definitions = new Map<string, JobDefinition>();
  private readonly shutdown = new AbortController();
  private readonly running = new Set<Promise<unknown>>();
  private started = false;
  private readonly log: Logger;
  private readonly defaultConcurrency: number;
  private readonly database: Database;
  /** pg-boss worker ids by job name, for waking them (notifyWorker). */
  private readonly workerIds = new Map<string, string[]>();
  private unlisten: (() => Promise<void>) | null = null;
  /** Told when a handler ends (metrics: job durations, conversions). */
  onJobEnd: ((job: { name: string; seconds: number; sinceCreatedSeconds: number; result: 'completed' | 'failed'; value?: unknown }) => void) | null = null;

  private readonly pollingIntervalSeconds: number;

  /** `pollingIntervalSeconds`: how often idle workers look for jobs nobody woke them for (default 0.5). */
  constructor(options: { database: Database; log: Logger; concurrency: number; pollingIntervalSeconds?: number }) {
    this.log = options.log;
    this.pollingIntervalSeconds = options.pollingIntervalSeconds ?? 0.5;
    this.defaultConcurrency = options.concurrency;
    const { database } = options;
    this.database = database;
    this.boss = new PgBoss(
      database.kind === 'postgres'
        ? { connectionString: database.url!, max: 4, application_name: 'flipbook-jobs' }
        : { db: database.runner as PgBoss.Db },
    );
    this.boss.on('error', (error: unknown) => this.log.error({ err: error }, 'job queue error'));
  }

  /** Registers the handlers; each job name must have exactly one. Call before start(). */
  register(definitions: JobDefinition[]): void {
    for (const definition of definitions) {
      if (this.definitions.has(definition.name)) throw new Error(`Job "${definition.name}" has more than one handler`);
      this.definitions.set(definition.name, definition);
    }
  }

  /** Creates the queues; with `work`, also starts handlers for every job. */
  async start({ work }: { work: boolean }): Promise<void> {
    await this.boss.start();
    this.started = true;
    for (const definition of this.definitions.values()) {
      const deadLetter = definition.name + DEAD_LETTER_SUFFIX;
      await this.boss.createQueue(deadLetter);
      await this.boss.createQueue(definition.name, {
        deadLetter,
        retryLimit: definition.retryLimit ?? 3,
        retryDelay: definition.retryDelaySeconds ?? 5,
        retryBackoff: true,
        expireInSeconds: definition.expireInSeconds ?? 15 * 60,
      });
      if (definition.cron) await this.boss.schedule(definition.name, definition.cron, { $version: definition.version });
      // pg-boss caches queue metadata when it starts, before these queues exist on a fresh database, and fills a miss
      // through its own connection. A send inside a transaction on PGlite (one connection) would then wait for
      // itself, so fill the cache now (a lookup by a nil id does exactly that, and reads nothing).
      await this.boss.getJobById(definition.name, '00000000-0000-0000-0000-000000000000');
    }
    if (!work) return;
    for (const definition of this.definitions.values()) {
      const handlers = definition.concurrency ?? this.defaultConcurrency;
      const ids: string[] = [];
      for (let i = 0; i < handlers; i++) {
        ids.push(await this.boss.work<Record<string, unknown>>(
          definition.name,
          { batchSize: 1, pollingIntervalSeconds: this.pollingIntervalSeconds, includeMetadata: true },
          async ([job]) => this.track(this.run(definition, job!)),
        ));
      }
      this.workerIds.set(definition.name, ids);
    }
    // Polling stays the safety net: a lost notification (or connection) costs at most one polling interval.
    this.unlisten = await this.database.listen(JOBS_CHANNEL, (name) => {
      for (const id of this.workerIds.get(name) ?? []) this.boss.notifyWorker(id);
    });
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.running.add(promise);
    return promise.finally(() => this.running.delete(promise));
  }

  private async run(definition: JobDefinition, job: PgBoss.JobWithMetadata<Record<string, unknown>>): Promise<unknown> {
    const log = this.log.child({ job: definition.name, jobId: job.id });
    const { $version, ...payload } = job.data ?? {};
    if ($version !== definition.version || !Value.Check(definition.schema, payload)) {
      const problems = [...Value.Errors(definition.schema, payload)].slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message}`);
      log.error({ version: $version, problems }, 'job payload rejected; moved to the dead-letter queue');
      await this.boss.send(definition.name + DEAD_LETTER_SUFFIX, { job: job.data, reason: 'invalid payload', problems });
      return { rejected: true };
    }
    if (this.shutdown.signal.aborted) throw new ShutdownError();
    const started = performance.now();
    const ended = (result: 'completed' | 'failed', value?: unknown) => this.onJobEnd?.({
      name: definition.name, seconds: (performance.now() - started) / 1000, sinceCreatedSeconds: (Date.now() - new Date(job.createdOn).getTime()) / 1000, result, value,
    });
    try {
      const value = await definition.handle(payload, { jobId: job.id, signal: this.shutdown.signal, log, retryCount: job.retryCount });
      ended('completed', value);
      return value;
    } catch (error) {
      if (this.shutdown.signal.aborted) throw new ShutdownError();
      ended('failed');
      log.warn({ err: error, retryCount: job.retryCount }, 'job failed');
      throw new StoredJobError(error);
    }
  }

  async send<N extends JobName>(name: N, payload: JobPayloads[N], options: SendOptions = {}): Promise<string | null> {
    const definition = this.definitions.get(name);
    if (!definition) throw new Error(`No handler is registered for job "${name}"`);
    if (!Value.Check(definition.schema, payload)) throw new Error(`Invalid payload for job "${name}"`);
    const sendOptions: PgBoss.SendOptions = {};
    if (options.tx) sendOptions.db = runnerForTransaction(options.tx) as PgBoss.Db;
    if (options.singletonKey) sendOptions.singletonKey = options.singletonKey;
    if (options.startAfter !== undefined) sendOptions.startAfter = options.startAfter instanceof Date ? options.startAfter : new Date(options.startAfter);
    const id = await this.boss.send(name, { $version: definition.version, ...(payload as object) }, sendOptions);
    if (id && options.startAfter === undefined) {
      // Inside the transaction, PostgreSQL holds the notification until commit: no worker wakes to a job it cannot see yet.
      if (options.tx) await runnerForTransaction(options.tx).executeSql('select pg_notify($1, $2)', [JOBS_CHANNEL, name]);
      else await this.database.notify(JOBS_CHANNEL, name);
    }
    return id;
  }

  /** A job of this name is likely to be sent soon: if this process works on it, its definition prepares. Never throws. */
  expect(name: JobName): void {
    if (!this.workerIds.has(name)) return;
    try {
      this.definitions.get(name)?.prepare?.();
    } catch (error) {
      this.log.warn({ err: error, job: name }, 'preparing for a job failed');
    }
  }

  async getJob(name: JobName, id: string): Promise<PgBoss.JobWithMetadata | null> {
    return this.boss.getJobById(name, id);
  }

  /** Stops taking jobs, tells running handlers to stop, waits up to timeoutMs for them. */
  async stop(timeoutMs: number): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.unlisten?.().catch(() => undefined);
    this.unlisten = null;
    const deadline = new Promise((resolve) => setTimeout(resolve, timeoutMs).unref());
    // Let short jobs finish; long ones see the signal and hand their job back.
    const grace = Math.min(timeoutMs, 2000);
    await Promise.race([Promise.allSettled([...this.running]), new Promise((r) => setTimeout(r, grace).unref())]);
    this.shutdown.abort();
    await Promise.race([Promise.allSettled([...this.running]), deadline]);
    await this.boss.stop({ graceful: true, timeout: Math.max(1000, timeoutMs), wait: true, close: true });
  }
}
