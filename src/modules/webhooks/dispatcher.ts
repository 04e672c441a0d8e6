/**
 * The dispatcher: sends due deliveries and records every attempt.
 *
 * - Claims due rows (status pending, next_attempt_at passed, no live lease)
 *   with FOR UPDATE SKIP LOCKED, so several worker processes share the work,
 *   and leases them (locked_until): a worker that dies mid-send leaves its
 *   rows to be taken again when the lease runs out (at least once).
 * - New deliveries also arrive straight from the relay of this process,
 *   leased at insert (`accept`), so a first attempt needs no claim.
 * - Per subscription, a window of requests in flight: WEBHOOK_ENDPOINT_CONCURRENCY,
 *   growing (one more per window answered within FAST_MS) up to
 *   WEBHOOK_ENDPOINT_MAX_CONCURRENCY while the receiver answers fast, and halved
 *   back towards WEBHOOK_ENDPOINT_CONCURRENCY on a slow answer, a timeout, a
 *   network error, 429 or 503. Waiting here (claimed or handed over): four
 *   windows, or QUEUE_SECONDS of sending at the subscription's pace when that
 *   is more; at most WEBHOOK_CONCURRENCY requests are in flight in all: a slow
 *   or dead receiver fills only its own (small) window, never the others'.
 *   The windows are per worker process.
 * - Results are written in batches (one statement for many deliveries: the
 *   attempt rows and the delivery's new state), and the subscription's health
 *   when it changed or was last written more than HEALTH_REFRESH_MS ago.
 *   A success is final, so a retry never sends it again.
 * - Standard Webhooks signatures: webhook-id (the event id), webhook-timestamp,
 *   webhook-signature (`v1,<base64 HMAC-SHA256 of id.timestamp.body>`; two
 *   signatures for 24 hours after a rotation, the new and the old secret).
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/database.ts';
import { OutboundRequestError, type OutboundClient } from '../../platform/outbound/outbound-client.ts';
import { FAILING_DEACTIVATION_MS, parseRetryAfter, retryDelay } from './schedule.ts';
import type { SecretBox } from './secrets.ts';
import type { DeliveryHandoff, LeasedDelivery } from './relay.ts';
import { rowsOf } from './streams.ts';

export const DELIVERY_TIMEOUT_MS = 15_000;
export const RESPONSE_BODY_BYTES = 4096;
export const LEASE_MS = 120_000;
const CLAIM_BATCH = 1000;
const FLUSH_SIZE = 500;
const FLUSH_DELAY_MS = 50;
/** Deliveries waiting in this process, all subscriptions (a subscription gets at most half). */
const MAX_WAITING = 20_000;
/** A subscription may have this many seconds of sending, at its pace, waiting here. */
const QUEUE_SECONDS = 10;
/** A waiting delivery is sent only while its lease has the request's timeout and this much left. */
const LEASE_MARGIN_MS = 5_000;
/** An answer faster than this widens the subscription's window. */
const FAST_MS = 250;
/** A subscription's known health is written again at least this often (other worker processes write it too). */
const HEALTH_REFRESH_MS = 10_000;

type Claimed = LeasedDelivery;

interface Result {
  id: number;
  subscriptionId: number;
  outcome: 'succeeded' | 'failed';
  status: 'pending' | 'succeeded' | 'failed';
  step: number;
  next: string | null;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  at: string;
  durationMs: number;
  gone: boolean;
}

export interface SendOutcome {
  ok: boolean;
  status: number | null;
  body: string | null;
  error: string | null;
  retryAfterMs: number | null;
}

