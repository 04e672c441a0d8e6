import type { paths } from '@flipbook/client';
import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, client, managesPeople, type DataOf, type Problem } from '../api.ts';
import { Button, Hidden } from '../components/button.tsx';
import { Confirm } from '../components/confirm.tsx';
import { CopyField } from '../components/copy-field.tsx';
import { DraftNotice } from '../components/draft-notice.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';
import { Select } from '../components/select.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { Table } from '../components/table.tsx';
import { notify } from '../components/toast.tsx';
import { draftKey, useDraft } from '../draft.ts';
import { formatDateTime } from '../format.ts';
import { useResource } from '../resource.ts';

type Subscription = DataOf<'/v1/webhook-subscriptions', 'get'>[number];
type Delivery = DataOf<'/v1/webhook-subscriptions/{subscription}/deliveries', 'get'>[number];
type Options = DataOf<'/v1/webhook-subscriptions/options', 'get'>;
type DeliveryWithAttempts = DataOf<'/v1/webhook-subscriptions/{subscription}/deliveries/{delivery}', 'get'>;
type EventType = NonNullable<NonNullable<paths['/v1/webhook-subscriptions/{subscription}/test']['post']['parameters']['query']>['event_type']>;
type Provider = NonNullable<paths['/v1/webhook-subscriptions']['post']['requestBody']['content']['application/json']['provider']>;
type DeliveryStatus = Delivery['status'];

/** The path parameter is an integer in the API; the client types it so. */
const path = (subscription: Subscription) => ({ subscription: subscription.id });

/** Webhooks (admins and owners, who hold webhooks:read and webhooks:write): subscriptions, their secret, their delivery log. */
export default function Webhooks() {
  if (!managesPeople.value) {
    return (
      <Page title="Webhooks">
        <p>Only admins and owners of the workspace see and manage its webhooks. Ask one of them to send events to your system.</p>
      </Page>
    );
  }
  return <ManageWebhooks />;
}

function statusOf(subscription: Subscription): string {
  if (subscription.is_active) return 'Active';
  if (subscription.deactivated_reason) return `Deactivated by the service: ${subscription.deactivated_reason}`;
  return 'Disabled';
}

