/**
 * npm run bench:analytics — the read side at scale, on PostgreSQL
 * (DATABASE_URL, default the local test server): seeds BENCH_EVENTS
 * interaction events (default 10 million) over BENCH_VISITS visits and
 * BENCH_READERS readers in 90 days (bench/analytics-server.ts), then prints
 *  1. p50/p95 of every analytics operation for the book over 30 and 90 days
 *     (BENCH_ITERATIONS each, default 10), beside GET /v1/health measured in
 *     the same run;
 *  2. the throughput of a CSV export of about BENCH_EXPORT_ROWS rows
 *     (default 1 million: the interaction events of the last days that hold
 *     them) in MB/s and rows/s, with the service's peak RSS and its CPU
 *     seconds (MB per CPU second holds better than MB/s under load); by
 *     COPY on PostgreSQL, in batches with EXPORT_COPY_SLOTS=0;
 *  3. the reader event endpoint's accepted rate while analytics queries run
 *     in a loop, raising the offered load step by step (BENCH_STEP_SECONDS,
 *     default 10) until it saturates (accepted < 90% of offered, or p99 over
 *     1 s): the ceiling. BENCH_INGEST_QUERIES=0 measures ingest alone;
 *     BENCH_INGEST_STEPS (default 1000,2000,3000,4000,5000,6000,8000,12000,…)
 *     sets the offered loads.
 *
 * BENCH_PARTS (queries,export,ingest by default) runs only the parts named.
 *   BENCH_EVENTS=1000000 BENCH_VISITS=100000 BENCH_READERS=10000 npm run bench:analytics
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import os from 'node:os';
import { readFileSync } from 'node:fs';

process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 10);
const EXPORT_ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000);
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? 10);
/** BENCH_INGEST_QUERIES=0: measure ingest alone, without the analytics query loop beside it. */
const INGEST_QUERIES = process.env.BENCH_INGEST_QUERIES !== '0';
/** The offered loads of the ingest step, events/s (comma-separated BENCH_INGEST_STEPS). */
const INGEST_STEPS = (process.env.BENCH_INGEST_STEPS ?? '1000,2000,3000,4000,5000,6000,8000,12000,16000,24000').split(',').map(Number);
/** Each simulated reader sends a batch every BENCH_INGEST_INTERVAL_MS (default 200) and waits for its answer, so the step's
 * offered load holds only while the batch latency stays below it: raise it (and BENCH_INGEST_MAX_CLIENTS, default 400) to
 * measure throughput rather than latency. */
const CLIENT_INTERVAL_MS = Number(process.env.BENCH_INGEST_INTERVAL_MS ?? 200);
const MAX_CLIENTS = Number(process.env.BENCH_INGEST_MAX_CLIENTS ?? 400);
/** Which parts to run (comma-separated): queries, export, ingest; default all. */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'queries,export,ingest').split(',').map((p) => p.trim()));
const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const say = (line: string) => process.stdout.write(`${line}\n`);

