/**
 * Peer of bench/analytics.bench.ts: the real service (API only, rate limits
 * off) on a scratch PostgreSQL database, seeded with set-based SQL
 * (generate_series) so ten million events take minutes, not hours. Prints
 * progress lines, then one JSON line `{ ready: {...} }`. Commands on stdin:
 * `rss-reset` / `rss` (peak resident memory since the reset), `groups` (the
 * reader events' group commit counters, null before it), `stop`.
 *
 * Sizes (env): BENCH_EVENTS (10,000,000 interaction events), BENCH_VISITS
 * (1,000,000 visits), BENCH_READERS (100,000 identified readers), over
 * BENCH_DAYS (90) days; one book of BENCH_PAGES (40) pages; a third of the
 * visits anonymous, a fifth through one of 5 tracked links.
 *
 * Seed once, measure many times: BENCH_DATABASE=<name> uses that database on
 * the DATABASE_URL server instead of a scratch one and keeps it after the
 * run. The first run creates and seeds it and records the sizes in a
 * `bench_seed` table; later runs with the same sizes skip the seed (new
 * migrations still run, and the rollups fold whatever they have not seen),
 * mint a fresh key for the seeded workspace and measure. Other sizes are
 * refused rather than mixed. Drop it with `dropdb <name>` when done. The
 * ingest step of the bench adds its events to it, as it would to a live book.
 * EXPORT_COPY_SLOTS (env) is passed to the service: 0 measures the export in
 * batches instead of COPY.
 */
import { sql } from 'drizzle-orm';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { insertBook } from '../test/factories.ts';
import { seedEvents, seedVisits } from './analytics-seed-sql.ts';
import { startService } from '../test/helpers.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000);
const VISITS = Number(process.env.BENCH_VISITS ?? 1_000_000);
const READERS = Number(process.env.BENCH_READERS ?? 100_000);
const DAYS = Number(process.env.BENCH_DAYS ?? 90);
const PAGES = Number(process.env.BENCH_PAGES ?? 40);
const PER_VISIT = Math.max(3, Math.round(EVENTS / VISITS));

