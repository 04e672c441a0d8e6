/**
 * Page-performance at scale: a rollup of page segments per book, page and
 * UTC day (page_day_rollups), kept by the `analytics.rollup` job, so a
 * month of a busy book is ~1,500 rows instead of millions of events.
 *
 * Why it stays correct:
 *  - The job reads interaction_events by id above a watermark and writes the
 *    sums and the new watermark in one transaction (the state row is locked,
 *    so two workers never count a batch twice; a failed run counts nothing).
 *  - A late event (old occurred_at, new id) is read like any other and lands
 *    in its own day.
 *  - Rows younger than `settleMs` wait for the next run, so a transaction
 *    still inserting lower ids is not skipped (ingestion transactions are
 *    short; one held open longer than settleMs would be missed).
 *  - The query adds raw rows for what the rollup lacks: events above the
 *    watermark (the latest minutes count) and the partial UTC days at the
 *    range's edges (ranges in other time zones, or not whole days).
 *
 * What is approximate, and when: counts and active-time sums are always
 * exact. Exact medians and distinct readers cannot be combined from day
 * buckets, so when the rollup holds more than `exactMaxSegments` segments
 * for the range, the median comes from a log histogram (bins 2^(1/32) wide:
 * within 1.1 % of percentile_cont) and unique_readers from HyperLogLog
 * (2,048 registers: standard error 2.3 %). Below that, and with any reader,
 * session or tracked-link filter, the exact raw query answers.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/database.ts';
import { rowsOf, num } from './analytics-sql.ts';
import { claimBatch, finishBatch, foldPace, openEndIfFuture, type FoldPace } from './rollup-batches.ts';

const DAY_MS = 86_400_000;

/**
 * Two grains, each folded from its own watermark: UTC days, and UTC months
 * (page_month_rollups, `day` = the month's first day) so a quarter or a year
 * merges a few rows per page instead of one per day (the histograms and
 * sketches are what cost: ~130 bins and 2 KB per row).
 */
interface Grain { state: string; table: string; bucketSql: ReturnType<typeof sql> }
const DAYS: Grain = { state: 'page_days', table: 'page_day_rollups', bucketSql: sql`to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD')` };
const MONTHS: Grain = { state: 'page_months', table: 'page_month_rollups', bucketSql: sql`to_char(occurred_at at time zone 'UTC', 'YYYY-MM-01')` };
/** Groups per read and upsert of stored rows (each ~4 KB of histogram and sketch). */
const WRITE_CHUNK = 1000;

// Histogram bins: exact below 64 ms, then 32 bins per doubling.
const EXACT_BELOW = 64;
const PER_OCTAVE = 32;

export function binOf(ms: number): number {
  if (ms < EXACT_BELOW) return Math.max(0, Math.floor(ms));
  return EXACT_BELOW + Math.floor(Math.log2(ms / EXACT_BELOW) * PER_OCTAVE);
}

/** The value a bin stands for: itself when exact, else the bin's geometric middle. */
function binValue(bin: number): number {
  if (bin < EXACT_BELOW) return bin;
  return EXACT_BELOW * 2 ** ((bin - EXACT_BELOW + 0.5) / PER_OCTAVE);
}

/** percentile_cont(0.5) of the values a histogram holds, within half a bin. */
export function histogramMedian(histogram: Map<number, number>, count: number): number {
  if (count === 0) return 0;
  const bins = [...histogram.keys()].sort((a, b) => a - b);
  const at = (rank: number) => {
    let seen = 0;
    for (const bin of bins) {
      seen += histogram.get(bin)!;
      if (seen > rank) return binValue(bin);
    }
    return binValue(bins[bins.length - 1]!);
  };
  const lo = Math.floor((count - 1) / 2);
  const hi = Math.ceil((count - 1) / 2);
  return (at(lo) + at(hi)) / 2;
}

// HyperLogLog, 2^11 registers, over a 53-bit string hash.
const P = 11;
const M = 1 << P;

/** cyrb53: a fast, well-mixed 53-bit string hash (public domain). */
function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

