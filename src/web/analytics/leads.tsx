/**
 * Leads on a book's analytics: the lead form submissions of the range
 * (`GET /v1/analytics/leads`), oldest first as the API lists them, 50 at a
 * time with "Show more". Shown on every plan, like the operation: the leads
 * are the customer's own data.
 */
import { useState } from 'preact/hooks';
import { client, type Result } from '../api.ts';
import { Button } from '../components/button.tsx';
import { Table } from '../components/table.tsx';
import { formatDateTime } from '../format.ts';
import { Problems, Wait, callWhole, useQuery, type BookQuery } from './widgets.tsx';

export const LEADS_PAGE = 50;

type Lead = { id: number; submitted_at: string; name: string; email: string; phone: string | null; company: string | null; message: string | null; tracked_link_name: string | null };
type Batch = { rows: Lead[]; cursor: string | null };

export function Leads({ query }: { query: BookQuery }) {
  const [more, setMore] = useState<Batch | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const load = async (cursor?: string): Promise<Result<Batch>> => {
    const result = await callWhole(client.GET('/v1/analytics/leads', { params: { query: { ...query, limit: LEADS_PAGE, ...(cursor ? { cursor } : {}) } } }));
    if (!result.ok) return result;
    return { ok: true, data: { rows: result.data.data, cursor: result.data.meta.next_cursor } };
  };
  const first = useQuery(`leads${JSON.stringify(query)}`, () => {
    setMore(null);
    return load();
  });
  const rows = [...(first.data?.rows ?? []), ...(more?.rows ?? [])];
  const cursor = more ? more.cursor : first.data?.cursor ?? null;
  return (
    <section class="card" aria-labelledby="leads" aria-busy={first.loading}>
      <h2 id="leads">Leads</h2>
      <Problems problem={first.problem} what="leads" />
      <Wait loading={first.loading && !first.data} what="leads" />
      {first.data && (rows.length === 0 ? <p class="empty">No reader filled in the lead form in this range.</p> : (
        <>
          <Table
            caption="Leads, in the order they were submitted"
            head={<tr><th scope="col">Submitted</th><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Company</th><th scope="col">Phone</th><th scope="col">Message</th><th scope="col">Tracked link</th></tr>}
          >
            {rows.map((l) => (
              <tr key={l.id} data-lead={l.id}>
                <td>{formatDateTime(l.submitted_at)}</td>
                <th scope="row">{l.email}</th>
                <td>{l.name}</td>
                <td>{l.company ?? ''}</td>
                <td>{l.phone ?? ''}</td>
                <td>{l.message ?? ''}</td>
                <td>{l.tracked_link_name ?? ''}</td>
              </tr>
            ))}
          </Table>
          {cursor && (
            <Button
              busy={loadingMore}
              onClick={() => {
                setLoadingMore(true);
                void load(cursor).then((result) => {
                  setLoadingMore(false);
                  if (result.ok) setMore({ rows: [...(more?.rows ?? []), ...result.data.rows], cursor: result.data.cursor });
                });
              }}
            >
              Show more leads
            </Button>
          )}
        </>
      ))}
    </section>
  );
}
