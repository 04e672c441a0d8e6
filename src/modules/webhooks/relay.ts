/**
 * The relay: turns new events of the three streams into delivery rows, one
 * per (event, matching subscription), in the background, so neither the
 * writers of domain events nor the reader's event endpoint do any webhook work.
 *
 * Each stream is read by id after a stored position; the deliveries and the
 * new position are written in one transaction (a crash repeats a step, and
 * the unique (subscription, event) key makes the repeat harmless). Ids are
 * allocated before their transactions commit, so a lower id can become
 * visible after a higher one: an id missing when the relay passes it is kept
 * as a gap, with the snapshot's xmax, and looked at again until every
 * transaction that could hold it has ended (pg_snapshot_xmin moved past that
 * xmax) and a second has passed. Rolled-back inserts and ON CONFLICT DO
 * NOTHING burn ids too; those gaps simply expire that way.
 *
 * In a worker process the relay hands the deliveries it just created straight
 * to its dispatcher (as many as the dispatcher has room for), leased in the
 * insert itself: a first attempt costs no separate claim, and reaches the
 * receiver as soon as the transaction committed. The rest wait unleased for
 * the dispatcher's claim, as before.
 */
import { sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../platform/db/database.ts';
import { renderBody } from './providers.ts';
import { STREAMS, rowsOf, type StreamDefinition, type StreamName, type WebhookEvent } from './streams.ts';
import { webhookRelayPositions, type StoredFilter } from './webhooks.tables.ts';

export interface ActiveSubscription {
  id: number;
  workspaceId: number;
  provider: string;
  eventTypes: Set<string>;
  filters: StoredFilter[];
  /** What a dispatcher needs to send (for deliveries handed over at insert). */
  targetUrl?: string;
  secretEncrypted?: string;
  previousSecretEncrypted?: string | null;
  previousSecretExpiresAt?: Date | string | null;
}

/** A delivery created leased, ready to send: the row as the dispatcher's claim would have read it. */
export interface LeasedDelivery {
  id: number;
  subscription_id: number;
  event_id: string;
  payload: string;
  attempts: number;
  schedule_step: number;
  target_url: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | string | null;
  /** When the lease taken for this process ends (ms). */
  leased_until: number;
}

/** The dispatcher of this process, taking new deliveries at insert. */
export interface DeliveryHandoff {
  /** How many more deliveries of this subscription it takes now. */
  room(subscriptionId: number): number;
  /** How long a delivery handed over stays leased. */
  leaseMs: number;
  /** Called after the transaction that created them committed. */
  accept(deliveries: LeasedDelivery[]): void;
}

const WINDOW = 2000;
const GAP_MIN_AGE_MS = 1000;

export function matches(subscription: ActiveSubscription, event: WebhookEvent): boolean {
  if (subscription.workspaceId !== event.workspaceId || !subscription.eventTypes.has(event.type)) return false;
  if (subscription.filters.length === 0) return true;
  return subscription.filters.some((f) => (f.type === 'book' ? f.book === event.bookHandle : f.id === event.trackedLinkId));
}

interface Gap {
  id: number;
  xmax: string;
  at: number;
}

export class WebhookRelay {
  private readonly db: Db;
  private readonly now: () => number;
  /** Set by the worker: its dispatcher. */
  handoff: DeliveryHandoff | null = null;
  /** Streams whose position row this relay has seen committed (it is never removed), and seen in the pass under way. */
  private readonly positioned = new Set<StreamName>();
  private readonly seenThisPass = new Set<StreamName>();

  constructor(deps: { db: Db; now?: () => number }) {
    this.db = deps.db;
    this.now = deps.now ?? Date.now;
  }

  private async activeSubscriptions(tx: DbOrTx): Promise<ActiveSubscription[]> {
    const rows = rowsOf<{
      id: number; workspace_id: number; provider: string; event_types: string[]; filters: StoredFilter[];
      target_url: string; secret_encrypted: string; previous_secret_encrypted: string | null; previous_secret_expires_at: Date | string | null;
    }>(await tx.execute(sql`
      select id, workspace_id, provider, event_types, filters, target_url, secret_encrypted, previous_secret_encrypted, previous_secret_expires_at
      from webhook_subscriptions where is_active and deleted_at is null`));
    return rows.map((r) => ({
      id: Number(r.id), workspaceId: Number(r.workspace_id), provider: r.provider, eventTypes: new Set(r.event_types), filters: r.filters ?? [],
      targetUrl: r.target_url, secretEncrypted: r.secret_encrypted, previousSecretEncrypted: r.previous_secret_encrypted, previousSecretExpiresAt: r.previous_secret_expires_at,
    }));
  }

  /**
   * One pass over every stream, in one transaction (on PGlite's single connection, one turn in its queue rather than one
   * per stream); answers how many deliveries it created, how many of them it handed over, and whether a stream has more.
   */
  async tick(): Promise<{ created: number; leased: number; more: boolean }> {
    this.seenThisPass.clear();
    const { created, leased, more } = await this.db.transaction(async (tx) => {
      const subscriptions = await this.activeSubscriptions(tx);
      const pass = { created: 0, leased: [] as LeasedDelivery[], more: false };
      for (const stream of Object.values(STREAMS)) {
        const wanted = subscriptions.filter((s) => stream.types.some((t) => s.eventTypes.has(t)));
        const result = await this.step(tx, stream, wanted);
        pass.created += result.created;
        pass.leased.push(...result.leased);
        pass.more ||= result.more;
      }
      return pass;
    });
    // Committed: the leased rows are this process's to send, and the position rows exist.
    for (const name of this.seenThisPass) this.positioned.add(name);
    if (leased.length > 0) this.handoff?.accept(leased);
    return { created, leased: leased.length, more };
  }

  private async step(tx: DbOrTx, stream: StreamDefinition, subscriptions: ActiveSubscription[]): Promise<{ created: number; leased: LeasedDelivery[]; more: boolean }> {
    const none = { created: 0, leased: [] as LeasedDelivery[], more: false };
    if (subscriptions.length === 0 && this.positioned.has(stream.name)) {
      // Nobody listens: move to the end in one statement (the position row exists: made by an earlier step).
      await tx.execute(sql`update webhook_relay_positions p set position = greatest(p.position, e.top), gaps = '[]'::jsonb, updated_at = ${new Date(this.now())}
        from (select coalesce(max(id), 0) as top from ${sql.raw(stream.table)}) e
        where p.stream = ${stream.name} and (e.top > p.position or p.gaps <> '[]'::jsonb)`);
      return none;
    }
    const position = await this.lockPosition(tx, stream);
    if (!position) return none;
    if (subscriptions.length === 0) {
      // Nobody listens: move to the end; nothing before it will ever be wanted.
      const [top] = rowsOf<{ top: string | number | null }>(await tx.execute(sql`select max(id) as top from ${sql.raw(stream.table)}`));
      const end = Number(top?.top ?? 0);
      if (end !== position.position || position.gaps.length > 0) await this.savePosition(tx, stream.name, Math.max(end, position.position), []);
      return none;
    }
    const gapIds = position.gaps.map((g) => g.id);
    const rows = rowsOf(await tx.execute(stream.select(sql`e.id > ${position.position}`, WINDOW)));
    const filled = gapIds.length > 0 ? rowsOf(await tx.execute(stream.select(sql`e.id = any(${`{${gapIds.join(',')}}`}::bigint[])`, gapIds.length))) : [];
    const [snapshot] = rowsOf<{ xmin: string; xmax: string }>(await tx.execute(sql`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin, pg_snapshot_xmax(pg_current_snapshot())::text as xmax`));
    const now = this.now();

    const seen = new Set<number>([...rows, ...filled].map((r) => Number(r.id)));
    const top = rows.length > 0 ? Number(rows[rows.length - 1]!.id) : position.position;
    const gaps: Gap[] = position.gaps.filter((g) => !seen.has(g.id) && !(BigInt(snapshot!.xmin) > BigInt(g.xmax) && now - g.at >= GAP_MIN_AGE_MS));
    for (let id = Math.max(position.position + 1, top - 100_000); id < top; id++) if (!seen.has(id)) gaps.push({ id, xmax: snapshot!.xmax, at: now });

    const events = [...filled, ...rows].map((r) => stream.toEvent(r)).filter((e): e is WebhookEvent => e !== null);
    const { created, leased } = await createDeliveries(tx, subscriptions, events, new Date(now), this.handoff ?? undefined);
    // Nothing new and no gap settled: the stored position stands (no write on an idle pass).
    if (top !== position.position || gaps.length !== position.gaps.length) await this.savePosition(tx, stream.name, top, gaps.slice(-50_000));
    return { created, leased, more: rows.length === WINDOW };
  }

  private async lockPosition(tx: DbOrTx, stream: StreamDefinition): Promise<{ position: number; gaps: Gap[] } | null> {
    // Starts at the end of the stream: a new installation does not deliver history. Once seen, the row stays.
    if (!this.positioned.has(stream.name)) {
      await tx.execute(sql`insert into webhook_relay_positions (stream, position)
        select ${stream.name}, coalesce(max(id), 0) from ${sql.raw(stream.table)} on conflict (stream) do nothing`);
    }
    // Another worker process relaying this stream now: let it.
    const [row] = rowsOf<{ position: string | number; gaps: Gap[] }>(await tx.execute(sql`select position, gaps from webhook_relay_positions where stream = ${stream.name} for update skip locked`));
    if (row) this.seenThisPass.add(stream.name);
    return row ? { position: Number(row.position), gaps: row.gaps ?? [] } : null;
  }

  private async savePosition(tx: DbOrTx, stream: StreamName, position: number, gaps: Gap[]): Promise<void> {
    await tx.update(webhookRelayPositions).set({ position, gaps, updatedAt: new Date(this.now()) }).where(sql`${webhookRelayPositions.stream} = ${stream}`);
  }
}

/**
 * Delivery rows for every (event, matching subscription); an existing pair is left alone. Answers how many were new,
 * and the new ones created leased for `handoff` (up to its room per subscription), to hand over once committed.
 * One statement per 1,000 rows: the insert and the subscriptions' counters together.
 */
export async function createDeliveries(tx: DbOrTx, subscriptions: ActiveSubscription[], events: WebhookEvent[], nextAttemptAt = new Date(), handoff?: DeliveryHandoff): Promise<{ created: number; leased: LeasedDelivery[] }> {
  interface Value { workspace_id: number; subscription_id: number; event_id: string; event_type: string; payload: string; leased: boolean }
  const values: Value[] = [];
  const room = new Map<number, number>();
  const byId = new Map(subscriptions.map((s) => [s.id, s]));
  for (const event of events) {
    let standard: string | null = null;
    for (const subscription of subscriptions) {
      if (!matches(subscription, event)) continue;
      const payload = subscription.provider === 'standard' ? (standard ??= renderBody('standard', event.envelope)) : renderBody(subscription.provider, event.envelope);
      let leased = false;
      if (handoff && subscription.targetUrl && subscription.secretEncrypted) {
        const left = room.get(subscription.id) ?? handoff.room(subscription.id);
        leased = left > 0;
        room.set(subscription.id, left - 1);
      }
      values.push({ workspace_id: event.workspaceId, subscription_id: subscription.id, event_id: event.eventId, event_type: event.type, payload, leased });
    }
  }
  let created = 0;
  const leased: LeasedDelivery[] = [];
  const leaseUntil = new Date(nextAttemptAt.getTime() + (handoff?.leaseMs ?? 0));
  for (let i = 0; i < values.length; i += 1000) {
    const chunk = values.slice(i, i + 1000);
    const inserted = rowsOf<{ id: string | number; subscription_id: number; event_id: string; leased: boolean }>(await tx.execute(sql`
      with v as (
        select * from jsonb_to_recordset(${JSON.stringify(chunk)}::jsonb)
          as v(workspace_id int, subscription_id int, event_id text, event_type text, payload text, leased boolean)
      ), inserted as (
        insert into webhook_deliveries (workspace_id, subscription_id, event_id, event_type, payload, status, next_attempt_at, locked_until)
        select workspace_id, subscription_id, event_id, event_type, payload, 'pending', ${nextAttemptAt}, case when leased then ${leaseUntil}::timestamptz end from v
        on conflict (subscription_id, event_id) do nothing
        returning id, subscription_id, event_id, locked_until is not null as leased
      ), counted as (
        update webhook_subscriptions s set deliveries_count = s.deliveries_count + c.n
        from (select subscription_id, count(*) as n from inserted group by subscription_id) c where s.id = c.subscription_id
      )
      select * from inserted`));
    created += inserted.length;
    const payloads = new Map(chunk.map((v) => [`${v.subscription_id} ${v.event_id}`, v.payload]));
    for (const row of inserted) {
      if (!row.leased) continue;
      const subscription = byId.get(Number(row.subscription_id))!;
      leased.push({
        id: Number(row.id), subscription_id: subscription.id, event_id: row.event_id, payload: payloads.get(`${subscription.id} ${row.event_id}`)!,
        attempts: 0, schedule_step: 0, target_url: subscription.targetUrl!, secret_encrypted: subscription.secretEncrypted!,
        previous_secret_encrypted: subscription.previousSecretEncrypted ?? null, previous_secret_expires_at: subscription.previousSecretExpiresAt ?? null,
        leased_until: leaseUntil.getTime(),
      });
    }
  }
  return { created, leased };
}
