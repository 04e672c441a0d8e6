/**
 * The service's Prometheus metrics (prom-client), one registry per runtime
 * (tests run several services in one process). Counters and histograms are
 * fed where the work happens (HTTP hook, job queue, webhook dispatcher,
 * reader events); queue depth, the webhook backlog and the database pool are
 * read from the database when Prometheus scrapes, so every process reports
 * the shared state and nothing runs between scrapes. Operations are labelled
 * by operationId (or the route pattern), never by the URL with its ids.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../db/database.ts';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_BUCKETS = [0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900];

export interface JobObservation {
  name: string;
  /** Run time of the handler. */
  seconds: number;
  /** From enqueue to the end of the handler. */
  sinceCreatedSeconds: number;
  result: 'completed' | 'failed';
  value?: unknown;
}

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'operation' | 'method' | 'status'>;
  readonly httpDuration: Histogram<'operation' | 'method'>;
  readonly httpErrors: Counter<'operation' | 'method' | 'status'>;
  readonly rateLimitRefusals: Counter<'operation'>;
  readonly jobDuration: Histogram<'name' | 'result'>;
  readonly conversionPages: Counter;
  readonly conversionPagesPerSecond: Histogram;
  readonly conversionTimeToReady: Histogram;
  readonly webhookDeliveries: Counter<'result'>;
  readonly readerEvents: Counter;

  constructor(database: Database) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({ name: 'flipbook_http_requests_total', help: 'HTTP requests answered, by operation (operationId or route pattern), method and status.', labelNames: ['operation', 'method', 'status'], registers });
    this.httpErrors = new Counter({ name: 'flipbook_http_errors_total', help: 'HTTP answers with a 4xx or 5xx status, by operation, method and status.', labelNames: ['operation', 'method', 'status'], registers });
    this.httpDuration = new Histogram({ name: 'flipbook_http_request_duration_seconds', help: 'Time from request to response, by operation and method.', labelNames: ['operation', 'method'], buckets: LATENCY_BUCKETS, registers });
    this.rateLimitRefusals = new Counter({ name: 'flipbook_rate_limit_refusals_total', help: 'Requests refused with 429 by a rate limit, by operation.', labelNames: ['operation'], registers });
    this.jobDuration = new Histogram({ name: 'flipbook_job_duration_seconds', help: 'Background job run time, by job name and result.', labelNames: ['name', 'result'], buckets: JOB_BUCKETS, registers });
    this.conversionPages = new Counter({ name: 'flipbook_conversion_pages_total', help: 'Pages of converted documents (rate() is pages per second).', registers });
    this.conversionPagesPerSecond = new Histogram({ name: 'flipbook_conversion_pages_per_second', help: 'Pages per second of each completed conversion (its pages over its run time).', buckets: [0.5, 1, 2, 5, 10, 20, 50, 100], registers });
    this.conversionTimeToReady = new Histogram({ name: 'flipbook_conversion_time_to_ready_seconds', help: 'From upload (the conversion job enqueued) to the book ready.', buckets: [1, 2, 5, 10, 30, 60, 120, 300, 900, 1800], registers });
    this.webhookDeliveries = new Counter({ name: 'flipbook_webhook_deliveries_total', help: 'Webhook delivery attempts by result: succeeded, retrying (failed, another attempt scheduled) or failed (given up).', labelNames: ['result'], registers });
    this.readerEvents = new Counter({ name: 'flipbook_reader_events_ingested_total', help: 'Reader events stored (rate() is events per second).', registers });

    new Gauge({
      name: 'flipbook_job_queue_depth', help: 'Jobs waiting to run (created or retry), by job name.', labelNames: ['name'], registers,
      async collect() {
        this.reset();
        for (const row of await queueState(database)) this.set({ name: row.name }, Number(row.queued));
      },
    });
    new Gauge({
      name: 'flipbook_job_oldest_age_seconds', help: 'Age of the oldest job waiting to run, by job name (0 when none waits).', labelNames: ['name'], registers,
      async collect() {
        this.reset();
        for (const row of await queueState(database)) this.set({ name: row.name }, Number(row.oldest ?? 0));
      },
    });
    new Gauge({
      name: 'flipbook_webhook_delivery_backlog', help: 'Webhook deliveries not yet delivered or given up (pending), and how many of them are due now.', labelNames: ['state'], registers,
      async collect() {
        const { rows } = await database.runner.executeSql(
          "select count(*)::int as pending, count(*) filter (where next_attempt_at <= now())::int as due from webhook_deliveries where status = 'pending'");
        const row = rows[0] as { pending: number; due: number };
        this.set({ state: 'pending' }, row.pending);
        this.set({ state: 'due' }, row.due);
      },
    });
    new Gauge({
      name: 'flipbook_db_pool_connections', help: 'Database connections of this process: total, idle, and requests waiting for one (PGlite: one connection).', labelNames: ['state'], registers,
      collect() {
        const pool = database.pool;
        this.set({ state: 'total' }, pool ? pool.totalCount : 1);
        this.set({ state: 'idle' }, pool ? pool.idleCount : 0);
        this.set({ state: 'waiting' }, pool ? pool.waitingCount : 0);
      },
    });
  }

  /** Called by the job queue when a handler ends. */
  observeJob(job: JobObservation): void {
    this.jobDuration.observe({ name: job.name, result: job.result }, job.seconds);
    const value = job.value as { outcome?: string; pages?: number } | undefined;
    if (job.name === 'books.convert' && job.result === 'completed' && value?.outcome === 'completed' && typeof value.pages === 'number') {
      this.conversionPages.inc(value.pages);
      if (job.seconds > 0) this.conversionPagesPerSecond.observe(value.pages / job.seconds);
      this.conversionTimeToReady.observe(job.sinceCreatedSeconds);
    }
  }

  /** Called once per answered HTTP request. */
  observeRequest(operation: string, method: string, status: number, seconds: number): void {
    const code = String(status);
    this.httpRequests.inc({ operation, method, status: code });
    this.httpDuration.observe({ operation, method }, seconds);
    if (status >= 400) this.httpErrors.inc({ operation, method, status: code });
    if (status === 429) this.rateLimitRefusals.inc({ operation });
  }
}

async function queueState(database: Database): Promise<{ name: string; queued: number; oldest: number | null }[]> {
  const { rows } = await database.runner.executeSql(
    `select q.name, count(j.id)::int as queued, extract(epoch from now() - min(j.created_on))::float8 as oldest
       from pgboss.queue q left join pgboss.job j on j.name = q.name and j.state in ('created', 'retry')
      group by q.name`);
  return rows as { name: string; queued: number; oldest: number | null }[];
}
