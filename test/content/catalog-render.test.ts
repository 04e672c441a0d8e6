/** POST /catalogs/{catalog}/render end to end, live prices in the reader, and its validation (issue 14). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startService, waitForBatch, type TestService } from '../helpers.ts';
import { CHROMIUM_SKIP, launchBrowser, openReader, openTab } from '../reader/browser.ts';
import { startImageServer, type ImageServer } from './content-server.ts';

describe('catalog render', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let images: ImageServer;
  let catalogId: number;

  async function waitForJob(id: number, jobId: number) {
    return eventually(async () => {
      const res = await svc.request('GET', `/v1/catalogs/${id}/sync-jobs/${jobId}`, { key: ws.key });
      return ['completed', 'failed'].includes(res.body?.data?.sync_job?.status) ? res.body.data.sync_job : null;
    });
  }
  async function send(method: string, path: string, items: string[][]) {
    const res = await svc.request(method, path, { key: ws.key, body: { items } });
    assert.equal(res.status, 202, res.text);
    const job = await waitForJob(catalogId, res.body.data.sync_job.id);
    assert.equal(job.status, 'completed', JSON.stringify(job));
  }
  const item = (n: number) => [
    `external_item_key=sku-${n}`, `external_product_id=p${n}`, `title=Trail shoe model ${n}`, `sku=TS-${n}`,
    `price=${(40 + n).toFixed(2)}`, 'currency=EUR', `url=${images.url}/product/${n}`, 'stock_status=in_stock',
    `image=${n === 5 ? `${images.url}/missing.jpg` : `${images.url}/img/${n}.jpg`}`,
  ];

  before(async () => {
    images = await startImageServer();
    svc = await startService({ env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', RATE_LIMIT_ENDPOINT_PER_MINUTE: 0 } });
    ws = await svc.workspace();
    const created = await svc.request('POST', '/v1/catalogs', { key: ws.key, body: { name: 'Trail shoes' } });
    assert.equal(created.status, 202, created.text);
    catalogId = created.body.data.catalog.id;
    await send('POST', `/v1/catalogs/${catalogId}/items:bulk-upsert`, Array.from({ length: 12 }, (_, i) => item(i + 1)));
  });
  after(async () => {
    await svc.stop();
    await images.close();
  });

  let book: { random_id: string; page_count: number };

  it('renders the catalog into a book through the conversion: text, links, outline, warnings, cached images', async () => {
    const res = await svc.request('POST', `/v1/catalogs/${catalogId}/render`, {
      key: ws.key,
      body: { items: [...Array.from({ length: 12 }, (_, i) => `sku-${i + 1}`), 'no-such-key'], status: 'publish', cover: { title: 'Trail season', description: 'Shoes for every path.', website: 'https://shop.example' } },
    });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.headers.get('location'), `/v1/batches/${res.body.data.batch_id}`);
    assert.equal(res.body.data.books[0].external_catalog_id, catalogId);
    assert.equal(res.body.data.books[0].page_images_status, 'processing');
    const batch = await waitForBatch(svc, ws.key, res.body.data.batch_id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    book = batch.books[0];
    assert.equal(book.page_count, 3, 'cover + 2 pages of 9');
    assert.ok(batch.warnings.some((w: { code: string; message: string }) => w.code === 'items_missing' && w.message.includes('no-such-key')), JSON.stringify(batch.warnings));
    assert.ok(batch.warnings.some((w: { code: string; message: string }) => w.code === 'image_unavailable' && /sku-5.*missing\.jpg.*HTTP 404/.test(w.message)), JSON.stringify(batch.warnings));

    const pages = (await svc.request('GET', `/v1/books/${book.random_id}/pages`, { key: ws.key })).body.data;
    const text = pages[1].text.map((t: { text: string }) => t.text).join(' ');
    assert.ok(text.includes('Trail shoe model 1') && text.includes('€41.00'), text);
    const links = pages[1].links.map((l: { url?: string }) => l.url);
    for (let n = 1; n <= 9; n++) assert.ok(links.includes(`${images.url}/product/${n}`), `product ${n} links: ${links}`);
    const search = await (await fetch(`${svc.url}/read/${book.random_id}/search?q=${encodeURIComponent('model 11')}`)).json() as { hits: Array<{ page: number }> };
    assert.deepEqual(search.hits.map((h) => h.page), [3]);
    const full = (await svc.request('GET', `/v1/books/${book.random_id}`, { key: ws.key })).body.data;
    assert.equal(full.external_catalog_id, catalogId);

    // A second render fetches no image again: they are cached per catalog.
    const fetched = images.hits.filter((h) => h.startsWith('/img/')).length;
    const again = await svc.request('POST', `/v1/catalogs/${catalogId}/render`, { key: ws.key, body: { template_id: 2 } });
    assert.equal(again.status, 202, again.text);
    const second = await waitForBatch(svc, ws.key, again.body.data.batch_id);
    assert.equal(second.status, 'completed');
    assert.equal(second.books[0].page_count, 2, 'no items: every available item, 16 a page');
    assert.equal(images.hits.filter((h) => h.startsWith('/img/')).length, fetched);
  });

  it('shows a price change and an out-of-stock item in the reader without re-rendering; product links click through', { skip: CHROMIUM_SKIP }, async () => {
    const pagesBefore = (await svc.request('GET', `/v1/books/${book.random_id}/pages`, { key: ws.key })).body.data;
    const untouched = await (await fetch(`${svc.url}/read/${book.random_id}/items?pages=2`)).json() as { items: unknown[] };
    assert.deepEqual(untouched.items, [], 'nothing differs from the printed pages yet');

    await send('POST', `/v1/catalogs/${catalogId}/items:bulk-upsert`, [[...item(2).filter((f) => !f.startsWith('price=')), 'price=35.50']]);
    await send('PATCH', `/v1/catalogs/${catalogId}/items/availability`, [['external_item_key=sku-3', 'available=false']]);

    const live = await eventually(async () => {
      const body = await (await fetch(`${svc.url}/read/${book.random_id}/items?pages=2`)).json() as { items: Array<{ key: string; price: string | null; out_of_stock: boolean }> };
      return body.items.length === 2 ? body.items : null;
    }, { intervalMs: 500 }); // gently: the endpoint allows a client 120 requests a minute, and the reader below needs some
    assert.deepEqual(live.map((i) => [i.key, i.price, i.out_of_stock]).sort(), [['sku-2', '€35.50', false], ['sku-3', null, true]]);

    const browser = await launchBrowser();
    try {
      const tab = await openTab(browser);
      await openReader(tab.page, `${svc.url}/read/${book.random_id}#page=2`);
      const price = tab.page.locator('.page[data-page="2"] .live-item[data-key="sku-2"]');
      await price.waitFor();
      assert.equal(await price.innerText(), 'Now €35.50');
      const stock = tab.page.locator('.page[data-page="2"] .live-item[data-key="sku-3"]');
      assert.equal(await stock.innerText(), 'Out of stock');
      // The overlay lets the product link underneath take the click.
      const popup = tab.context.waitForEvent('page');
      await tab.page.locator('.page[data-page="2"] a.lnk[href$="/product/2"]').click();
      const opened = await popup;
      await opened.waitForLoadState();
      assert.equal(opened.url(), `${images.url}/product/2`);
      assert.equal(await opened.title(), 'Product 2');
      assert.deepEqual(tab.problems, []);
      await tab.close();
    } finally {
      await browser.close();
    }
    const pagesAfter = (await svc.request('GET', `/v1/books/${book.random_id}/pages`, { key: ws.key })).body.data;
    assert.deepEqual(pagesAfter.map((p: { images: unknown }) => p.images), pagesBefore.map((p: { images: unknown }) => p.images), 'the pages were not re-rendered');

    assert.equal((await fetch(`${svc.url}/read/${book.random_id}/items?pages=0`)).status, 422);
    await svc.request('PUT', `/v1/books/${book.random_id}`, { key: ws.key, body: { status: 'draft' } });
    assert.equal((await fetch(`${svc.url}/read/${book.random_id}/items?pages=2`)).status, 404, 'published books only');
  });

  it('validates the body at the spec limits, scopes and workspaces', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ items: Array.from({ length: 251 }, (_, i) => `sku-${i}`) }, 'items'],
      [{ items: [] }, 'items'],
      [{ items: ['x'.repeat(256)] }, 'items.0'],
      [{ title: 'x'.repeat(256) }, 'title'],
      [{ status: 'schedule' }, 'status'],
      [{ template_id: 0 }, 'template_id'],
      [{ template_id: 5 }, 'template_id'],
      [{ cover: { description: 'x'.repeat(5001) } }, 'cover.description'],
      [{ items: ['no-such-key'] }, 'items'],
    ];
    for (const [body, field] of cases) {
      const res = await svc.request('POST', `/v1/catalogs/${catalogId}/render`, { key: ws.key, body });
      assert.equal(res.status, 422, `${field}: ${res.text}`);
      assert.ok(Object.keys(res.body.error.details).some((k) => k.startsWith(field)), `${field} in ${JSON.stringify(res.body.error.details)}`);
    }
    const exactly250 = await svc.request('POST', `/v1/catalogs/${catalogId}/render`, { key: ws.key, body: { items: Array.from({ length: 250 }, (_, i) => `sku-${(i % 12) + 1}`) } });
    assert.equal(exactly250.status, 202, exactly250.text);
    // A render is cancelled like an upload (the screen's "Cancel making the book"): the unfinished book goes, and a
    // second cancel is a 409.
    const cancelled = await svc.request('DELETE', `/v1/batches/${exactly250.body.data.batch_id}`, { key: ws.key });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.data.status, 'cancelled');
    assert.equal((await svc.request('GET', `/v1/books/${exactly250.body.data.books[0].random_id}`, { key: ws.key })).status, 404);
    assert.equal((await svc.request('DELETE', `/v1/batches/${exactly250.body.data.batch_id}`, { key: ws.key })).status, 409);

    const other = await svc.workspace();
    const foreign = await svc.request('POST', `/v1/catalogs/${catalogId}/render`, { key: other.key, body: {} });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.type, 'ModelNotFoundException');
    const missing = await svc.request('POST', '/v1/catalogs/999999/render', { key: ws.key, body: {} });
    assert.deepEqual(missing.body, foreign.body);
    const readOnly = await svc.key(ws.id, ['books:write']);
    const refused = await svc.request('POST', `/v1/catalogs/${catalogId}/render`, { key: readOnly.key, body: {} });
    assert.equal(refused.status, 403);
  });
});