export function hllAdd(registers: Uint8Array, reader: string): void {
  const h = hash53(reader);
  const index = h % M;
  const rest = Math.floor(h / M); // 42 bits
  const rank = rest === 0 ? 43 : 42 - Math.floor(Math.log2(rest));
  if (rank > registers[index]!) registers[index] = rank;
}

export function hllMerge(into: Uint8Array, other: Uint8Array): void {
  for (let i = 0; i < M; i++) if (other[i]! > into[i]!) into[i] = other[i]!;
}

export function hllCount(registers: Uint8Array): number {
  let sum = 0;
  let zeros = 0;
  for (let i = 0; i < M; i++) {
    sum += 2 ** -registers[i]!;
    if (registers[i] === 0) zeros++;
  }
  const estimate = ((0.7213 / (1 + 1.079 / M)) * M * M) / sum;
  // Linear counting while few registers are set: near exact for small counts.
  return Math.round(estimate <= 2.5 * M && zeros > 0 ? M * Math.log(M / zeros) : estimate);
}

const readerKey = (viewerId: unknown, sessionId: unknown) => (viewerId === null || viewerId === undefined ? `s:${sessionId as string}` : `v:${num(viewerId)}`);
/** readerKey in SQL over the columns of `alias` (the same text: an integer's decimal digits), for the folds. */
export const readerKeySql = (alias = 'interaction_events') => sql.raw(`case when ${alias}.viewer_id is null then 's:' || ${alias}.session_id else 'v:' || ${alias}.viewer_id end`);

export interface PageTotals {
  segments: number;
  totalMs: number;
  histogram: Map<number, number>;
  readers: Uint8Array;
}

const emptyTotals = (): PageTotals => ({ segments: 0, totalMs: 0, histogram: new Map(), readers: new Uint8Array(M) });

function addSegment(t: PageTotals, activeMs: number, reader: string): void {
  t.segments++;
  t.totalMs += activeMs;
  const bin = binOf(activeMs);
  t.histogram.set(bin, (t.histogram.get(bin) ?? 0) + 1);
  hllAdd(t.readers, reader);
}

function addTotals(into: PageTotals, segments: number, totalMs: number, histogram: Record<string, number>, readers: Uint8Array): void {
  into.segments += segments;
  into.totalMs += totalMs;
  // for-in, not Object.entries: no array per row (a quarter merges ~500,000 bins).
  for (const key in histogram) {
    const bin = Number(key);
    into.histogram.set(bin, (into.histogram.get(bin) ?? 0) + histogram[key]!);
  }
  hllMerge(into.readers, readers);
}

const decode = (base64: string) => new Uint8Array(Buffer.from(base64, 'base64'));
const dayOf = (instant: Date) => instant.toISOString().slice(0, 10);

export class PageRollups {
  private readonly db: Db;
  readonly batchRows: number;
  readonly settleMs: number;

  constructor(deps: { db: Db } & Partial<FoldPace>) {
    this.db = deps.db;
    ({ batchRows: this.batchRows, settleMs: this.settleMs } = foldPace(deps));
  }

  /**
   * Folds the next batch of interaction events above the watermark into the
   * day rollups. Answers how many event ids it moved past (0: caught up).
   */
  async step(): Promise<number> {
    return Math.max(await this.stepGrain(DAYS), await this.stepGrain(MONTHS));
  }

