/**
 * Catalogs: the workspace's product catalogs with their sync state and last
 * error, a new catalog (empty, or imported from a product feed, whose import
 * is followed until it ends), a catalog's sync jobs with their progress and
 * refused items, its items searched on the API, deleting a catalog (confirmed), and a book made from the catalog with a template chosen from the
 * templates' thumbnails, followed until its pages are ready. Creating needs
 * `catalogs:write` (admins and owners); making a book needs `books:write`
 * (editors and above); others see the catalogs read-only.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, client, managesPeople, rank, role, type DataOf, type Problem } from '../api.ts';
import { bookHref, conversionWords, useBatch } from '../books/book-facts.ts';
import { Button, Hidden } from '../components/button.tsx';
import { Confirm } from '../components/confirm.tsx';
import { DraftNotice } from '../components/draft-notice.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { Select } from '../components/select.tsx';
import { Table } from '../components/table.tsx';
import { notify } from '../components/toast.tsx';
import { draftKey, useDraft } from '../draft.ts';
import { useResource } from '../resource.ts';

type Catalog = DataOf<'/v1/catalogs', 'get'>[number];
type Item = DataOf<'/v1/catalogs/{catalog}/items', 'get'>[number];
type SyncJob = DataOf<'/v1/catalogs/{catalog}/sync-jobs', 'get'>[number];
type Source = 'custom' | 'shopify' | 'woocommerce' | 'bigcommerce' | 'wordpress' | 'google_merchant';

const SOURCES: { value: Source; label: string }[] = [
  { value: 'custom', label: 'Other (JSON or CSV)' }, { value: 'google_merchant', label: 'Google Merchant Center' }, { value: 'shopify', label: 'Shopify' },
  { value: 'woocommerce', label: 'WooCommerce' }, { value: 'bigcommerce', label: 'BigCommerce' }, { value: 'wordpress', label: 'WordPress' },
];

/** A catalog's state in words: importing, ready (with the last sync's outcome), or failed with the reason. */
function stateOf(c: Catalog): string {
  if (c.status === 'importing') return 'Importing the feed…';
  if (c.status === 'failed') return `Import failed: ${c.last_sync_error ?? 'no reason given'}`;
  if (c.last_sync_status === 'failed') return `Ready; the last sync failed: ${c.last_sync_error ?? 'no reason given'}`;
  if (c.last_sync_error) return `Ready; ${c.last_sync_error}`;
  return c.last_sync_status === 'completed' ? 'Ready, in sync' : 'Ready';
}

interface Form { name: string; source_url: string; source: Source }
const EMPTY: Form = { name: '', source_url: '', source: 'custom' };

