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
 */
import { sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../platform/db/database.ts';
import { renderBody } from './providers.ts';
import { STREAMS, rowsOf, type StreamDefinition, type StreamName, type WebhookEvent } from './streams.ts';
import { webhookDeliveries, webhookRelayPositions, type StoredFilter } from './webhooks.tables.ts';

export interface ActiveSubscription {
  id: number;
  workspaceId: number;
  provider: string;
  eventTypes: Set<string>;
  filters: StoredFilter[];
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

  constructor(deps: { db: Db; now?: () => number }) {
    this.db = deps.db;
    this.now = deps.now ?? Date.now;
  }

  private async activeSubscriptions(): Promise<ActiveSubscription[]> {
    const rows = rowsOf<{ id: number; workspace_id: number; provider: string; event_types: string[]; filters: StoredFilter[] }>(await this.db.execute(sql`
      select id, workspace_id, provider, event_types, filters from webhook_subscriptions where is_active and deleted_at is null`));
    return rows.map((r) => ({ id: Number(r.id), workspaceId: Number(r.workspace_id), provider: r.provider, eventTypes: new Set(r.event_types), filters: r.filters ?? [] }));
  }

  /** One pass over every stream; answers how many deliveries it created (and whether a stream has more waiting). */
  async tick(): Promise<{ created: number; more: boolean }> {
    const subscriptions = await this.activeSubscriptions();
    let created = 0;
    let more = false;
    for (const stream of Object.values(STREAMS)) {
      const wanted = subscriptions.filter((s) => stream.types.some((t) => s.eventTypes.has(t)));
      const result = await this.step(stream, wanted);
      created += result.created;
      more ||= result.more;
    }
    return { created, more };
  }

  private async step(stream: StreamDefinition, subscriptions: ActiveSubscription[]): Promise<{ created: number; more: boolean }> {
    return this.db.transaction(async (tx) => {
      const position = await this.lockPosition(tx, stream);
      if (!position) return { created: 0, more: false };
      if (subscriptions.length === 0) {
        // Nobody listens: move to the end; nothing before it will ever be wanted.
        const [top] = rowsOf<{ top: string | number | null }>(await tx.execute(sql`select max(id) as top from ${sql.raw(stream.table)}`));
        const end = Number(top?.top ?? 0);
        if (end !== position.position || position.gaps.length > 0) await this.savePosition(tx, stream.name, Math.max(end, position.position), []);
        return { created: 0, more: false };
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
      const created = await createDeliveries(tx, subscriptions, events);
      await this.savePosition(tx, stream.name, top, gaps.slice(-50_000));
      return { created, more: rows.length === WINDOW };
    });
  }

  private async lockPosition(tx: DbOrTx, stream: StreamDefinition): Promise<{ position: number; gaps: Gap[] } | null> {
    // Starts at the end of the stream: a new installation does not deliver history.
    await tx.execute(sql`insert into webhook_relay_positions (stream, position)
      select ${stream.name}, coalesce(max(id), 0) from ${sql.raw(stream.table)} on conflict (stream) do nothing`);
    // Another worker process relaying this stream now: let it.
    const [row] = rowsOf<{ position: string | number; gaps: Gap[] }>(await tx.execute(sql`select position, gaps from webhook_relay_positions where stream = ${stream.name} for update skip locked`));
    return row ? { position: Number(row.position), gaps: row.gaps ?? [] } : null;
  }

  private async savePosition(tx: DbOrTx, stream: StreamName, position: number, gaps: Gap[]): Promise<void> {
    await tx.update(webhookRelayPositions).set({ position, gaps, updatedAt: new Date(this.now()) }).where(sql`${webhookRelayPositions.stream} = ${stream}`);
  }
}

/** Delivery rows for every (event, matching subscription); an existing pair is left alone. Answers how many were new. */
export async function createDeliveries(tx: DbOrTx, subscriptions: ActiveSubscription[], events: WebhookEvent[], nextAttemptAt = new Date()): Promise<number> {
  const values: (typeof webhookDeliveries.$inferInsert)[] = [];
  for (const event of events) {
    let standard: string | null = null;
    for (const subscription of subscriptions) {
      if (!matches(subscription, event)) continue;
      const payload = subscription.provider === 'standard' ? (standard ??= renderBody('standard', event.envelope)) : renderBody(subscription.provider, event.envelope);
      values.push({
        workspaceId: event.workspaceId, subscriptionId: subscription.id, eventId: event.eventId, eventType: event.type,
        payload, status: 'pending', nextAttemptAt,
      });
    }
  }
  let created = 0;
  const counts = new Map<number, number>();
  for (let i = 0; i < values.length; i += 1000) {
    const inserted = await tx.insert(webhookDeliveries).values(values.slice(i, i + 1000)).onConflictDoNothing().returning({ subscriptionId: webhookDeliveries.subscriptionId });
    created += inserted.length;
    for (const { subscriptionId } of inserted) counts.set(subscriptionId, (counts.get(subscriptionId) ?? 0) + 1);
  }
  for (const [id, count] of counts) {
    await tx.execute(sql`update webhook_subscriptions set deliveries_count = deliveries_count + ${count} where id = ${id}`);
  }
  return created;
}