  private async stepGrain(grain: Grain): Promise<number> {
    const table = sql.identifier(grain.table);
    return this.db.transaction(async (tx) => {
      const q = async <T>(query: ReturnType<typeof sql>) => rowsOf<T>(await tx.execute(query));
      const batch = await claimBatch(tx, grain.state, this.batchRows, this.settleMs);
      if (!batch) return 0;
      // The bucket (UTC day or month, as text) and the reader key come from the database: no Date per row.
      const rows = await q<{ book_id: unknown; bucket: string; page_number: unknown; active_ms: unknown; reader: string }>(sql`
        select book_id, ${grain.bucketSql} as bucket, page_number, coalesce(active_ms, 0) as active_ms, ${readerKeySql()} as reader
        from interaction_events
        where id > ${batch.from} and id <= ${batch.bound} and event_type = 'page_segment_completed' and page_number is not null`);
      const groups = new Map<string, { bookId: number; day: string; page: number; totals: PageTotals }>();
      for (const r of rows) {
        const key = `${r.book_id as string}|${r.bucket}|${r.page_number as string}`;
        let g = groups.get(key);
        if (!g) groups.set(key, (g = { bookId: num(r.book_id), day: r.bucket, page: num(r.page_number), totals: emptyTotals() }));
        addSegment(g.totals, num(r.active_ms), r.reader);
      }
      const list = [...groups.values()];
      // One read of the stored rows and one upsert per WRITE_CHUNK groups, the keys and rows as one JSON parameter each
      // (a list of 500 row-constructor keys took longer to plan than to run).
      for (let i = 0; i < list.length; i += WRITE_CHUNK) {
        const chunk = list.slice(i, i + WRITE_CHUNK);
        const keys = JSON.stringify(chunk.map((g) => ({ b: g.bookId, d: g.day, p: g.page })));
        const existing = await q<{ book_id: unknown; day: string; page_number: unknown; segments: unknown; total_ms: unknown; histogram: Record<string, number>; readers: string }>(sql`
          select r.book_id, r.day::text as day, r.page_number, r.segments, r.total_ms, r.histogram, r.readers
          from jsonb_to_recordset(${keys}::jsonb) as k(b int, d date, p int)
          join ${table} r on r.book_id = k.b and r.day = k.d and r.page_number = k.p`);
        for (const e of existing) {
          const g = groups.get(`${num(e.book_id)}|${e.day}|${num(e.page_number)}`);
          if (g) addTotals(g.totals, num(e.segments), num(e.total_ms), e.histogram, decode(e.readers));
        }
        const values = JSON.stringify(chunk.map((g) => ({
          b: g.bookId, d: g.day, p: g.page, s: g.totals.segments, t: g.totals.totalMs,
          h: Object.fromEntries(g.totals.histogram), r: Buffer.from(g.totals.readers).toString('base64'),
        })));
        await tx.execute(sql`
          insert into ${table} (book_id, day, page_number, segments, total_ms, histogram, readers)
          select x.b, x.d, x.p, x.s, x.t, x.h, x.r from jsonb_to_recordset(${values}::jsonb) as x(b int, d date, p int, s bigint, t bigint, h jsonb, r text)
          on conflict (book_id, day, page_number) do update set segments = excluded.segments, total_ms = excluded.total_ms,
            histogram = excluded.histogram, readers = excluded.readers`);
      }
      return finishBatch(tx, grain.state, batch);
    });
  }

  /** Runs steps until caught up (or `maxSteps`); answers the event ids moved past. `grain`: fold only the day or the month rows (the bench times them apart). */
  async catchUp(maxSteps = Number.POSITIVE_INFINITY, grain?: 'days' | 'months'): Promise<number> {
    const step = grain ? () => this.stepGrain(grain === 'days' ? DAYS : MONTHS) : () => this.step();
    let moved = 0;
    for (let i = 0; i < maxSteps; i++) {
      const n = await step();
      if (n === 0) break;
      moved += n;
    }
    return moved;
  }

