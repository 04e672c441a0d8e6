/**
 * npm run bench:analytics-screens — the analytics screens in Chromium on
 * PostgreSQL (DATABASE_URL, default the local test server), at the issue's
 * size: one book of 40 pages with BENCH_SCREEN_EVENTS interaction events
 * (default 1,000,000: bench:analytics's seed, 10 events a visit, a third of
 * the visits anonymous, a fifth through one of 5 tracked links, 10,000
 * readers, over 90 days), and 99 other books with BENCH_OTHER_VISITS visits
 * each (default 1,000) for the workspace overview of 100 books. The rollups
 * are folded as the analytics.rollup job would. Then, BENCH_ITERATIONS times
 * (default 5), for the book screen and the overview:
 *  - navigation: from `page.goto` to every figure, chart and table drawn (no
 *    element `aria-busy`, the page table, the flow, the readers; the events and
 *    the leads, below the view, read when they come near it or 1.5 s after, so
 *    they are not waited for: their headings only),
 *    timed in the page (a check every frame from the navigation's start) and
 *    as Playwright sees it (its own round trips included);
 *  - range change: choosing "Last 30 days" to the new figures drawn and every
 *    section settled;
 *  - the reference, in the same run: the API calls the screen makes, fired
 *    at once with fetch (an API key) and timed until the last answer, so the
 *    screen's own overhead is the difference. Each call's p50 is printed too,
 *    to show which one sets the floor.
 * Prints p50 and the worst of each, with the machine's load average, and
 * where the last navigation's time went: each request the page made (start
 * and end, from the Resource Timing API), the first paint and the moment the
 * screen was complete.
 */
import os from 'node:os';
import { sql } from 'drizzle-orm';
import { seedEvents, seedVisits } from './analytics-seed-sql.ts';

// Before the test helpers are loaded: they read DATABASE_URL when imported.
process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const { insertBook } = await import('../test/factories.ts');
const { heading, launchWebBrowser, openApp, personIn, signInThroughScreen, startWebService } = await import('../test/web/web-browser.ts');
const EVENTS = Number(process.env.BENCH_SCREEN_EVENTS ?? 1_000_000);
const OTHER_VISITS = Number(process.env.BENCH_OTHER_VISITS ?? 1_000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 5);
const PAGES = 40;
const PER_VISIT = 10;
const READERS = 10_000;
const DAYS = 90;
const OTHER_BOOKS = 99;
const say = (line: string) => process.stdout.write(`${line}\n`);
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');

