/** Identified readers: a workspace knows a reader only by the address they gave (access gate or a form). */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../platform/db/database.ts';
import { viewers } from './analytics.tables.ts';

/** The viewer id for an address in a workspace, created on first sight. */
export async function ensureViewer(db: DbOrTx, workspaceId: number, email: string, name?: string | null): Promise<number> {
  const address = email.trim().toLowerCase();
  const [row] = await db
    .insert(viewers)
    .values({ workspaceId, email: address, name: name ?? null })
    .onConflictDoUpdate({
      target: [viewers.workspaceId, viewers.email],
      // Keep a name once known; a later form may supply it.
      set: { name: sql`coalesce(excluded.name, ${viewers.name})` },
    })
    .returning({ id: viewers.id });
  return row!.id;
}
