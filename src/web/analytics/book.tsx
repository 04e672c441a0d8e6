/**
 * Analytics → one book: its figures with their change, views over time,
 * per-page attention (each page tinted by its average active time, its
 * reach as a bar, all of it in a table too), the readers, and the CSV
 * exports of the range.
 */
import { useRoute } from 'preact-iso/router';
import { client } from '../api.ts';
import { Page } from '../components/page.tsx';
import { Table } from '../components/table.tsx';
import { formatDateTime } from '../format.ts';
import { duration, rangeHref } from './range.ts';
import { Headline, Problems, Wait, callWhole, useQuery, useRange } from './widgets.tsx';

const EXPORTS = [
  ['analytics', 'Daily summary'], ['interaction-events', 'Interaction events'], ['audit-log', 'Audit log'], ['access-audit', 'Access audit'],
  ['leads', 'Leads'], ['page-performance', 'Page performance'], ['reader-pages', 'Reader pages'], ['readers', 'Readers'],
] as const;

export default function BookAnalytics() {
  const { params } = useRoute();
  const bookId = params.id!;
  const [state, setState] = useRange();
  const query = { date: state.date, exclude_team: state.excludeTeam, book_id: bookId };
  const key = JSON.stringify(query);
  const book = useQuery(`book${bookId}`, () => callWhole(client.GET('/v1/books/{book}', { params: { path: { book: bookId } } })));
  const summary = useQuery(`s${key}`, () => callWhole(client.GET('/v1/analytics/summary', { params: { query } })));
  const series = useQuery(`v${key}`, () => callWhole(client.GET('/v1/analytics/views-over-time', { params: { query } })));
  const pages = useQuery(`p${key}`, () => callWhole(client.GET('/v1/analytics/page-performance', { params: { query } })));
  const readers = useQuery(`r${key}`, () => callWhole(client.GET('/v1/analytics/readers', { params: { query: { ...query, include_anonymous: true, limit: 50 } } })));
  const title = book.data ? `Analytics: ${book.data.data.name}` : 'Book analytics';
  const planned = summary.problem?.type === 'PlanRestrictionException';
  const visits = summary.data?.data.unique_readers ?? 0;
  const pageRows = pages.data?.data ?? [];
  const maxAvg = Math.max(1, ...pageRows.map((p) => p.avg_active_ms_per_reader));
  const exportQuery = new URLSearchParams({ date: state.date, ...(state.excludeTeam ? { exclude_team: 'true' } : {}) }).toString();
  return (
    <Page title={title}>
      <p><a href={rangeHref('/app/analytics', state)}>All analytics</a></p>
      <Problems problem={book.problem} what="book" />
      {planned ? <Problems problem={summary.problem} what="figures" /> : (
        <>
          <Headline state={state} onChange={setState} bookId={bookId} summary={summary} series={series} />

          <section class="card" aria-labelledby="attention">
            <h2 id="attention">Per-page attention</h2>
            <Problems problem={pages.problem} what="pages" />
            <Wait loading={pages.loading && !pages.data} what="pages" />
            {pages.data && (
              <>
                <p>Each page is shaded by its average active time per reader (darker: longer); the bar under it is its reach, the share of readers who spent time on it. The table below has every number.</p>
                <ol class="analytics-pages" aria-label="Pages">
                  {pageRows.map((p) => {
                    const reach = visits > 0 ? Math.round((p.unique_readers / visits) * 100) : 0;
                    return (
                      <li key={p.page_number} class="analytics-page" style={{ '--attention': String(p.avg_active_ms_per_reader / maxAvg) }} title={`Page ${p.page_number}: ${duration(p.avg_active_seconds_per_reader)} per reader, reach ${reach} %`}>
                        <span class="analytics-page-number">Page {p.page_number}</span>
                        <span class="analytics-page-time">{duration(p.avg_active_seconds_per_reader)}</span>
                        <span class="analytics-reach" aria-hidden="true"><span style={{ width: `${Math.min(100, reach)}%` }} /></span>
                        <span class="analytics-page-reach">reach {reach} %</span>
                      </li>
                    );
                  })}
                </ol>
                <Table
                  caption="Page performance"
                  head={<tr><th scope="col">Page</th><th scope="col">Readers</th><th scope="col">Reach</th><th scope="col">Time per reader</th><th scope="col">Median per view</th><th scope="col">Views</th></tr>}
                >
                  {pageRows.map((p) => (
                    <tr key={p.page_number} data-page={p.page_number}>
                      <th scope="row">{p.page_number}</th>
                      <td>{p.unique_readers}</td>
                      <td>{visits > 0 ? Math.round((p.unique_readers / visits) * 100) : 0} %</td>
                      <td>{duration(p.avg_active_seconds_per_reader)}</td>
                      <td>{duration(p.median_active_seconds_per_segment)}</td>
                      <td>{p.total_segments}</td>
                    </tr>
                  ))}
                </Table>
              </>
            )}
          </section>

          <section class="card" aria-labelledby="readers">
            <h2 id="readers">Readers</h2>
            <Problems problem={readers.problem} what="readers" />
            {readers.data && (readers.data.data.length === 0 ? <p class="empty">Nobody read this book in this range.</p> : (
              <Table caption="Readers, latest visit first" hideCaption head={<tr><th scope="col">Reader</th><th scope="col">Visits</th><th scope="col">Pages</th><th scope="col">Reading time</th><th scope="col">Engagement</th><th scope="col">Last visit</th></tr>}>
                {readers.data.data.map((r) => (
                  <tr key={r.viewer_id ?? r.session_id}>
                    <th scope="row">{r.viewer_email ?? 'Anonymous visit'}</th>
                    <td>{r.visits}</td>
                    <td>{r.pages_viewed}</td>
                    <td>{duration(r.duration_seconds)}</td>
                    <td>{r.engagement_score}</td>
                    <td>{formatDateTime(r.last_visit_at)}</td>
                  </tr>
                ))}
              </Table>
            ))}
          </section>

          <section class="card" aria-labelledby="exports">
            <h2 id="exports">Exports</h2>
            <p>CSV files of this book for the range and the team switch above.</p>
            <ul class="analytics-exports">
              {EXPORTS.map(([path, label]) => (
                <li key={path}>
                  <a href={path === 'analytics' ? `/v1/exports/analytics/${bookId}?${exportQuery}` : `/v1/exports/books/${bookId}/${path}?${exportQuery}`} download>{label} (CSV)</a>
                </li>
              ))}
            </ul>
          </section>
        </>
      )}
    </Page>
  );
}
