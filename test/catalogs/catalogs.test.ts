/** Catalogs, items, availability and sync jobs through HTTP (issue 13). */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, startService, type TestService } from '../helpers.ts';

let svc: TestService;
let ws: { id: number; key: string };

before(async () => {
  svc = await startService({ env: { RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0 } });
  ws = await svc.workspace();
});
after(async () => svc?.stop());

async function createCatalog(key = ws.key, body: Record<string, unknown> = { name: 'Spring' }) {
  const res = await svc.request('POST', '/v1/catalogs', { key, body });
  assert.equal(res.status, 202, res.text);
  return res.body.data.catalog;
}

async function waitForJob(catalogId: number, jobId: number, key = ws.key) {
  return eventually(async () => {
    const res = await svc.request('GET', `/v1/catalogs/${catalogId}/sync-jobs/${jobId}`, { key });
    return ['completed', 'failed'].includes(res.body?.data?.sync_job?.status) ? res.body.data.sync_job : null;
  });
}

async function upsert(catalogId: number, items: string[][], extra: Record<string, unknown> = {}) {
  const res = await svc.request('POST', `/v1/catalogs/${catalogId}/items:bulk-upsert`, { key: ws.key, body: { items, ...extra } });
  assert.equal(res.status, 202, res.text);
  const job = await waitForJob(catalogId, res.body.data.sync_job.id);
  return { summary: res.body.data.summary, job };
}

async function patchAvailability(catalogId: number, items: string[][], extra: Record<string, unknown> = {}) {
  const res = await svc.request('PATCH', `/v1/catalogs/${catalogId}/items/availability`, { key: ws.key, body: { items, ...extra } });
  assert.equal(res.status, 202, res.text);
  const job = await waitForJob(catalogId, res.body.data.sync_job.id);
  return { summary: res.body.data.summary, job };
}

async function items(catalogId: number, query: Record<string, string | number | boolean> = {}) {
  const res = await svc.request('GET', `/v1/catalogs/${catalogId}/items`, { key: ws.key, query: { limit: 200, ...query } });
  assert.equal(res.status, 200, res.text);
  return res.body.data as any[];
}

const tee = (key: string, extra: string[] = []) => [`external_item_key=${key}`, 'external_product_id=tee', `title=Tee ${key}`, 'price=19.90', 'currency=EUR', ...extra];

