/** Analytics → the workspace overview: figures with their change, views over time, top books, tracked links and embedding sites. */
import { client } from '../api.ts';
import { Page } from '../components/page.tsx';
import { rangeHref } from './range.ts';
import { Headline, Problems, TopList, callWhole, useQuery, useRange } from './widgets.tsx';

export default function AnalyticsOverview() {
  const [state, setState] = useRange();
  const query = { date: state.date, exclude_team: state.excludeTeam };
  const key = JSON.stringify(query);
  const summary = useQuery(`s${key}`, () => callWhole(client.GET('/v1/analytics/summary', { params: { query } })));
  const series = useQuery(`v${key}`, () => callWhole(client.GET('/v1/analytics/views-over-time', { params: { query } })));
  const books = useQuery(`b${key}`, () => callWhole(client.GET('/v1/analytics/top-books', { params: { query } })));
  const links = useQuery(`l${key}`, () => callWhole(client.GET('/v1/analytics/top-tracked-links', { params: { query } })));
  const sites = useQuery(`h${key}`, () => callWhole(client.GET('/v1/analytics/top-embedding-sites', { params: { query } })));
  const planned = summary.problem?.type === 'PlanRestrictionException';
  return (
    <Page title="Analytics">
      {planned ? <Problems problem={summary.problem} what="figures" /> : (
        <>
          <Headline state={state} onChange={setState} summary={summary} series={series} />
          <Problems problem={books.problem} what="top books" />
          {books.data && (
            <TopList
              title="Top books"
              loading={books.loading}
              empty="No book had visits in this range."
              rows={books.data.data.map((b) => ({ ...b, key: b.book_id, name: <a href={rangeHref(`/app/analytics/books/${b.book_id}`, state)}>{b.name}</a> }))}
            />
          )}
          <Problems problem={links.problem} what="top tracked links" />
          {links.data && (
            <TopList title="Top tracked links" loading={links.loading} empty="No visit came through a tracked link in this range." rows={links.data.data.map((l) => ({ ...l, key: String(l.tracked_link_id), name: `${l.name} (${l.book_name})` }))} />
          )}
          <Problems problem={sites.problem} what="top embedding sites" />
          {sites.data && <TopList title="Top embedding sites" loading={sites.loading} empty="No visit came from a page embedding a book in this range." rows={sites.data.data.map((h) => ({ ...h, key: h.host, name: h.host }))} />}
        </>
      )}
    </Page>
  );
}
