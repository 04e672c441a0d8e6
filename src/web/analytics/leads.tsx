/**
 * Leads on a book's analytics: the lead form submissions of the range
 * (`GET /v1/analytics/leads`), oldest first as the API lists them, 50 at a
 * time with "Show more". Shown on every plan, like the operation: the leads
 * are the customer's own data. Read once near the view (useWhenNear), as the events.
 */
import { useRef } from 'preact/hooks';
import { client, type Result } from '../api.ts';
import { Table } from '../components/table.tsx';
import { formatDateTime } from '../format.ts';
import { Deferred, Problems, ShowMore, Wait, callWhole, usePagedList, useWhenNear, type Batch, type BookQuery } from './widgets.tsx';

export const LEADS_PAGE = 50;

type Lead = { id: number; submitted_at: string; name: string; email: string; phone: string | null; company: string | null; message: string | null; tracked_link_name: string | null };

export function Leads({ query, hold = false }: { query: BookQuery; hold?: boolean }) {
  const load = async (cursor?: string): Promise<Result<Batch<Lead>>> => {
    const result = await callWhole(client.GET('/v1/analytics/leads', { params: { query: { ...query, limit: LEADS_PAGE, ...(cursor ? { cursor } : {}) } } }));
    if (!result.ok) return result;
    return { ok: true, data: { rows: result.data.data, cursor: result.data.meta.next_cursor } };
  };
  const key = JSON.stringify(query);
  const section = useRef<HTMLElement>(null);
  const near = useWhenNear(section, key, hold);
  const { first, rows, cursor, loadingMore, showMore } = usePagedList(`leads${key}`, load, near);
  return (
    <section ref={section} class="card" aria-labelledby="leads" aria-busy={first.loading}>
      <h2 id="leads">Leads</h2>
      <Problems problem={first.problem} what="leads" />
      <Wait loading={first.loading && !first.data} what="leads" />
      <Deferred shown={!near} />
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
          <ShowMore what="leads" cursor={cursor} busy={loadingMore} onShow={showMore} />
        </>
      ))}
    </section>
  );
}
