/**
 * npm run bench:analytics-refold — re-runs the `analytics.rollup` folds on a
 * kept seed (BENCH_DATABASE, seeded by `npm run bench:analytics`) and prints
 * each fold's events/s on its own: the page day rollups, the page month
 * rollups, the book-flow day and month rollups. Each fold starts from
 * nothing (its rollup tables emptied, its watermark at 0) so runs compare;
 * the other grain's watermark is set to the top for the page folds, so the
 * job's step times one grain only (months first, then days: both whole at
 * the end). Then a digest of every rollup table, to compare two builds. What the job does, in this one process
 * (run it under `node --cpu-prof` to profile the fold).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test BENCH_DATABASE=bench_fold_1m npm run bench:analytics-refold
 *
 * BENCH_FOLDS=page_days,page_months,flow picks the folds (default all);
 * BENCH_FOLD_BATCH sets the batch (events per step, default the job's).
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { openDatabase } from '../src/platform/db/database.ts';
import { rowsOf } from '../src/modules/analytics/analytics-sql.ts';
import { PageRollups } from '../src/modules/analytics/page-rollups.ts';
import { FlowRollups } from '../src/modules/analytics/flow-rollups.ts';

const KEEP = process.env.BENCH_DATABASE;
if (!KEEP || !/^[a-z_][a-z0-9_]{0,62}$/.test(KEEP)) throw new Error('BENCH_DATABASE: the kept seed (a lower-case PostgreSQL identifier)');
const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
url.pathname = `/${KEEP}`;
const FOLDS = new Set((process.env.BENCH_FOLDS ?? 'page_days,page_months,flow').split(',').map((f) => f.trim()));
const batchRows = process.env.BENCH_FOLD_BATCH ? Number(process.env.BENCH_FOLD_BATCH) : undefined;
const say = (line: string) => process.stdout.write(`${line}\n`);
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');

// BENCH_FOLD_TRACE=1: the wall time of each kind of statement (its first words), printed after each fold.
const trace = new Map<string, { n: number; ms: number }>();
if (process.env.BENCH_FOLD_TRACE === '1') {
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string };
    const text = typeof config === 'string' ? config : (config?.text ?? '');
    const kind = text.replace(/\s+/g, ' ').trim().slice(0, 60);
    const t = performance.now();
    const result = query.apply(this, args);
    if (result instanceof Promise) {
      void result.finally(() => {
        const k = trace.get(kind) ?? { n: 0, ms: 0 };
        k.n++;
        k.ms += performance.now() - t;
        trace.set(kind, k);
      }).catch(() => undefined);
    }
    return result;
  } as typeof pg.Client.prototype.query;
}
// One connection, no parallel workers: the fold's CPU is this process's plus that one backend's (read from /proc),
// a figure that holds better than wall time on this shared machine.
const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 1 });
await database.migrate();
const db = database.db;
const one = async <T>(query: ReturnType<typeof sql>) => rowsOf<T>(await db.execute(query))[0]!;
await db.execute(sql`set max_parallel_workers_per_gather = 0`);
const { pid: backendPid } = await one<{ pid: number }>(sql`select pg_backend_pid() as pid`);
function backendCpuSeconds(): number {
  try {
    const fields = readFileSync(`/proc/${backendPid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}
const nodeCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const { top, segments } = await one<{ top: number; segments: number }>(sql`
  select coalesce(max(id), 0)::bigint::float8 as top, (select count(*) from interaction_events where event_type = 'page_segment_completed' and page_number is not null)::int as segments
  from interaction_events`);
say(`refold on ${KEEP}: ${top} event ids, ${segments} page segments; load average ${load()} at start`);

async function setWatermark(name: string, watermark: number) {
  await db.execute(sql`insert into analytics_rollup_state (name, watermark) values (${name}, ${watermark}) on conflict (name) do update set watermark = excluded.watermark`);
}

async function timeFold(label: string, fold: () => Promise<number>) {
  const loadBefore = os.loadavg()[0]!;
  const t = performance.now();
  const nodeBefore = nodeCpuSeconds();
  const backendBefore = backendCpuSeconds();
  const moved = await fold();
  const s = (performance.now() - t) / 1000;
  const nodeCpu = nodeCpuSeconds() - nodeBefore;
  const backendCpu = backendCpuSeconds() - backendBefore;
  for (const [kind, k] of [...trace].sort((a, b) => b[1].ms - a[1].ms).slice(0, 8)) say(`    ${(k.ms / 1000).toFixed(1).padStart(6)} s ${String(k.n).padStart(6)}× ${kind}`);
  trace.clear();
  say(`${label.padEnd(34)} ${moved} event ids in ${s.toFixed(1)} s = ${(moved / s).toFixed(0).padStart(7)} events/s (${(segments / s).toFixed(0)} segments/s); load ${loadBefore.toFixed(1)} → ${os.loadavg()[0]!.toFixed(1)}`);
  say(`${''.padEnd(34)} CPU: node ${nodeCpu.toFixed(1)} s + PostgreSQL backend ${backendCpu.toFixed(1)} s = ${(moved / (nodeCpu + backendCpu)).toFixed(0)} events per CPU second`);
}

const opts = { db, settleMs: 0, ...(batchRows ? { batchRows } : {}) };
if (FOLDS.has('page_months')) {
  await db.execute(sql`truncate page_month_rollups`);
  await setWatermark('page_months', 0);
  await setWatermark('page_days', top);
  await timeFold('page month rollups', () => new PageRollups(opts).catchUp());
}
if (FOLDS.has('page_days')) {
  await db.execute(sql`truncate page_day_rollups`);
  await setWatermark('page_days', 0);
  await setWatermark('page_months', top);
  await timeFold('page day rollups', () => new PageRollups(opts).catchUp());
}
if (FOLDS.has('flow')) {
  await db.execute(sql`truncate flow_day_rollups, flow_month_rollups, flow_day_links`);
  await setWatermark('page_flow', 0);
  await timeFold('book-flow day + month rollups', () => new FlowRollups(opts).catchUp());
}
// What the folds wrote, as one digest per table: equal digests, equal rollups (compare runs of two builds).
for (const table of ['page_day_rollups', 'page_month_rollups', 'flow_day_rollups', 'flow_month_rollups', 'flow_day_links']) {
  const { rows, digest } = await one<{ rows: number; digest: string | null }>(sql`select count(*)::int as rows, md5(string_agg(t::text, '|' order by t::text)) as digest from ${sql.identifier(table)} t`);
  say(`${table.padEnd(20)} ${String(rows).padStart(7)} rows, digest ${digest}`);
}
say(`load average at the end: ${load()}`);
await database.close();