say(`machine: ${os.cpus().length} cores, load average ${load()} at start — other work on this shared machine skews every figure below`);
const svc = await startWebService({ RATE_LIMIT_WORKSPACE_PER_MINUTE: 0, RATE_LIMIT_ENDPOINT_PER_MINUTE: 0 });
try {
  const ws = await svc.workspace({ name: 'Bench Press' });
  await personIn(svc, ws.id, 'bench@example.com', 'owner');
  const book = await insertBook(svc, ws.id, { status: 'publish', pageCount: PAGES, name: 'Bench catalogue' });
  const db = svc.runtime.database.db;
  const run = (query: ReturnType<typeof sql>) => db.execute(query);
  const one = async <T>(query: ReturnType<typeof sql>): Promise<T> => ((await run(query)) as unknown as { rows: T[] }).rows[0]!;
  const seeded = Date.now();
  const visits = Math.ceil(EVENTS / PER_VISIT);
  // The seed of bench/analytics-server.ts (bench/analytics-seed-sql.ts), for this book.
  await run(sql`insert into viewers (workspace_id, email, name) select ${ws.id}, 'reader' || g || '@example.com', 'Reader ' || g from generate_series(1, ${READERS}) g`);
  const { min_viewer: minViewer } = await one<{ min_viewer: number }>(sql`select min(id)::int as min_viewer from viewers where workspace_id = ${ws.id}`);
  await run(sql`insert into tracked_links (workspace_id, book_id, name, slug) select ${ws.id}, ${book.id}, 'Link ' || g, 'link-' || g from generate_series(1, 5) g`);
  const { min_link: minLink } = await one<{ min_link: number }>(sql`select min(id)::int as min_link from tracked_links where book_id = ${book.id}`);
  const shape = { workspaceId: ws.id, bookId: book.id, minViewer, readers: READERS, minLink, pages: PAGES, days: DAYS, perVisit: PER_VISIT };
  await run(seedVisits(shape, 1, visits));
  const { max_view: maxView } = await one<{ max_view: number }>(sql`select max(id)::int as max_view from view_events where book_id = ${book.id}`);
  await run(seedEvents(shape, 0, maxView));
  // 99 other books, each with a few visits of 4 events, for the overview of 100 books.
  const others: number[] = [];
  for (let i = 0; i < OTHER_BOOKS; i++) others.push((await insertBook(svc, ws.id, { status: 'publish', pageCount: 12, name: `Catalogue ${i + 2}` })).id);
  await run(sql`
    insert into view_events (workspace_id, book_id, session_id, viewer_id, reads, clicks, pages_viewed, pages_seen, active_ms, duration_seconds, engagement_score, recorded_at, updated_at)
    select ${ws.id}, b, 'other-' || b || '-' || g, case when g % 2 = 0 then ${minViewer} + (g * 31) % ${READERS} end, 1, 0, 3, array[1, 2, 3], 15000, 15, 10,
           now() - interval '1 hour' - ((g::bigint * 104729) % (${DAYS} * 86400)) * interval '1 second', now()
    from unnest(${`{${others.join(',')}}`}::int[]) b, generate_series(1, ${OTHER_VISITS}) g`);
  await run(sql`
    insert into interaction_events (workspace_id, book_id, view_event_id, viewer_id, session_id, sequence, event_type, page_number, active_ms, source_type, occurred_at, created_at)
    select v.workspace_id, v.book_id, v.id, v.viewer_id, v.session_id, s, case when s = 0 then 'session_started' else 'page_segment_completed' end,
           greatest(1, s), case when s > 0 then 5000 end, 'direct', v.recorded_at + s * interval '10 seconds', v.recorded_at + s * interval '10 seconds'
    from view_events v, generate_series(0, 3) s where v.book_id <> ${book.id} and v.workspace_id = ${ws.id}`);
  await run(sql`vacuum analyze`);
  const { rollups, flowRollups } = svc.runtime.services.analytics;
  await rollups.catchUp(Number.POSITIVE_INFINITY, 'days');
  await rollups.catchUp(Number.POSITIVE_INFINITY, 'months');
  await flowRollups.catchUp();
  const counts = await one<{ events: number; visits: number; unfolded: number }>(sql`select (select count(*) from interaction_events where book_id = ${book.id})::int as events, (select count(*) from view_events where workspace_id = ${ws.id})::int as visits,
    (select count(*) from interaction_events where id > (select min(watermark) from analytics_rollup_state where name in ('page_days', 'page_months', 'page_flow')))::int as unfolded`);
  // The queries read what the fold has not reached raw: a seed the fold stops short of measures another state than a live service's, whose job folds every minute.
  say(`seeded ${counts.events.toLocaleString('en')} events on the book, ${counts.visits.toLocaleString('en')} visits over ${OTHER_BOOKS + 1} books, rollups folded (${counts.unfolded.toLocaleString('en')} events above their watermarks), in ${((Date.now() - seeded) / 1000).toFixed(0)} s`);

  const { key } = await svc.key(ws.id, ['*']);
  /** The API calls a screen makes, at once, as the screen would make them; the time until the last answer, and each call's. */
  const reference = async (calls: [string, Record<string, string | number | boolean>][]) => {
    const t = performance.now();
    const each = await Promise.all(calls.map(async ([path, query]) => {
      const target = new URL(svc.origin + path);
      for (const [k, v] of Object.entries(query)) target.searchParams.set(k, String(v));
      const start = performance.now();
      const response = await fetch(target, { headers: { authorization: `Bearer ${key}` } });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`${path}: ${response.status}`);
      return performance.now() - start;
    }));
    return { all: performance.now() - t, each };
  };
  const bookCalls = (date: string) => {
    const q = { date, exclude_team: false, book_id: book.randomId };
    const b = { ...q, tz: 'UTC' };
    return [
      [`/v1/books/${book.randomId}`, {}], ['/v1/analytics/summary', q], ['/v1/analytics/views-over-time', q], ['/v1/analytics/top-tracked-links', { ...q, limit: 100 }],
      ['/v1/analytics/reading-now', { exclude_team: false, book_id: book.randomId }], ['/v1/analytics/page-performance', b], [`/v1/books/${book.randomId}/pages`, { limit: 200 }],
      ['/v1/analytics/book-flow', b], ['/v1/analytics/readers', { ...b, include_anonymous: true, limit: 50 }], ['/v1/analytics/interaction-events', { ...b, limit: 50 }],
      ['/v1/analytics/leads', { ...b, limit: 50 }],
    ] as [string, Record<string, string | number | boolean>][];
  };
  const overviewCalls = (date: string) => {
    const q = { date, exclude_team: false };
    return ['summary', 'views-over-time', 'top-books', 'top-tracked-links', 'top-embedding-sites', 'reading-now'].map((p) => [`/v1/analytics/${p}`, p === 'reading-now' ? { exclude_team: false } : q]) as [string, Record<string, string | number | boolean>][];
  };

  const browser = await launchWebBrowser();
  const tab = await openApp(browser);
  const { page } = tab;
  await signInThroughScreen(page, svc, 'bench@example.com');
  // In the page, every frame: the first instant the screen is complete, from the navigation's start or from the
  // range's change event (having seen it busy since), so Playwright's own round trips are not in the figure.
  await page.addInitScript((pages: number) => {
    const w = window as unknown as { __bench: { since: number; at: number | null; busy: boolean } };
    w.__bench = { since: 0, at: null, busy: true };
    document.addEventListener('change', (event) => {
      if ((event.target as HTMLElement).tagName === 'SELECT') w.__bench = { since: performance.now(), at: null, busy: false };
    }, true);
    const done = () => {
      const has = (selector: string) => document.querySelector(selector) !== null;
      const busy = has('[aria-busy="true"]') || has('.loading');
      if (busy) w.__bench.busy = true;
      if (busy || !w.__bench.busy || !has('[data-figure="views"] .analytics-value') || !has('[aria-labelledby="views-over-time"] .analytics-bars')) return false;
      return location.pathname.includes('/books/')
        ? document.querySelectorAll('[data-page]').length >= pages && has('[data-flow-summary]') && has('#readers') && has('#leads')
        : has('.card h2') && [...document.querySelectorAll('h2')].some((h) => h.textContent === 'Top embedding sites');
    };
    const check = () => {
      if (w.__bench.at === null && done()) w.__bench.at = performance.now();
      requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  }, PAGES);
  const inPage = () => page.waitForFunction(() => {
    const b = (window as unknown as { __bench: { since: number; at: number | null } }).__bench;
    return b.at === null ? false : b.at - b.since;
  }).then((handle) => handle.jsonValue() as Promise<number>);
  const settled = () => page.waitForFunction(() => !document.querySelector('[aria-busy="true"]') && !document.querySelector('.loading'));
  // The views over time by their section: the book's reach-by-page chart is `.analytics-bars` too, and it alone
  // let the screen count as complete before the series had answered (until 26 November).
  const bookComplete = async () => {
    await page.locator('[data-figure="views"] .analytics-value').waitFor();
    await page.locator('[aria-labelledby="views-over-time"] .analytics-bars').waitFor();
    await page.getByRole('table', { name: 'Page performance' }).locator(`tbody tr:nth-child(${PAGES})`).waitFor();
    await page.locator('[data-flow-summary]').waitFor();
    await page.getByRole('heading', { name: 'Readers' }).waitFor();
    await page.getByRole('heading', { name: 'Leads' }).waitFor();
    await settled();
  };
  const overviewComplete = async () => {
    await page.locator('[data-figure="views"] .analytics-value').waitFor();
    await page.locator('[aria-labelledby="views-over-time"] .analytics-bars').waitFor();
    await page.getByRole('heading', { name: 'Top embedding sites' }).waitFor();
    await page.getByRole('heading', { name: 'Top books' }).waitFor();
    await settled();
  };
  const stats = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return `p50 ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms, worst ${sorted.at(-1)!.toFixed(0)} ms`;
  };
  const timelines: { name: string; html: number; domReady: number; paint: number; now: number; resources: { name: string; start: number; end: number }[] }[] = [];
  const measure = async (name: string, path: string, complete: () => Promise<void>, calls: (date: string) => [string, Record<string, string | number | boolean>][]) => {
    const navigation: number[] = [];
    const change: number[] = [];
    const navigationInPage: number[] = [];
    const changeInPage: number[] = [];
    const ref90: number[] = [];
    const ref30: number[] = [];
    const perCall: number[][] = calls('90d').map(() => []);
    for (let i = 0; i < ITERATIONS; i++) {
      await page.goto(`${svc.origin}/app`);
      await heading(page, 'Home');
      let t = performance.now();
      await page.goto(`${svc.origin}${path}?range=90d`);
      await complete().catch(async (error: unknown) => {
        throw new Error(`The screen shows: ${(await page.evaluate(() => document.body.innerText)).slice(0, 800)}`, { cause: error });
      });
      navigation.push(performance.now() - t);
      navigationInPage.push(await inPage());
      if (i === ITERATIONS - 1) {
        const timeline = await page.evaluate(() => {
          const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
          const paint = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? 0;
          const resources = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map((r) => ({ name: r.name.replace(location.origin, ''), start: r.startTime, end: r.responseEnd }));
          return { html: nav.responseEnd, domReady: nav.domContentLoadedEventEnd, paint, now: performance.now(), resources };
        });
        timelines.push({ name, ...timeline });
      }
      const before = await page.locator('[data-figure="views"] .analytics-value').textContent();
      t = performance.now();
      await page.getByLabel('Date range', { exact: true }).selectOption('30d');
      await page.waitForFunction((old) => document.querySelector('[data-figure="views"] .analytics-value')?.textContent !== old, before);
      await complete();
      change.push(performance.now() - t);
      changeInPage.push(await inPage());
      const r90 = await reference(calls('90d'));
      ref90.push(r90.all);
      r90.each.forEach((ms, j) => perCall[j]!.push(ms));
      ref30.push((await reference(calls('30d'))).all);
    }
    say(`${name}, load average ${load()}:`);
    say(`  complete after navigation (90 days): ${stats(navigationInPage)} in the page (${stats(navigation)} seen by Playwright); reference, its ${calls('90d').length} API calls at once: ${stats(ref90)}`);
    say(`  range change to 30 days, redrawn:    ${stats(changeInPage)} in the page (${stats(change)} seen by Playwright); reference, its API calls for 30 days: ${stats(ref30)}`);
    say(`  each call (90 days, fired together): ${calls('90d').map(([p], j) => `${p.replace('/v1/analytics/', '').replace(book.randomId, ':id')} ${stats(perCall[j]!).replace(/, worst.*/, '').replace('p50 ', '')}`).join('; ')}`);
  };
  await measure(`book screen, ${counts.events.toLocaleString('en')} events`, `/app/analytics/books/${book.randomId}`, bookComplete, bookCalls);
  await measure(`workspace overview, ${OTHER_BOOKS + 1} books`, '/app/analytics', overviewComplete, overviewCalls);
  for (const t of timelines) {
    say(`where the time went, the last navigation of the ${t.name} (ms from navigation start): HTML ${t.html.toFixed(0)}, DOM ready ${t.domReady.toFixed(0)}, first paint ${t.paint.toFixed(0)}, complete ${t.now.toFixed(0)}`);
    for (const r of t.resources.sort((a, b) => a.start - b.start)) say(`  ${r.start.toFixed(0).padStart(5)} → ${r.end.toFixed(0).padStart(5)}  ${r.name.slice(0, 120)}`);
  }
  if (tab.problems.length) say(`problems in the browser: ${tab.problems.slice(0, 5).join('; ')}`);
  await tab.close();
  await browser.close();
} finally {
  await svc.stop();
}
