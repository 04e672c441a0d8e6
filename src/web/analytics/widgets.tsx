/**
 * What the analytics screens share: the range bar (presets, a custom range,
 * the team switch, all kept in the address), the figures with their change
 * from the previous period, the views-over-time bars with their table, the
 * top lists, and the Company-plan explanation.
 */
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso/router';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { call, client, type Problem, type Result } from '../api.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Loading } from '../components/loading.tsx';
import { Select } from '../components/select.tsx';
import { Table } from '../components/table.tsx';
import { PRESETS, change, customDays, duration, rangeHref, rangeLabel, readRange, type RangeState } from './range.ts';

/** What a book's sections ask the book operations: the range, the switch, and the workspace's time zone. */
export interface BookQuery {
  date: string;
  exclude_team: boolean;
  book_id: string;
  tz: string;
  tracked_link_id?: number;
}

export interface Loaded<T> {
  data: T | undefined;
  problem: Problem | null;
  loading: boolean;
}

/**
 * Reads again whenever `key` changes (the range, the switch); the last answer stays shown meanwhile.
 * `enabled` false (a section not yet near the view, see useWhenNear): nothing is read and nothing shown.
 */
export function useQuery<T>(key: string, load: () => Promise<Result<T>>, enabled = true): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({ data: undefined, problem: null, loading: enabled });
  const latest = useRef(load);
  latest.current = load;
  useEffect(() => {
    if (!enabled) {
      setState({ data: undefined, problem: null, loading: false });
      return;
    }
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    void latest.current().then((result) => {
      if (!current) return;
      setState((s) => (result.ok ? { data: result.data, problem: null, loading: false } : { data: s.data, problem: result.problem, loading: false }));
    });
    return () => {
      current = false;
    };
  }, [key, enabled]);
  return state;
}

/** How long a section below the view waits before it reads anyway (a reader that never scrolls there still gets it). */
export const DEFERRED_MS = 1500;

/**
 * Whether a section should read `key` now: once it is within 300 px of the view, or DEFERRED_MS after the key
 * was set (on arrival, or after a change of range or filter), whichever comes first. So the sections below the
 * view (the events, the leads) leave the browser's 6 connections to what is on screen when the screen opens or
 * its range changes, and still always read: a keyboard or screen-reader user who reaches them, or nobody, gets
 * them within the delay. Until then the section shows no rows, never the previous range's. `hold`: while the
 * screen's top (the figures) is still reading, nearness does not count: on arrival the sections above are
 * still empty, so everything is near the view until they fill.
 */
