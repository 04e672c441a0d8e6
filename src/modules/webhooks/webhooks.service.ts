/**
 * Webhook subscriptions and their delivery log, for one workspace at a time
 * (every query is confined to the caller's workspace; another workspace's
 * subscription is "not found"). No HTTP here.
 */
import { randomBytes } from 'node:crypto';
import { and, desc, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/database.ts';
import { AppError, ERRORS, type ErrorDetails } from '../../platform/errors.ts';
import { afterCursor, decodeCursor, orderOf, toPage, type KeysetSort } from '../../platform/http/pagination.ts';
import { OutboundRefusedError, type OutboundClient } from '../../platform/outbound/outbound-client.ts';
import { trackedLinks } from '../analytics/analytics.tables.ts';
import { books } from '../books/books.tables.ts';
import { abandonPending, sendOnce } from './dispatcher.ts';
import { EVENT_LABELS, TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES, exampleData, isWebhookEventType, type WebhookEventType } from './event-types.ts';
import { PROVIDERS, renderBody, type WebhookEnvelope } from './providers.ts';
import { newSigningSecret, type SecretBox } from './secrets.ts';
import { recentEvents } from './streams.ts';
import { webhookDeliveries, webhookDeliveryAttempts, webhookSubscriptions, type StoredFilter, type WebhookDeliveryRow, type WebhookSubscriptionRow } from './webhooks.tables.ts';

export interface Caller {
  workspaceId: number;
}

export interface FilterInput {
  type: 'book' | 'tracked_link';
  value: string | number;
  book_id?: string;
  label?: string | null;
}

export interface SubscriptionInput {
  name?: string;
  target_url?: string;
  event_types?: (string | { value: string; label?: string })[];
  filters?: FilterInput[];
  provider?: string;
  is_active?: boolean;
}

export interface FilterRecord {
  type: 'book' | 'tracked_link';
  value: string;
  book_id?: string;
  label: string | null;
}

export interface SubscriptionRecord {
  id: number;
  name: string;
  provider: string;
  target_url: string;
  event_types: { label: string; value: string }[];
  filters: FilterRecord[];
  has_signing_secret: boolean;
  is_active: boolean;
  deactivated_reason: string | null;
  deactivated_at: string | null;
  deliveries_count: number;
  created_at: string;
  updated_at: string;
}

export interface DeliveryRecord {
  id: number;
  subscription_id: number;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  payload: unknown;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
  response_status?: number;
  response_body?: string;
  error_message?: string;
}

export const MAX_SUBSCRIPTIONS = 100;
const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

const SUBSCRIPTIONS_NEWEST_FIRST: KeysetSort = {
  name: '-created_at', key: webhookSubscriptions.createdAt, cast: 'timestamptz', direction: 'desc', id: webhookSubscriptions.id,
  valueOf: (row) => (row.createdAt as Date).toISOString(),
};
const DELIVERIES_NEWEST_FIRST: KeysetSort = {
  name: '-created_at', key: webhookDeliveries.createdAt, cast: 'timestamptz', direction: 'desc', id: webhookDeliveries.id,
  valueOf: (row) => (row.createdAt as Date).toISOString(),
};

function parsePayload(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function deliveryRecord(row: WebhookDeliveryRow): DeliveryRecord {
  const record: DeliveryRecord = {
    id: row.id, subscription_id: row.subscriptionId, event_id: row.eventId, event_type: row.eventType, status: row.status,
    attempts: row.attempts, payload: parsePayload(row.payload), next_attempt_at: row.status === 'pending' ? (row.nextAttemptAt?.toISOString() ?? null) : null,
    created_at: row.createdAt.toISOString(), delivered_at: row.deliveredAt?.toISOString() ?? null,
  };
  if (row.responseStatus !== null) record.response_status = row.responseStatus;
  if (row.responseBody !== null) record.response_body = row.responseBody;
  if (row.errorMessage !== null) record.error_message = row.errorMessage;
  return record;
}

export class WebhooksService {
  private readonly db: Db;
  private readonly outbound: OutboundClient;
  private readonly box: SecretBox;
  /** Wakes the dispatcher of this process (a test delivery or a redelivery is due now). */
  wake: () => void = () => undefined;

  constructor(deps: { db: Db; outbound: OutboundClient; box: SecretBox }) {
    this.db = deps.db;
    this.outbound = deps.outbound;
    this.box = deps.box;
  }

  // ---- subscriptions -------------------------------------------------------

  private async find(caller: Caller, id: number, options: { includeDeleted?: boolean } = {}): Promise<WebhookSubscriptionRow> {
    const [row] = await this.db.select().from(webhookSubscriptions).where(and(
      eq(webhookSubscriptions.id, id), eq(webhookSubscriptions.workspaceId, caller.workspaceId),
      options.includeDeleted ? undefined : isNull(webhookSubscriptions.deletedAt),
    ));
    if (!row) throw ERRORS.notFound('Webhook subscription');
    return row;
  }

  private async records(rows: WebhookSubscriptionRow[]): Promise<SubscriptionRecord[]> {
    const bookIds = new Set<number>();
    const linkIds = new Set<number>();
    for (const row of rows) for (const f of row.filters) (f.type === 'book' ? bookIds : linkIds).add(f.id);
    const bookRows = bookIds.size ? await this.db.select({ id: books.id, randomId: books.randomId, name: books.name }).from(books).where(inArray(books.id, [...bookIds])) : [];
    const linkRows = linkIds.size ? await this.db.select({ id: trackedLinks.id, slug: trackedLinks.slug, name: trackedLinks.name }).from(trackedLinks).where(inArray(trackedLinks.id, [...linkIds])) : [];
    const bookById = new Map(bookRows.map((b) => [b.id, b]));
    const linkById = new Map(linkRows.map((l) => [l.id, l]));
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      provider: row.provider,
      target_url: row.targetUrl,
      event_types: row.eventTypes.map((value) => ({ value, label: isWebhookEventType(value) ? EVENT_LABELS[value] : value })),
      filters: row.filters.map((f): FilterRecord => {
        if (f.type === 'book') return { type: 'book', value: f.book, label: bookById.get(f.id)?.name ?? null };
        const link = linkById.get(f.id);
        return link ? { type: 'tracked_link', value: link.slug, book_id: f.book, label: link.name } : { type: 'tracked_link', value: String(f.id), book_id: f.book, label: null };
      }),
      has_signing_secret: row.secretEncrypted !== '',
      is_active: row.isActive,
      deactivated_reason: row.deactivatedReason,
      deactivated_at: row.deactivatedAt?.toISOString() ?? null,
      deliveries_count: Number(row.deliveriesCount),
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
    }));
  }

  private async record(row: WebhookSubscriptionRow): Promise<SubscriptionRecord> {
    return (await this.records([row]))[0]!;
  }

  async list(caller: Caller, page: { cursor?: string; limit: number }) {
    const cursor = decodeCursor(SUBSCRIPTIONS_NEWEST_FIRST, page.cursor);
    const rows = await this.db.select().from(webhookSubscriptions)
      .where(and(eq(webhookSubscriptions.workspaceId, caller.workspaceId), isNull(webhookSubscriptions.deletedAt), afterCursor(SUBSCRIPTIONS_NEWEST_FIRST, cursor)))
      .orderBy(...orderOf(SUBSCRIPTIONS_NEWEST_FIRST)).limit(page.limit + 1);
    const result = toPage(SUBSCRIPTIONS_NEWEST_FIRST, rows, page.limit, (r) => r.id);
    return { data: await this.records(result.rows), meta: result.meta };
  }

  async get(caller: Caller, id: number): Promise<SubscriptionRecord> {
    return this.record(await this.find(caller, id));
  }

  /** Checks a target URL as it is saved: https (http only for allow-listed hosts), no credentials, a public address. */
  private async checkUrl(url: string, field: string): Promise<string> {
    try {
      return (await this.outbound.policy.checkTarget(url)).toString();
    } catch (error) {
      if (error instanceof OutboundRefusedError) throw ERRORS.validation({ [field]: [error.message] });
      throw error;
    }
  }

  private checkEventTypes(input: NonNullable<SubscriptionInput['event_types']>): string[] {
    const values = input.map((e) => (typeof e === 'string' ? e : e.value));
    const details: ErrorDetails = {};
    values.forEach((v, i) => {
      if (!isWebhookEventType(v)) details[`event_types.${i}`] = [`Unknown event type "${v}"; GET /v1/webhook-subscriptions/options lists them.`];
    });
    if (Object.keys(details).length > 0) throw ERRORS.validation(details);
    return [...new Set(values)];
  }

  /** Resolves filter handles to internal ids (a handle the subscription already had stays, even if its target was deleted since). */
  private async resolveFilters(caller: Caller, input: FilterInput[], existing: StoredFilter[] = []): Promise<StoredFilter[]> {
    const details: ErrorDetails = {};
    const stored: StoredFilter[] = [];
    for (const [i, f] of input.entries()) {
      const value = String(f.value).trim();
      if (f.type === 'book') {
        const [book] = await this.db.select({ id: books.id, randomId: books.randomId }).from(books).where(and(eq(books.workspaceId, caller.workspaceId), eq(books.randomId, value)));
        const kept = existing.find((e) => e.type === 'book' && e.book === value);
        if (book) stored.push({ type: 'book', id: book.id, book: book.randomId });
        else if (kept) stored.push(kept);
        else details[`filters.${i}.value`] = ['No book of this workspace has this id (its random_id).'];
        continue;
      }
      const byId = /^\d+$/.test(value) ? Number(value) : null;
      const conditions = [eq(trackedLinks.workspaceId, caller.workspaceId)];
      if (byId !== null && !f.book_id) conditions.push(eq(trackedLinks.id, byId));
      else if (f.book_id) conditions.push(eq(trackedLinks.slug, value), eq(books.randomId, f.book_id));
      else {
        details[`filters.${i}.book_id`] = ["A tracked link is named by its id, or by its slug with its book's book_id."];
        continue;
      }
      const [link] = await this.db.select({ id: trackedLinks.id, book: books.randomId }).from(trackedLinks).innerJoin(books, eq(books.id, trackedLinks.bookId)).where(and(...conditions));
      const kept = existing.find((e) => e.type === 'tracked_link' && (e.id === byId || (f.book_id === e.book && byId !== null && e.id === byId)));
      if (link) stored.push({ type: 'tracked_link', id: link.id, book: link.book });
      else if (kept) stored.push(kept);
      else details[`filters.${i}.value`] = ['No tracked link of this workspace matches.'];
    }
    if (Object.keys(details).length > 0) throw ERRORS.validation(details);
    const unique = new Map(stored.map((s) => [`${s.type}:${s.id}`, s]));
    return [...unique.values()];
  }

  async create(caller: Caller, input: Required<Pick<SubscriptionInput, 'name' | 'target_url' | 'event_types'>> & SubscriptionInput): Promise<{ record: SubscriptionRecord; secret: string }> {
    const targetUrl = await this.checkUrl(input.target_url, 'target_url');
    const eventTypes = this.checkEventTypes(input.event_types);
    const filters = await this.resolveFilters(caller, input.filters ?? []);
    const [{ count } = { count: 0 }] = await this.db.select({ count: sql<number>`count(*)::int` }).from(webhookSubscriptions)
      .where(and(eq(webhookSubscriptions.workspaceId, caller.workspaceId), isNull(webhookSubscriptions.deletedAt)));
    if (count >= MAX_SUBSCRIPTIONS) throw ERRORS.conflict(`A workspace has at most ${MAX_SUBSCRIPTIONS} webhook subscriptions; delete one first.`);
    const secret = newSigningSecret();
    const [row] = await this.db.insert(webhookSubscriptions).values({
      workspaceId: caller.workspaceId, name: input.name.trim(), provider: input.provider ?? 'standard', targetUrl, eventTypes, filters,
      secretEncrypted: this.box.seal(secret), isActive: input.is_active ?? true,
    }).returning();
    return { record: await this.record(row!), secret };
  }

  async update(caller: Caller, id: number, input: SubscriptionInput): Promise<SubscriptionRecord> {
    const current = await this.find(caller, id);
    const changes: Partial<typeof webhookSubscriptions.$inferInsert> = { updatedAt: new Date() };
    if (input.name !== undefined) changes.name = input.name.trim();
    if (input.target_url !== undefined) changes.targetUrl = await this.checkUrl(input.target_url, 'target_url');
    if (input.event_types !== undefined) changes.eventTypes = this.checkEventTypes(input.event_types);
    if (input.filters !== undefined) changes.filters = await this.resolveFilters(caller, input.filters, current.filters);
    if (input.provider !== undefined) changes.provider = input.provider;
    if (input.is_active !== undefined && input.is_active !== current.isActive) {
      Object.assign(changes, input.is_active ? { isActive: true, deactivatedReason: null, deactivatedAt: null, failingSince: null } : { isActive: false, deactivatedReason: null, deactivatedAt: new Date() });
    }
    const [row] = await this.db.update(webhookSubscriptions).set(changes).where(eq(webhookSubscriptions.id, current.id)).returning();
    return this.record(row!);
  }

  async enable(caller: Caller, id: number): Promise<SubscriptionRecord> {
    return this.update(caller, id, { is_active: true });
  }

  /** Soft delete: the subscription stops, its delivery history stays listable through its id. */
  async delete(caller: Caller, id: number): Promise<SubscriptionRecord> {
    const current = await this.find(caller, id);
    const row = await this.db.transaction(async (tx) => {
      const [updated] = await tx.update(webhookSubscriptions).set({ deletedAt: new Date(), isActive: false, updatedAt: new Date() }).where(eq(webhookSubscriptions.id, current.id)).returning();
      await abandonPending(tx, current.id, 'The subscription was deleted.');
      return updated!;
    });
    return this.record(row);
  }

  /** A new secret, shown once; the old one still signs (as a second signature) for 24 hours. */
  async rotateSecret(caller: Caller, id: number): Promise<{ record: SubscriptionRecord; secret: string }> {
    const current = await this.find(caller, id);
    const secret = newSigningSecret();
    const [row] = await this.db.update(webhookSubscriptions).set({
      secretEncrypted: this.box.seal(secret), previousSecretEncrypted: current.secretEncrypted,
      previousSecretExpiresAt: new Date(Date.now() + PREVIOUS_SECRET_GRACE_MS), updatedAt: new Date(),
    }).where(eq(webhookSubscriptions.id, current.id)).returning();
    return { record: await this.record(row!), secret };
  }

  // ---- options and samples -------------------------------------------------

  async options(caller: Caller) {
    const bookRows = await this.db.select({ id: books.randomId, name: books.name }).from(books).where(eq(books.workspaceId, caller.workspaceId)).orderBy(books.name).limit(1000);
    const linkRows = await this.db.select({ id: trackedLinks.id, slug: trackedLinks.slug, name: trackedLinks.name, book: books.randomId })
      .from(trackedLinks).innerJoin(books, eq(books.id, trackedLinks.bookId)).where(eq(trackedLinks.workspaceId, caller.workspaceId)).orderBy(trackedLinks.name).limit(1000);
    return {
      books: bookRows.map((b) => ({ label: b.name, value: b.id })),
      event_types: WEBHOOK_EVENT_TYPES.map((value) => ({ label: EVENT_LABELS[value], value })),
      providers: PROVIDERS.map((p) => ({ label: p.label, value: p.value })),
      tracked_links: linkRows.map((l) => ({ label: l.name, value: l.slug, id: l.id, book_id: l.book })),
    };
  }

  /** Up to three recent real payloads per type (envelopes), or the documented example where the workspace has none. */
  async sampleEvents(caller: Caller, types: string[]): Promise<{ data: WebhookEnvelope[]; meta: { examples: string[] } }> {
    const wanted = types.length > 0 ? types : [...WEBHOOK_EVENT_TYPES];
    const unknown = wanted.filter((t) => !isWebhookEventType(t));
    if (unknown.length > 0) throw ERRORS.validation({ event_types: [`Unknown event types: ${unknown.join(', ')}.`] });
    const data: WebhookEnvelope[] = [];
    const examples: string[] = [];
    for (const type of new Set(wanted)) {
      const events = await recentEvents(this.db, caller.workspaceId, type, 3);
      if (events.length > 0) data.push(...events.map((e) => e.envelope));
      else {
        examples.push(type);
        data.push({ type, timestamp: new Date().toISOString(), data: exampleData(type as WebhookEventType) });
      }
    }
    return { data, meta: { examples } };
  }

  // ---- deliveries ------------------------------------------------------------

  async deliveries(caller: Caller, subscriptionId: number, query: { cursor?: string; limit: number; status?: string; event_type?: string }) {
    const subscription = await this.find(caller, subscriptionId, { includeDeleted: true });
    const cursor = decodeCursor(DELIVERIES_NEWEST_FIRST, query.cursor);
    const rows = await this.db.select().from(webhookDeliveries).where(and(
      eq(webhookDeliveries.subscriptionId, subscription.id),
      query.status ? eq(webhookDeliveries.status, query.status) : undefined,
      query.event_type ? eq(webhookDeliveries.eventType, query.event_type) : undefined,
      afterCursor(DELIVERIES_NEWEST_FIRST, cursor),
    )).orderBy(...orderOf(DELIVERIES_NEWEST_FIRST)).limit(query.limit + 1);
    const page = toPage(DELIVERIES_NEWEST_FIRST, rows, query.limit, (r) => r.id);
    return { data: page.rows.map(deliveryRecord), meta: { ...page.meta, subscription_deleted: subscription.deletedAt !== null } };
  }

  private async findDelivery(caller: Caller, subscriptionId: number, deliveryId: number): Promise<WebhookDeliveryRow> {
    const subscription = await this.find(caller, subscriptionId, { includeDeleted: true });
    const [row] = await this.db.select().from(webhookDeliveries).where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.subscriptionId, subscription.id)));
    if (!row) throw ERRORS.notFound('Webhook delivery');
    return row;
  }

  async delivery(caller: Caller, subscriptionId: number, deliveryId: number) {
    const row = await this.findDelivery(caller, subscriptionId, deliveryId);
    const attempts = await this.db.select().from(webhookDeliveryAttempts).where(eq(webhookDeliveryAttempts.deliveryId, row.id)).orderBy(webhookDeliveryAttempts.attempt, webhookDeliveryAttempts.id);
    return {
      ...deliveryRecord(row),
      attempt_log: attempts.map((a) => ({
        attempt: a.attempt, outcome: a.outcome, response_status: a.responseStatus, response_body: a.responseBody,
        error_message: a.errorMessage, duration_ms: a.durationMs, attempted_at: a.attemptedAt.toISOString(),
      })),
    };
  }

  /** Sends one past delivery again, as it was (same webhook-id and body), with a fresh retry schedule. */
  async redeliver(caller: Caller, subscriptionId: number, deliveryId: number): Promise<DeliveryRecord> {
    const subscription = await this.find(caller, subscriptionId);
    if (!subscription.isActive) throw ERRORS.conflict('The subscription is not active; enable it first (POST /v1/webhook-subscriptions/{subscription}/enable).');
    const current = await this.findDelivery(caller, subscriptionId, deliveryId);
    const [row] = await this.db.update(webhookDeliveries).set({ status: 'pending', scheduleStep: 0, nextAttemptAt: new Date(), lockedUntil: null })
      .where(and(eq(webhookDeliveries.id, current.id), or(eq(webhookDeliveries.status, 'succeeded'), eq(webhookDeliveries.status, 'failed')))).returning();
    if (!row) throw ERRORS.conflict('The delivery is still pending: it will be attempted at next_attempt_at.');
    this.wake();
    return deliveryRecord(row);
  }

  /** Queues a test event (the documented example of the type) for the subscription; answers the delivery. */
  async test(caller: Caller, subscriptionId: number, eventType?: string): Promise<DeliveryRecord> {
    const subscription = await this.find(caller, subscriptionId);
    if (!subscription.isActive) throw ERRORS.conflict('The subscription is not active; enable it first (POST /v1/webhook-subscriptions/{subscription}/enable).');
    const type = eventType ?? subscription.eventTypes[0] ?? TEST_EVENT_TYPE;
    if (type !== TEST_EVENT_TYPE && !isWebhookEventType(type)) throw ERRORS.validation({ event_type: [`Unknown event type "${type}".`] });
    const envelope: WebhookEnvelope = { type, timestamp: new Date().toISOString(), data: exampleData(type as WebhookEventType) };
    const row = await this.db.transaction(async (tx) => {
      const [inserted] = await tx.insert(webhookDeliveries).values({
        workspaceId: caller.workspaceId, subscriptionId: subscription.id, eventId: `evt_test_${randomBytes(12).toString('base64url')}`, eventType: type,
        payload: renderBody(subscription.provider, envelope), status: 'pending', nextAttemptAt: new Date(),
      }).returning();
      await tx.update(webhookSubscriptions).set({ deliveriesCount: sql`${webhookSubscriptions.deliveriesCount} + 1` }).where(eq(webhookSubscriptions.id, subscription.id));
      return inserted!;
    });
    this.wake();
    return deliveryRecord(row);
  }

  /** POST /webhooks: one unsigned sample event sent now to a URL, without a subscription; a failed delivery is a 502. */
  async dispatchSample(input: { event: string; url: string; payload?: unknown[] }) {
    const url = await this.checkUrl(input.url, 'url');
    const envelope: WebhookEnvelope = { type: input.event, timestamp: new Date().toISOString(), data: input.payload ?? exampleData(input.event as WebhookEventType) };
    const body = JSON.stringify(envelope);
    const at = new Date();
    const outcome = await sendOnce(this.outbound, url, body, { 'webhook-id': `evt_sample_${randomBytes(12).toString('base64url')}`, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)) });
    if (!outcome.ok) {
      const details: ErrorDetails = { target_url: [url], reason: [outcome.error ?? 'The delivery failed.'] };
      if (outcome.status !== null) details.response_status = [String(outcome.status)];
      throw new AppError(502, 'BadGatewayException', `The sample event could not be delivered: ${outcome.error ?? 'the request failed.'}`, details);
    }
    return {
      data: { event: input.event, message: `Delivered: the endpoint answered ${outcome.status}.`, payload: envelope, target_url: url },
      meta: { response_status: outcome.status },
    };
  }

  /** Retention: finished deliveries older than the cutoff go (their attempts with them), in batches. */
  async purgeDeliveries(olderThan: Date, batch = 5000): Promise<number> {
    let removed = 0;
    for (;;) {
      const ids = await this.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries)
        .where(and(lt(webhookDeliveries.createdAt, olderThan), inArray(webhookDeliveries.status, ['succeeded', 'failed']))).orderBy(desc(webhookDeliveries.createdAt)).limit(batch);
      if (ids.length === 0) return removed;
      await this.db.delete(webhookDeliveries).where(inArray(webhookDeliveries.id, ids.map((r) => r.id)));
      removed += ids.length;
      if (ids.length < batch) return removed;
    }
  }
}