export default function Catalogs() {
  const writes = managesPeople.value;
  const catalogs = useResource(() => call(client.GET('/v1/catalogs', { params: { query: { limit: 200 } } })));
  const [openId, setOpenId] = useState<number | null>(null);
  const [deleting, setDeleting] = useState<Catalog | null>(null);
  const draft = useDraft<Form>(draftKey('catalog-new', 'workspace'), () => EMPTY, { differs: (v) => !!(v.name || v.source_url) });
  const form = draft.value;
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);

  // While a feed imports, the list is read again every second, so its state moves on screen.
  const importing = catalogs.data?.some((c) => c.status === 'importing') ?? false;
  useEffect(() => {
    if (!importing || catalogs.loading) return;
    const timer = setTimeout(() => void catalogs.reload(), 1000);
    return () => clearTimeout(timer);
  }, [importing, catalogs.loading, catalogs.data]);

  const create = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    const url = form.source_url.trim();
    const result = await call(client.POST('/v1/catalogs', { body: { name: form.name.trim(), source: form.source, ...(url ? { source_url: url } : {}) } }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    draft.saved(EMPTY);
    notify(url ? `The catalog ${result.data.catalog.name} was created; its feed is being imported.` : `The catalog ${result.data.catalog.name} was created.`);
    await catalogs.reload();
  };

  const open = catalogs.data?.find((c) => c.id === openId) ?? null;
  return (
    <Page title="Catalogs">
      <p>Product catalogs, imported from a shop's feed or sent through the API, from which books are made.</p>
      {!writes && <p class="alert">Only admins and owners create catalogs. You see them as they are.</p>}
      <ErrorMessage problem={catalogs.problem} title="The catalogs could not be read" />
      {catalogs.data === undefined && catalogs.loading && <Loading what="catalogs" />}
      {catalogs.data && catalogs.data.length === 0 && <p class="empty">This workspace has no catalogs yet.</p>}
      {catalogs.data && catalogs.data.length > 0 && (
        <Table caption="Catalogs" hideCaption head={<tr><th scope="col">Name</th><th scope="col">Source</th><th scope="col">State</th><th scope="col">Last sync</th><th scope="col"><span class="visually-hidden">Items</span></th></tr>}>
              {catalogs.data.map((c) => (
                <tr key={c.id}>
                  <th scope="row">{c.name}</th>
                  <td>{SOURCES.find((s) => s.value === c.source)?.label ?? c.source}{c.source_url && <><br /><span class="hint">{c.source_url}</span></>}</td>
                  <td><span role={c.status === 'importing' ? 'status' : undefined}>{stateOf(c)}</span></td>
                  <td>{c.last_sync_status ? new Date(c.last_synced_at).toLocaleString() : 'Not yet'}</td>
                  <td class="actions">
                    <Button onClick={() => setOpenId(c.id)} aria-label={`Items of ${c.name}`}>Items</Button>
                    {writes && <Button variant="danger" onClick={() => setDeleting(c)}>Delete catalog<Hidden> {c.name}</Hidden></Button>}
                  </td>
                </tr>
              ))}
        </Table>
      )}
      {open && <SyncJobs key={`jobs-${open.id}-${open.updated_at}`} catalog={open} onFinished={() => void catalogs.reload()} />}
      {open && <Items key={`${open.id}-${open.updated_at}`} catalog={open} />}
      {deleting && (
        <Confirm
          title={`Delete the catalog “${deleting.name}”?`}
          confirmLabel="Delete catalog"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            const result = await call(client.DELETE('/v1/catalogs/{catalog}', { params: { path: { catalog: deleting.id } } }));
            if (result.ok) {
              if (openId === deleting.id) setOpenId(null);
              notify(`The catalog ${deleting.name} was deleted.`);
              await catalogs.reload();
            }
            return result;
          }}
        >
          <p>Its items and its sync history are deleted, and it can no longer be imported or made into books. Books already made from it stay as they are. This cannot be undone.</p>
        </Confirm>
      )}
      {writes && (
        <form class="card stack" onSubmit={create} noValidate aria-labelledby="new-catalog">
          <h2 id="new-catalog">New catalog</h2>
          <DraftNotice restored={draft.restored} onDiscard={() => draft.discard(EMPTY)} />
          <TextInput label="Name" value={form.name} onValue={(name) => draft.set((f) => ({ ...f, name }))} errors={fieldErrors(problem, 'name')} autoComplete="off" />
          <TextInput label="Product feed URL" hint="Optional: a Google Merchant, Shopify, WooCommerce, JSON or CSV feed to import. Empty for a catalog filled through the API." value={form.source_url} onValue={(source_url) => draft.set((f) => ({ ...f, source_url }))} errors={fieldErrors(problem, 'source_url')} autoComplete="url" />
          <Select label="Source" value={form.source} options={SOURCES} onValue={(source) => draft.set((f) => ({ ...f, source: source as Source }))} errors={fieldErrors(problem, 'source')} />
          <ErrorMessage problem={problem} shownFields={['name', 'source_url', 'source']} title="The catalog was not created" />
          <Button type="submit" variant="primary" busy={busy}>Create catalog</Button>
        </form>
      )}
    </Page>
  );
}

