/**
 * npm run bench:reading-now — what "reading now" costs per open screen, to
 * decide between the short poll and a server-sent events stream by figures
 * (docs/analytics-screens.md, "Decisions"). On the embedded database and on
 * PostgreSQL (DATABASE_URL, default the local test server), with a workspace
 * of BENCH_VISITS visits (default 50,000) over the last 90 days, 2,000 of
 * them in the last day and 40 of those open now, it measures:
 *  - the poll: GET /v1/analytics/reading-now over HTTP, BENCH_REQUESTS times
 *    (default 300) one after the other, its p50/p95 and the service's CPU per
 *    request, beside GET /v1/health measured the same way in the same run
 *    (the client runs in the same process, so its share is in both);
 *  - what a stream would run per tick: the count alone (the service method,
 *    no HTTP), p50/p95 and CPU per count: an SSE stream has no change feed to
 *    wait on (the readers' batches arrive in any API process; PGlite has one
 *    connection), so it must run that count on a timer too.
 * Prints, for 100 open screens, the counts per second and the CPU share of a
 * 15 s poll and of a stream ticking every 2 s (shared per workspace).
 */
import { sql } from 'drizzle-orm';
import os from 'node:os';

const VISITS = Number(process.env.BENCH_VISITS ?? 50_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const say = (line: string) => process.stdout.write(`${line}\n`);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const postgresUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

say(`machine: ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} — other work on this shared machine skews every figure below`);
for (const kind of (process.env.BENCH_DATABASES ?? 'pglite,postgres').split(',')) {
  // The test helpers pick the database from DATABASE_URL when imported: a fresh copy for each.
  if (kind === 'postgres') process.env.DATABASE_URL = postgresUrl;
  else delete process.env.DATABASE_URL;
  const { startService } = await import(`../test/helpers.ts?${kind}`);
  const { insertBook } = await import(`../test/factories.ts?${kind}`);
  const svc = await startService({ worker: false, env: { RATE_LIMIT_WORKSPACE_PER_MINUTE: 0, RATE_LIMIT_ENDPOINT_PER_MINUTE: 0 } });
  try {
    const ws = await svc.workspace();
    const book = await insertBook(svc, ws.id, { status: 'publish', pageCount: 20 });
    const db = svc.runtime.database.db;
    await db.execute(sql`
      insert into view_events (workspace_id, book_id, session_id, reads, clicks, pages_viewed, active_ms, duration_seconds, engagement_score, recorded_at, updated_at)
      select ${ws.id}, ${book.id}, 'b-' || g, 1, 0, 3, 15000, 15, 10,
             case when g <= 2000 then now() - (g % 86000) * interval '1 second' else now() - interval '1 day' - (g % 7700000) * interval '1 second' end,
             case when g <= 40 then now() else now() - interval '1 day' end
      from generate_series(1, ${VISITS}) g`);
    await db.execute(sql`analyze view_events`);
    const request = async (path: string) => {
      const t = performance.now();
      const response = await fetch(svc.url + path, { headers: { authorization: `Bearer ${ws.key}` } });
      const body = await response.json() as { data?: { sessions?: number } };
      if (!response.ok) throw new Error(`${path}: ${response.status}`);
      return { ms: performance.now() - t, body };
    };
    const measure = async (name: string, run: () => Promise<unknown>) => {
      for (let i = 0; i < 20; i++) await run(); // warm up
      const times: number[] = [];
      const cpu = process.cpuUsage();
      for (let i = 0; i < REQUESTS; i++) {
        const t = performance.now();
        await run();
        times.push(performance.now() - t);
      }
      const used = process.cpuUsage(cpu);
      const cpuMs = (used.user + used.system) / 1000 / REQUESTS;
      say(`  ${name}: p50 ${pct(times, 50).toFixed(1)} ms, p95 ${pct(times, 95).toFixed(1)} ms, ${cpuMs.toFixed(2)} ms CPU each (this process)`);
      return { p50: pct(times, 50), cpuMs };
    };
    say(`${kind}: ${VISITS.toLocaleString('en')} visits, ${(await request('/v1/analytics/reading-now')).body.data!.sessions} open now`);
    const health = await measure('GET /v1/health (reference)', () => request('/v1/health'));
    const poll = await measure('GET /v1/analytics/reading-now (the poll)', () => request('/v1/analytics/reading-now'));
    await measure(`GET /v1/analytics/reading-now?book_id`, () => request(`/v1/analytics/reading-now?book_id=${book.randomId}`));
    const workspace = svc.runtime.services.analytics.workspace;
    const tick = await measure('the count alone, as a stream would run it per tick', () => workspace.readingNow(ws.id, {}));
    const screens = 100;
    const pollRate = screens / 15;
    const streamRate = 1 / 2;
    say(`  100 screens: poll every 15 s = ${pollRate.toFixed(1)} requests/s, ${((pollRate * (poll.cpuMs - health.cpuMs)) / 10).toFixed(2)} % of a core beyond the requests' own HTTP cost (${((pollRate * poll.cpuMs) / 10).toFixed(2)} % in all), a new reader shown within 15 s;`);
    say(`               one stream tick every 2 s per workspace = ${streamRate} counts/s, ${((streamRate * tick.cpuMs) / 10).toFixed(2)} % of a core, shown within 2 s, and 100 connections held open.`);
  } finally {
    await svc.stop();
  }
}