describe('catalogs', () => {
  test('create, get, list with cursor, delete', async () => {
    const a = await createCatalog(ws.key, { name: 'A', source: 'shopify', external_id: 'acme.myshopify.com', metadata: ['x'] });
    assert.equal(a.status, 'active');
    assert.equal(a.source, 'shopify');
    assert.deepEqual(a.metadata, ['x']);
    assert.equal(a.last_sync_status, null);
    assert.ok(a.last_synced_at);
    const b = await createCatalog(ws.key, { name: 'B' });
    assert.equal(b.source, 'custom');

    const got = await svc.request('GET', `/v1/catalogs/${a.id}`, { key: ws.key });
    assert.equal(got.status, 200);
    assert.equal(got.body.data.catalog.name, 'A');

    const page1 = await svc.request('GET', '/v1/catalogs', { key: ws.key, query: { limit: 1 } });
    assert.equal(page1.body.data.length, 1);
    assert.equal(page1.body.meta.has_more, true);
    const page2 = await svc.request('GET', '/v1/catalogs', { key: ws.key, query: { limit: 1, cursor: page1.body.meta.next_cursor } });
    assert.notEqual(page2.body.data[0].id, page1.body.data[0].id);

    await upsert(b.id, [tee('t1')]);
    const deleted = await svc.request('DELETE', `/v1/catalogs/${b.id}`, { key: ws.key });
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.data.catalog.status, 'deleted');
    assert.equal((await svc.request('GET', `/v1/catalogs/${b.id}`, { key: ws.key })).status, 404);
    assert.equal((await svc.request('GET', `/v1/catalogs/${b.id}/items`, { key: ws.key })).status, 404);
  });

  test('validation: name, source, unknown fields', async () => {
    const res = await svc.request('POST', '/v1/catalogs', { key: ws.key, body: { name: '', source: 'magento' } });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.type, 'ValidationException');
    const unknown = await svc.request('POST', '/v1/catalogs', { key: ws.key, body: { name: 'x', colour: 'red' } });
    assert.equal(unknown.status, 422);
  });

  test('bulk upsert writes items; decimal prices, lists, payload, availability', async () => {
    const c = await createCatalog();
    const { summary, job } = await upsert(c.id, [
      tee('tee-m', ['sku=TEE-M', 'regular_price=24.90', 'sale_price=19.90', 'gallery=https://shop.example/a.jpg', 'gallery=https://shop.example/b.jpg',
        'categories=Men > T-shirts', 'payload.color=blue', 'payload.size=M', 'availability=Berlin:3', 'availability=Warehouse:9', 'image=https://shop.example/tee.jpg']),
      ['external_item_key=cap', 'title=Cap', 'price=0012.5 USD', 'available=false'],
    ]);
    assert.deepEqual(summary, { total_items: 2, accepted_items: 2, failed_items: 0, errors: [], status: 'queued' });
    assert.equal(job.status, 'completed');
    assert.deepEqual(job.progress, { total: 2, processed: 2, accepted: 2, failed: 0 });
    const all = await items(c.id);
    const m = all.find((i) => i.external_item_key === 'tee-m');
    const cap = all.find((i) => i.external_item_key === 'cap');
    assert.equal(m.external_item_key, 'tee-m');
    assert.equal(m.price, '19.90');
    assert.equal(m.regular_price, '24.90');
    assert.equal(m.currency, 'EUR');
    assert.equal(m.sku, 'TEE-M');
    assert.equal(m.external_product_id, 'tee');
    assert.deepEqual(m.gallery, ['https://shop.example/a.jpg', 'https://shop.example/b.jpg']);
    assert.deepEqual(m.categories, ['Men > T-shirts']);
    assert.deepEqual(m.payload, [{ name: 'color', value: 'blue' }, { name: 'size', value: 'M' }]);
    assert.deepEqual(m.availability, [{ location: 'Berlin', quantity: 3, available: true }, { location: 'Warehouse', quantity: 9, available: true }]);
    assert.equal(m.stock_quantity, 12);
    assert.equal(m.available, true);
    assert.equal(m.stock_status, 'in_stock');
    assert.equal(m.status, 'active');
    assert.equal(m.last_sync_status, 'synced');
    assert.equal(m.source, 'custom');
    assert.deepEqual(m.raw_payload[0].slice(0, 1), ['external_item_key=tee-m']);
    assert.equal(cap.price, '12.5');
    assert.equal(cap.currency, 'USD');
    assert.equal(cap.external_product_id, 'cap');
    assert.equal(cap.available, false);
    assert.equal(cap.stock_status, 'out_of_stock');

    const catalog = (await svc.request('GET', `/v1/catalogs/${c.id}`, { key: ws.key })).body.data.catalog;
    assert.equal(catalog.last_sync_status, 'completed');
    assert.equal(catalog.last_sync_error, null);

    const availableOnly = await items(c.id, { available: true });
    assert.deepEqual(availableOnly.map((i) => i.external_item_key), ['tee-m']);
  });

  test('a bad item among good ones: refused with index and field, the others written', async () => {
    const c = await createCatalog();
    await upsert(c.id, [tee('ok-1')]);
    const { summary, job } = await upsert(c.id, [
      tee('ok-2'),
      ['external_item_key=bad-price', 'price=12,50', 'currency=EUR'],
      tee('ok-3'),
      ['title=no key'],
      ['external_item_key=ok-1', 'colour=red'],
      tee('ok-2'),
    ]);
    assert.equal(summary.total_items, 6);
    assert.equal(summary.accepted_items, 2);
    assert.equal(summary.failed_items, 4);
    assert.deepEqual(summary.errors.map((e: any) => [e.index, e.field]), [[1, 'price'], [3, 'external_item_key'], [4, 'colour'], [5, 'external_item_key']]);
    assert.equal(summary.errors[0].external_item_key, 'bad-price');
    assert.deepEqual(job.progress, { total: 6, processed: 6, accepted: 2, failed: 4 });
    assert.equal(job.errors.length, 4);
    const list = await items(c.id);
    assert.deepEqual(list.map((i) => i.external_item_key).sort(), ['ok-1', 'ok-2', 'ok-3']);
    // ok-1 kept its values and says why its update was refused.
    const ok1 = list.find((i) => i.external_item_key === 'ok-1');
    assert.equal(ok1.title, 'Tee ok-1');
    assert.equal(ok1.last_sync_status, 'failed');
    assert.match(ok1.last_sync_error, /colour/);
    const catalog = (await svc.request('GET', `/v1/catalogs/${c.id}`, { key: ws.key })).body.data.catalog;
    assert.match(catalog.last_sync_error, /4 of 6 items were refused/);
  });

  test('idempotent and order-safe upserts', async () => {
    const c = await createCatalog();
    await upsert(c.id, [tee('k', ['title=v2'])].map((i) => i.filter((s) => s !== 'title=Tee k')), { snapshot_at: '2026-11-22T10:00:00Z' });
    let [item] = await items(c.id);
    assert.equal(item.title, 'v2');
    const firstUpdated = item.updated_at;

    // Repeat: same snapshot, nothing changes (not even updated_at).
    await upsert(c.id, [tee('k', ['title=v2'])].map((i) => i.filter((s) => s !== 'title=Tee k')), { snapshot_at: '2026-11-22T10:00:00Z' });
    [item] = await items(c.id);
    assert.equal(item.updated_at, firstUpdated);

    // Same content, later snapshot (a retry without snapshot_at): values and updated_at unchanged.
    await upsert(c.id, [tee('k', ['title=v2'])].map((i) => i.filter((s) => s !== 'title=Tee k')));
    [item] = await items(c.id);
    assert.equal(item.updated_at, firstUpdated);

    // An older update arriving late is ignored.
    const late = await upsert(c.id, [['external_item_key=k', 'title=v1', 'price=1.00', 'currency=EUR']], { snapshot_at: '2026-11-22T09:00:00Z' });
    assert.equal(late.job.progress.accepted, 1);
    [item] = await items(c.id);
    assert.equal(item.title, 'v2');
    assert.equal(item.price, '19.90');

    // A newer one applies; an item's own snapshot_at overrides the request's.
    await upsert(c.id, [['external_item_key=k', 'title=v3', 'snapshot_at=2030-01-01T00:00:00Z']], { snapshot_at: '2026-11-22T08:00:00Z' });
    [item] = await items(c.id);
    assert.equal(item.title, 'v3');
    assert.equal(item.price, null);
  });

  test('availability patches: partial fields, order-safe, unknown keys refused', async () => {
    const c = await createCatalog();
    await upsert(c.id, [tee('a', ['stock_quantity=5']), tee('b')]);
    const { summary, job } = await patchAvailability(c.id, [
      ['external_item_key=a', 'stock_quantity=0'],
      ['external_item_key=b', 'available=true', 'availability=Shop:2'],
      ['external_item_key=nope', 'available=true'],
      ['external_item_key=a', 'title=x'],
    ], { snapshot_at: '2030-01-01T10:00:00Z' });
    // The checks refuse the bad field at once; the unknown key is found by the job.
    assert.equal(summary.failed_items, 1, JSON.stringify(summary.errors));
    assert.deepEqual(summary.errors.map((e: any) => [e.index, e.field]), [[3, 'title']]);
    assert.deepEqual(job.progress, { total: 4, processed: 4, accepted: 2, failed: 2 });
    assert.deepEqual(job.errors.map((e: any) => [e.index, e.field, e.external_item_key]), [[2, 'external_item_key', 'nope'], [3, 'title', 'a']]);
    const listed = await items(c.id);
    let a = listed[0];
    const b = listed[1];
    assert.equal(a.stock_quantity, 0);
    assert.equal(a.available, false);
    assert.equal(a.stock_status, 'out_of_stock');
    assert.equal(a.title, 'Tee a');
    assert.equal(b.available, true);
    assert.equal(b.stock_quantity, 2);
    assert.deepEqual(b.availability, [{ location: 'Shop', quantity: 2, available: true }]);
    const stamp = a.last_availability_synced_at;

    // Older availability is ignored; a repeat changes nothing.
    await patchAvailability(c.id, [['external_item_key=a', 'stock_quantity=50']], { snapshot_at: '2030-01-01T09:00:00Z' });
    await patchAvailability(c.id, [['external_item_key=a', 'stock_quantity=0']], { snapshot_at: '2030-01-01T10:00:00Z' });
    [a] = await items(c.id);
    assert.equal(a.stock_quantity, 0);
    assert.equal(a.last_availability_synced_at, stamp);

    // A later content upsert without availability keeps it; with availability older than stored, keeps it too.
    await upsert(c.id, [[...tee('a').filter((f) => !f.startsWith('title=')), 'title=renamed', 'stock_quantity=99']], { snapshot_at: '2030-01-01T09:30:00Z' });
    [a] = await items(c.id);
    assert.equal(a.title, 'renamed');
    assert.equal(a.stock_quantity, 0);
  });

  test('delete an item; all-invalid request finishes at once', async () => {
    const c = await createCatalog();
    await upsert(c.id, [tee('x'), tee('y')]);
    const [x] = await items(c.id);
    const res = await svc.request('DELETE', `/v1/catalogs/${c.id}/items/${x.id}`, { key: ws.key });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.data.message, /x/);
    assert.deepEqual(res.body.meta, { catalog_id: c.id, item_id: x.id, external_item_key: 'x' });
    assert.equal((await svc.request('DELETE', `/v1/catalogs/${c.id}/items/${x.id}`, { key: ws.key })).status, 404);
    assert.deepEqual((await items(c.id)).map((i) => i.external_item_key), ['y']);

    const bad = await svc.request('POST', `/v1/catalogs/${c.id}/items:bulk-upsert`, { key: ws.key, body: { items: [['nonsense']] } });
    assert.equal(bad.status, 202);
    assert.equal(bad.body.data.summary.status, 'completed');
    assert.equal(bad.body.data.sync_job.finished_at !== null, true);

    const empty = await svc.request('POST', `/v1/catalogs/${c.id}/items:bulk-upsert`, { key: ws.key, body: { items: [] } });
    assert.equal(empty.status, 422);
    const tooMany = await svc.request('POST', `/v1/catalogs/${c.id}/items:bulk-upsert`, { key: ws.key, body: { items: Array.from({ length: 501 }, (_, i) => tee(`k${i}`)) } });
    assert.equal(tooMany.status, 422);
  });

  test("another workspace's catalogs, items and sync jobs answer 404; scopes", async () => {
    const c = await createCatalog();
    const { job } = await upsert(c.id, [tee('mine')]);
    const [item] = await items(c.id);
    const other = await svc.workspace();
    const calls: [string, string, unknown?][] = [
      ['GET', `/v1/catalogs/${c.id}`],
      ['DELETE', `/v1/catalogs/${c.id}`],
      ['GET', `/v1/catalogs/${c.id}/items`],
      ['PATCH', `/v1/catalogs/${c.id}/items/availability`, { items: [['external_item_key=mine', 'available=false']] }],
      ['DELETE', `/v1/catalogs/${c.id}/items/${item.id}`],
      ['POST', `/v1/catalogs/${c.id}/items:bulk-upsert`, { items: [tee('theirs')] }],
      ['GET', `/v1/catalogs/${c.id}/sync-jobs/${job.id}`],
    ];
    for (const [method, path, body] of calls) {
      const res = await svc.request(method, path, { key: other.key, body });
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.error.type, 'ModelNotFoundException');
    }
    const list = await svc.request('GET', '/v1/catalogs', { key: other.key });
    assert.deepEqual(list.body.data, []);
    // A sync job of another catalog of the same workspace is not found under this one either.
    const c2 = await createCatalog();
    assert.equal((await svc.request('GET', `/v1/catalogs/${c2.id}/sync-jobs/${job.id}`, { key: ws.key })).status, 404);
    // Still there for its owner.
    assert.equal((await items(c.id)).length, 1);

    const reader = await svc.key(ws.id, ['catalogs:read']);
    assert.equal((await svc.request('GET', `/v1/catalogs/${c.id}`, { key: reader.key })).status, 200);
    const denied = await svc.request('POST', `/v1/catalogs/${c.id}/items:bulk-upsert`, { key: reader.key, body: { items: [tee('z')] } });
    assert.equal(denied.status, 403);
  });

  test('read API for the content area: itemsByKeys and availableItems (not known unavailable) are workspace-scoped', async () => {
    const c = await createCatalog();
    await upsert(c.id, [tee('p1'), tee('p2', ['available=false']), tee('p3')]);
    const catalogs = svc.runtime.services.catalogs;
    const byKeys = await catalogs.itemsByKeys({ workspaceId: ws.id }, c.id, ['p3', 'missing', 'p1']);
    assert.deepEqual(byKeys.items.map((i) => i.externalItemKey), ['p3', 'p1']);
    assert.deepEqual(byKeys.missing, ['missing']);
    const available = await catalogs.availableItems({ workspaceId: ws.id }, c.id, { limit: 10 });
    assert.deepEqual(available.map((i) => i.externalItemKey), ['p1', 'p3']);
    const other = await svc.workspace();
    await assert.rejects(catalogs.itemsByKeys({ workspaceId: other.id }, c.id, ['p1']), /Catalog not found/);
  });

  test('filter[q] searches titles and keys: every word, ignoring case, LIKE characters taken literally', async () => {
    const c = await createCatalog();
    await upsert(c.id, [
      ['external_item_key=TEE-BLUE-M', 'title=Organic tee, blue, M', 'price=19.90', 'currency=EUR'],
      ['external_item_key=tee-red-s', 'title=Organic tee, red, S', 'price=19.90', 'currency=EUR'],
      ['external_item_key=cap-blue', 'title=Cap 100% wool', 'price=9.90', 'currency=EUR', 'available=false'],
      ['external_item_key=mug_1', 'title=Mug', 'price=5.00', 'currency=EUR'],
    ]);
    const keys = async (query: Record<string, string | number | boolean>) => (await items(c.id, query)).map((i) => i.external_item_key);
    assert.deepEqual((await keys({ 'filter[q]': 'blue' })).sort(), ['TEE-BLUE-M', 'cap-blue']);
    assert.deepEqual(await keys({ 'filter[q]': 'ORGANIC  Blue' }), ['TEE-BLUE-M'], 'every word, ignoring case and repeated spaces');
    assert.deepEqual(await keys({ 'filter[q]': 'tee-red' }), ['tee-red-s'], 'the key');
    assert.deepEqual(await keys({ 'filter[q]': 'blue', available: false }), ['cap-blue'], 'with available');
    assert.deepEqual(await keys({ 'filter[q]': '100%' }), ['cap-blue']);
    assert.deepEqual(await keys({ 'filter[q]': '%' }), ['cap-blue'], '% is a character, not a wildcard');
    assert.deepEqual(await keys({ 'filter[q]': 'g_1' }), ['mug_1'], '_ is a character');
    assert.deepEqual(await keys({ 'filter[q]': 'mu_' }), [], '_ matches only itself');
    assert.deepEqual((await keys({ 'filter[q]': '  ' })).sort(), ['TEE-BLUE-M', 'cap-blue', 'mug_1', 'tee-red-s'], 'blank: every item');
    // Paging a search: no repeats, nothing skipped.
    const first = await svc.request('GET', `/v1/catalogs/${c.id}/items`, { key: ws.key, query: { 'filter[q]': 'e', limit: 1 } });
    const second = await svc.request('GET', `/v1/catalogs/${c.id}/items`, { key: ws.key, query: { 'filter[q]': 'e', limit: 5, cursor: first.body.meta.next_cursor } });
    const all = await keys({ 'filter[q]': 'e' });
    assert.deepEqual([...all].sort(), ['TEE-BLUE-M', 'cap-blue', 'tee-red-s']);
    assert.deepEqual([...first.body.data, ...second.body.data].map((i: { external_item_key: string }) => i.external_item_key), all);
    const tooMany = await svc.request('GET', `/v1/catalogs/${c.id}/items`, { key: ws.key, query: { 'filter[q]': 'a b c d e f g h i j k' } });
    assert.equal(tooMany.status, 422);
    assert.ok(tooMany.body.error.details['filter[q]']);
    const tooLong = await svc.request('GET', `/v1/catalogs/${c.id}/items`, { key: ws.key, query: { 'filter[q]': 'x'.repeat(256) } });
    assert.equal(tooLong.status, 422);
  });

  test('a catalog\'s sync jobs, newest first, paged, workspace-scoped, without other catalogs\' jobs', async () => {
    const c = await createCatalog();
    const one = await upsert(c.id, [tee('s1')]);
    const two = await upsert(c.id, [tee('s2'), ['external_item_key=bad', 'price=12,50']]);
    const three = await patchAvailability(c.id, [['external_item_key=s1', 'stock_quantity=0']]);
    const other = await createCatalog();
    await upsert(other.id, [tee('o1')]);
    const list = await svc.request('GET', `/v1/catalogs/${c.id}/sync-jobs`, { key: ws.key });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.data.map((j: { id: number }) => j.id), [three.job.id, two.job.id, one.job.id]);
    assert.equal(list.body.data[0].type, 'availability_update');
    assert.equal(list.body.data[1].progress.failed, 1);
    assert.equal(list.body.data[1].errors[0].field, 'price');
    assert.deepEqual(list.body.meta, { next_cursor: null, has_more: false });
    const page1 = await svc.request('GET', `/v1/catalogs/${c.id}/sync-jobs`, { key: ws.key, query: { limit: 2 } });
    assert.equal(page1.body.meta.has_more, true);
    const page2 = await svc.request('GET', `/v1/catalogs/${c.id}/sync-jobs`, { key: ws.key, query: { limit: 2, cursor: page1.body.meta.next_cursor } });
    assert.deepEqual([...page1.body.data, ...page2.body.data].map((j: { id: number }) => j.id), [three.job.id, two.job.id, one.job.id]);
    assert.equal((await svc.request('GET', `/v1/catalogs/${c.id}/sync-jobs`, { key: ws.key, query: { limit: 101 } })).status, 422);
    const stranger = await svc.workspace();
    assert.equal((await svc.request('GET', `/v1/catalogs/${c.id}/sync-jobs`, { key: stranger.key })).status, 404);
  });
});
