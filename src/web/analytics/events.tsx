/**
 * Events on a book's analytics: the interaction events (what readers did,
 * `interaction-events`) or the audit log (`audit-log`: the gate's decisions
 * and the recorded reader actions), with the API's event-type filter (and a
 * page for interaction events), 50 at a time in the API's order, with "Show more".
 * The filters are the screen's state, kept in the address with the range
 * (range.ts: `events`, `event_type`, `event_page`), so reload and share keep them.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { client, type Result } from '../api.ts';
import { Select } from '../components/select.tsx';
import { Table } from '../components/table.tsx';
import { formatDateTime } from '../format.ts';
import { AUDIT_TYPES, INTERACTION_TYPES, eventLabel, type EventsFilter } from './range.ts';
import { Deferred, Problems, ShowMore, Wait, callWhole, usePagedList, useWhenNear, type Batch, type BookQuery } from './widgets.tsx';

export const EVENTS_PAGE = 50;

interface Row {
  key: string;
  at: string | null;
  type: string;
  reader: string;
  page: number | null;
  detail: string;
}

/**
 * `filter` comes from the address and `onFilter` puts a change there; the page field keeps what is typed
 * (an empty or unfinished number included) and sends it to the address once it is a page number or empty.
 */
export function Events({ query, filter, onFilter, hold = false }: { query: BookQuery; filter: EventsFilter | undefined; onFilter: (next: EventsFilter) => void; hold?: boolean }) {
  const kind = filter?.kind ?? 'interaction';
  const type = filter?.type ?? '';
  const page = kind === 'interaction' ? filter?.page : undefined;
  const [pageNumber, setPageNumber] = useState(page !== undefined ? String(page) : '');
  // The address changed otherwise (back, a link): the field shows its page.
  useEffect(() => {
    setPageNumber((typed) => {
      const typedPage = /^[1-9]\d{0,5}$/.test(typed) ? Number(typed) : undefined;
      if (typedPage === page) return typed;
      return page !== undefined ? String(page) : '';
    });
  }, [page]);
  const load = async (cursor?: string): Promise<Result<Batch<Row>>> => {
    if (kind === 'interaction') {
      const result = await callWhole(client.GET('/v1/analytics/interaction-events', {
        params: { query: { ...query, limit: EVENTS_PAGE, ...(type ? { event_type: type as (typeof INTERACTION_TYPES)[number] } : {}), ...(page ? { page_number: page } : {}), ...(cursor ? { cursor } : {}) } },
      }));
      if (!result.ok) return result;
      return { ok: true, data: { cursor: result.data.meta.next_cursor, rows: result.data.data.map((e) => ({ key: `i${e.id}`, at: e.occurred_at, type: e.event_type, reader: e.viewer_email ?? `Anonymous visit ${e.session_id.slice(0, 8)}`, page: e.page_number, detail: e.exit_reason || e.source_host || '' })) } };
    }
    const result = await callWhole(client.GET('/v1/analytics/audit-log', {
      params: { query: { ...query, limit: EVENTS_PAGE, ...(type ? { event_type: type as (typeof AUDIT_TYPES)[number] } : {}), ...(cursor ? { cursor } : {}) } },
    }));
    if (!result.ok) return result;
    return { ok: true, data: { cursor: result.data.meta.next_cursor, rows: result.data.data.map((e) => ({ key: `a${e.id}`, at: e.occurred_at, type: e.event_type, reader: e.viewer_email || 'Anonymous', page: e.page_number, detail: e.reason ?? '' })) } };
  };
  const key = JSON.stringify([query, kind, type, page]);
  const section = useRef<HTMLElement>(null);
  const near = useWhenNear(section, key, hold);
  const { first, rows, cursor, loadingMore, showMore } = usePagedList(`e${key}`, load, near);
  const types = kind === 'interaction' ? INTERACTION_TYPES : AUDIT_TYPES;
  return (
    <section ref={section} class="card" aria-labelledby="events" aria-busy={first.loading}>
      <h2 id="events">Events</h2>
      <div class="analytics-range-row">
        <Select
          label="Show"
          value={kind}
          options={[{ value: 'interaction', label: 'Interaction events' }, { value: 'audit', label: 'Audit log' }]}
          onValue={(value) => onFilter({ kind: value as 'interaction' | 'audit' })}
        />
        <Select
          label="Event type"
          value={type}
          options={[{ value: '', label: 'All types' }, ...types.map((t) => ({ value: t, label: eventLabel(t) }))]}
          onValue={(value) => onFilter({ kind, ...(value ? { type: value } : {}), ...(page !== undefined ? { page } : {}) })}
        />
        {kind === 'interaction' && (
          <div class="field">
            <label for="events-page">Page</label>
            <input id="events-page" type="number" min={1} inputMode="numeric" value={pageNumber} onInput={(e) => {
              const typed = e.currentTarget.value;
              setPageNumber(typed);
              const next = /^[1-9]\d{0,5}$/.test(typed) ? Number(typed) : undefined;
              if ((next !== undefined || typed === '') && next !== page) onFilter({ kind, ...(type ? { type } : {}), ...(next !== undefined ? { page: next } : {}) });
            }} />
          </div>
        )}
      </div>
      <Problems problem={first.problem} what="events" />
      <Wait loading={first.loading && !first.data} what="events" />
      <Deferred shown={!near} />
      {first.data && (rows.length === 0 ? <p class="empty">No event matches in this range.</p> : (
        <>
          <Table
            caption={kind === 'interaction' ? 'Interaction events, in the order they occurred' : 'Audit log, in the order it was recorded'}
            head={<tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Reader</th><th scope="col">Page</th><th scope="col">Detail</th></tr>}
          >
            {rows.map((r) => (
              <tr key={r.key} data-event={r.key}>
                <td>{formatDateTime(r.at)}</td>
                <th scope="row">{eventLabel(r.type)}</th>
                <td>{r.reader}</td>
                <td>{r.page ?? ''}</td>
                <td>{r.detail}</td>
              </tr>
            ))}
          </Table>
          <ShowMore what="events" cursor={cursor} busy={loadingMore} onShow={showMore} />
        </>
      ))}
    </section>
  );
}
