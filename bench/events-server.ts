/**
 * Peer of bench/events.bench.ts: the real service (the test harness's
 * startService: runtime as `flipbook serve`, API only) with TRUST_PROXY on,
 * one published book, printing `{ url, book }` as one JSON line when ready.
 * On a "count" line on stdin it prints the stored row counts; on "stop" it
 * stops. PostgreSQL when DATABASE_URL is set, else embedded PGlite.
 */
import { count, eq } from 'drizzle-orm';
import { createInterface } from 'node:readline';
import { auditEvents, interactionEvents, viewEvents } from '../src/modules/analytics/analytics.tables.ts';
import { insertBook } from '../test/factories.ts';
import { startService } from '../test/helpers.ts';

export const BENCH_PAGES = 40;

const svc = await startService({ worker: false, env: { TRUST_PROXY: true, RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: 0 } });
const ws = await svc.workspace();
const book = await insertBook(svc, ws.id, { status: 'publish', pageCount: BENCH_PAGES });
const db = svc.runtime.database.db;
process.stdout.write(`${JSON.stringify({ url: svc.url, book: book.randomId, pages: BENCH_PAGES })}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'count') {
    const [[interactions], [views], [audits]] = await Promise.all([
      db.select({ n: count() }).from(interactionEvents).where(eq(interactionEvents.bookId, book.id)),
      db.select({ n: count() }).from(viewEvents).where(eq(viewEvents.bookId, book.id)),
      db.select({ n: count() }).from(auditEvents).where(eq(auditEvents.bookId, book.id)),
    ]);
    process.stdout.write(`${JSON.stringify({ interactions: interactions!.n, views: views!.n, audits: audits!.n })}\n`);
  } else if (line === 'stop') {
    break;
  }
}
await svc.stop();
process.exit(0);