/** One HTTP attempt: 2xx is success; a 3xx is a failure (redirects are not followed); no answer within 15 s is a failure. */
export async function sendOnce(outbound: OutboundClient, url: string, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<SendOutcome> {
  try {
    const response = await outbound.request(url, {
      method: 'POST', body, headers: { 'content-type': 'application/json', ...headers },
      timeoutMs: DELIVERY_TIMEOUT_MS, maxResponseBytes: RESPONSE_BODY_BYTES, onTooLarge: 'truncate', signal,
    });
    const text = response.body.toString('utf8');
    const ok = response.status >= 200 && response.status < 300;
    const retryAfterMs = response.status === 429 || response.status === 503 ? parseRetryAfter(response.headers['retry-after'], Date.now()) : null;
    const error = ok ? null : response.status >= 300 && response.status < 400 ? `The endpoint answered ${response.status} (redirects are not followed).` : `The endpoint answered ${response.status}.`;
    return { ok, status: response.status, body: text, error, retryAfterMs };
  } catch (error) {
    const message = error instanceof OutboundRequestError ? error.message : 'The request failed.';
    return { ok: false, status: null, body: null, error: message, retryAfterMs: null };
  }
}

export class WebhookDispatcher implements DeliveryHandoff {
  private readonly db: Db;
  private readonly outbound: OutboundClient;
  private readonly box: SecretBox;
  private readonly log: Logger;
  private readonly perEndpoint: number;
  private readonly perEndpointMax: number;
  private readonly total: number;
  readonly leaseMs = LEASE_MS;
  /** Per subscription: the window of requests in flight (fractional: it grows by 1/window per fast answer). */
  private readonly windows = new Map<number, number>();
  /** Per subscription: mean answer time (exponentially weighted), for its pace. */
  private readonly answerMs = new Map<number, number>();
  /** Per subscription: failing_since as last written here (null: healthy), and when. */
  private readonly health = new Map<number, { failingSince: number | null; at: number }>();
  private readonly now: () => number;
  private readonly keys = new Map<string, KeyObject>();
  /** Per subscription: requests in flight and claimed rows waiting for a slot. */
  private readonly inflight = new Map<number, number>();
  private readonly waiting = new Map<number, Claimed[]>();
  private running = 0;
  private results: Result[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private readonly abort = new AbortController();
  private readonly sends = new Set<Promise<void>>();
  private readonly released: number[] = [];
  /** Called when a slot frees up, so the loop can claim more. */
  onCapacity: () => void = () => undefined;
  /** Told of every attempt's result (metrics): succeeded, retrying (another attempt scheduled) or failed (given up). */
  onAttempt: (result: 'succeeded' | 'retrying' | 'failed') => void = () => undefined;

  constructor(deps: { db: Db; outbound: OutboundClient; box: SecretBox; log: Logger; perEndpoint: number; perEndpointMax?: number; total: number; now?: () => number }) {
    this.db = deps.db;
    this.outbound = deps.outbound;
    this.box = deps.box;
    this.log = deps.log;
    this.perEndpoint = deps.perEndpoint;
    this.perEndpointMax = Math.max(deps.perEndpoint, deps.perEndpointMax ?? deps.perEndpoint);
    this.total = deps.total;
    this.now = deps.now ?? Date.now;
  }

  /** Requests this subscription may have in flight now. */
  private window(subscriptionId: number): number {
    return Math.floor(this.windows.get(subscriptionId) ?? this.perEndpoint);
  }

  /** After an answer: a fast one widens the window (by one per window's worth), a slow or overloaded one halves it. */
  private adapt(subscriptionId: number, outcome: SendOutcome, durationMs: number): void {
    const current = this.windows.get(subscriptionId) ?? this.perEndpoint;
    const fast = outcome.status !== null && outcome.status !== 429 && outcome.status !== 503 && durationMs < FAST_MS;
    const next = fast ? Math.min(this.perEndpointMax, current + 1 / current) : Math.max(this.perEndpoint, current / 2);
    if (next === this.perEndpoint) this.windows.delete(subscriptionId);
    else this.windows.set(subscriptionId, next);
  }

  /**
   * How many deliveries of this subscription may wait here (claimed or handed over, not yet sent): four windows, or what
   * it answers in QUEUE_SECONDS at its recent pace (window / mean answer time) when that is more, so a fast receiver
   * is fed from memory while a slow one holds a few; either way far less than a lease's worth of sending.
   */
  private queueBound(subscriptionId: number): number {
    const window = this.window(subscriptionId);
    const meanMs = this.answerMs.get(subscriptionId);
    const paced = meanMs === undefined ? 0 : Math.floor((window / Math.max(meanMs, 1)) * 1000 * QUEUE_SECONDS);
    return Math.min(MAX_WAITING / 2, Math.max(window * 4, paced));
  }

  /** DeliveryHandoff: how many new deliveries of this subscription the relay may hand over now. */
  room(subscriptionId: number): number {
    if (this.abort.signal.aborted) return 0;
    return Math.max(0, Math.min(MAX_WAITING - this.queued(), this.queueBound(subscriptionId) - this.load(subscriptionId)));
  }

  /** DeliveryHandoff: deliveries created leased for this process (their transaction committed). */
  accept(deliveries: LeasedDelivery[]): void {
    if (this.abort.signal.aborted) {
      this.released.push(...deliveries.map((d) => d.id));
      return;
    }
    for (const delivery of deliveries) {
      const list = this.waiting.get(delivery.subscription_id) ?? [];
      list.push(delivery);
      this.waiting.set(delivery.subscription_id, list);
    }
    this.pump();
  }

  private load(subscriptionId: number): number {
    return (this.inflight.get(subscriptionId) ?? 0) + (this.waiting.get(subscriptionId)?.length ?? 0);
  }

  private queued(): number {
    let n = 0;
    for (const list of this.waiting.values()) n += list.length;
    return n;
  }

  /** Claims due deliveries and starts sending them; answers how many it claimed. */
  async claim(): Promise<number> {
    const room = MAX_WAITING - this.queued();
    if (room <= 0 || this.abort.signal.aborted) return 0;
    // A subscription is refilled once its load (in flight + waiting here) fell below its window, up to four windows
    // (well within the lease): claims come in batches, not one per finished request. Busy subscriptions are left out of
    // the select, so one with many due retries (a failing receiver) cannot fill a claim and starve the others.
    const busy = [...new Set([...this.inflight.keys(), ...this.waiting.keys()])].filter((id) => this.load(id) >= this.window(id));
    const now = new Date(this.now());
    const leasedUntil = now.getTime() + LEASE_MS;
    // Lock candidates (index on next_attempt_at; inactive subscriptions' rows are not touched), keep at most queueBound per
    // subscription, lease those by primary key; one short transaction.
    const rows = await this.db.transaction(async (tx) => {
      const due = rowsOf<{ id: string | number; subscription_id: number }>(await tx.execute(sql`
        select d.id, d.subscription_id from webhook_deliveries d
        join webhook_subscriptions s on s.id = d.subscription_id and s.is_active and s.deleted_at is null
        where d.status = 'pending' and d.next_attempt_at <= ${now} and (d.locked_until is null or d.locked_until < ${now})
          and not (d.subscription_id = any(${`{${busy.join(',')}}`}::int[]))
        order by d.next_attempt_at limit ${Math.min(CLAIM_BATCH, room)}
        for update of d skip locked`));
      const taken = new Map<number, number>();
      const ids = due.filter((d) => {
        const n = (taken.get(Number(d.subscription_id)) ?? 0) + this.load(Number(d.subscription_id));
        taken.set(Number(d.subscription_id), (taken.get(Number(d.subscription_id)) ?? 0) + 1);
        return n < this.queueBound(Number(d.subscription_id));
      }).map((d) => Number(d.id));
      if (ids.length === 0) return [];
      return rowsOf<Claimed>(await tx.execute(sql`
        update webhook_deliveries d set locked_until = ${new Date(leasedUntil)}
        from webhook_subscriptions s
        where d.id = any(${`{${ids.join(',')}}`}::bigint[]) and s.id = d.subscription_id
        returning d.id, d.subscription_id, d.event_id, d.payload, d.attempts, d.schedule_step,
          s.target_url, s.secret_encrypted, s.previous_secret_encrypted, s.previous_secret_expires_at`));
    });
    for (const row of rows) {
      const claimed = { ...row, id: Number(row.id), subscription_id: Number(row.subscription_id), leased_until: leasedUntil };
      const list = this.waiting.get(claimed.subscription_id) ?? [];
      list.push(claimed);
      this.waiting.set(claimed.subscription_id, list);
    }
    this.pump();
    return rows.length;
  }

  /** Starts waiting deliveries while their subscription has a free slot. */
  private pump(): void {
    for (const [subscriptionId, list] of this.waiting) {
      const window = this.window(subscriptionId);
      while (list.length > 0 && (this.inflight.get(subscriptionId) ?? 0) < window && this.running < this.total && !this.abort.signal.aborted) {
        const delivery = list.shift()!;
        // Too little of its lease left to finish the request: not sent from here (it is claimed again once the lease ran
        // out), so a delivery is never sent while another worker may already hold it.
        if (delivery.leased_until - this.now() < DELIVERY_TIMEOUT_MS + LEASE_MARGIN_MS) continue;
        this.inflight.set(subscriptionId, (this.inflight.get(subscriptionId) ?? 0) + 1);
        this.running++;
        const send = this.send(delivery).finally(() => {
          this.sends.delete(send);
          this.running--;
          const left = (this.inflight.get(subscriptionId) ?? 1) - 1;
          if (left > 0) this.inflight.set(subscriptionId, left);
          else this.inflight.delete(subscriptionId);
          this.pump();
          this.onCapacity();
        });
        this.sends.add(send);
      }
      if (list.length === 0) this.waiting.delete(subscriptionId);
    }
  }

  /** The secret's key bytes (base64 after `whsec_`), read as the standardwebhooks package reads them, opened once. */
  private key(sealed: string): KeyObject {
    let key = this.keys.get(sealed);
    if (!key) {
      const secret = this.box.open(sealed);
      key = createSecretKey(Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64'));
      if (this.keys.size > 10_000) this.keys.clear();
      this.keys.set(sealed, key);
    }
    return key;
  }

  /**
   * The Standard Webhooks headers for one attempt: `v1,` + base64 HMAC-SHA256 of "id.timestamp.body". Computed with
   * node:crypto rather than the package's pure-JS SHA-256 (several times faster at thousands of deliveries a second);
   * the tests verify every signature with the unmodified standardwebhooks package.
   */
  signatureHeaders(delivery: Pick<Claimed, 'event_id' | 'payload' | 'secret_encrypted' | 'previous_secret_encrypted' | 'previous_secret_expires_at'>, at: Date): Record<string, string> {
    const timestamp = String(Math.floor(at.getTime() / 1000));
    const sign = (sealed: string) => `v1,${createHmac('sha256', this.key(sealed)).update(`${delivery.event_id}.${timestamp}.${delivery.payload}`).digest('base64')}`;
    const signatures = [sign(delivery.secret_encrypted)];
    const previousUntil = delivery.previous_secret_expires_at ? new Date(delivery.previous_secret_expires_at).getTime() : 0;
    if (delivery.previous_secret_encrypted && previousUntil > at.getTime()) signatures.push(sign(delivery.previous_secret_encrypted));
    return { 'webhook-id': delivery.event_id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
  }

  private async send(delivery: Claimed): Promise<void> {
    const started = this.now();
    const at = new Date(started);
    const outcome = await sendOnce(this.outbound, delivery.target_url, delivery.payload, this.signatureHeaders(delivery, at), this.abort.signal);
    if (this.abort.signal.aborted && !outcome.ok && outcome.status === null) {
      // Stopped by a shutdown, not by the receiver: no attempt; the lease is released in stop().
      this.released.push(delivery.id);
      return;
    }
    const finished = this.now();
    this.adapt(delivery.subscription_id, outcome, finished - started);
    if (outcome.status !== null) {
      const mean = this.answerMs.get(delivery.subscription_id);
      this.answerMs.set(delivery.subscription_id, mean === undefined ? finished - started : mean * 0.9 + (finished - started) * 0.1);
    }
    const gone = outcome.status === 410;
    // 410: the subscription's pending deliveries are given up when this result is written; those waiting here are not sent.
    if (gone) this.waiting.delete(delivery.subscription_id);
    let status: Result['status'] = outcome.ok ? 'succeeded' : 'failed';
    let next: string | null = null;
    let step = delivery.schedule_step;
    if (!outcome.ok && !gone) {
      const delay = retryDelay(delivery.schedule_step);
      if (delay !== null) {
        status = 'pending';
        step = delivery.schedule_step + 1;
        next = new Date(finished + Math.max(delay, outcome.retryAfterMs ?? 0)).toISOString();
      }
    }
    this.onAttempt(status === 'pending' ? 'retrying' : status);
    this.results.push({
      id: delivery.id, subscriptionId: delivery.subscription_id, outcome: outcome.ok ? 'succeeded' : 'failed', status, step, next,
      responseStatus: outcome.status, responseBody: outcome.body, error: gone ? 'The endpoint answered 410 Gone: the subscription was deactivated.' : outcome.error,
      at: at.toISOString(), durationMs: finished - started, gone,
    });
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.results.length >= FLUSH_SIZE) {
      void this.flush();
      return;
    }
    this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS);
  }

  /** Writes the buffered results (serialised: one flush at a time). */
  flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const batch = this.results;
    this.results = [];
    if (batch.length === 0) return this.flushing;
    this.flushing = this.flushing.then(() => this.write(batch)).catch((error: unknown) => {
      this.log.error({ err: error, deliveries: batch.length }, 'webhook results not recorded; their leases will expire and they will be sent again');
    });
    return this.flushing;
  }

  private async write(batch: Result[]): Promise<void> {
    const json = JSON.stringify(batch.map((r) => ({ ...r, responseBody: r.responseBody?.replaceAll(String.fromCharCode(0), '') ?? null })));
    const now = new Date(this.now());
    // Health to write: a subscription whose state changed since this process last wrote it, or was written long ago
    // (another worker process may have written it since). The last outcome of the batch per subscription counts.
    const last = new Map<number, Result>();
    for (const r of batch) last.set(r.subscriptionId, r);
    const gone = [...new Set(batch.filter((r) => r.gone).map((r) => r.subscriptionId))];
    const stale = (id: number) => now.getTime() - (this.health.get(id)?.at ?? 0) >= HEALTH_REFRESH_MS;
    const healthy = [...last.values()].filter((r) => r.outcome === 'succeeded' && (this.health.get(r.subscriptionId)?.failingSince !== null || stale(r.subscriptionId))).map((r) => r.subscriptionId);
    const failing = [...last.values()].filter((r) => {
      if (r.outcome !== 'failed' || r.gone) return false;
      const known = this.health.get(r.subscriptionId);
      // Already failing since a known time: written again only when five days may have passed, or when stale.
      return known?.failingSince == null || now.getTime() - known.failingSince >= FAILING_DEACTIVATION_MS || stale(r.subscriptionId);
    });
    const record = async (tx: Pick<Db, 'execute'>) => {
      // One statement: the deliveries' new state, and their attempt rows (numbered by the updated count).
      await tx.execute(sql`with v as (
          select * from jsonb_to_recordset(${json}::jsonb) as v("id" bigint, "status" text, "outcome" text, "step" int, "next" timestamptz,
            "responseStatus" int, "responseBody" text, "error" text, "durationMs" int, "at" timestamptz)
        ), updated as (
          update webhook_deliveries d set
            status = case when d.status = 'succeeded' then d.status else v."status" end,
            attempts = d.attempts + 1, schedule_step = v."step", next_attempt_at = v."next", locked_until = null,
            response_status = v."responseStatus", response_body = v."responseBody", error_message = v."error", last_attempt_at = v."at",
            delivered_at = case when v."outcome" = 'succeeded' then v."at" else d.delivered_at end
          from v where d.id = v."id"
          returning d.id, d.attempts
        )
        insert into webhook_delivery_attempts (delivery_id, attempt, outcome, response_status, response_body, error_message, duration_ms, attempted_at)
        select v."id", updated.attempts, v."outcome", v."responseStatus", v."responseBody", v."error", v."durationMs", v."at"
        from v join updated on updated.id = v."id"`);
    };
    if (healthy.length === 0 && failing.length === 0 && gone.length === 0) {
      await record(this.db);
      return;
    }
    const written = new Map<number, number | null>();
    await this.db.transaction(async (tx) => {
      await record(tx);
      if (healthy.length > 0) {
        await tx.execute(sql`update webhook_subscriptions set failing_since = null where id = any(${`{${healthy.join(',')}}`}::int[]) and failing_since is not null`);
        for (const id of healthy) written.set(id, null);
      }
      for (const r of failing) {
        const [row] = rowsOf<{ id: number; is_active: boolean; failing_since: Date | string | null }>(await tx.execute(sql`update webhook_subscriptions set failing_since = coalesce(failing_since, ${r.at}::timestamptz),
            is_active = case when coalesce(failing_since, ${r.at}::timestamptz) <= ${new Date(now.getTime() - FAILING_DEACTIVATION_MS)} then false else is_active end,
            deactivated_reason = case when is_active and coalesce(failing_since, ${r.at}::timestamptz) <= ${new Date(now.getTime() - FAILING_DEACTIVATION_MS)}
              then 'Every delivery attempt failed for five days.' else deactivated_reason end,
            deactivated_at = case when is_active and coalesce(failing_since, ${r.at}::timestamptz) <= ${new Date(now.getTime() - FAILING_DEACTIVATION_MS)}
              then ${now} else deactivated_at end
          where id = ${r.subscriptionId} returning id, is_active, failing_since`));
        if (row) written.set(r.subscriptionId, row.failing_since == null ? null : new Date(row.failing_since).getTime());
        if (row && !row.is_active) await abandonPending(tx, r.subscriptionId, 'The subscription was deactivated after five days of failed deliveries.');
      }
      for (const id of gone) {
        await tx.execute(sql`update webhook_subscriptions set is_active = false, deactivated_at = ${now},
          deactivated_reason = 'The endpoint answered 410 Gone.' where id = ${id} and is_active`);
        await abandonPending(tx, id, 'The subscription was deactivated: the endpoint answered 410 Gone.');
        this.health.delete(id);
      }
    });
    // Known only once committed.
    for (const [id, failingSince] of written) this.health.set(id, { failingSince, at: now.getTime() });
    if (this.health.size > 10_000) this.health.clear();
  }

  /** Stops sending: waits for requests in flight (up to timeoutMs), records them, hands back everything claimed but unsent. */
  async stop(timeoutMs: number): Promise<void> {
    const deadline = new Promise((resolve) => setTimeout(resolve, timeoutMs).unref());
    const waiting = [...this.waiting.values()].flat().map((d) => d.id);
    this.waiting.clear();
    await Promise.race([Promise.allSettled([...this.sends]), deadline]);
    this.abort.abort();
    await Promise.allSettled([...this.sends]);
    await this.flush();
    const unsent = [...waiting, ...this.released];
    if (unsent.length > 0) {
      await this.db.execute(sql`update webhook_deliveries set locked_until = null where id = any(${`{${unsent.join(',')}}`}::bigint[]) and status = 'pending'`).catch(() => undefined);
    }
  }
}

/** Pending deliveries of a deactivated or deleted subscription are given up, with the reason. */
export async function abandonPending(tx: Pick<Db, 'execute'>, subscriptionId: number, reason: string): Promise<void> {
  await tx.execute(sql`update webhook_deliveries set status = 'failed', next_attempt_at = null, locked_until = null, error_message = ${reason}
    where subscription_id = ${subscriptionId} and status = 'pending'`);
}