say(`machine: ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at start — other work on this shared machine skews every figure below`);
const child = spawn(process.execPath, [path.join(import.meta.dirname, 'analytics-server.ts')], { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
async function nextJson<T>(key: string): Promise<T> {
  for (;;) {
    const { value, done } = await lines.next();
    if (done) throw new Error('the benchmark service exited');
    const line = value as string;
    if (line.startsWith('{') && line.includes(`"${key}"`)) return (JSON.parse(line) as Record<string, T>)[key]!;
    say(`  ${line}`);
  }
}
const ready = await nextJson<{ url: string; key: string; book: string; pages: number; viewer: number; view: number; counts: Record<string, number> }>('ready');
const { url, key, book } = ready;

/** CPU seconds the service process has used (Linux /proc; clock ticks of 10 ms): figures per CPU second hold under load. */
function serviceCpuSeconds(): number {
  try {
    const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}
const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function timed(path: string, query: Record<string, string | number>): Promise<{ ms: number; status: number }> {
  const target = new URL(url + path);
  for (const [k, v] of Object.entries(query)) target.searchParams.set(k, String(v));
  const t = performance.now();
  const response = await fetch(target, { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return { ms: performance.now() - t, status: response.status };
}

async function measure(path: string, query: Record<string, string | number>) {
  const times: number[] = [];
  const statuses = new Set<number>();
  for (let i = 0; i < ITERATIONS; i++) {
    const r = await timed(path, query);
    times.push(r.ms);
    statuses.add(r.status);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95), statuses: [...statuses].join('/') };
}

// 1. Every operation, 30 and 90 days.
const operations: [string, Record<string, string | number>][] = [
  ['/v1/analytics/audit-log', { book_id: book }],
  ['/v1/analytics/book-flow', { book_id: book }],
  ['/v1/analytics/book-view-events', { book_id: book }],
  ['/v1/analytics/interaction-events', { book_id: book }],
  ['/v1/analytics/page-performance', { book_id: book }],
  ['/v1/analytics/reader-journey', { viewer_id: ready.viewer }],
  ['/v1/analytics/reader-pages', { book_id: book, viewer_id: ready.viewer }],
  ['/v1/analytics/readers', { book_id: book }],
  ['/v1/analytics/readers', { book_id: book, sort: 'engagement' }],
  ['/v1/analytics/reading-session-pages', { book_id: book, view_event_id: ready.view }],
];
const health = await measure('/v1/health', {});
say(`GET /v1/health (reference): ${health.p50.toFixed(1)} / ${health.p95.toFixed(1)} ms p50 / p95`);
if (PARTS.has('queries')) {
say(`\n1. analytics operations, ${ITERATIONS} sequential requests each (ms)`);
say(`${'operation'.padEnd(58)} ${'30 days p50 / p95'.padStart(20)} ${'90 days p50 / p95'.padStart(20)}  status`);
say(`${'GET /v1/health (reference)'.padEnd(58)} ${`${health.p50.toFixed(1)} / ${health.p95.toFixed(1)}`.padStart(20)}`);
for (const [path, query] of operations) {
  const label = `GET ${path.replace('/v1', '')}${query.sort ? `?sort=${query.sort}` : ''}${query.viewer_id && path.includes('reader-pages') ? ' (one reader)' : ''}`;
  const dated = !path.includes('reading-session-pages');
  const month = await measure(path, dated ? { ...query, date: '30d' } : query);
  const quarter = await measure(path, dated ? { ...query, date: '90d' } : query);
  say(`${label.padEnd(58)} ${`${month.p50.toFixed(0)} / ${month.p95.toFixed(0)}`.padStart(20)} ${`${quarter.p50.toFixed(0)} / ${quarter.p95.toFixed(0)}`.padStart(20)}  ${month.statuses}, ${quarter.statuses}`);
}

}

function exportRange(n: number): string {
  const end = new Date();
  const start = new Date(end.getTime() - (n - 1) * 86_400_000);
  return `${start.toISOString().slice(0, 10)},${end.toISOString().slice(0, 10)}`;
}

// 2. Export throughput: the interaction events of the last N days, N chosen for about EXPORT_ROWS rows.
if (PARTS.has('export')) {
const perDay = ready.counts.events! / 90;
const days = Math.max(1, Math.min(90, Math.round(EXPORT_ROWS / perDay)));
child.stdin!.write('rss-reset\n');
const rssBefore = await nextJson<number>('rss');
const loadBefore = os.loadavg()[0]!;
const cpuBefore = serviceCpuSeconds();
const t = performance.now();
const response = await fetch(`${url}/v1/exports/books/${book}/interaction-events?date=${days === 1 ? 'today' : `${days}d`}`.replace(/date=(\d+)d/, (_, n) => `date=${exportRange(Number(n))}`), { headers: { authorization: `Bearer ${key}` } });
let bytes = 0;
let rows = 0;
let lastReport = performance.now();
for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
  bytes += chunk.byteLength;
  for (const b of chunk) if (b === 10) rows++;
  if (performance.now() - lastReport > 5000) {
    lastReport = performance.now();
    say(`  export: ${rows} rows, ${(bytes / 1e6).toFixed(0)} MB so far`);
  }
}
const exportS = (performance.now() - t) / 1000;
const exportCpu = serviceCpuSeconds() - cpuBefore;
child.stdin!.write('rss\n');
const rssPeak = await nextJson<number>('rss');
const exportPath = process.env.EXPORT_COPY_SLOTS === '0' ? 'in batches (EXPORT_COPY_SLOTS=0)' : 'by COPY';
say(`\n2. CSV export of interaction events ${exportPath}, last ${days} days: ${rows - 1} rows, ${(bytes / 1e6).toFixed(1)} MB in ${exportS.toFixed(1)} s = ${(bytes / 1e6 / exportS).toFixed(1)} MB/s, ${((rows - 1) / exportS).toFixed(0)} rows/s; service RSS ${(rssBefore / 1e6).toFixed(0)} MB before, peak ${(rssPeak / 1e6).toFixed(0)} MB during (status ${response.status})`);
say(`   service CPU ${exportCpu.toFixed(1)} s = ${(bytes / 1e6 / exportCpu).toFixed(1)} MB per CPU second (the database's CPU not counted); load average ${loadBefore.toFixed(1)} before, ${os.loadavg()[0]!.toFixed(1)} after`);

}

// 3. Ingest while queries run, raising the offered load.
if (PARTS.has('ingest')) {
say(`\n3. POST /read/{id}/events ${INGEST_QUERIES ? 'while analytics queries run in a loop' : 'alone (no query loop)'} (${STEP_SECONDS} s per step; batches of 10 events)`);
say(`${'offered events/s'.padStart(16)} ${'accepted events/s'.padStart(18)} ${'batch p50 / p99 ms'.padStart(20)} ${'queries done (p50 ms)'.padStart(22)} ${'service CPU ms/request'.padStart(23)}  load  (group commit)`);
say(`(each simulated reader sends a batch every ${CLIENT_INTERVAL_MS} ms, at most ${MAX_CLIENTS} readers)`);
say(`(service CPU per ingest request includes the queries' CPU when they run${INGEST_QUERIES ? '' : '; BENCH_INGEST_QUERIES=0: they do not'})`);
let ceiling = 0;
for (const offered of INGEST_STEPS) {
  const batchesPerSecond = offered / 10;
  const clients = Math.min(MAX_CLIENTS, Math.max(20, Math.ceil((batchesPerSecond * CLIENT_INTERVAL_MS) / 1000)));
  const intervalMs = (1000 * clients) / batchesPerSecond;
  const end = Date.now() + STEP_SECONDS * 1000;
  const stepCpu = serviceCpuSeconds();
  child.stdin!.write('groups\n');
  const groupsBefore = await nextJson<{ groups: number } | null>('groups');
  const latencies: number[] = [];
  let accepted = 0;
  const queryTimes: number[] = [];
  const queries = (async () => {
    const cycle = operations.filter(([p]) => !p.includes('reader-journey') && !p.includes('reading-session-pages'));
    for (let i = 0; INGEST_QUERIES && Date.now() < end; i++) {
      const [p, q] = cycle[i % cycle.length]!;
      queryTimes.push((await timed(p, { ...q, date: '30d' })).ms);
    }
  })();
  await Promise.all(Array.from({ length: clients }, async (_, index) => {
    const session = randomUUID();
    const ip = `10.${(index >> 8) & 255}.${index & 255}.${1 + (offered % 250)}`;
    let seq = 0;
    await sleep(Math.random() * intervalMs);
    while (Date.now() < end) {
      const tick = Date.now();
      const events = Array.from({ length: 10 }, () => ({ seq: seq++, type: 'page_segment_completed', page: 1 + (seq % ready.pages), active_ms: 1000 + (seq % 5000) }));
      const t0 = performance.now();
      try {
        const r = await fetch(`${url}/read/${book}/events`, { method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': USER_AGENT, 'x-forwarded-for': ip }, body: JSON.stringify({ session_id: session, events }) });
        await r.arrayBuffer();
        if (r.status === 200) accepted += 10;
      } catch {
        // counted as not accepted
      }
      latencies.push(performance.now() - t0);
      await sleep(Math.max(0, intervalMs - (Date.now() - tick)));
    }
  }));
  await queries;
  child.stdin!.write('groups\n');
  const groupsAfter = await nextJson<{ groups: number; largest: number; retried: number } | null>('groups');
  latencies.sort((a, b) => a - b);
  queryTimes.sort((a, b) => a - b);
  const rate = accepted / STEP_SECONDS;
  const cpuPerBatch = ((serviceCpuSeconds() - stepCpu) * 1000) / Math.max(1, latencies.length);
  ceiling = Math.max(ceiling, rate);
  say(`${String(offered).padStart(16)} ${rate.toFixed(0).padStart(18)} ${`${percentile(latencies, 50).toFixed(0)} / ${percentile(latencies, 99).toFixed(0)}`.padStart(20)} ${`${queryTimes.length} (${percentile(queryTimes, 50).toFixed(0)})`.padStart(22)} ${cpuPerBatch.toFixed(2).padStart(23)}  ${os.loadavg()[0]!.toFixed(1)}${groupsAfter && groupsBefore ? `  (${groupsAfter.groups - groupsBefore.groups} groups, ${(latencies.length / Math.max(1, groupsAfter.groups - groupsBefore.groups)).toFixed(1)} batches each)` : ''}`);
  if (rate < offered * 0.9 || percentile(latencies, 99) > 1000) {
    say(`saturated at an offered ${offered} events/s`);
    break;
  }
}
say(`ingest ceiling ${INGEST_QUERIES ? 'while queries run' : 'alone'}: ${ceiling.toFixed(0)} events/s`);
}
say(`load average at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
child.stdin!.write('stop\n');
await new Promise((r) => child.once('exit', r));
