/**
 * Catalogs: the workspace's product catalogs with their sync state and last
 * error, a new catalog (empty, or imported from a product feed, whose import
 * is followed until it ends), and a catalog's items. Creating needs
 * `catalogs:write` (admins and owners); others see the catalogs read-only.
 */
import { useEffect, useState } from 'preact/hooks';
import { call, client, managesPeople, type DataOf, type Problem } from '../api.ts';
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

/** A catalog's first 200 items (the API's largest page), available ones or all. */
function Items({ catalog }: { catalog: Catalog }) {
  const [available, setAvailable] = useState('');
  const [items, setItems] = useState<Item[] | undefined>(undefined);
  const [problem, setProblem] = useState<Problem | null>(null);
  useEffect(() => {
    void call(client.GET('/v1/catalogs/{catalog}/items', { params: { path: { catalog: catalog.id }, query: { limit: 200, ...(available ? { available: available === 'true' } : {}) } } })).then((result) => {
      if (result.ok) setItems(result.data);
      setProblem(result.ok ? null : result.problem);
    });
  }, [available]);
  return (
    <section class="card stack" aria-labelledby="catalog-items">
      <h2 id="catalog-items">{`Items of ${catalog.name}`}</h2>
      <Select label="Show" value={available} options={[{ value: '', label: 'All items' }, { value: 'true', label: 'Available' }, { value: 'false', label: 'Not available' }]} onValue={setAvailable} />
      <ErrorMessage problem={problem} title="The items could not be read" />
      {items === undefined && !problem && <Loading what="items" />}
      {items && items.length === 0 && <p class="empty">{catalog.status === 'importing' ? 'No items yet: the feed is being imported.' : 'No items.'}</p>}
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
    </section>
  );
}
