/**
 * Catalogs: the workspace's product catalogs with their sync state and last
 * error, a new catalog (empty, or imported from a product feed, whose import
 * is followed until it ends), a catalog's items with a search over those
 * loaded, and a book made from the catalog with a template chosen from the
 * templates' thumbnails, followed until its pages are ready. Creating needs
 * `catalogs:write` (admins and owners); making a book needs `books:write`
 * (editors and above); others see the catalogs read-only.
 */
import { useEffect, useState } from 'preact/hooks';
import { call, client, managesPeople, rank, role, type DataOf, type Problem } from '../api.ts';
import { bookHref, conversionWords, useBatch } from '../books/book-facts.ts';
import { Button } from '../components/button.tsx';
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
                  <td><Button onClick={() => setOpenId(c.id)} aria-label={`Items of ${c.name}`}>Items</Button></td>
                </tr>
              ))}
        </Table>
      )}
      {open && <Items key={`${open.id}-${open.updated_at}`} catalog={open} />}
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

/** Whether an item matches the search: every word in its title or key, ignoring case. */
function matches(item: Item, words: string[]): boolean {
  const text = `${item.title ?? ''} ${item.external_item_key}`.toLowerCase();
  return words.every((w) => text.includes(w));
}

/**
 * A catalog's first 200 items (the API's largest page), available ones or all,
 * searched on screen: the API has no search on items, so the search covers the
 * items loaded here, and says so.
 */
function Items({ catalog }: { catalog: Catalog }) {
  const [available, setAvailable] = useState('');
  const [search, setSearch] = useState('');
  const [items, setItems] = useState<Item[] | undefined>(undefined);
  const [problem, setProblem] = useState<Problem | null>(null);
  useEffect(() => {
    void call(client.GET('/v1/catalogs/{catalog}/items', { params: { path: { catalog: catalog.id }, query: { limit: 200, ...(available ? { available: available === 'true' } : {}) } } })).then((result) => {
      if (result.ok) setItems(result.data);
      setProblem(result.ok ? null : result.problem);
    });
  }, [available]);
  const words = search.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const shown = items && words.length > 0 ? items.filter((i) => matches(i, words)) : items;
  const makesBooks = rank(role.value) >= rank('editor');
  return (
    <>
      <section class="card stack" aria-labelledby="catalog-items">
        <h2 id="catalog-items">{`Items of ${catalog.name}`}</h2>
        <Select label="Show" value={available} options={[{ value: '', label: 'All items' }, { value: 'true', label: 'Available' }, { value: 'false', label: 'Not available' }]} onValue={setAvailable} />
        <TextInput label="Search items" hint={`By title or key, among the ${items?.length ?? 0} items loaded here (the first 200; the API has no search on items).`} value={search} onValue={setSearch} autoComplete="off" />
        <ErrorMessage problem={problem} title="The items could not be read" />
        {items === undefined && !problem && <Loading what="items" />}
        {items && words.length > 0 && <p role="status">{shown!.length === 1 ? '1 item matches' : `${shown!.length} items match`} “{search.trim()}”.</p>}
        {items && items.length === 0 && <p class="empty">{catalog.status === 'importing' ? 'No items yet: the feed is being imported.' : 'No items.'}</p>}
        {shown && shown.length > 0 && (
          <Table caption={`The items of ${catalog.name}`} hideCaption head={<tr><th scope="col">Title</th><th scope="col">Key</th><th scope="col">Price</th><th scope="col">Stock</th></tr>}>
                {shown.map((i) => (
                  <tr key={i.id}>
                    <th scope="row">{i.title ?? i.external_item_key}</th>
                    <td>{i.external_item_key}</td>
                    <td>{i.price ? `${i.price} ${i.currency ?? ''}` : '—'}</td>
                    <td>{i.available === null ? 'Unknown' : i.available ? `Available${i.stock_quantity !== null ? ` (${i.stock_quantity})` : ''}` : 'Not available'}</td>
                  </tr>
                ))}
          </Table>
        )}
      </section>
      {makesBooks && <MakeBook catalog={catalog} found={words.length > 0 && shown ? shown : null} />}
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
