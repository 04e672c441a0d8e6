/**
 * npm run bench:webhooks — reader events fanned out to three subscriptions
 * whose receivers run on 127.0.0.1 in this process: a healthy one (answers
 * 200 at once), a slow one (answers after SLOW_MS, 5 s) and a failing one
 * (500 at once, so every event is retried). The service runs in another
 * process (API and workers). For BENCH_SECONDS (20) it sends EVENTS_PER_SECOND
 * (1,000) page_segment_completed events in batches of 10 through the reader's
 * event endpoint, then waits for the healthy receiver to have every event.
 * Prints deliveries per second (to the healthy receiver, and all attempts),
 * event-to-delivery latency p50/p99 at the healthy receiver (event time set by
 * the sender, receipt time here, one clock), what the slow and failing
 * receivers got meanwhile, and as a reference in the same run, plain POSTs
 * from this process to the healthy receiver at the per-endpoint concurrency.
 *
 *   BENCH_SECONDS=10 EVENTS_PER_SECOND=500 npm run bench:webhooks
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:webhooks
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { startReceiver } from '../test/webhooks/receiver.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 20);
const perSecond = Number(process.env.EVENTS_PER_SECOND ?? 1000);
const slowMs = Number(process.env.SLOW_MS ?? 5000);
const BATCH = 10;
const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

type LaneStats = { operations: number; waitMs: number; maxWaitMs: number; runMs: number; maxQueued: number };
/** PGlite only: per lane of the one connection, what its operations waited and ran (the service counts since its start). */
async function laneStats(): Promise<Record<string, LaneStats> | null> {
  child.stdin!.write('stats\n');
  return (JSON.parse((await lines.next()).value as string) as { lanes: Record<string, LaneStats> | null }).lanes;
}
function laneReport(before: Record<string, LaneStats> | null, after: Record<string, LaneStats> | null, seconds: number): string[] {
  if (!after) return [];
  return Object.entries(after).map(([name, a]) => {
    const b = before?.[name] ?? { operations: 0, waitMs: 0, maxWaitMs: 0, runMs: 0, maxQueued: 0 };
    const n = a.operations - b.operations;
    return `  database lane ${name}: ${n} operations (${Math.round(n / seconds)}/s), waited ${n ? ((a.waitMs - b.waitMs) / n).toFixed(1) : 0} ms on average (max ${Math.round(a.maxWaitMs)} ms since start), ran ${n ? ((a.runMs - b.runMs) / n).toFixed(1) : 0} ms on average, ${((a.runMs - b.runMs) / 10 / seconds).toFixed(0)} % of the time; at most ${a.maxQueued} queued`;
  });
}
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const latencies: number[] = [];
/** From the event's row (created_at: when the service stored it) to delivery: without the time the event spent reaching the service. */
const fromStored: number[] = [];
const healthy = await startReceiver((r) => {
  const data = JSON.parse(r.body).data;
  const occurred = Date.parse(data.occurred_at);
  latencies.push(r.at - occurred);
  if (data.created_at) fromStored.push(r.at - Date.parse(data.created_at));
  return { status: 200, body: 'ok' };
});
const slow = await startReceiver(() => ({ status: 200, body: 'ok', delayMs: slowMs }));
const failing = await startReceiver(() => ({ status: 500, body: 'down' }));

// SERVER_NODE_OPTIONS: flags for the service's node only (NODE_OPTIONS refuses --cpu-prof), e.g. "--cpu-prof --cpu-prof-dir=/tmp/x".
const serverFlags = (process.env.SERVER_NODE_OPTIONS ?? '').split(' ').filter(Boolean);
const child = spawn(process.execPath, [...serverFlags, path.join(import.meta.dirname, 'webhooks-server.ts')], { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
const first = await lines.next();
if (first.done) throw new Error('the benchmark service exited');
const { url, book, key } = JSON.parse(first.value as string) as { url: string; book: string; key: string };
process.stdout.write(`service on ${url} (${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}); ${perSecond} events/s for ${seconds} s; slow receiver answers after ${slowMs} ms\n`);

// Reference: plain POSTs from here to the healthy receiver, at the dispatcher's per-endpoint concurrency (10), 3 s.
{
  const body = JSON.stringify({ type: 'page_segment_completed', timestamp: new Date().toISOString(), data: { occurred_at: new Date().toISOString() } });
  const end = Date.now() + 3000;
  let n = 0;
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (Date.now() < end) {
      const response = await fetch(`${healthy.url}/reference`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await response.arrayBuffer();
      n++;
    }
  }));
  process.stdout.write(`reference: ${Math.round(n / 3)} plain POSTs/s from this process to the healthy receiver (10 concurrent)\n`);
  healthy.received.length = 0;
  latencies.length = 0;
  fromStored.length = 0;
}

