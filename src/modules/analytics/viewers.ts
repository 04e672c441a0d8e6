/** Identified readers: a workspace knows a reader only by the address they gave (access gate or a form). */
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../../platform/db/database.ts';
import { viewers } from './analytics.tables.ts';
import { rowsOf } from './analytics-sql.ts';

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

/**
 * ensureViewer for many addresses at once (already lower-case, distinct):
 * one statement creates the missing viewers and answers every id. Existing
 * rows are read, not rewritten, so a burst of a gated book's readers takes
 * no row locks. A viewer another process created after the statement's
 * snapshot (its insert skipped, its row not yet visible) is read again.
 */
export async function ensureViewers(db: DbOrTx, wanted: { workspaceId: number; email: string }[]): Promise<{ workspaceId: number; email: string; id: number }[]> {
  const read = async (query: SQL) => rowsOf<{ workspace_id: unknown; email: string; id: unknown }>(await db.execute(query))
    .map((r) => ({ workspaceId: Number(r.workspace_id), email: r.email, id: Number(r.id) }));
  const keys = (list: typeof wanted) => JSON.stringify(list.map((w) => ({ w: w.workspaceId, e: w.email })));
  const found = await read(sql`
    with k as (select * from jsonb_to_recordset(${keys(wanted)}::jsonb) as k(w int, e text)),
    made as (insert into ${viewers} (workspace_id, email) select w, e from k order by w, e on conflict (workspace_id, email) do nothing returning workspace_id, email, id)
    select workspace_id, email, id from made
    union all
    select v.workspace_id, v.email, v.id from k join ${viewers} v on v.workspace_id = k.w and v.email = k.e`);
  const answered = new Set(found.map((f) => `${f.workspaceId}:${f.email}`));
  const raced = wanted.filter((w) => !answered.has(`${w.workspaceId}:${w.email}`));
  if (raced.length === 0) return found;
  return found.concat(await read(sql`
    select v.workspace_id, v.email, v.id from jsonb_to_recordset(${keys(raced)}::jsonb) as k(w int, e text)
    join ${viewers} v on v.workspace_id = k.w and v.email = k.e`));
}
