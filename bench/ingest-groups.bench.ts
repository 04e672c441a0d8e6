/**
 * npm run bench:ingest-groups — what grouping saves per batch: groups of 1,
 * 5, 25, 100 and 200 concurrent batches (10 page segments each, distinct
 * sessions) handed to ReaderEventsService.ingest in one event-loop turn, so
 * each round is one group; prints the wall time per group and per batch and
 * the service's CPU per batch. No HTTP: the database side of ingestion alone.
 * PGlite by default; DATABASE_URL for PostgreSQL (a scratch database).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import os from 'node:os';
import { insertBook } from '../test/factories.ts';
import { startService } from '../test/helpers.ts';

const svc = await startService({ worker: false });
process.stdout.write(`${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at start\n`);
const ws = await svc.workspace();
const book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 40 });
const events = svc.runtime.services.readerEvents;
const origin = { book: { id: book.id, workspaceId: ws.id, pageCount: 40 }, viewerEmail: null, ip: '10.0.0.1' };
const sessions = Array.from({ length: 200 }, () => randomUUID());
let seq = 0;
const batch = (session: string) => ({
  session_id: session,
  events: Array.from({ length: 10 }, (_, i) => ({ seq: seq++, type: 'page_segment_completed' as const, page: 1 + (i % 40), active_ms: 1000 })),
});
for (const size of [1, 5, 25, 100, 200]) {
  const rounds = Math.max(4, Math.round(400 / size));
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let r = 0; r < rounds; r++) await Promise.all(sessions.slice(0, size).map((s) => events.ingest(origin, batch(s) as unknown as Parameters<typeof events.ingest>[1])));
  const ms = (performance.now() - started) / rounds;
  const used = process.cpuUsage(cpu);
  process.stdout.write(`${String(size).padStart(3)} batches at once: ${ms.toFixed(1)} ms per round, ${(ms / size).toFixed(2)} ms per batch; service CPU ${((used.user + used.system) / 1000 / rounds / size).toFixed(2)} ms per batch\n`);
}
if (process.env.DATABASE_URL) {
  // How many visit updates stayed heap-only (no index entries written): what an index covering an updated column costs.
  await new Promise((resolve) => setTimeout(resolve, 2000)); // each pooled backend publishes its counts within a second of going idle
  const [hot] = ((await svc.runtime.database.db.execute(sql`select n_tup_upd::int as updates, n_tup_hot_upd::int as hot from pg_stat_user_tables where relname = 'view_events'`)) as unknown as { rows: { updates: number; hot: number }[] }).rows;
  process.stdout.write(`view_events updates: ${hot!.updates}, heap-only (HOT) ${hot!.hot} (${Math.round((100 * hot!.hot) / Math.max(1, hot!.updates))}%)\n`);
}
process.stdout.write(`groups ${JSON.stringify(events.groupStats())}; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at the end\n`);
await svc.stop();