  /**
   * Page totals of a book over [from, to) from the rollup plus the raw rows
   * it lacks, or null when the range holds no whole UTC day (the exact query
   * is cheap then). `run` executes inside the caller's read transaction.
   */
  async pageTotals(
    run: <T>(query: ReturnType<typeof sql>) => Promise<T[]>,
    bookId: number, asked: { from: Date | null; to: Date | null }, pageNumber: number | undefined,
  ): Promise<Map<number, PageTotals> | null> {
    const range = openEndIfFuture(asked);
    const fullFrom = range.from ? new Date(Math.ceil(range.from.getTime() / DAY_MS) * DAY_MS) : null;
    const fullTo = range.to ? new Date(Math.floor(range.to.getTime() / DAY_MS) * DAY_MS) : null;
    if (fullFrom && fullTo && fullFrom >= fullTo) return null;
    const states = await run<{ name: string; watermark: unknown }>(sql`select name, watermark from analytics_rollup_state where name in (${DAYS.state}, ${MONTHS.state})`);
    const watermarkOf = (grain: Grain) => num(states.find((st) => st.name === grain.state)?.watermark);
    // Whole UTC months inside the whole days from the month rows, the days around them from the day rows.
    const monthFrom = fullFrom ? new Date(Date.UTC(fullFrom.getUTCFullYear(), fullFrom.getUTCMonth() + (fullFrom.getUTCDate() === 1 ? 0 : 1), 1)) : null;
    const monthTo = fullTo ? new Date(Date.UTC(fullTo.getUTCFullYear(), fullTo.getUTCMonth(), 1)) : null;
    const spans: { grain: Grain; from: Date | null; to: Date | null }[] = [];
    if (!monthFrom || !monthTo || monthFrom < monthTo) {
      spans.push({ grain: MONTHS, from: monthFrom, to: monthTo });
      if (monthFrom && (!fullFrom || fullFrom < monthFrom)) spans.push({ grain: DAYS, from: fullFrom, to: monthFrom });
      if (monthTo && (!fullTo || monthTo < fullTo)) spans.push({ grain: DAYS, from: monthTo, to: fullTo });
    } else {
      spans.push({ grain: DAYS, from: fullFrom, to: fullTo });
    }
    const page = pageNumber !== undefined ? sql`and page_number = ${pageNumber}` : sql``;
    const iso = (d: Date) => d.toISOString();
    const rolledParts = spans.map((span) => sql`select page_number, segments, total_ms, histogram, readers from ${sql.identifier(span.grain.table)}
      where book_id = ${bookId} ${span.from ? sql`and day >= ${dayOf(span.from)}::date` : sql``} ${span.to ? sql`and day < ${dayOf(span.to)}::date` : sql``} ${page}`);
    const rolled = await run<{ page_number: unknown; segments: unknown; total_ms: unknown; histogram: Record<string, number>; readers: string }>(sql.join(rolledParts, sql` union all `));
    const pages = new Map<number, PageTotals>();
    const of = (n: number) => {
      let t = pages.get(n);
      if (!t) pages.set(n, (t = emptyTotals()));
      return t;
    };
    for (const r of rolled) addTotals(of(num(r.page_number)), num(r.segments), num(r.total_ms), r.histogram, decode(r.readers));
    // What the rollups lack: the partial days at the edges, and in each span the events above its grain's watermark.
    const segment = sql`book_id = ${bookId} and event_type = 'page_segment_completed' and page_number is not null ${page}`;
    const parts = [];
    if (range.from && fullFrom && range.from < fullFrom) parts.push(sql`select page_number, active_ms, viewer_id, session_id from interaction_events
      where ${segment} and occurred_at >= ${iso(range.from)}::timestamptz and occurred_at < ${iso(fullFrom)}::timestamptz`);
    if (range.to && fullTo && fullTo < range.to) parts.push(sql`select page_number, active_ms, viewer_id, session_id from interaction_events
      where ${segment} and occurred_at >= ${iso(fullTo)}::timestamptz and occurred_at < ${iso(range.to)}::timestamptz`);
    for (const span of spans) parts.push(sql`select page_number, active_ms, viewer_id, session_id from interaction_events
      where id > ${watermarkOf(span.grain)} and ${segment} ${span.from ? sql`and occurred_at >= ${iso(span.from)}::timestamptz` : sql``}
      ${span.to ? sql`and occurred_at < ${iso(span.to)}::timestamptz` : sql``}`);
    const raw = await run<{ page_number: unknown; active_ms: unknown; viewer_id: unknown; session_id: unknown }>(sql.join(parts, sql` union all `));
    for (const r of raw) addSegment(of(num(r.page_number)), num(r.active_ms), readerKey(r.viewer_id, r.session_id));
    return pages;
  }
}
