/**
 * Catalogs: the workspace's product catalogs with their sync state and last
 * error, a new catalog (empty, or imported from a product feed, whose import
 * is followed until it ends), a catalog's sync jobs with their progress and
 * refused items, its items searched on the API, deleting a catalog (confirmed), and a book made from the catalog with a template chosen from the
 * templates' thumbnails, followed until its pages are ready. Creating needs
 * `catalogs:write` (admins and owners); making a book needs `books:write`
 * (editors and above); others see the catalogs read-only.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { paths } from '@flipbook/client';
import { call, client, managesPeople, rank, role, type DataOf, type Problem } from '../api.ts';
import { bookHref, conversionWords, useBatch } from '../books/book-facts.ts';
import { Button, Hidden } from '../components/button.tsx';
import { Confirm } from '../components/confirm.tsx';
import { Dialog } from '../components/dialog.tsx';
import { DraftNotice } from '../components/draft-notice.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { Field, TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { Select } from '../components/select.tsx';
import { Table } from '../components/table.tsx';
import { notify } from '../components/toast.tsx';
import { draftKey, useDraft, type Draft } from '../draft.ts';
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
      {/* Items and the book form stay as they are while the catalog changes (a sync ends); the items are read again. */}
      {open && <Items key={open.id} catalog={open} />}
      {deleting && (
        <Confirm
          title={`Delete the catalog “${deleting.name}”?`}
          confirmLabel="Delete catalog"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            const result = await call(client.DELETE('/v1/catalogs/{catalog}', { params: { path: { catalog: deleting.id } } }));
            if (result.ok) {
              if (openId === deleting.id) setOpenId(null);
              // The list is read again first, so the catalog is gone from it when the message says so.
              await catalogs.reload();
              notify(`The catalog ${deleting.name} was deleted.`);
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

/** Sync jobs shown at first, and read a page at a time after ("Show older sync jobs"). */
const JOBS_FIRST = 5;
const JOBS_PAGE = 20;

/** GET …/sync-jobs with its `meta` (the cursor of the older ones). */
function readJobs(catalog: number, limit: number, cursor?: string) {
  const request = client.GET('/v1/catalogs/{catalog}/sync-jobs', { params: { path: { catalog }, query: { limit, ...(cursor ? { cursor } : {}) } } });
  return call(request.then((r) => ({ ...r, data: r.data ? { data: r.data } : undefined })));
}

/**
 * A catalog's latest sync jobs (GET …/sync-jobs, newest first), read again every second while one is queued or
 * running: the progress bar and the state in words, and each refused item with its field and reason; older ones
 * twenty at a time on asking, following the list's cursor.
 */
function SyncJobs({ catalog, onFinished }: { catalog: Catalog; onFinished: () => void }) {
  const jobs = useResource(() => readJobs(catalog.id, JOBS_FIRST));
  const [older, setOlder] = useState<SyncJob[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const [olderBusy, setOlderBusy] = useState(false);
  const [olderProblem, setOlderProblem] = useState<Problem | null>(null);
  const latest = jobs.data?.data;
  const open = latest?.some((j) => j.status === 'queued' || j.status === 'running') ?? false;
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
  // The older pages follow on from the first page as first read (its cursor is kept while the latest are read again).
  const next = cursor === undefined ? (jobs.data?.meta.has_more ? jobs.data.meta.next_cursor : null) : cursor;
  const showOlder = async () => {
    if (!next || olderBusy) return;
    setOlderBusy(true);
    const result = await readJobs(catalog.id, JOBS_PAGE, next);
    setOlderBusy(false);
    setOlderProblem(result.ok ? null : result.problem);
    if (!result.ok) return;
    setOlder((o) => [...o, ...result.data.data]);
    setCursor(result.data.meta.has_more ? result.data.meta.next_cursor : null);
  };
  const shown = latest ? [...latest, ...older.filter((o) => !latest.some((l) => l.id === o.id))] : undefined;
  return (
    <section class="card stack" aria-labelledby="sync-jobs">
      <h2 id="sync-jobs">{`Sync jobs of ${catalog.name}`}</h2>
      <ErrorMessage problem={jobs.problem} title="The sync jobs could not be read" />
      {jobs.data === undefined && jobs.loading && <Loading what="sync jobs" />}
      {shown?.length === 0 && <p class="empty">No sync job yet: items sent through the API or a feed import start one.</p>}
      {shown && shown.length > 0 && (
        <ol class="item-list" aria-label={`The latest sync jobs of ${catalog.name}, newest first`}>
          {shown.map((job) => (
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
      {shown && shown.length > 0 && <p class="hint">{next ? `${shown.length} shown, newest first; there are older ones.` : `All ${shown.length} shown.`}</p>}
      <ErrorMessage problem={olderProblem} title="The older sync jobs could not be read" />
      {next && <Button onClick={showOlder} busy={olderBusy}>Show older sync jobs</Button>}
    </section>
  );
}

/** The API's largest page of items. */
const ITEMS_PAGE = 200;

/** An item chosen for a book: its key (what the render takes) and its title (what the person reads). */
interface Picked { key: string; title: string }

/**
 * The book form of a catalog, kept as a draft (in this browser, per catalog) until the book is made: the items
 * picked in their order, the template, name, cover, reader settings and status.
 */
interface BookForm {
  picked: Picked[];
  template: string | null;
  title: string;
  cover: { title: string; description: string; website: string };
  settings: Record<string, string>;
  background: string;
  publish: boolean;
  onlyFound: boolean;
}
const EMPTY_BOOK: BookForm = { picked: [], template: null, title: '', cover: { title: '', description: '', website: '' }, settings: {}, background: '', publish: false, onlyFound: false };
/** Whether a book form holds anything worth keeping. */
const bookFormDiffers = (f: BookForm) => f.picked.length > 0 || f.template !== null || f.publish || f.onlyFound || !!(f.title || f.background)
  || Object.values(f.cover).some(Boolean) || Object.values(f.settings).some(Boolean);

/**
 * A catalog's items, available ones or all, searched on the API (`filter[q]`: every word in the title or key,
 * ignoring case), 200 at a time with "Show more items". People who make books add items one by one ("Add"); the
 * book form then orders them.
 */
function Items({ catalog }: { catalog: Catalog }) {
  const [available, setAvailable] = useState('');
  const [search, setSearch] = useState('');
  const [query, setQuery] = useState('');
  const [items, setItems] = useState<Item[] | undefined>(undefined);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  // The items picked (and the rest of the book form) outlive a reload, until the book is made.
  const book = useDraft<BookForm>(draftKey('catalog-book', String(catalog.id)), () => EMPTY_BOOK, { differs: bookFormDiffers });
  const picked = book.value.picked;
  const setPicked = (update: (p: Picked[]) => Picked[]) => book.set((f) => ({ ...f, picked: update(f.picked) }));
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
  }, [available, query, catalog.updated_at]);
  const searching = query.length > 0;
  const makesBooks = rank(role.value) >= rank('editor');
  const count = items ? `${items.length}${next ? '+' : ''}` : '';
  const titleOf = (i: Item) => i.title ?? i.external_item_key;
  const add = (i: Item) => setPicked((p) => (p.length >= RENDER_MAX_ITEMS || p.some((x) => x.key === i.external_item_key) ? p : [...p, { key: i.external_item_key, title: titleOf(i) }]));
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
          <Table caption={`The items of ${catalog.name}`} hideCaption head={<tr><th scope="col">Title</th><th scope="col">Key</th><th scope="col">Price</th><th scope="col">Stock</th>{makesBooks && <th scope="col">In the book</th>}</tr>}>
                {items.map((i) => {
                  const at = picked.findIndex((p) => p.key === i.external_item_key);
                  return (
                    <tr key={i.id}>
                      <th scope="row">{titleOf(i)}</th>
                      <td>{i.external_item_key}</td>
                      <td>{i.price ? `${i.price} ${i.currency ?? ''}` : '—'}</td>
                      <td>{i.available === null ? 'Unknown' : i.available ? `Available${i.stock_quantity !== null ? ` (${i.stock_quantity})` : ''}` : 'Not available'}</td>
                      {makesBooks && <td>{at >= 0 ? `Number ${at + 1}` : <Button onClick={() => add(i)} disabled={picked.length >= RENDER_MAX_ITEMS}>Add<Hidden> {titleOf(i)}</Hidden></Button>}</td>}
                    </tr>
                  );
                })}
          </Table>
        )}
        {next && <Button onClick={() => void read(next)} busy={loading}>Show more items</Button>}
      </section>
      {makesBooks && <MakeBook catalog={catalog} found={searching && items ? items : null} form={book} setPicked={setPicked} />}
    </>
  );
}

/** The render's limit of items a book. */
const RENDER_MAX_ITEMS = 250;

const ANIMATIONS = [
  { value: 'flip', label: 'Page flip' }, { value: 'scroll_view', label: 'Scroll' }, { value: 'slide', label: 'Slide' }, { value: 'fade', label: 'Fade' },
  { value: 'zoom', label: 'Zoom' }, { value: 'flick-through', label: 'Flick through' }, { value: 'cut', label: 'Cut' },
];
const ON_OFF = [{ value: 'true', label: 'On' }, { value: 'false', label: 'Off' }];
/** The reader settings the render takes (`settings`, the editor's fields); each left to the default unless chosen. */
const RENDER_SETTINGS = [
  { field: 'animation_type', label: 'Animation', options: ANIMATIONS },
  { field: 'mobile_animation_type', label: 'Animation on phones', options: ANIMATIONS },
  { field: 'allow_fullscreen', label: 'Allow full screen', options: ON_OFF },
  { field: 'open_fullscreen_by_default', label: 'Open in full screen', options: ON_OFF },
  { field: 'flip_sound', label: 'Page-turn sound', options: ON_OFF },
  { field: 'share_social_media', label: 'Sharing buttons', options: ON_OFF },
  { field: 'auto_links_enabled', label: 'Make web addresses in the pages links', options: ON_OFF },
  { field: 'image_display', label: 'Background image', options: [{ value: 'repeat', label: 'Repeated' }, { value: 'center/cover', label: 'Centred, covering the area' }] },
] as const;
type RenderBody = NonNullable<paths['/v1/catalogs/{catalog}/render']['post']['requestBody']>['content']['application/json'];

/**
 * POST /v1/catalogs/{catalog}/render with a template chosen from its
 * thumbnail (templates that lay out products: `catalog` and `products`), the
 * items picked one by one in the order given (or those found, or every
 * available one), the cover, reader settings and whether it is published;
 * then GET /v1/batches/{batchId} every second until the book's pages are
 * ready, with "Cancel" (DELETE /v1/batches/{batchId}) until then.
 */
function MakeBook({ catalog, found, form, setPicked }: { catalog: Catalog; found: Item[] | null; form: Draft<BookForm>; setPicked: (update: (p: Picked[]) => Picked[]) => void }) {
  const templates = useResource(() => call(client.GET('/v1/templates')));
  const fitting = templates.data?.filter((t) => t.type !== 'posts') ?? [];
  const [preview, setPreview] = useState<(typeof fitting)[number] | null>(null);
  const { picked, template: chosenId, title, cover, settings, background, publish, onlyFound } = form.value;
  const change = (next: Partial<BookForm>) => form.set((f) => ({ ...f, ...next }));
  const setChosen = (template: string) => change({ template });
  const setTitle = (value: string) => change({ title: value });
  const setCover = (field: keyof BookForm['cover'], value: string) => form.set((f) => ({ ...f, cover: { ...f.cover, [field]: value } }));
  const setBackground = (value: string) => change({ background: value });
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [batchId, setBatchId] = useState<string | null>(null);
  const { batch: followed, problem: readProblem } = useBatch(batchId);
  const [cancelled, setCancelled] = useState<typeof followed>(null);
  const [cancelProblem, setCancelProblem] = useState<Problem | null>(null);
  const [cancelling, setCancelling] = useState(false);
  const batch = cancelled ?? followed;
  // A template kept in a draft that is no longer offered gives way to the default.
  const chosen = chosenId !== null && fitting.some((t) => t.id === chosenId) ? chosenId : null;
  const template = chosen ?? fitting.find((t) => t.is_default)?.id ?? fitting[0]?.id ?? null;
  const subset = picked.length > 0 ? picked.map((p) => p.key) : onlyFound && found ? found.map((i) => i.external_item_key) : null;

  // After a move, focus stays on the moved item's button (or its other one at the ends of the list).
  const [focus, setFocus] = useState<{ key: string; up: boolean } | null>(null);
  useLayoutEffect(() => {
    if (!focus) return;
    const button = (id: string) => document.getElementById(id) as HTMLButtonElement | null;
    const wanted = button(`pick-${focus.up ? 'up' : 'down'}-${focus.key}`);
    (wanted && !wanted.disabled ? wanted : button(`pick-${focus.up ? 'down' : 'up'}-${focus.key}`))?.focus();
    setFocus(null);
  }, [focus]);
  const move = (index: number, by: -1 | 1) => {
    const key = picked[index]!.key;
    setPicked((p) => {
      const out = [...p];
      const [it] = out.splice(index, 1);
      out.splice(index + by, 0, it!);
      return out;
    });
    setFocus({ key, up: by < 0 });
  };

  const make = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    if (subset && subset.length === 0) return setProblem({ status: 422, type: 'ValidationException', message: 'No item matches the search: change it, or make the book from every available item.', details: {}, retryAfterSeconds: null });
    setBusy(true);
    const coverBody = Object.fromEntries(Object.entries(cover).map(([k, v]) => [k, v.trim()]).filter(([, v]) => v));
    const settingsBody: Record<string, unknown> = Object.fromEntries(Object.entries(settings).filter(([, v]) => v).map(([k, v]) => [k, v === 'true' ? true : v === 'false' ? false : v]));
    if (background.trim()) settingsBody.background = background.trim();
    const body: RenderBody = {
      ...(template ? { template_id: Number(template) } : {}),
      ...(title.trim() ? { title: title.trim() } : {}),
      ...(subset ? { items: subset.slice(0, RENDER_MAX_ITEMS) } : {}),
      ...(Object.keys(coverBody).length ? { cover: coverBody } : {}),
      ...(Object.keys(settingsBody).length ? { settings: settingsBody as RenderBody['settings'] } : {}),
      status: publish ? 'publish' : 'draft',
    };
    const result = await call(client.POST('/v1/catalogs/{catalog}/render', { params: { path: { catalog: catalog.id } }, body }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    setCancelled(null);
    setCancelProblem(null);
    setBatchId(result.data.batch_id);
  };
  const cancel = async () => {
    if (!batchId || cancelling) return;
    setCancelling(true);
    const result = await call(client.DELETE('/v1/batches/{batchId}', { params: { path: { batchId } } }));
    setCancelling(false);
    if (result.ok) setCancelled(result.data);
    setCancelProblem(result.ok ? null : result.problem);
  };

  const book = batch?.books[0];
  // Once the book is made, its draft is forgotten (the form keeps showing what it was made of, to make another).
  const made = batch?.status === 'completed';
  useEffect(() => {
    if (made) form.saved(form.value);
  }, [made, batchId]);
  const running = !!batchId && (!batch || batch.status === 'queued' || batch.status === 'processing');
  const coverField = (field: 'title' | 'description' | 'website') => fieldErrors(problem, `cover.${field}`);
  return (
    <form class="card stack" onSubmit={make} noValidate aria-labelledby="make-book">
      <h2 id="make-book">{`Make a book from ${catalog.name}`}</h2>
      <DraftNotice restored={form.restored} what="choices" onDiscard={() => form.discard(EMPTY_BOOK)} />
      <ErrorMessage problem={templates.problem} title="The templates could not be read" />
      {templates.data === undefined && templates.loading && <Loading what="templates" />}
      {fitting.length > 0 && (
        <fieldset>
          <legend>Template</legend>
          <div class="template-grid">
            {fitting.map((t) => (
              <div class="template-choice" key={t.id}>
                <label class="template-pick">
                  <img src={t.thumbnails.small} alt="" width={160} height={226} loading="lazy" />
                  <span class="check">
                    <input type="radio" name="template" value={t.id} checked={template === t.id} onChange={() => setChosen(t.id)} aria-describedby={`template-${t.id}`} />
                    {t.name}
                  </span>
                </label>
                <span class="hint" id={`template-${t.id}`}>{t.description}</span>
                <Button variant="link" onClick={() => setPreview(t)}>Larger preview<Hidden> of {t.name}</Hidden></Button>
              </div>
            ))}
          </div>
        </fieldset>
      )}
      {preview && (
        <Dialog title={`${preview.name}, larger`} onClose={() => setPreview(null)}>
          <img class="template-large" src={preview.thumbnails.large} alt={`A sample page laid out with ${preview.name}`} width={1024} height={1448} />
          <p class="hint">{preview.description}</p>
          <div class="actions">
            <Button variant="primary" onClick={() => { setChosen(preview.id); setPreview(null); }}>{`Use ${preview.name}`}</Button>
            <Button onClick={() => setPreview(null)}>Close</Button>
          </div>
        </Dialog>
      )}
      <TextInput label="Book name" hint={`Optional; empty names the book ${catalog.name}.`} value={title} onValue={setTitle} errors={fieldErrors(problem, 'title')} autoComplete="off" />
      <fieldset class="stack">
        <legend>Cover</legend>
        <TextInput label="Cover title" hint="Optional; empty: the catalog's name." value={cover.title} onValue={(v) => setCover('title', v)} errors={coverField('title')} autoComplete="off" />
        <Field label="Cover text" hint="Optional: a few lines under the title." errors={coverField('description')}>
          {(control) => <textarea {...control} rows={3} value={cover.description} onInput={(e) => setCover('description', e.currentTarget.value)} />}
        </Field>
        <TextInput label="Website on the cover" hint="Optional, as it should be printed." value={cover.website} onValue={(v) => setCover('website', v)} errors={coverField('website')} autoComplete="url" />
      </fieldset>
      <details class="stack">
        <summary>Reader settings</summary>
        <p class="hint">Each is the usual one unless chosen; all can be changed later in the book's reader settings.</p>
        {RENDER_SETTINGS.map(({ field, label, options }) => (
          <Select key={field} label={label} value={settings[field] ?? ''} options={[{ value: '', label: 'The usual' }, ...options]}
            onValue={(v) => form.set((f) => ({ ...f, settings: { ...f.settings, [field]: v } }))} errors={fieldErrors(problem, `settings.${field}`)} />
        ))}
        <TextInput label="Background" hint="Optional: a CSS colour or gradient, or an image URL." value={background} onValue={setBackground} errors={fieldErrors(problem, 'settings.background')} autoComplete="off" />
      </details>
      <fieldset>
        <legend>When it is ready</legend>
        <label class="check"><input type="radio" name="render-status" checked={!publish} onChange={() => change({ publish: false })} />Keep it a draft</label>
        <label class="check"><input type="radio" name="render-status" checked={publish} onChange={() => change({ publish: true })} />Publish it</label>
      </fieldset>
      {picked.length > 0
        ? (
          <section class="stack" aria-labelledby="picked-items">
            <h3 id="picked-items">{`Items in the book (${picked.length}), in page order`}</h3>
            <ol class="item-list picked">
              {picked.map((p, index) => (
                <li key={p.key} class="item">
                  <span class="item-title">{`${index + 1}. ${p.title}`}</span>
                  <span class="actions">
                    <Button id={`pick-up-${p.key}`} onClick={() => move(index, -1)} disabled={index === 0}>Move up<Hidden> {p.title}</Hidden></Button>
                    <Button id={`pick-down-${p.key}`} onClick={() => move(index, 1)} disabled={index === picked.length - 1}>Move down<Hidden> {p.title}</Hidden></Button>
                    <Button onClick={() => setPicked((all) => all.filter((x) => x.key !== p.key))}>Take out<Hidden> {p.title}</Hidden></Button>
                  </span>
                </li>
              ))}
            </ol>
            <Button onClick={() => setPicked(() => [])}>Take out every item</Button>
          </section>
        )
        : found && (
          <label class="check">
            <input type="checkbox" checked={onlyFound} onChange={(e) => change({ onlyFound: e.currentTarget.checked })} />
            {`Only the ${found.length} ${found.length === 1 ? 'item' : 'items'} matching the search`}
          </label>
        )}
      <p class="hint">{picked.length > 0 ? `The items added, in this order (up to ${RENDER_MAX_ITEMS}).` : subset ? 'The items found, in the order shown.' : `Every available item of the catalog, oldest first (up to ${RENDER_MAX_ITEMS}); or add items one by one with “Add” in the list above.`}</p>
      <ErrorMessage problem={problem} shownFields={['title', 'cover.title', 'cover.description', 'cover.website', 'settings.background', ...RENDER_SETTINGS.map((s) => `settings.${s.field}`)]} title="The book was not made" />
      <Button type="submit" variant="primary" busy={busy} disabled={running}>Make the book</Button>
      {batchId && !batch && !readProblem && <p role="status">Laying the items out…</p>}
      {batch && (
        <div class="stack">
          {batch.status === 'processing' && batch.progress.total > 0 && <progress max={batch.progress.total} value={batch.progress.completed} aria-label="Pages of the new book" />}
          <p role="status" class={`conversion-state conversion-${batch.status}`}>{batch.status === 'cancelled' ? 'Cancelled: the book was not made, and nothing of it is kept.' : conversionWords(batch)}</p>
          {batch.warnings.length > 0 && (
            <div class="warnings">
              <p class="alert-title">What could not be laid out as asked</p>
              <ul>{batch.warnings.map((w, i) => <li key={i}>{w.message}</li>)}</ul>
            </div>
          )}
          {batch.status === 'completed' && book && <p><a href={bookHref(book)}>Open the book {book.name}</a></p>}
        </div>
      )}
      {running && <Button onClick={cancel} busy={cancelling}>Cancel making the book</Button>}
      <ErrorMessage problem={cancelProblem} title="The book could not be cancelled" />
      <ErrorMessage problem={readProblem} title="The book's progress could not be read" />
    </form>
  );
}
