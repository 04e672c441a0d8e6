/**
 * npm run bench:events — reader event ingestion under load: READERS
 * simulated readers (default 200), each from its own address, send a batch
 * of 10 events every second (ten times the real reader's pace) for
 * BENCH_SECONDS (default 30) to a real service in another process; one batch
 * in 20 is sent twice, as a retrying reader would. Prints events accepted
 * per second and the p50/p99 latency of a batch, beside GET /v1/health (a
 * request that reaches the database) measured at the same concurrency in the
 * same run; then counts the stored rows: every acknowledged event stored
 * exactly once.
 *
 *   BENCH_SECONDS=10 READERS=100 npm run bench:events
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:events
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';

const seconds = Number(process.env.BENCH_SECONDS ?? 30);
const readers = Number(process.env.READERS ?? 200);
const intervalMs = Number(process.env.BENCH_INTERVAL_MS ?? 1000);
const EVENTS_PER_BATCH = 10;
const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

const child = spawn(process.execPath, [path.join(import.meta.dirname, 'events-server.ts')], { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
const nextLine = async (): Promise<string> => {
  const { value, done } = await lines.next();
  if (done) throw new Error('the benchmark service exited');
  return value as string;
};
const { url, book, pages } = JSON.parse(await nextLine()) as { url: string; book: string; pages: number };
process.stdout.write(`service on ${url} (${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}), ${readers} readers, a batch of ${EVENTS_PER_BATCH} events every ${intervalMs} ms each, ${seconds} s\n`);

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The same concurrency against GET /v1/health for a few seconds: the floor cost of a request that reaches the database. */
async function reference(durationMs: number): Promise<{ rps: number; p50: number; p99: number }> {
  const latencies: number[] = [];
  const end = Date.now() + durationMs;
  await Promise.all(Array.from({ length: readers }, async () => {
    while (Date.now() < end) {
      const started = performance.now();
      const response = await fetch(`${url}/v1/health`);
      await response.arrayBuffer();
      latencies.push(performance.now() - started);
    }
  }));
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / (durationMs / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

process.stdout.write('warming up…\n');
await reference(2000);
process.stdout.write('reference: GET /v1/health at the same concurrency, 5 s…\n');
const health = await reference(5000);

const stats = { batches: 0, sentEvents: 0, acknowledged: 0, storedReported: 0, duplicatesSent: 0, refused: 0, failed: 0 };
const latencies: number[] = [];
const started = Date.now();
const end = started + seconds * 1000;

async function send(body: string, ip: string): Promise<{ status: number; stored: number }> {
  const t0 = performance.now();
  try {
    const response = await fetch(`${url}/read/${book}/events`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': USER_AGENT, 'x-forwarded-for': ip },
      body,
    });
    const json = (await response.json()) as { stored?: number };
    latencies.push(performance.now() - t0);
    return { status: response.status, stored: json.stored ?? 0 };
  } catch {
    stats.failed++;
    return { status: 0, stored: 0 };
  }
}

async function reader(index: number): Promise<void> {
  const session = randomUUID();
  const ip = `81.${(index >> 8) & 255}.${index & 255}.${1 + (index % 250)}`;
  let seq = 0;
  let page = 1;
  let activeMs = 0;
  // Spread the readers' first batches over one interval.
  await sleep(Math.random() * intervalMs);
  while (Date.now() < end) {
    const tick = Date.now();
    const events: Record<string, unknown>[] = [];
    if (seq === 0) events.push({ seq: seq++, type: 'session_started', page: 1 });
    while (events.length < EVENTS_PER_BATCH) {
      const ms = 500 + Math.floor(Math.random() * 4000);
      activeMs += ms;
      events.push({ seq: seq++, type: 'page_segment_completed', page, active_ms: ms });
      if (Math.random() < 0.1 && events.length < EVENTS_PER_BATCH) events.push({ seq: seq++, type: 'link_clicked', page, metadata: { url: `https://example.com/p/${page}` } });
      page = page >= pages ? 1 : page + 1;
    }
    const body = JSON.stringify({ session_id: session, active_ms: activeMs, events, context: { embedded: index % 3 === 0, referrer: 'https://shop.example.com/' } });
    stats.batches++;
    stats.sentEvents += events.length;
    const result = await send(body, ip);
    if (result.status === 200) {
      stats.acknowledged += events.length;
      stats.storedReported += result.stored;
    } else if (result.status !== 0) {
      stats.refused++;
    }
    if (Math.random() < 0.05) {
      // A retry of the same batch: must store nothing new.
      stats.duplicatesSent++;
      const again = await send(body, ip);
      if (again.status === 200) stats.storedReported += again.stored;
    }
    await sleep(Math.max(0, intervalMs - (Date.now() - tick)));
  }
}

const progress = setInterval(() => {
  const elapsed = (Date.now() - started) / 1000;
  process.stdout.write(`  ${elapsed.toFixed(0).padStart(3)} s: ${stats.acknowledged} events accepted (${(stats.acknowledged / elapsed).toFixed(0)}/s), ${stats.refused} refused, ${stats.failed} failed\n`);
}, 5000);
await Promise.all(Array.from({ length: readers }, (_, i) => reader(i)));
clearInterval(progress);
const elapsedS = (Date.now() - started) / 1000;

child.stdin!.write('count\n');
const counts = JSON.parse(await nextLine()) as { interactions: number; views: number; audits: number };
child.stdin!.write('stop\n');
await new Promise((r) => child.once('exit', r));

latencies.sort((a, b) => a - b);
const eventsPerSecond = stats.acknowledged / elapsedS;
process.stdout.write(`
                              rate                 p50 ms   p99 ms
POST /read/{id}/events        ${eventsPerSecond.toFixed(0).padStart(6)} events/s (${(stats.batches / elapsedS).toFixed(0)} batches/s)  ${percentile(latencies, 50).toFixed(1).padStart(6)}   ${percentile(latencies, 99).toFixed(1).padStart(6)}
GET /v1/health (reference)    ${health.rps.toFixed(0).padStart(6)} requests/s            ${health.p50.toFixed(1).padStart(6)}   ${health.p99.toFixed(1).padStart(6)}

events sent ${stats.sentEvents}, acknowledged ${stats.acknowledged}, reported stored ${stats.storedReported}; batches re-sent ${stats.duplicatesSent}; refused ${stats.refused}; failed ${stats.failed}
rows: interaction_events ${counts.interactions}, view_events ${counts.views} (readers ${readers}), audit_events ${counts.audits}
`);
const lost = stats.acknowledged - counts.interactions;
if (lost !== 0 || counts.interactions !== stats.storedReported || counts.views !== readers) {
  process.stdout.write(`MISMATCH: ${lost} acknowledged events not stored (or stored twice)\n`);
  process.exit(1);
}
process.stdout.write('every acknowledged event stored exactly once\n');