const subscriptionIds: Record<string, number> = {};
for (const [name, receiver] of [['healthy', healthy], ['slow', slow], ['failing', failing]] as const) {
  const response = await fetch(`${url}/v1/webhook-subscriptions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, target_url: `${receiver.url}/${name}`, event_types: ['page_segment_completed'] }),
  });
  if (response.status !== 201) throw new Error(`subscription ${name}: ${response.status} ${await response.text()}`);
  subscriptionIds[name] = ((await response.json()) as { data: { id: number } }).data.id;
}

const lanesBefore = await laneStats();
const loadBefore = load();
let sent = 0;
let refused = 0;
const started = Date.now();
const end = started + seconds * 1000;
const progress = setInterval(() => {
  const elapsed = (Date.now() - started) / 1000;
  process.stdout.write(`  ${elapsed.toFixed(0)} s: ${sent} events sent, ${healthy.received.length} delivered to healthy, ${slow.received.length} to slow, ${failing.received.length} attempts at failing\n`);
}, 2000);

// Batches on a fixed schedule: perSecond / BATCH batches a second, each from its own reader session.
const batchesPerSecond = perSecond / BATCH;
let batchIndex = 0;
const inflight = new Set<Promise<void>>();
while (Date.now() < end) {
  const due = Math.floor(((Date.now() - started) / 1000) * batchesPerSecond);
  // At most 64 batches outstanding: past that the service is saturated, and the sender waits rather than piling up connections.
  while (batchIndex < due && inflight.size < 64) {
    batchIndex++;
    const now = Date.now();
    const body = JSON.stringify({
      session_id: randomUUID(),
      events: Array.from({ length: BATCH }, (_, i) => ({ seq: i, type: 'page_segment_completed', page: (i % 40) + 1, active_ms: 1000, at: now })),
    });
    const p = fetch(`${url}/read/${book}/events`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, 'x-forwarded-for': `198.51.${(batchIndex >> 8) & 255}.${batchIndex & 255}` }, body,
    }).then(async (response) => {
      await response.arrayBuffer();
      if (response.status === 200) sent += BATCH;
      else refused++;
    }).catch(() => { refused++; }).finally(() => inflight.delete(p));
    inflight.add(p);
  }
  await sleep(5);
}
await Promise.allSettled([...inflight]);
const sendSeconds = (Date.now() - started) / 1000;
const lanesAfterSend = await laneStats();
const deliveredDuringSend = healthy.received.length;
const attemptsDuringSend = healthy.received.length + slow.received.length + failing.received.length;

const drainDeadline = Date.now() + 120_000;
while (healthy.received.length < sent && Date.now() < drainDeadline) await sleep(100);
const allSeconds = (Date.now() - started) / 1000;
clearInterval(progress);

latencies.sort((a, b) => a - b);
fromStored.sort((a, b) => a - b);
const ids = new Set(healthy.received.map((r) => r.headers['webhook-id']));
process.stdout.write([
  '',
  `events accepted: ${sent} (${Math.round(sent / sendSeconds)}/s), refused ${refused}`,
  `healthy receiver: ${healthy.received.length}/${sent} delivered (${ids.size} distinct ids) in ${allSeconds.toFixed(1)} s: ${Math.round(healthy.received.length / allSeconds)} deliveries/s overall, ${Math.round(deliveredDuringSend / sendSeconds)}/s while events were coming in`,
  `all receivers while events were coming in: ${Math.round(attemptsDuringSend / sendSeconds)} requests/s`,
  `event → delivery at the healthy receiver: p50 ${Math.round(percentile(latencies, 50))} ms, p99 ${Math.round(percentile(latencies, 99))} ms, max ${Math.round(latencies.at(-1) ?? 0)} ms`,
  `stored → delivery (from the event row's created_at, so without the wait to get into the service): p50 ${Math.round(percentile(fromStored, 50))} ms, p99 ${Math.round(percentile(fromStored, 99))} ms`,
  `slow receiver (${slowMs} ms per answer): ${slow.received.length} requests; failing receiver: ${failing.received.length} attempts (first tries and 5-s retries)`,
  ...(lanesAfterSend ? ['while events were coming in:', ...laneReport(lanesBefore, lanesAfterSend, sendSeconds)] : []),
  `load average before: ${loadBefore}; now: ${load()}`,
  '',
].join('\n'));

// Backlog: BACKLOG (10,000) deliveries due at once for the healthy subscription, written straight to the table: the dispatcher alone.
const backlog = Number(process.env.BACKLOG ?? 10_000);
if (backlog > 0) {
  const before = healthy.received.length;
  child.stdin!.write(`backlog ${subscriptionIds.healthy} ${backlog}\n`);
  await lines.next();
  const t0 = Date.now();
  const deadline = t0 + 120_000;
  while (healthy.received.length - before < backlog && Date.now() < deadline) await sleep(20);
  const got = healthy.received.length - before;
  const s2 = (Date.now() - t0) / 1000;
  process.stdout.write(`backlog: ${got}/${backlog} deliveries to the healthy receiver in ${s2.toFixed(1)} s: ${Math.round(got / s2)} deliveries/s (the slow and failing subscriptions still busy beside it)\n\n`);
}

child.stdin!.write('stop\n');
await new Promise((resolve) => child.once('exit', resolve));
await Promise.all([healthy.close(), slow.close(), failing.close()]);
process.exit(0);
