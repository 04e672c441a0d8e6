/**
 * Reading flow on a book's analytics (`book-flow`): a summary in words, the
 * most common page-to-page moves, and each page's entries and exits, as
 * tables (a move is two consecutive page segments of one visit).
 */
import { client } from '../api.ts';
import { Table } from '../components/table.tsx';
import { flowSummary } from './range.ts';
import { Problems, Wait, callWhole, useQuery, type BookQuery } from './widgets.tsx';

/** The moves shown; the API lists every one, most frequent first. */
export const FLOW_MOVES_SHOWN = 20;

export function ReadingFlow({ query }: { query: BookQuery }) {
  const flow = useQuery(`f${JSON.stringify(query)}`, () => callWhole(client.GET('/v1/analytics/book-flow', { params: { query } })));
  const data = flow.data?.data;
  const pages = (data?.pages ?? []).filter((p) => p.views > 0 || p.entries > 0 || p.exits > 0);
  return (
    <section class="card" aria-labelledby="flow" aria-busy={flow.loading}>
      <h2 id="flow">Reading flow</h2>
      <Problems problem={flow.problem} what="reading flow" />
      <Wait loading={flow.loading && !flow.data} what="reading flow" />
      {flow.data && data && (
        <>
          <p data-flow-summary>{flowSummary(flow.data.meta.visits, data)}</p>
          {data.transitions.length > 0 && (
            <Table
              caption={`Most common moves between pages${data.transitions.length > FLOW_MOVES_SHOWN ? ` (the first ${FLOW_MOVES_SHOWN} of ${data.transitions.length})` : ''}`}
              head={<tr><th scope="col">From page</th><th scope="col">To page</th><th scope="col">Times</th><th scope="col">Readers</th></tr>}
            >
              {data.transitions.slice(0, FLOW_MOVES_SHOWN).map((t) => (
                <tr key={`${t.from_page}-${t.to_page}`}>
                  <td>{t.from_page}</td>
                  <td>{t.to_page}</td>
                  <td>{t.count}</td>
                  <td>{t.readers}</td>
                </tr>
              ))}
            </Table>
          )}
          {pages.length > 0 && (
            <Table caption="Entries and exits by page" head={<tr><th scope="col">Page</th><th scope="col">Views</th><th scope="col">Entries</th><th scope="col">Exits</th></tr>}>
              {pages.map((p) => (
                <tr key={p.page_number}><th scope="row">{p.page_number}</th><td>{p.views}</td><td>{p.entries}</td><td>{p.exits}</td></tr>
              ))}
            </Table>
          )}
        </>
      )}
    </section>
  );
}
