/**
 * Peer of bench/webhooks.bench.ts: the real service (API and workers, as
 * `flipbook serve`) allowed to call 127.0.0.1, with one published book, printing
 * `{ url, book, key }` as one JSON line when ready; "stop" on stdin stops it.
 * PostgreSQL when DATABASE_URL is set, else embedded PGlite.
 */
import { createInterface } from 'node:readline';
import { webhookDeliveries } from '../src/modules/webhooks/webhooks.tables.ts';
import { insertBook } from '../test/factories.ts';
import { startService } from '../test/helpers.ts';

const svc = await startService({
  env: { TRUST_PROXY: true, RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0, RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' },
});
const ws = await svc.workspace();
const book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 40 });
process.stdout.write(`${JSON.stringify({ url: svc.url, book: book.randomId, key: ws.key })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'stop') break;
  // "backlog <subscription> <n>": n deliveries due now, written straight to the table (the dispatcher alone, no ingestion).
  const [command, subscription, n] = line.split(' ');
  // "stats": per lane of PGlite's connection, operations and their waits (null on PostgreSQL).
  if (command === 'stats') process.stdout.write(`${JSON.stringify({ lanes: svc.runtime.database.laneStats() })}\n`);
  if (command === 'backlog') {
    const now = new Date();
    for (let i = 0; i < Number(n); i += 1000) {
      await svc.runtime.database.db.insert(webhookDeliveries).values(Array.from({ length: Math.min(1000, Number(n) - i) }, (_, j) => ({
        workspaceId: ws.id, subscriptionId: Number(subscription), eventId: `evt_backlog_${i + j}`, eventType: 'page_segment_completed', status: 'pending', nextAttemptAt: now,
        payload: JSON.stringify({ type: 'page_segment_completed', timestamp: now.toISOString(), data: { occurred_at: now.toISOString(), backlog: true } }),
      })));
    }
    process.stdout.write('{"backlog":true}\n');
  }
}
await svc.stop();
process.exit(0);
