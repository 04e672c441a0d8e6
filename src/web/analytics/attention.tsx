/**
 * Per-page attention on a book's analytics: every page's 320 px thumbnail
 * tinted by its average active time per reader, the reach of each page (the
 * share of the range's readers who spent time on it) as a drop-off chart with
 * its summary in words, and every number in a table.
 */
import { client, call } from '../api.ts';
import { Table } from '../components/table.tsx';
import { dropOffSummary, duration, reachOf } from './range.ts';
import { Problems, Wait, callWhole, useQuery, type BookQuery } from './widgets.tsx';

export interface PageFigures {
  page_number: number;
  unique_readers: number;
  avg_active_ms_per_reader: number;
  avg_active_seconds_per_reader: number;
  median_active_seconds_per_segment: number;
  total_segments: number;
}

export function PageAttention({ query, visits }: { query: BookQuery; visits: number }) {
  const bookId = query.book_id;
  const pages = useQuery(`p${JSON.stringify(query)}`, () => callWhole(client.GET('/v1/analytics/page-performance', { params: { query } })));
  // The thumbnails: the first 200 pages (the listing's largest page); later pages show their number alone.
  const listing = useQuery(`pages${bookId}`, () => call(client.GET('/v1/books/{book}/pages', { params: { path: { book: bookId }, query: { limit: 200 } } })));
  const pageRows = pages.data?.data ?? [];
  const byNumber = new Map(pageRows.map((p) => [p.page_number, p]));
  const thumbnails = new Map((listing.data ?? []).map((p) => [p.number, p.images.find((i) => i.width === 320) ?? p.images[0]]));
  const numbers = [...new Set([...thumbnails.keys(), ...byNumber.keys()])].sort((a, b) => a - b);
  const maxAvg = Math.max(1, ...pageRows.map((p) => p.avg_active_ms_per_reader));
  const reach = numbers.map((n) => ({ page: n, reach: reachOf(byNumber.get(n)?.unique_readers ?? 0, visits) }));
  return (
    <section class="card" aria-labelledby="attention" aria-busy={pages.loading}>
      <h2 id="attention">Per-page attention</h2>
      <Problems problem={pages.problem} what="pages" />
      <Wait loading={pages.loading && !pages.data} what="pages" />
      {pages.data && (
        <>
          <p>Each page is tinted by its average active time per reader (stronger: longer), with the time and its reach (the share of readers who spent time on it) written under it. Point at a page for its numbers; the table below has every number.</p>
          <ol class="analytics-pages" aria-label="Pages">
            {numbers.map((n) => {
              const p = byNumber.get(n);
              const image = thumbnails.get(n);
              const share = reachOf(p?.unique_readers ?? 0, visits);
              const time = duration(p?.avg_active_seconds_per_reader ?? 0);
              return (
                <li
                  key={n}
                  class="analytics-page"
                  data-page-tile={n}
                  style={{ '--attention': String((p?.avg_active_ms_per_reader ?? 0) / maxAvg) }}
                  title={`Page ${n}: ${time} per reader, reach ${share} %, ${p?.unique_readers ?? 0} readers, ${p?.total_segments ?? 0} views`}
                >
                  <span class="analytics-thumb">
                    {image ? <img src={image.url} alt="" loading="lazy" width={image.width} height={image.height} /> : null}
                  </span>
                  <span class="analytics-page-number">Page {n}</span>
                  <span class="analytics-page-time">{time}</span>
                  <span class="analytics-page-reach">reach {share} %</span>
                </li>
              );
            })}
          </ol>
          <h3 id="drop-off">Reach by page</h3>
          <p data-drop-off>{dropOffSummary(reach)}</p>
          <div class="analytics-bars analytics-drop-off" aria-hidden="true">
            {reach.map((r) => (
              <div key={r.page} class="analytics-bar" title={`Page ${r.page}: reach ${r.reach} %`}>
                <span style={{ height: `${Math.min(100, r.reach)}%` }} />
              </div>
            ))}
          </div>
          {reach.length > 0 && <p class="hint analytics-axis"><span>Page {reach[0]!.page}</span><span>Page {reach.at(-1)!.page}</span></p>}
          <Table
            caption="Page performance"
            head={<tr><th scope="col">Page</th><th scope="col">Readers</th><th scope="col">Reach</th><th scope="col">Time per reader</th><th scope="col">Median per view</th><th scope="col">Views</th></tr>}
          >
            {pageRows.map((p) => (
              <tr key={p.page_number} data-page={p.page_number}>
                <th scope="row">{p.page_number}</th>
                <td>{p.unique_readers}</td>
                <td>{reachOf(p.unique_readers, visits)} %</td>
                <td>{duration(p.avg_active_seconds_per_reader)}</td>
                <td>{duration(p.median_active_seconds_per_segment)}</td>
                <td>{p.total_segments}</td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </section>
  );
}
