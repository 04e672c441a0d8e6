/**
 * The workspace's audit trail of people and keys (who made, rotated or
 * revoked a key; who invited, promoted or removed whom). Written in the same
 * transaction as the change it records, when there is one.
 */
import { and, desc, eq, lt } from 'drizzle-orm';
import type { Db } from '../../platform/db/database.ts';
import { workspaceAuditEvents } from './workspaces.tables.ts';

/** Who acted: a person in the application, a key through the API, or the operator's CLI. */
export type Actor =
  | { type: 'user'; userId: number; label: string }
  | { type: 'api_key'; keyId: number; label: string }
  | { type: 'operator' };

export const OPERATOR: Actor = { type: 'operator' };

export interface AuditEntry {
  action: string;
  targetType: 'api_key' | 'member' | 'invitation' | 'workspace';
  targetId: string | number;
  metadata?: Record<string, unknown>;
}

export interface AuditEventView {
  id: number;
  actor: { type: string; id: number | null; label: string };
  action: string;
  target_type: string;
  target_id: string;
  metadata: Record<string, unknown>;
  created_at: string;
}

type Executor = Pick<Db, 'insert'>;

export async function recordAudit(db: Executor, workspaceId: number, actor: Actor, entry: AuditEntry): Promise<void> {
  await db.insert(workspaceAuditEvents).values({
    workspaceId,
    actorType: actor.type,
    actorUserId: actor.type === 'user' ? actor.userId : null,
    actorKeyId: actor.type === 'api_key' ? actor.keyId : null,
    actorLabel: actor.type === 'operator' ? 'operator (CLI)' : actor.label,
    action: entry.action,
    targetType: entry.targetType,
    targetId: String(entry.targetId),
    metadata: entry.metadata ?? {},
  });
}

export class AuditTrailService {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /** Newest first; `before` is the id of the last event of the previous page. */
  async list(workspaceId: number, options: { limit: number; before?: number }): Promise<{ events: AuditEventView[]; nextBefore: number | null }> {
    const rows = await this.db.select().from(workspaceAuditEvents)
      .where(and(eq(workspaceAuditEvents.workspaceId, workspaceId), options.before === undefined ? undefined : lt(workspaceAuditEvents.id, options.before)))
      .orderBy(desc(workspaceAuditEvents.id))
      .limit(options.limit + 1);
    const page = rows.slice(0, options.limit);
    return {
      events: page.map((r) => ({
        id: r.id,
        actor: { type: r.actorType, id: r.actorUserId ?? r.actorKeyId, label: r.actorLabel },
        action: r.action,
        target_type: r.targetType,
        target_id: r.targetId,
        metadata: r.metadata,
        created_at: r.createdAt.toISOString(),
      })),
      nextBefore: rows.length > options.limit ? page[page.length - 1]!.id : null,
    };
  }
}
