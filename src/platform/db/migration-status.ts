/**
 * Whether the database's schema is the one this code was built for: the
 * migrations in drizzle/ that the database has not applied yet, and whether a
 * process is applying them now (it holds the migration lock, database.ts).
 * Readiness answers 503 until both are clear, so a load balancer sends no
 * traffic to a process whose queries would meet an old schema.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { MIGRATION_LOCK, MIGRATIONS_DIR, type Database } from './database.ts';

export interface MigrationStatus {
  /** Migrations of this code the database has not applied. */
  pending: number;
  /** Another process holds the migration lock (PostgreSQL only). */
  running: boolean;
}

let journal: Promise<number[]> | null = null;
/** The `when` of every migration in drizzle/meta/_journal.json (what drizzle stores as created_at). */
function migrationTimes(): Promise<number[]> {
  journal ??= readFile(path.join(MIGRATIONS_DIR, 'meta', '_journal.json'), 'utf8').then((text) => (JSON.parse(text) as { entries: { when: number }[] }).entries.map((e) => e.when));
  return journal;
}

export async function migrationStatus(database: Database): Promise<MigrationStatus> {
  const times = await migrationTimes();
  let last = 0;
  try {
    const { rows } = await database.runner.executeSql('select coalesce(max(created_at), 0)::text as last from drizzle.__drizzle_migrations');
    last = Number((rows[0] as { last: string }).last);
  } catch (error) {
    // No migration table yet: nothing applied (the first start is migrating it).
    if (!/does not exist/.test((error as Error).message)) throw error;
  }
  const pending = times.filter((when) => when > last).length;
  let running = false;
  if (database.kind === 'postgres') {
    const { rows } = await database.runner.executeSql(`select exists (select 1 from pg_locks where locktype = 'advisory' and objid = ${MIGRATION_LOCK} and granted) as running`);
    running = Boolean((rows[0] as { running: boolean }).running);
  }
  return { pending, running };
}