function ManageWebhooks() {
  const subscriptions = useResource(() => call(client.GET('/v1/webhook-subscriptions', { params: { query: { limit: 100 } } })));
  const options = useResource(() => call(client.GET('/v1/webhook-subscriptions/options')));
  const [secret, setSecret] = useState<{ title: string; value: string } | null>(null);
  const [deleting, setDeleting] = useState<Subscription | null>(null);
  const [editing, setEditing] = useState<Subscription | null>(null);
  const [log, setLog] = useState<Subscription | null>(null);
  const [logVersion, setLogVersion] = useState(0);
  const [busy, setBusy] = useState<string | null>(null);
  const [problem, setProblem] = useState<{ id: number; title: string; problem: Problem } | null>(null);
  /** Focus goes back to the subscription's "Edit" button when its edit closes (saved or cancelled). */
  const closeEdit = (s: Subscription) => {
    setEditing(null);
    // After the form is gone (and the list re-rendered), on the next frame.
    requestAnimationFrame(() => document.getElementById(`edit-subscription-${s.id}`)?.focus());
  };

  /** Runs one action on a subscription; its error is shown under that subscription. */
  const act = async (subscription: Subscription, what: string, title: string, run: () => Promise<{ ok: true; data: unknown } | { ok: false; problem: Problem }>, done: string) => {
    setBusy(`${what}:${subscription.id}`);
    const result = await run();
    setBusy(null);
    if (!result.ok) return setProblem({ id: subscription.id, title, problem: result.problem });
    setProblem(null);
    notify(done);
    await subscriptions.reload();
    return result;
  };

  const toggle = (s: Subscription) =>
    s.is_active
      ? act(s, 'toggle', 'The subscription was not disabled', () => call(client.PUT('/v1/webhook-subscriptions/{subscription}', { params: { path: path(s) }, body: { is_active: false } })), `“${s.name}” is disabled: events are not sent to it.`)
      : act(s, 'toggle', 'The subscription was not enabled', () => call(client.POST('/v1/webhook-subscriptions/{subscription}/enable', { params: { path: path(s) } })), `“${s.name}” is enabled.`);
  const rotate = async (s: Subscription) => {
    const result = await act(s, 'rotate', 'The secret was not rotated', () => call(client.POST('/v1/webhook-subscriptions/{subscription}/rotate-secret', { params: { path: path(s) } })), `The signing secret of “${s.name}” was rotated.`);
    if (result?.ok) setSecret({ title: `The new signing secret of “${s.name}”`, value: (result.data as { signing_secret: string }).signing_secret });
  };
  const [testTypes, setTestTypes] = useState<Record<number, string>>({});
  const testTypeOf = (s: Subscription) => testTypes[s.id] ?? s.event_types[0]?.value ?? '';
  const sendTest = async (s: Subscription) => {
    const eventType = testTypeOf(s);
    const query = eventType ? { event_type: eventType as EventType } : {};
    const result = await act(s, 'test', 'The test event was not sent', () => call(client.POST('/v1/webhook-subscriptions/{subscription}/test', { params: { path: path(s), query } })), `A test event is on its way to “${s.name}”.`);
    if (result?.ok) {
      setLog(s);
      setLogVersion((v) => v + 1);
    }
  };

  return (
    <Page title="Webhooks">
      <p>Webhooks send the workspace's events (a book published, a lead, a link clicked…) to your systems as they happen, signed so that they can check where they come from.</p>
      {secret && <NewSecret title={secret.title} secret={secret.value} onDone={() => setSecret(null)} />}
      <section class="card" aria-labelledby="subscriptions">
        <h2 id="subscriptions">Subscriptions</h2>
        {subscriptions.loading && !subscriptions.data && <Loading what="the subscriptions" />}
        <ErrorMessage problem={subscriptions.problem} title="The subscriptions could not be read" />
        {subscriptions.data?.length === 0 && <p class="empty">No subscriptions yet.</p>}
        {subscriptions.data && subscriptions.data.length > 0 && (
          <ul class="item-list" aria-label="Subscriptions">
            {subscriptions.data.map((s) => (
              <li key={s.id} class="item item-key">
                <div>
                  <h3 class="item-title">{s.name}</h3>
                  <dl class="facts facts-inline">
                    <dt>Address</dt>
                    <dd><code>{s.target_url}</code></dd>
                    <dt>Body format</dt>
                    <dd>{options.data?.providers.find((p) => p.value === s.provider)?.label ?? s.provider}</dd>
                    <dt>Events</dt>
                    <dd>{s.event_types.map((e) => e.label).join(', ')}</dd>
                    <dt>Only for</dt>
                    <dd>{s.filters.length === 0 ? 'Every book' : s.filters.map((f) => f.label ?? `${f.type === 'book' ? 'a deleted book' : 'a deleted link'} (${f.value})`).join(', ')}</dd>
                    <dt>Status</dt>
                    <dd>{statusOf(s)}</dd>
                    <dt>Deliveries</dt>
                    <dd>{s.deliveries_count}</dd>
                    <dt>Created</dt>
                    <dd>{formatDateTime(s.created_at)}</dd>
                  </dl>
                  {problem?.id === s.id && <ErrorMessage problem={problem.problem} title={problem.title} />}
                </div>
                <div class="actions">
                  <Button onClick={() => { setLog(s); setLogVersion((v) => v + 1); }}>Delivery log<Hidden> of {s.name}</Hidden></Button>
                  <Button onClick={() => setEditing(s)} id={`edit-subscription-${s.id}`}>Edit<Hidden> {s.name}</Hidden></Button>
                  <span class="inline-field">
                    <label for={`test-type-${s.id}`}>Test event<Hidden> for {s.name}</Hidden></label>
                    <select id={`test-type-${s.id}`} value={testTypeOf(s)} onChange={(event) => { const value = event.currentTarget.value; setTestTypes((t) => ({ ...t, [s.id]: value })); }}>
                      {(options.data?.event_types ?? s.event_types).map((type) => <option key={type.value} value={type.value}>{type.label}</option>)}
                    </select>
                  </span>
                  <Button onClick={() => sendTest(s)} busy={busy === `test:${s.id}`}>Send test event<Hidden> to {s.name}</Hidden></Button>
                  <Button onClick={() => toggle(s)} busy={busy === `toggle:${s.id}`}>{s.is_active ? 'Disable' : 'Enable'}<Hidden> {s.name}</Hidden></Button>
                  <Button onClick={() => rotate(s)} busy={busy === `rotate:${s.id}`}>Rotate secret<Hidden> of {s.name}</Hidden></Button>
                  <Button variant="danger" onClick={() => setDeleting(s)}>Delete<Hidden> {s.name}</Hidden></Button>
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>
      {editing && (
        <EditSubscription key={editing.id} subscription={editing} options={options.data} optionsProblem={options.problem} onSaved={subscriptions.reload}
          onClose={() => closeEdit(editing)} />
      )}
      {log && <DeliveryLog key={`${log.id}:${logVersion}`} subscription={log} eventTypes={options.data?.event_types ?? log.event_types} onClose={() => setLog(null)} />}
      <CreateSubscription
        options={options.data}
        optionsProblem={options.problem}
        onCreated={(created) => {
          setSecret({ title: `The signing secret of “${created.name}”`, value: created.signing_secret });
          void subscriptions.reload();
        }}
      />
      {deleting && (
        <Confirm
          title={`Delete “${deleting.name}”?`}
          confirmLabel="Delete subscription"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            const result = await call(client.DELETE('/v1/webhook-subscriptions/{subscription}', { params: { path: path(deleting) } }));
            if (result.ok) {
              if (log?.id === deleting.id) setLog(null);
              await subscriptions.reload();
              notify(`The subscription “${deleting.name}” was deleted.`);
            }
            return result;
          }}
        >
          <p>No more events are sent to <code>{deleting.target_url}</code>, and deliveries still waiting for a retry are given up. This cannot be undone.</p>
        </Confirm>
      )}
    </Page>
  );
}

/** A signing secret, shown once after the subscription is made or its secret rotated. */
function NewSecret({ title, secret, onDone }: { title: string; secret: string; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [secret]);
  return (
    <section class="card card-highlight" aria-labelledby="new-secret">
      <h2 id="new-secret" ref={heading} tabIndex={-1}>{title}</h2>
      <p>Copy the secret now and give it to the receiving system, which checks each delivery's signature with it (Standard Webhooks). It will not be shown again.</p>
      <CopyField label="Signing secret" value={secret} />
      <Button onClick={onDone}>Done</Button>
    </section>
  );
}

const STATUS_WORDS: Record<Delivery['status'], string> = { pending: 'Pending', succeeded: 'Delivered', failed: 'Failed' };

const STATUS_CHOICES: { value: '' | DeliveryStatus; label: string }[] = [
  { value: '', label: 'Every status' }, { value: 'pending', label: 'Pending' }, { value: 'succeeded', label: 'Delivered' }, { value: 'failed', label: 'Failed' },
];
const PAGE = 50;

/**
 * The delivery log of one subscription, newest first, filtered by status; the newest 50 are read again every 2 s
 * while one of them is pending, and "Show older deliveries" reads the next 50 after the last one shown.
 */
function DeliveryLog({ subscription, eventTypes, onClose }: { subscription: Subscription; eventTypes: readonly { label: string; value: string }[]; onClose: () => void }) {
  const [status, setStatus] = useState<'' | DeliveryStatus>('');
  const [eventType, setEventType] = useState('');
  /** A page of the log with its meta (the cursor to the next page). */
  const readPage = (cursor?: string) => {
    const request = client.GET('/v1/webhook-subscriptions/{subscription}/deliveries', { params: { path: path(subscription), query: { limit: PAGE, ...(status ? { status } : {}), ...(eventType ? { event_type: eventType } : {}), ...(cursor ? { cursor } : {}) } } });
    return call(request.then((r) => ({ ...r, data: r.data ? { data: r.data } : undefined })));
  };
  const deliveries = useResource(() => readPage());
  const [older, setOlder] = useState<{ items: Delivery[]; cursor: string | null; has_more: boolean } | null>(null);
  const [olderBusy, setOlderBusy] = useState(false);
  const [problem, setProblem] = useState<{ title: string; problem: Problem } | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  const first = deliveries.data?.data;
  const olderPending = older?.items.filter((d) => d.status === 'pending' && !first?.some((f) => f.id === d.id)) ?? [];
  const pending = (first?.some((d) => d.status === 'pending') ?? false) || olderPending.length > 0;
  const { reload, loading } = deliveries;
  /** The pending rows of the older pages, read again one by one (a redelivery from there is followed too). */
  const rereadOlder = async (rows: Delivery[]) => {
    const read = await Promise.all(rows.map((d) => call(client.GET('/v1/webhook-subscriptions/{subscription}/deliveries/{delivery}', { params: { path: { ...path(subscription), delivery: d.id } } }))));
    const fresh = new Map(read.flatMap((r) => (r.ok ? [[r.data.id, r.data] as const] : [])));
    if (fresh.size > 0) setOlder((o) => (o ? { ...o, items: o.items.map((d) => fresh.get(d.id) ?? d) } : o));
  };
  const olderPendingIds = olderPending.map((d) => d.id).join(',');
  useEffect(() => {
    if (!pending || loading) return;
    const timer = setTimeout(() => {
      void reload();
      if (olderPending.length > 0) void rereadOlder(olderPending);
    }, 2000);
    return () => clearTimeout(timer);
  }, [pending, loading, reload, olderPendingIds]);
  // A new filter reads the log again from its newest.
  const filtered = useRef(`${status}|${eventType}`);
  useEffect(() => {
    if (filtered.current === `${status}|${eventType}`) return;
    filtered.current = `${status}|${eventType}`;
    setOlder(null);
    setOpen(null);
    void reload();
  }, [status, eventType, reload]);
  const firstMeta = deliveries.data?.meta;
  const hasMore = older ? older.has_more : firstMeta?.has_more ?? false;
  const showOlder = async () => {
    const cursor = older ? older.cursor : firstMeta?.next_cursor;
    if (!cursor || olderBusy) return;
    setOlderBusy(true);
    const result = await readPage(cursor);
    setOlderBusy(false);
    if (!result.ok) return setProblem({ title: 'The older deliveries could not be read', problem: result.problem });
    setProblem(null);
    const page = result.data;
    setOlder((o) => ({ items: [...(o?.items ?? []), ...page.data], cursor: page.meta.next_cursor, has_more: page.meta.has_more }));
  };
  const shown = [...(first ?? []), ...(older?.items ?? []).filter((d) => !first?.some((f) => f.id === d.id))];
  const redeliver = async (delivery: Delivery) => {
    const result = await call(client.POST('/v1/webhook-subscriptions/{subscription}/deliveries/{delivery}/redeliver', { params: { path: { ...path(subscription), delivery: delivery.id } } }));
    setProblem(result.ok ? null : { title: 'The delivery was not sent again', problem: result.problem });
    if (result.ok) {
      notify(`The delivery ${delivery.event_id} is sent again.`);
      setOlder((o) => (o ? { ...o, items: o.items.map((d) => (d.id === result.data.id ? result.data : d)) } : o));
      await reload();
    }
  };
  const statusWords = STATUS_CHOICES.find((c) => c.value === status)!.label.toLowerCase();
  return (
    <section class="card" aria-labelledby="delivery-log">
      <h2 id="delivery-log">Delivery log: {subscription.name}</h2>
      <div class="actions">
        <Button onClick={() => { setOlder(null); void reload(); }} busy={loading}>Refresh<Hidden> the delivery log</Hidden></Button>
        <Button onClick={onClose}>Close<Hidden> the delivery log</Hidden></Button>
      </div>
      <div class="book-filters">
        <Select label="Show deliveries" value={status} options={STATUS_CHOICES} onValue={(value) => setStatus(value as '' | DeliveryStatus)} />
        <Select label="Event type" value={eventType} options={[{ value: '', label: 'Every event type' }, ...eventTypes]} onValue={setEventType} />
      </div>
      <p class="hint" role="status">{pending ? 'A delivery is pending: the log is read again every 2 seconds.' : ''}</p>
      <ErrorMessage problem={deliveries.problem} title="The delivery log could not be read" />
      <ErrorMessage problem={problem?.problem ?? null} title={problem?.title ?? ''} />
      {first?.length === 0 && <p class="empty">{status || eventType ? `No deliveries${status ? ` with the status “${statusWords}”` : ''}${eventType ? ` of the event type “${eventTypes.find((t) => t.value === eventType)?.label ?? eventType}”` : ''}.` : 'No deliveries yet. “Send test event” sends one.'}</p>}
      {first && shown.length > 0 && (
        <Table caption={`Deliveries to ${subscription.name}, newest first`} hideCaption head={
          <tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Response</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
        }>
          {shown.map((d) => (
            <Fragment key={d.id}>
              <tr>
                <th scope="row">{d.event_type}<br /><code class="item-meta">{d.event_id}</code></th>
                <td>{STATUS_WORDS[d.status]}{d.status === 'pending' && d.next_attempt_at ? `, next try ${formatDateTime(d.next_attempt_at)}` : ''}</td>
                <td>{d.attempts}</td>
                <td>{d.response_status !== undefined ? `HTTP ${d.response_status}` : ''}{d.error_message ? ` ${d.error_message}` : ''}</td>
                <td>{formatDateTime(d.created_at)}</td>
                <td class="actions">
                  <Button onClick={() => setOpen(open === d.id ? null : d.id)} aria-expanded={open === d.id}>Details<Hidden> of {d.event_id}</Hidden></Button>
                  {d.status !== 'pending' && subscription.is_active && <Button onClick={() => redeliver(d)}>Redeliver<Hidden> {d.event_id}</Hidden></Button>}
                </td>
              </tr>
              {open === d.id && (
                <tr>
                  <td colSpan={6}>
                    <DeliveryDetails subscription={subscription} delivery={d} />
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </Table>
      )}
      {first && hasMore && (
        <div class="actions">
          <Button onClick={showOlder} busy={olderBusy}>Show older deliveries</Button>
        </div>
      )}
    </section>
  );
}

const OUTCOME_WORDS: Record<string, string> = { succeeded: 'Delivered', failed: 'Failed' };

/** A delivery's body, its last answer, and every attempt made (GET …/deliveries/{delivery}). */
function DeliveryDetails({ subscription, delivery: d }: { subscription: Subscription; delivery: Delivery }) {
  const detail = useResource<DeliveryWithAttempts>(() => call(client.GET('/v1/webhook-subscriptions/{subscription}/deliveries/{delivery}', { params: { path: { ...path(subscription), delivery: d.id } } })));
  const attempts = detail.data?.attempt_log ?? [];
  return (
    <>
      <p>Body sent:</p>
      <pre class="code" tabIndex={0} role="region" aria-label={`Body sent for ${d.event_id}`}>{JSON.stringify(d.payload, null, 2)}</pre>
      {d.response_body !== undefined && (
        <>
          <p>Answer received:</p>
          <pre class="code" tabIndex={0} role="region" aria-label={`Answer received for ${d.event_id}`}>{d.response_body || '(empty)'}</pre>
        </>
      )}
      {detail.loading && !detail.data && <Loading what="the attempts" />}
      <ErrorMessage problem={detail.problem} title="The attempts could not be read" />
      {detail.data && attempts.length === 0 && <p class="empty">No attempt made yet.</p>}
      {attempts.length > 0 && (
        <Table caption={`Attempts to deliver ${d.event_id}`} head={
          <tr><th scope="col">Attempt</th><th scope="col">Outcome</th><th scope="col">Answer</th><th scope="col">Took</th><th scope="col">At</th></tr>
        }>
          {attempts.map((a) => (
            <tr key={a.attempt}>
              <th scope="row">{a.attempt}</th>
              <td>{OUTCOME_WORDS[a.outcome] ?? a.outcome}</td>
              <td>{a.response_status !== null ? `HTTP ${a.response_status}` : ''}{a.error_message ? ` ${a.error_message}` : ''}{a.response_body ? <><br /><code class="item-meta">{a.response_body.slice(0, 200)}</code></> : null}</td>
              <td>{`${a.duration_ms} ms`}</td>
              <td>{formatDateTime(a.attempted_at)}</td>
            </tr>
          ))}
        </Table>
      )}
    </>
  );
}

interface Form {
  name: string;
  target_url: string;
  event_types: string[];
  /** Random ids of the books whose events alone are sent; empty for every book. */
  books: string[];
  /** Ids of the tracked links whose events alone are sent (with the books: any of them). */
  links?: number[];
  /** The body format (a draft kept before it existed has none: the standard one). */
  provider?: Provider;
}
const EMPTY: Form = { name: '', target_url: '', event_types: [], books: [], links: [], provider: 'standard' };

type Created = DataOf<'/v1/webhook-subscriptions', 'post', 201>;
type FilterOut = Subscription['filters'][number];

/** A subscription as the form shows it; filters the options no longer offer (a deleted book or link) are kept aside, sent back as read. */
function formOf(s: Subscription, options: Options | undefined): { form: Form; kept: FilterOut[] } {
  const kept: FilterOut[] = [];
  const links: number[] = [];
  for (const f of s.filters) {
    if (f.type !== 'tracked_link') continue;
    const link = options?.tracked_links.find((l) => l.value === f.value && l.book_id === f.book_id);
    if (link) links.push(link.id);
    else kept.push(f);
  }
  const books = s.filters.filter((f) => f.type === 'book').map((f) => f.value);
  for (const f of s.filters) if (f.type === 'book' && options && !options.books.some((b) => b.value === f.value)) kept.push(f);
  return { form: { name: s.name, target_url: s.target_url, provider: s.provider as Provider, event_types: s.event_types.map((e) => e.value), books: options ? books.filter((b) => options.books.some((o) => o.value === b)) : books, links }, kept };
}

function filtersOf(form: Form, kept: FilterOut[] = []) {
  return [
    ...(form.books ?? []).map((value) => ({ type: 'book' as const, value })),
    ...(form.links ?? []).map((value) => ({ type: 'tracked_link' as const, value })),
    ...kept.map((f) => ({ type: f.type, value: f.value, ...(f.book_id ? { book_id: f.book_id } : {}) })),
  ];
}

/** "Create subscription": a name, the address, the events from the API's list. What was typed is kept until it is saved. */
function CreateSubscription({ options, optionsProblem, onCreated }: { options: Options | undefined; optionsProblem: Problem | null; onCreated: (created: Created) => void }) {
  const draft = useDraft<Form>(draftKey('webhook-subscription', 'new'), () => EMPTY, { differs: (v) => v.name !== '' || v.target_url !== '' || (v.provider ?? 'standard') !== 'standard' || v.event_types.length > 0 || v.books.length > 0 || (v.links ?? []).length > 0 });
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const submit = async () => {
    if (busy) return;
    const form = draft.value;
    setBusy(true);
    const result = await call(client.POST('/v1/webhook-subscriptions', { body: { name: form.name.trim(), target_url: form.target_url.trim(), provider: form.provider ?? 'standard', event_types: form.event_types, filters: filtersOf(form) } }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    draft.saved(EMPTY);
    onCreated(result.data);
  };
  return (
    <section class="card" aria-labelledby="create-subscription">
      <h2 id="create-subscription">Add a subscription</h2>
      <DraftNotice restored={draft.restored} onDiscard={() => draft.discard(EMPTY)} />
      <SubscriptionFields id="new" form={draft.value} set={draft.set} options={options} optionsProblem={optionsProblem} problem={problem} busy={busy} onSubmit={submit}
        problemTitle="The subscription was not created" submitLabel="Create subscription" />
    </section>
  );
}

/** Changing a subscription's name, address, events and filters (PUT); what was typed is kept until it is saved. */
function EditSubscription({ subscription, options, optionsProblem, onSaved, onClose }: { subscription: Subscription; options: Options | undefined; optionsProblem: Problem | null; onSaved: () => Promise<void>; onClose: () => void }) {
  const { form: initial, kept } = formOf(subscription, options);
  const draft = useDraft<Form>(draftKey('webhook-subscription', String(subscription.id)), () => initial, {
    base: subscription.updated_at,
    differs: (v) => JSON.stringify(v) !== JSON.stringify(initial),
  });
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const submit = async () => {
    if (busy) return;
    const form = draft.value;
    setBusy(true);
    const result = await call(client.PUT('/v1/webhook-subscriptions/{subscription}', {
      params: { path: path(subscription) },
      body: { name: form.name.trim(), target_url: form.target_url.trim(), provider: form.provider ?? 'standard', event_types: form.event_types, filters: filtersOf(form, kept) },
    }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    draft.saved(initial);
    notify(`The subscription “${result.data.name}” was saved.`);
    onClose();
    await onSaved();
  };
  return (
    <section class="card card-highlight" aria-labelledby="edit-subscription">
      <h2 id="edit-subscription" ref={heading} tabIndex={-1}>Edit “{subscription.name}”</h2>
      <DraftNotice restored={draft.restored} onDiscard={() => draft.discard(initial)} />
      {kept.length > 0 && <p class="hint">{`Also kept: ${kept.length} ${kept.length === 1 ? 'filter' : 'filters'} for a deleted book or link.`}</p>}
      <SubscriptionFields id={`edit-${subscription.id}`} form={draft.value} set={draft.set} options={options} optionsProblem={optionsProblem} problem={problem} busy={busy} onSubmit={submit}
        problemTitle="The subscription was not saved" submitLabel="Save subscription" onCancel={() => { draft.discard(initial); onClose(); }} />
    </section>
  );
}

interface FieldsProps {
  id: string;
  form: Form;
  set: (change: (f: Form) => Form) => void;
  options: Options | undefined;
  optionsProblem: Problem | null;
  problem: Problem | null;
  busy: boolean;
  onSubmit: () => void;
  problemTitle: string;
  submitLabel: string;
  onCancel?: () => void;
}

/** The subscription's fields: name, address, events, and the books and tracked links it is limited to. */
function SubscriptionFields({ id, form, set, options, optionsProblem, problem, busy, onSubmit, problemTitle, submitLabel, onCancel }: FieldsProps) {
  const toggle = (value: string, on: boolean) => set((f) => ({ ...f, event_types: on ? [...f.event_types, value] : f.event_types.filter((v) => v !== value) }));
  const toggleBook = (value: string, on: boolean) => set((f) => ({ ...f, books: on ? [...(f.books ?? []), value] : (f.books ?? []).filter((v) => v !== value) }));
  const toggleLink = (value: number, on: boolean) => set((f) => ({ ...f, links: on ? [...(f.links ?? []), value] : (f.links ?? []).filter((v) => v !== value) }));
  const books = form.books ?? [];
  const links = form.links ?? [];
  const eventErrors = fieldErrors(problem, 'event_types');
  const filterErrors = Object.entries(problem?.details ?? {}).filter(([field]) => field.startsWith('filters')).flatMap(([, messages]) => messages);
  const bookName = (randomId: string) => options?.books.find((b) => b.value === randomId)?.label ?? randomId;
  return (
    <form class="stack" onSubmit={(event) => { event.preventDefault(); onSubmit(); }} noValidate>
      <TextInput label="Name" autoComplete="off" hint="What it is for, e.g. “CRM: new leads”." value={form.name} onValue={(name) => set((f) => ({ ...f, name }))} errors={fieldErrors(problem, 'name')} />
      <TextInput label="Endpoint URL" autoComplete="off" spellcheck={false} hint="Where the events are sent (https, on a public address)." value={form.target_url} onValue={(target_url) => set((f) => ({ ...f, target_url }))} errors={fieldErrors(problem, 'target_url')} />
      {options && (
        <Select label="Body format" hint="Standard Webhooks JSON for your server and automation tools; a chat message for Slack, Discord or Teams." value={form.provider ?? 'standard'}
          options={options.providers} onValue={(provider) => set((f) => ({ ...f, provider: provider as Provider }))} errors={fieldErrors(problem, 'provider')} />
      )}
      <fieldset aria-describedby={eventErrors ? `${id}-event-errors` : undefined}>
        <legend>Events</legend>
        {!options && !optionsProblem && <Loading what="the events" />}
        <ErrorMessage problem={optionsProblem} title="The list of events could not be read" />
        <div class="check-grid">
          {options?.event_types.map((type) => (
            <label class="check" key={type.value}>
              <input type="checkbox" checked={form.event_types.includes(type.value)} onChange={(event) => toggle(type.value, event.currentTarget.checked)} />
              {type.label}
            </label>
          ))}
        </div>
        {eventErrors && (
          <ul class="field-errors" id={`${id}-event-errors`}>
            {eventErrors.map((message) => <li key={message}>{message}</li>)}
          </ul>
        )}
      </fieldset>
      {options && options.books.length > 0 && (
        <fieldset>
          <legend>Only for these books (optional)</legend>
          <p class="hint">None chosen here or below: the events of every book.</p>
          <div class="check-grid check-scroll">
            {options.books.map((book) => (
              <label class="check" key={book.value}>
                <input type="checkbox" checked={books.includes(book.value)} onChange={(event) => toggleBook(book.value, event.currentTarget.checked)} />
                {book.label}
              </label>
            ))}
          </div>
        </fieldset>
      )}
      {options && options.tracked_links.length > 0 && (
        <fieldset aria-describedby={filterErrors.length ? `${id}-filter-errors` : undefined}>
          <legend>Only for these tracked links (optional)</legend>
          <p class="hint">An event is sent when it is of a chosen book or comes through a chosen link.</p>
          <div class="check-grid check-scroll">
            {options.tracked_links.map((link) => (
              <label class="check" key={link.id}>
                <input type="checkbox" checked={links.includes(link.id)} onChange={(event) => toggleLink(link.id, event.currentTarget.checked)} />
                {`${link.label} (${bookName(link.book_id)})`}
              </label>
            ))}
          </div>
          {filterErrors.length > 0 && (
            <ul class="field-errors" id={`${id}-filter-errors`}>
              {filterErrors.map((message) => <li key={message}>{message}</li>)}
            </ul>
          )}
        </fieldset>
      )}
      <ErrorMessage problem={problem} shownFields={['name', 'target_url', 'provider', 'event_types', ...Object.keys(problem?.details ?? {}).filter((f) => f.startsWith('filters'))]} title={problemTitle} />
      <div class="actions">
        <Button type="submit" variant="primary" busy={busy}>{submitLabel}</Button>
        {onCancel && <Button onClick={onCancel}>Cancel editing</Button>}
      </div>
    </form>
  );
}