const say = (line: string) => process.stdout.write(`${line}\n`);
const KEEP = process.env.BENCH_DATABASE;
if (KEEP !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(KEEP)) throw new Error('BENCH_DATABASE: a lower-case PostgreSQL identifier');
let database: { kind: 'postgres'; url: string; poolSize: number } | undefined;
if (KEEP) {
  const base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  const exists = (await admin.query('select 1 from pg_database where datname = $1', [KEEP])).rowCount! > 0;
  if (!exists) await admin.query(`create database ${KEEP}`);
  await admin.end();
  base.pathname = `/${KEEP}`;
  database = { kind: 'postgres', url: base.toString(), poolSize: 5 };
}
// EXPORT_COPY_SLOTS=0 measures the export's batched path (PGlite's) on PostgreSQL.
const copySlots = process.env.EXPORT_COPY_SLOTS ? { EXPORT_COPY_SLOTS: Number(process.env.EXPORT_COPY_SLOTS) } : {};
const svc = await startService({ worker: false, ...(database ? { database } : {}), env: { TRUST_PROXY: true, RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0, RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, ...copySlots } });
const db = svc.runtime.database.db;
const run = (query: ReturnType<typeof sql>) => db.execute(query);
const one = async <T>(query: ReturnType<typeof sql>): Promise<T> => ((await run(query)) as unknown as { rows: T[] }).rows[0]!;
const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(0)} s`;
const sizes = { events: EVENTS, visits: VISITS, readers: READERS, days: DAYS, pages: PAGES };

await run(sql`create table if not exists bench_seed (sizes jsonb not null, workspace_id int not null, book_id int not null, seeded_at timestamptz not null default now())`);
const seeded = await one<{ sizes: typeof sizes; workspace_id: number; book_id: number; seeded_at: Date } | undefined>(sql`select * from bench_seed limit 1`);
let ws: { id: number; key: string };
let book: { id: number; randomId: string };
if (seeded) {
  if (Object.entries(sizes).some(([k, v]) => seeded.sizes[k as keyof typeof sizes] !== v)) throw new Error(`BENCH_DATABASE ${KEEP} was seeded with ${JSON.stringify(seeded.sizes)}, not ${JSON.stringify(sizes)}: use those sizes or another name`);
  ws = { id: seeded.workspace_id, key: (await svc.key(seeded.workspace_id, ['*'])).key };
  const b = await one<{ id: number; random_id: string }>(sql`select id, random_id from books where id = ${seeded.book_id}`);
  book = { id: b.id, randomId: b.random_id };
  say(`seed: reusing ${KEEP}, seeded ${new Date(seeded.seeded_at).toISOString()} with ${JSON.stringify(sizes)}`);
} else {
  if (KEEP && (await one<{ n: number }>(sql`select count(*)::int as n from books`)).n > 0) throw new Error(`BENCH_DATABASE ${KEEP} holds an unfinished seed: dropdb ${KEEP} and run again`);
  ws = await svc.workspace();
  book = await insertBook(svc, ws.id, { status: 'publish', pageCount: PAGES, name: 'Bench catalogue' });
  await seed();
  if (KEEP) await run(sql`insert into bench_seed (sizes, workspace_id, book_id) values (${JSON.stringify(sizes)}::jsonb, ${ws.id}, ${book.id})`);
}
const counts = await one<Record<string, number>>(sql`select (select count(*) from interaction_events)::int as events, (select count(*) from view_events)::int as visits, (select count(*) from audit_events)::int as audits`);
const sample = await one<{ view_id: number; viewer_id: number }>(sql`select id::int as view_id, viewer_id from view_events where book_id = ${book.id} and viewer_id is not null order by id limit 1`);
const size = await one<{ events_size: string }>(sql`select pg_size_pretty(pg_total_relation_size('interaction_events')) as events_size`);
say(`seed done in ${elapsed()}: ${JSON.stringify(counts)}; interaction_events with indexes ${size.events_size}`);

async function seed(): Promise<void> {
  await run(sql`insert into viewers (workspace_id, email, name) select ${ws.id}, 'reader' || g || '@example.com', 'Reader ' || g from generate_series(1, ${READERS}) g`);
  const { min_viewer: minViewer } = await one<{ min_viewer: number }>(sql`select min(id)::int as min_viewer from viewers where workspace_id = ${ws.id}`);
  await run(sql`insert into tracked_links (workspace_id, book_id, name, slug) select ${ws.id}, ${book.id}, 'Link ' || g, 'link-' || g from generate_series(1, 5) g`);
  const { min_link: minLink } = await one<{ min_link: number }>(sql`select min(id)::int as min_link from tracked_links where book_id = ${book.id}`);
  say(`seed: ${READERS} readers (${elapsed()})`);
  const shape = { workspaceId: ws.id, bookId: book.id, minViewer, readers: READERS, minLink, pages: PAGES, days: DAYS, perVisit: PER_VISIT };

  // Visits spread over DAYS days up to now; a third anonymous, a fifth through a tracked link.
  const CHUNK = 100_000;
  for (let start = 1; start <= VISITS; start += CHUNK) {
    const end = Math.min(VISITS, start + CHUNK - 1);
    await run(seedVisits(shape, start, end));
    say(`seed: ${end} / ${VISITS} visits (${elapsed()})`);
  }

  // Each visit: session_started, page segments, a click in a third of them (as the last event).
  const { min_view: minView, max_view: maxView } = await one<{ min_view: number; max_view: number }>(sql`select min(id)::bigint as min_view, max(id)::bigint as max_view from view_events where book_id = ${book.id}`);
  const VIEW_CHUNK = Math.max(1, Math.floor(1_000_000 / PER_VISIT));
  for (let start = Number(minView); start <= Number(maxView); start += VIEW_CHUNK) {
    const end = Math.min(Number(maxView), start + VIEW_CHUNK - 1);
    await run(seedEvents(shape, start, end));
    say(`seed: ${Math.min(EVENTS, (end - Number(minView) + 1) * PER_VISIT)} / ${VISITS * PER_VISIT} events (${elapsed()})`);
  }
  await run(sql`
    insert into audit_events (workspace_id, book_id, source, source_event_id, viewer_id, viewer_email, tracked_link_id, event_type, page_number, metadata, occurred_at)
    select e.workspace_id, e.book_id, 'reader', e.id, e.viewer_id, coalesce(r.email, ''), e.tracked_link_id, e.event_type, e.page_number, e.metadata -> 0, e.occurred_at
    from interaction_events e left join viewers r on r.id = e.viewer_id where e.book_id = ${book.id} and e.event_type = 'link_clicked'`);
  say(`seed: audit events (${elapsed()}); vacuum analyze…`);
  await run(sql`vacuum analyze`);
}

// What the analytics.rollup job does every minute in production (the bench runs no worker): fold the seeded events into the rollups, each fold timed apart.
const { rollups, flowRollups } = svc.runtime.services.analytics;
for (const [name, fold] of [
  ['page_day_rollups', () => rollups.catchUp(Number.POSITIVE_INFINITY, 'days')],
  ['page_month_rollups', () => rollups.catchUp(Number.POSITIVE_INFINITY, 'months')],
  ['flow_day_rollups and flow_month_rollups', () => flowRollups.catchUp()],
] as const) {
  const tRollup = Date.now();
  const rolled = await fold();
  say(`rollup: ${rolled} event ids folded into ${name} in ${((Date.now() - tRollup) / 1000).toFixed(1)} s (${(rolled / Math.max(0.001, (Date.now() - tRollup) / 1000)).toFixed(0)} events/s)`);
}

let peak = process.memoryUsage().rss;
setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 50).unref();

say(JSON.stringify({ ready: { url: svc.url, key: ws.key, book: book.randomId, pages: PAGES, viewer: sample.viewer_id, view: sample.view_id, counts } }));
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'rss-reset') {
    peak = process.memoryUsage().rss;
    say(JSON.stringify({ rss: peak }));
  } else if (line === 'rss') {
    say(JSON.stringify({ rss: peak }));
  } else if (line === 'groups') {
    const events = svc.runtime.services.readerEvents as { groupStats?: () => unknown };
    say(JSON.stringify({ groups: events.groupStats?.() ?? null }));
  } else if (line === 'stop') {
    break;
  }
}
await svc.stop();
process.exit(0);