export function useWhenNear(ref: { current: Element | null }, key: string, hold = false): boolean {
  const [near, setNear] = useState(false);
  const [ready, setReady] = useState<string | null>(null);
  useEffect(() => {
    const element = ref.current;
    if (!element || typeof IntersectionObserver === 'undefined') {
      setNear(true);
      return;
    }
    const observer = new IntersectionObserver((entries) => setNear(entries.some((e) => e.isIntersecting)), { rootMargin: '300px 0px' });
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  useEffect(() => {
    if (near && !hold) setReady(key);
  }, [near, hold, key]);
  useEffect(() => {
    const timer = setTimeout(() => setReady(key), DEFERRED_MS);
    return () => clearTimeout(timer);
  }, [key]);
  return (near && !hold) || ready === key;
}

/** One screenful of a cursor-paginated list: its rows and the cursor of the next, null at the end. */
export interface Batch<R> {
  rows: R[];
  cursor: string | null;
}

/**
 * A list read a screenful at a time: the first batch (read again when `key` changes,
 * dropping the batches shown after it), then each further one appended by `showMore`.
 */
export function usePagedList<R>(key: string, load: (cursor?: string) => Promise<Result<Batch<R>>>, enabled = true) {
  const [more, setMore] = useState<Batch<R> | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const first = useQuery(key, () => {
    setMore(null);
    return load();
  }, enabled);
  const rows = [...(first.data?.rows ?? []), ...(more?.rows ?? [])];
  const cursor = more ? more.cursor : first.data?.cursor ?? null;
  const showMore = () => {
    if (!cursor) return;
    setLoadingMore(true);
    void load(cursor).then((result) => {
      setLoadingMore(false);
      if (result.ok) setMore({ rows: [...(more?.rows ?? []), ...result.data.rows], cursor: result.data.cursor });
    });
  };
  return { first, rows, cursor, loadingMore, showMore };
}

/** "Show more …" under a list while there is a next screenful (nothing at the end). */
export function ShowMore({ what, cursor, busy, onShow }: { what: string; cursor: string | null; busy: boolean; onShow: () => void }) {
  return cursor ? <Button busy={busy} onClick={onShow}>Show more {what}</Button> : null;
}

/** `call` keeping the whole answer (`data` and `meta`). */
export function callWhole<B>(request: Promise<{ data?: B; error?: unknown; response: Response }>): Promise<Result<B>> {
  return call(request.then((r) => ({ ...r, data: r.data === undefined ? undefined : { data: r.data } })));
}

/** The range and switch of the address, and a way to change them. */
/** The screen's state from the address, and a change of it (`replace`: in place of the current history entry). */
export function useRange(): [RangeState, (next: RangeState, replace?: boolean) => void] {
  const location = useLocation();
  const state = readRange(location.query);
  return [state, (next, replace) => location.route(rangeHref(location.path, next), replace)];
}

export function RangeBar({ state, onChange, timeZone }: { state: RangeState; onChange: (next: RangeState) => void; timeZone: string | undefined }) {
  const custom = customDays(state.date);
  const [from, setFrom] = useState(custom?.[0] ?? '');
  const [to, setTo] = useState(custom?.[1] ?? '');
  const [choosing, setChoosing] = useState(custom !== null);
  const options = [...PRESETS, { value: 'custom', label: 'Custom range' }];
  return (
    <section class="card analytics-range" aria-label="Date range and filters">
      <div class="analytics-range-row">
        <Select
          label="Date range"
          value={choosing || custom ? 'custom' : state.date}
          options={options}
          onValue={(value) => {
            if (value === 'custom') setChoosing(true);
            else {
              setChoosing(false);
              onChange({ ...state, date: value });
            }
          }}
        />
        {(choosing || custom) && (
          <form
            class="analytics-custom"
            onSubmit={(event) => {
              event.preventDefault();
              if (from && to) onChange({ ...state, date: from <= to ? `${from},${to}` : `${to},${from}` });
            }}
          >
            <div class="field"><label for="range-from">From</label><input id="range-from" type="date" value={from} onInput={(e) => setFrom(e.currentTarget.value)} required /></div>
            <div class="field"><label for="range-to">To</label><input id="range-to" type="date" value={to} onInput={(e) => setTo(e.currentTarget.value)} required /></div>
            <Button type="submit">Apply range</Button>
          </form>
        )}
        <div class="field analytics-team">
          <input id="exclude-team" type="checkbox" checked={state.excludeTeam} onChange={(e) => onChange({ ...state, excludeTeam: e.currentTarget.checked })} />
          <label for="exclude-team">Exclude the team's own visits</label>
        </div>
      </div>
      <p class="hint">
        Showing {rangeLabel(state.date)}{timeZone ? `, days in ${timeZone}` : ''}{state.excludeTeam ? ', without the team' : ''}.
      </p>
    </section>
  );
}

export interface FigureSet {
  views: number;
  unique_readers: number;
  reading_seconds: number;
  leads: number;
  link_clicks: number;
}

const FIGURES: { key: keyof FigureSet; label: string; format: (n: number) => string }[] = [
  { key: 'views', label: 'Views', format: (n) => n.toLocaleString('en') },
  { key: 'unique_readers', label: 'Unique readers', format: (n) => n.toLocaleString('en') },
  { key: 'reading_seconds', label: 'Reading time', format: duration },
  { key: 'leads', label: 'Leads', format: (n) => n.toLocaleString('en') },
  { key: 'link_clicks', label: 'Link clicks', format: (n) => n.toLocaleString('en') },
];

/** The five figures, each with its change from the previous period in words (an arrow too: colour never alone). */
export function Figures({ current, previous }: { current: FigureSet; previous: FigureSet | null }) {
  return (
    <dl class="analytics-figures" aria-label="Figures">
      {FIGURES.map((f) => {
        const delta = previous ? change(current[f.key], previous[f.key]) : null;
        return (
          <div key={f.key} class="analytics-figure" data-figure={f.key}>
            <dt>{f.label}</dt>
            <dd>
              <span class="analytics-value">{f.format(current[f.key])}</span>
              {delta && previous && (
                <span class={`analytics-change analytics-change-${delta.direction}`}>
                  <span aria-hidden="true">{delta.direction === 'up' ? '▲ ' : delta.direction === 'down' ? '▼ ' : '= '}</span>
                  {delta.text} <span class="analytics-previous">(previous period: {f.format(previous[f.key])})</span>
                </span>
              )}
            </dd>
          </div>
        );
      })}
    </dl>
  );
}

/** The answers `Headline` shows: the summary with its previous period, and the series. */
export interface HeadlineData {
  summary: Loaded<{ data: FigureSet; meta: { previous: FigureSet | null; time_zone: string } }>;
  series: Loaded<{ data: Bucket[]; meta: { interval: string; today: string } }>;
}

/**
 * The top of both screens (the overview and a book's): the range bar, reading
 * now, the five figures with their change, and views over time.
 */
export function Headline({ state, onChange, bookId, summary, series }: HeadlineData & { state: RangeState; onChange: (next: RangeState) => void; bookId?: string }) {
  return (
    <>
      <RangeBar state={state} onChange={onChange} timeZone={summary.data?.meta.time_zone} />
      <ReadingNow bookId={bookId} excludeTeam={state.excludeTeam} />
      <div aria-live="polite" aria-busy={summary.loading}>
        <Wait loading={summary.loading && !summary.data} what="figures" />
        <Problems problem={summary.problem} what="figures" />
        {summary.data && <Figures current={summary.data.data} previous={summary.data.meta.previous} />}
      </div>
      <Problems problem={series.problem} what="views over time" />
      {series.data && <ViewsOverTime buckets={series.data.data} interval={series.data.meta.interval} today={series.data.meta.today} loading={series.loading} />}
    </>
  );
}

export interface Bucket {
  period: string;
  views: number;
  unique_readers: number;
  reading_seconds: number;
}

/** Bars in plain HTML (one per bucket, today's marked in words too) and the same numbers as a table. */
export function ViewsOverTime({ buckets, interval, today, loading = false }: { buckets: Bucket[]; interval: string; today: string; loading?: boolean }) {
  const [asTable, setAsTable] = useState(false);
  const max = Math.max(1, ...buckets.map((b) => b.views));
  const total = buckets.reduce((n, b) => n + b.views, 0);
  const busiest = buckets.reduce<Bucket | null>((best, b) => (!best || b.views > best.views ? b : best), null);
  const per = interval === 'day' ? 'day' : interval === 'week' ? 'week (from Monday)' : 'month';
  return (
    <section class="card" aria-labelledby="views-over-time" aria-busy={loading}>
      <h2 id="views-over-time">Views over time</h2>
      <p>
        {total.toLocaleString('en')} views by {per}
        {busiest && busiest.views > 0 ? `; the most on ${busiest.period} (${busiest.views.toLocaleString('en')})` : ''}.
      </p>
      <Button onClick={() => setAsTable(!asTable)} aria-pressed={asTable}>Show as table</Button>
      {asTable ? (
        <Table caption={`Views by ${per}`} head={<tr><th scope="col">Period from</th><th scope="col">Views</th><th scope="col">Unique readers</th><th scope="col">Reading time</th></tr>}>
          {buckets.map((b) => (
            <tr key={b.period}><th scope="row">{b.period}</th><td>{b.views}</td><td>{b.unique_readers}</td><td>{duration(b.reading_seconds)}</td></tr>
          ))}
        </Table>
      ) : (
        <div class="analytics-bars" aria-hidden="true">
          {buckets.map((b) => {
            const isToday = interval === 'day' && b.period === today;
            return (
              <div key={b.period} class={`analytics-bar${isToday ? ' analytics-bar-today' : ''}`} title={`${b.period}: ${b.views} views${isToday ? ' (today)' : ''}`}>
                <span style={{ height: `${(b.views / max) * 100}%` }} />
              </div>
            );
          })}
        </div>
      )}
      {!asTable && buckets.length > 0 && (
        <p class="hint analytics-axis"><span>{buckets[0]!.period}</span><span>{buckets.at(-1)!.period}{interval === 'day' && buckets.at(-1)!.period === today ? ' (today, hatched)' : ''}</span></p>
      )}
    </section>
  );
}

/** A top list as a table (name, views, unique readers, reading time). */
export function TopList({ title, empty, rows, loading = false }: { title: string; empty: string; loading?: boolean; rows: { key: string; name: ComponentChildren; views: number; unique_readers: number; reading_seconds: number }[] }) {
  const id = useId();
  return (
    <section class="card" aria-labelledby={id} aria-busy={loading}>
      <h2 id={id}>{title}</h2>
      {rows.length === 0 ? <p class="empty">{empty}</p> : (
        <Table caption={`${title}: views, readers and reading time`} hideCaption head={<tr><th scope="col">Name</th><th scope="col">Views</th><th scope="col">Unique readers</th><th scope="col">Reading time</th></tr>}>
          {rows.map((r) => (
            <tr key={r.key}><th scope="row">{r.name}</th><td>{r.views}</td><td>{r.unique_readers}</td><td>{duration(r.reading_seconds)}</td></tr>
          ))}
        </Table>
      )}
    </section>
  );
}

/** The answer for a workspace without the Company plan (or a problem in words). */
export function Problems({ problem, what }: { problem: Problem | null; what: string }) {
  if (problem?.type === 'PlanRestrictionException') {
    return (
      <section class="card" aria-labelledby="plan">
        <h2 id="plan">Analytics need the Company plan</h2>
        <p>
          Reader analytics (views, readers, time per page, leads and where readers come from) are part of the Company plan. This workspace is on another plan,
          so no figures are shown. An owner of the workspace can change the plan; the readers' visits are recorded meanwhile.
        </p>
      </section>
    );
  }
  return <ErrorMessage problem={problem} title={`The ${what} could not be read`} />;
}

export function Wait({ loading, what }: { loading: boolean; what: string }) {
  return loading ? <Loading what={what} /> : null;
}

/** What a section waiting for useWhenNear says instead of rows. */
export function Deferred({ shown }: { shown: boolean }) {
  return shown ? <p class="empty">Read when this section comes into view.</p> : null;
}

/** READING_NOW_POLL_MS: a short poll (see docs/analytics-screens.md for why not server-sent events). */
export const READING_NOW_POLL_MS = 15_000;

/** The open reader sessions of the workspace or a book, read again every 15 s while the screen is open. */
export function ReadingNow({ bookId, excludeTeam }: { bookId?: string; excludeTeam: boolean }) {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = window.setInterval(() => setTick((n) => n + 1), READING_NOW_POLL_MS);
    return () => window.clearInterval(timer);
  }, []);
  const query = { exclude_team: excludeTeam, ...(bookId ? { book_id: bookId } : {}) };
  const now = useQuery(`${JSON.stringify(query)}#${tick}`, () => call(client.GET('/v1/analytics/reading-now', { params: { query } })));
  if (now.problem && !now.data) return <Problems problem={now.problem} what="readers reading now" />;
  if (!now.data) return null;
  return (
    <p class="analytics-now" role="status" data-reading-now={now.data.sessions}>
      <span class="analytics-now-dot" aria-hidden="true" />
      Reading now: <strong>{now.data.sessions}</strong> {now.data.sessions === 1 ? 'reader' : 'readers'} {bookId ? 'in this book' : 'in the workspace'}
    </p>
  );
}
