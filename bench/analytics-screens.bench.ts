/**
 * npm run bench:analytics-screens — the book's analytics screen in Chromium
 * on PostgreSQL (DATABASE_URL, default the local test server): seeds one book
 * of 20 pages with BENCH_SCREEN_EVENTS page segments (default 200,000) over
 * visits of 5 segments in the last 90 days (one SQL statement), signs a person
 * in, then measures BENCH_ITERATIONS times (default 5):
 *  - navigation: from `page.goto` of /app/analytics/books/:id?range=90d to every
 *    figure, the views-over-time chart, the page table and the readers drawn;
 *  - range change: choosing "Last 30 days" to the figures, series and page
 *    table of the new range drawn (the summary request answered and rendered).
 * Prints p50 and the worst of each.
 */
import { sql } from 'drizzle-orm';

// Before the test helpers are loaded: they read DATABASE_URL when imported.
process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const { insertBook } = await import('../test/factories.ts');
const { heading, launchWebBrowser, openApp, personIn, signInThroughScreen, startWebService } = await import('../test/web/web-browser.ts');
const EVENTS = Number(process.env.BENCH_SCREEN_EVENTS ?? 200_000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 5);
const PAGES = 20;
const SEGMENTS_PER_VISIT = 5;
const say = (line: string) => process.stdout.write(`${line}\n`);

const svc = await startWebService();
try {
  const ws = await svc.workspace({ name: 'Bench Press' });
  await personIn(svc, ws.id, 'bench@example.com', 'owner');
  const book = await insertBook(svc, ws.id, { status: 'publish', pageCount: PAGES, name: 'Bench catalogue' });
  const visits = Math.ceil(EVENTS / SEGMENTS_PER_VISIT);
  const db = svc.runtime.database.db;
  const seeded = Date.now();
  await db.execute(sql`
    insert into view_events (workspace_id, book_id, session_id, reads, clicks, pages_viewed, active_ms, duration_seconds, engagement_score, recorded_at, updated_at)
    select ${ws.id}, ${book.id}, 'bench-' || g, 1, g % 3, ${SEGMENTS_PER_VISIT}, 20000, 20, 40, now() - ((g::bigint * 7776000) / ${visits}) * interval '1 second', now() - interval '1 day'
    from generate_series(1, ${visits}) g`);
  await db.execute(sql`
    insert into interaction_events (workspace_id, book_id, view_event_id, session_id, sequence, event_type, page_number, active_ms, source_type, occurred_at)
    select v.workspace_id, v.book_id, v.id, v.session_id, s, 'page_segment_completed', 1 + ((v.id + s * s) % ${PAGES}), 1000 + (v.id * s) % 9000, 'direct', v.recorded_at + s * interval '10 seconds'
    from view_events v cross join generate_series(1, ${SEGMENTS_PER_VISIT}) s where v.book_id = ${book.id}`);
  await db.execute(sql`analyze view_events`);
  await db.execute(sql`analyze interaction_events`);
  say(`seeded ${visits.toLocaleString('en')} visits, ${(visits * SEGMENTS_PER_VISIT).toLocaleString('en')} page segments in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);

  const browser = await launchWebBrowser();
  const tab = await openApp(browser);
  const { page } = tab;
  await signInThroughScreen(page, svc, 'bench@example.com');
  const complete = async () => {
    await page.locator('[data-figure="views"] .analytics-value').waitFor();
    await page.getByRole('table', { name: 'Page performance' }).locator(`tbody tr:nth-child(${PAGES})`).waitFor();
    await page.locator('.analytics-bars').waitFor();
    await page.getByRole('heading', { name: 'Readers' }).waitFor();
    await page.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
  };
  const navigation: number[] = [];
  const change: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    await page.goto(`${svc.origin}/app`);
    await heading(page, 'Home');
    let t = performance.now();
    await page.goto(`${svc.origin}/app/analytics/books/${book.randomId}?range=90d`);
    await complete().catch(async (error: unknown) => {
      throw new Error(`The screen shows: ${(await page.evaluate(() => document.body.innerText)).slice(0, 800)}`, { cause: error });
    });
    navigation.push(performance.now() - t);
    const before = await page.locator('[data-figure="views"] .analytics-value').textContent();
    t = performance.now();
    await page.getByLabel('Date range', { exact: true }).selectOption('30d');
    await page.waitForFunction((old) => document.querySelector('[data-figure="views"] .analytics-value')?.textContent !== old, before);
    await complete();
    change.push(performance.now() - t);
  }
  const stats = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return `p50 ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms, worst ${sorted.at(-1)!.toFixed(0)} ms`;
  };
  say(`book screen complete after navigation (90 days): ${stats(navigation)}`);
  say(`range change to 30 days, figures and page table redrawn: ${stats(change)}`);
  await tab.close();
  await browser.close();
} finally {
  await svc.stop();
}
