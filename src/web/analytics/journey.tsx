/**
 * The readers of a book (`readers`, identified and anonymous, latest first),
 * each opening the reader's journey below the table: the books they read
 * (`reader-journey`), their time on each page of this book (`reader-pages`)
 * and, for an identified reader, their visits of the range, each opening the
 * pages of that visit in order (`reading-session-pages`).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, client } from '../api.ts';
import { Button } from '../components/button.tsx';
import { Table } from '../components/table.tsx';
import { formatDateTime } from '../format.ts';
import { duration } from './range.ts';
import { Problems, Wait, callWhole, useQuery, type BookQuery } from './widgets.tsx';

type Query = BookQuery;

interface Reader {
  viewer_id: number | null;
  viewer_email: string | null;
  session_id: string | null;
}

/** How a reader is named on screen (an anonymous visit by the start of its session id, to tell them apart). */
export function readerName(r: Reader): string {
  return r.viewer_email ?? `Anonymous visit ${(r.session_id ?? '').slice(0, 8)}`;
}

const readerKey = (r: Reader) => (r.viewer_id !== null ? `v${r.viewer_id}` : `s${r.session_id}`);

export function Readers({ query }: { query: Query }) {
  const readers = useQuery(`r${JSON.stringify(query)}`, () => callWhole(client.GET('/v1/analytics/readers', { params: { query: { ...query, include_anonymous: true, limit: 50 } } })));
  const [open, setOpen] = useState<Reader | null>(null);
  const rows = readers.data?.data ?? [];
  return (
    <>
      <section class="card" aria-labelledby="readers" aria-busy={readers.loading}>
        <h2 id="readers">Readers</h2>
        <Problems problem={readers.problem} what="readers" />
        {readers.data && (rows.length === 0 ? <p class="empty">Nobody read this book in this range.</p> : (
          <Table
            caption="Readers, latest visit first"
            hideCaption
            head={<tr><th scope="col">Reader</th><th scope="col">Visits</th><th scope="col">Pages</th><th scope="col">Reading time</th><th scope="col">Engagement</th><th scope="col">Last visit</th><th scope="col">Journey</th></tr>}
          >
            {rows.map((r) => (
              <tr key={readerKey(r)} data-reader={readerKey(r)}>
                <th scope="row">{readerName(r)}</th>
                <td>{r.visits}</td>
                <td>{r.pages_viewed}</td>
                <td>{duration(r.duration_seconds)}</td>
                <td>{r.engagement_score}</td>
                <td>{formatDateTime(r.last_visit_at)}</td>
                <td>
                  <Button variant="link" data-opens={readerKey(r)} aria-expanded={open !== null && readerKey(open) === readerKey(r)} onClick={() => setOpen(r)}>
                    Journey<span class="visually-hidden"> of {readerName(r)}</span>
                  </Button>
                </td>
              </tr>
            ))}
          </Table>
        ))}
      </section>
      {open && (
        <Journey
          key={readerKey(open)}
          reader={open}
          query={query}
          onClose={() => {
            const key = readerKey(open);
            setOpen(null);
            // Back to the button that opened it, so the keyboard user is where they were.
            requestAnimationFrame(() => document.querySelector<HTMLButtonElement>(`[data-opens="${CSS.escape(key)}"]`)?.focus());
          }}
        />
      )}
    </>
  );
}

