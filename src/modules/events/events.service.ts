/** Records domain events in the caller's transaction, so an event exists exactly when its change does. */
import { randomBytes } from 'node:crypto';
import type { DbOrTx } from '../../platform/db/database.ts';
import { domainEvents } from './events.tables.ts';

export type DomainEventType = 'flipbook.created' | 'flipbook.updated' | 'flipbook.deleted' | 'flipbook.version_published' | 'subscriber.added';

export async function recordEvent(db: DbOrTx, workspaceId: number, type: DomainEventType, payload: Record<string, unknown>): Promise<string> {
  const eventId = `evt_${randomBytes(12).toString('base64url')}`;
  await db.insert(domainEvents).values({ eventId, workspaceId, type, payload });
  return eventId;
}
