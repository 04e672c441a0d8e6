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
import { PageAttention } from './attention.tsx';
import { ReadingFlow } from './flow.tsx';
import { duration, rangeHref } from './range.ts';
import { Headline, Problems, callWhole, useQuery, useRange } from './widgets.tsx';

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
  const exportQuery = new URLSearchParams({ date: state.date, ...(state.excludeTeam ? { exclude_team: 'true' } : {}) }).toString();
  return (
    <Page title={title}>
      <p><a href={rangeHref('/app/analytics', state)}>All analytics</a></p>
      <Problems problem={book.problem} what="book" />
      {planned ? <Problems problem={summary.problem} what="figures" /> : (
        <>
          <Headline state={state} onChange={setState} bookId={bookId} summary={summary} series={series} />

          <PageAttention bookId={bookId} pages={pages} visits={visits} />

          <ReadingFlow query={query} />

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
