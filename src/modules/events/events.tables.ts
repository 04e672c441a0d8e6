import { index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import { instant } from '../../platform/db/columns.ts';

/**
 * The internal event log (an outbox): domain changes are recorded here in the
 * same transaction as the change; the webhooks area delivers them.
 */
export const domainEvents = pgTable('domain_events', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  /** Public id of the event (evt_…), stable across deliveries. */
  eventId: text('event_id').notNull(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  type: text('type').notNull(),
  payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
  occurredAt: instant('occurred_at').notNull().defaultNow(),
}, (t) => [index('domain_events_workspace_type_idx').on(t.workspaceId, t.type, t.occurredAt)]);