function Journey({ reader, query, onClose }: { reader: Reader; query: Query; onClose: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const who = reader.viewer_id !== null ? { viewer_id: reader.viewer_id } : { session_id: reader.session_id ?? '' };
  const journey = useQuery(`j${JSON.stringify([who, query.date, query.tz])}`, () => call(client.GET('/v1/analytics/reader-journey', { params: { query: { ...who, date: query.date, tz: query.tz } } })));
  // reader-pages sums an identified reader's time per page (the API groups it by viewer); an anonymous
  // reader is one visit, whose pages in order come from its visit below (book-view-events by session_id).
  const viewerId = reader.viewer_id;
  const pages = useQuery(`rp${JSON.stringify([who, query])}`, () => (
    viewerId !== null ? call(client.GET('/v1/analytics/reader-pages', { params: { query: { ...query, viewer_id: viewerId } } })) : Promise.resolve({ ok: true as const, data: [] })
  ));
  const visits = useQuery(`bv${JSON.stringify([who, query])}`, () => (
    call(client.GET('/v1/analytics/book-view-events', { params: { query: { ...query, ...who, limit: 50 } } }))
  ));
  const [visit, setVisit] = useState<number | null>(null);
  const name = readerName(reader);
  const aggregates = journey.data?.aggregates;
  return (
    <section class="card" aria-labelledby="journey">
      <h2 id="journey" ref={heading} tabIndex={-1}>Journey of {name}</h2>
      <Button onClick={onClose}>Close journey</Button>
      <Problems problem={journey.problem} what="reader's journey" />
      <Wait loading={journey.loading && !journey.data} what="the reader's journey" />
      {journey.data && aggregates && (
        <>
          <p data-journey-summary>
            {name} read {aggregates.total_books} {aggregates.total_books === '1' ? 'book' : 'books'} in this range: {aggregates.total_pages_viewed} pages, {duration(Number(aggregates.total_duration_seconds))}, engagement {aggregates.overall_engagement_score}.
          </p>
          <Table caption="Books read" head={<tr><th scope="col">Book</th><th scope="col">Visits</th><th scope="col">Pages</th><th scope="col">Reading time</th><th scope="col">Engagement</th><th scope="col">Last visit</th></tr>}>
            {journey.data.books.map((b) => (
              <tr key={b.book_id}>
                <th scope="row">{b.book_id === query.book_id ? b.title : <a href={`/app/analytics/books/${b.book_id}?range=${encodeURIComponent(query.date)}${query.exclude_team ? '&team=exclude' : ''}`}>{b.title}</a>}</th>
                <td>{b.visits}</td>
                <td>{b.pages_viewed}</td>
                <td>{duration(Number(b.duration_seconds))}</td>
                <td>{b.engagement_score}</td>
                <td>{formatDateTime(b.last_visit)}</td>
              </tr>
            ))}
          </Table>
        </>
      )}
      <Problems problem={pages.problem} what="reader's pages" />
      {viewerId === null && <p class="hint" data-anonymous-note>An anonymous reader is one visit: its pages in order are under the visit below.</p>}
      {viewerId !== null && pages.data && (pages.data.length === 0 ? <p class="empty">No page time recorded for this reader in this range.</p> : (
        <Table caption="Time on each page of this book" head={<tr><th scope="col">Page</th><th scope="col">Time</th><th scope="col">Views</th><th scope="col">Time per view</th><th scope="col">Last viewed</th></tr>}>
          {pages.data.map((p) => (
            <tr key={p.id}>
              <th scope="row">{p.page_number}</th>
              <td>{duration(p.total_active_seconds)}</td>
              <td>{p.segments}</td>
              <td>{duration(p.avg_active_seconds_per_segment)}</td>
              <td>{formatDateTime(p.last_viewed_at)}</td>
            </tr>
          ))}
        </Table>
      ))}
      <h3 id="visits">Visits of this book</h3>
      <Problems problem={visits.problem} what="visits" />
      {visits.data && (visits.data.length === 0 ? <p class="empty">No visit in this range.</p> : (
        <ul class="analytics-visits" aria-labelledby="visits">
          {visits.data.map((v) => (
            <li key={v.id}>
              <Button variant="link" aria-expanded={visit === v.id} onClick={() => setVisit(visit === v.id ? null : v.id)}>
                Visit of {formatDateTime(v.recorded_at)}
              </Button>
              {' '}({v.pages_viewed} pages, {duration(v.duration_seconds)}{v.tracked_link ? `, through ${v.tracked_link.name}` : ''})
              {visit === v.id && <VisitPages bookId={query.book_id} visitId={v.id} />}
            </li>
          ))}
        </ul>
      ))}
    </section>
  );
}

function VisitPages({ bookId, visitId }: { bookId: string; visitId: number }) {
  const pages = useQuery(`sp${visitId}`, () => callWhole(client.GET('/v1/analytics/reading-session-pages', { params: { query: { book_id: bookId, view_event_id: visitId } } })));
  return (
    <div data-visit={visitId}>
      <Problems problem={pages.problem} what="pages of the visit" />
      <Wait loading={pages.loading && !pages.data} what="the pages of the visit" />
      {pages.data && (
        <Table caption="Pages of the visit, in order" head={<tr><th scope="col">Order</th><th scope="col">Page</th><th scope="col">Time</th><th scope="col">Viewed at</th></tr>}>
          {pages.data.data.map((p) => (
            <tr key={p.position}><th scope="row">{p.position}</th><td>{p.page_number}</td><td>{duration(p.active_seconds)}</td><td>{formatDateTime(p.viewed_at)}</td></tr>
          ))}
        </Table>
      )}
    </div>
  );
}