const SYNC_TYPES: Record<string, string> = { feed_import: 'Feed import', bulk_upsert: 'Items sent through the API', availability_update: 'Availability update' };

/** A sync job in words: what it is, where it stands, and how many items were applied and refused. */
function jobWords(job: SyncJob): string {
  const { total, processed, accepted, failed } = job.progress;
  const counts = `${accepted} applied, ${failed} refused`;
  if (job.status === 'queued') return 'Waiting to start.';
  if (job.status === 'running') return total > 0 ? `Running: ${processed} of ${total} items handled (${counts}).` : 'Running: reading the feed…';
  if (job.status === 'failed') return `Failed: ${job.errors.find((e) => e.field === 'source_url')?.message ?? job.errors[0]?.message ?? 'no reason given'}`;
  return `Done: ${total} ${total === 1 ? 'item' : 'items'} handled, ${counts}.`;
}

/**
 * A catalog's latest sync jobs (GET …/sync-jobs, newest first), read again every second while one is queued or
 * running: the progress bar and the state in words, and each refused item with its field and reason.
 */
function SyncJobs({ catalog, onFinished }: { catalog: Catalog; onFinished: () => void }) {
  const jobs = useResource(() => call(client.GET('/v1/catalogs/{catalog}/sync-jobs', { params: { path: { catalog: catalog.id }, query: { limit: 5 } } })));
  const open = jobs.data?.some((j) => j.status === 'queued' || j.status === 'running') ?? false;
  const [wasOpen, setWasOpen] = useState(false);
  useEffect(() => {
    if (open) setWasOpen(true);
    else if (wasOpen) {
      setWasOpen(false);
      onFinished();
    }
    if (!open || jobs.loading) return;
    const timer = setTimeout(() => void jobs.reload(), 1000);
    return () => clearTimeout(timer);
  }, [open, jobs.loading, jobs.data]);
  return (
    <section class="card stack" aria-labelledby="sync-jobs">
      <h2 id="sync-jobs">{`Sync jobs of ${catalog.name}`}</h2>
      <ErrorMessage problem={jobs.problem} title="The sync jobs could not be read" />
      {jobs.data === undefined && jobs.loading && <Loading what="sync jobs" />}
      {jobs.data?.length === 0 && <p class="empty">No sync job yet: items sent through the API or a feed import start one.</p>}
      {jobs.data && jobs.data.length > 0 && (
        <ol class="item-list" aria-label={`The latest sync jobs of ${catalog.name}, newest first`}>
          {jobs.data.map((job) => (
            <li key={job.id} class="item stack">
              <h3 class="item-title">{`${SYNC_TYPES[job.type] ?? job.type}, ${new Date(job.created_at).toLocaleString()}`}</h3>
              {job.progress.total > 0 && <progress max={job.progress.total} value={job.progress.processed} aria-label={`Items handled by sync job ${job.id}`} />}
              <p role={job.status === 'queued' || job.status === 'running' ? 'status' : undefined}>{jobWords(job)}</p>
              {job.status !== 'failed' && job.errors.length > 0 && (
                <Table caption={`Items refused by sync job ${job.id}`} head={<tr><th scope="col">Item</th><th scope="col">Field</th><th scope="col">Reason</th></tr>}>
                  {job.errors.map((e) => (
                    <tr key={`${e.index}-${e.field}`}>
                      <th scope="row">{e.external_item_key ?? `Number ${e.index + 1}`}</th>
                      <td>{e.field}</td>
                      <td>{e.message}</td>
                    </tr>
                  ))}
                </Table>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

/** The API's largest page of items. */
const ITEMS_PAGE = 200;

/**
 * A catalog's items, available ones or all, searched on the API (`filter[q]`: every word in the title or key,
 * ignoring case), 200 at a time with "Show more items".
 */
function Items({ catalog }: { catalog: Catalog }) {
  const [available, setAvailable] = useState('');
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  const [items, setItems] = useState<Item[] | undefined>(undefined);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  // The search is sent 300 ms after the last key, not once per key.
  useEffect(() => {
    const timer = setTimeout(() => setQuery(search.trim()), 300);
    return () => clearTimeout(timer);
  }, [search]);
  const generation = useRef(0);
  const read = async (cursor: string | null) => {
    const mine = cursor ? generation.current : ++generation.current;
    setLoading(true);
    const request = client.GET('/v1/catalogs/{catalog}/items', {
      params: { path: { catalog: catalog.id }, query: { limit: ITEMS_PAGE, ...(available ? { available: available === 'true' } : {}), ...(query ? { 'filter[q]': query } : {}), ...(cursor ? { cursor } : {}) } },
    });
    const result = await call(request.then((r) => ({ ...r, data: r.data ? { data: r.data } : undefined })));
    if (mine !== generation.current) return;
    setLoading(false);
    setProblem(result.ok ? null : result.problem);
    if (!result.ok) return;
    setItems((before) => [...(cursor ? before ?? [] : []), ...result.data.data]);
    setNext(result.data.meta.has_more ? result.data.meta.next_cursor : null);
  };
  useEffect(() => {
    void read(null);
  }, [available, query]);
  const searching = query.length > 0;
  const makesBooks = rank(role.value) >= rank('editor');
  const count = items ? `${items.length}${next ? '+' : ''}` : '';
  return (
    <>
      <section class="card stack" aria-labelledby="catalog-items">
        <h2 id="catalog-items">{`Items of ${catalog.name}`}</h2>
        <Select label="Show" value={available} options={[{ value: '', label: 'All items' }, { value: 'true', label: 'Available' }, { value: 'false', label: 'Not available' }]} onValue={setAvailable} />
        <TextInput label="Search items" hint="Every word, in the title or the key, ignoring case." value={search} onValue={setSearch} autoComplete="off" errors={fieldErrors(problem, 'filter[q]')} />
        <ErrorMessage problem={problem} shownFields={['filter[q]']} title="The items could not be read" />
        {items === undefined && !problem && <Loading what="items" />}
        {items && searching && <p role="status">{count === '1' ? '1 item matches' : `${count} items match`} “{query}”.</p>}
        {items && items.length === 0 && !searching && <p class="empty">{catalog.status === 'importing' ? 'No items yet: the feed is being imported.' : 'No items.'}</p>}
        {items && items.length > 0 && (
          <Table caption={`The items of ${catalog.name}`} hideCaption head={<tr><th scope="col">Title</th><th scope="col">Key</th><th scope="col">Price</th><th scope="col">Stock</th></tr>}>
                {items.map((i) => (
                  <tr key={i.id}>
                    <th scope="row">{i.title ?? i.external_item_key}</th>
                    <td>{i.external_item_key}</td>
                    <td>{i.price ? `${i.price} ${i.currency ?? ''}` : '—'}</td>
                    <td>{i.available === null ? 'Unknown' : i.available ? `Available${i.stock_quantity !== null ? ` (${i.stock_quantity})` : ''}` : 'Not available'}</td>
                  </tr>
                ))}
          </Table>
        )}
        {next && <Button onClick={() => void read(next)} busy={loading}>Show more items</Button>}
      </section>
      {makesBooks && <MakeBook catalog={catalog} found={searching && items ? items : null} />}
    </>
  );
}

/**
 * POST /v1/catalogs/{catalog}/render with a template chosen from its
 * thumbnail (templates that lay out products: `catalog` and `products`), then
 * GET /v1/batches/{batchId} every second until the book's pages are ready.
 */
function MakeBook({ catalog, found }: { catalog: Catalog; found: Item[] | null }) {
  const templates = useResource(() => call(client.GET('/v1/templates')));
  const fitting = templates.data?.filter((t) => t.type !== 'posts') ?? [];
  const [chosen, setChosen] = useState<string | null>(null);
  const [title, setTitle] = useState('');
  const [onlyFound, setOnlyFound] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [batchId, setBatchId] = useState<string | null>(null);
  const { batch, problem: readProblem } = useBatch(batchId);
  const template = chosen ?? fitting.find((t) => t.is_default)?.id ?? fitting[0]?.id ?? null;
  const subset = onlyFound && found ? found : null;

  const make = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    if (subset && subset.length === 0) return setProblem({ status: 422, type: 'ValidationException', message: 'No item matches the search: change it, or make the book from every available item.', details: {}, retryAfterSeconds: null });
    setBusy(true);
    const body = {
      ...(template ? { template_id: Number(template) } : {}),
      ...(title.trim() ? { title: title.trim() } : {}),
      ...(subset ? { items: subset.slice(0, 250).map((i) => i.external_item_key) } : {}),
    };
    const result = await call(client.POST('/v1/catalogs/{catalog}/render', { params: { path: { catalog: catalog.id } }, body }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    setBatchId(result.data.batch_id);
  };

  const book = batch?.books[0];
  return (
    <form class="card stack" onSubmit={make} noValidate aria-labelledby="make-book">
      <h2 id="make-book">{`Make a book from ${catalog.name}`}</h2>
      <ErrorMessage problem={templates.problem} title="The templates could not be read" />
      {templates.data === undefined && templates.loading && <Loading what="templates" />}
      {fitting.length > 0 && (
        <fieldset>
          <legend>Template</legend>
          <div class="template-grid">
            {fitting.map((t) => (
              <label class="template-choice" key={t.id}>
                <img src={t.thumbnails.small} alt="" width={160} height={226} loading="lazy" />
                <span class="check">
                  <input type="radio" name="template" value={t.id} checked={template === t.id} onChange={() => setChosen(t.id)} aria-describedby={`template-${t.id}`} />
                  {t.name}
                </span>
                <span class="hint" id={`template-${t.id}`}>{t.description}</span>
              </label>
            ))}
          </div>
        </fieldset>
      )}
      <TextInput label="Book name" hint={`Optional; empty names the book ${catalog.name}.`} value={title} onValue={setTitle} errors={fieldErrors(problem, 'title')} autoComplete="off" />
      {found && (
        <label class="check">
          <input type="checkbox" checked={onlyFound} onChange={(e) => setOnlyFound(e.currentTarget.checked)} />
          {`Only the ${found.length} ${found.length === 1 ? 'item' : 'items'} matching the search`}
        </label>
      )}
      <p class="hint">{subset ? 'The items found, in the order shown.' : 'Every available item of the catalog, oldest first (up to 250).'}</p>
      <ErrorMessage problem={problem} shownFields={['title']} title="The book was not made" />
      <Button type="submit" variant="primary" busy={busy}>Make the book</Button>
      {batchId && !batch && !readProblem && <p role="status">Laying the items out…</p>}
      {batch && (
        <div class="stack">
          {batch.status === 'processing' && batch.progress.total > 0 && <progress max={batch.progress.total} value={batch.progress.completed} aria-label="Pages of the new book" />}
          <p role="status" class={`conversion-state conversion-${batch.status}`}>{conversionWords(batch)}</p>
          {batch.warnings.length > 0 && (
            <div class="warnings">
              <p class="alert-title">What could not be laid out as asked</p>
              <ul>{batch.warnings.map((w, i) => <li key={i}>{w.message}</li>)}</ul>
            </div>
          )}
          {batch.status === 'completed' && book && <p><a href={bookHref(book)}>Open the book {book.name}</a></p>}
        </div>
      )}
      <ErrorMessage problem={readProblem} title="The book's progress could not be read" />
    </form>
  );
}
