/**
 * Feed import from a catalog's source_url, served by a real HTTP server on
 * 127.0.0.1 (admitted through OUTBOUND_ALLOWED_HOSTS), and the refusal when
 * the host is not allow-listed.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { eventually, startService, type TestService } from '../helpers.ts';

const MERCHANT_XML = `<?xml version="1.0" encoding="UTF-8"?>
<rss xmlns:g="http://base.google.com/ns/1.0" version="2.0">
  <channel>
    <title>Acme Outdoor</title>
    <link>https://shop.example.com</link>
    <description>Acme Outdoor product feed</description>
    <item>
      <g:id>TSHIRT-BL-M</g:id>
      <g:title>Organic T-shirt &amp; cap set – Blue, M</g:title>
      <g:description><![CDATA[Soft <b>organic</b> cotton.]]></g:description>
      <g:link>https://shop.example.com/p/tshirt?variant=bl-m</g:link>
      <g:image_link>https://shop.example.com/img/tshirt-blue.jpg</g:image_link>
      <g:additional_image_link>https://shop.example.com/img/tshirt-blue-2.jpg</g:additional_image_link>
      <g:additional_image_link>https://shop.example.com/img/tshirt-blue-3.jpg</g:additional_image_link>
      <g:availability>in_stock</g:availability>
      <g:price>24.90 EUR</g:price>
      <g:sale_price>19.90 EUR</g:sale_price>
      <g:brand>Acme</g:brand>
      <g:gtin>04006381333931</g:gtin>
      <g:mpn>TS-BL-M</g:mpn>
      <g:condition>new</g:condition>
      <g:item_group_id>TSHIRT</g:item_group_id>
      <g:color>Blue</g:color>
      <g:size>M</g:size>
      <g:product_type>Apparel &gt; Men &gt; T-shirts</g:product_type>
      <g:google_product_category>212</g:google_product_category>
      <g:shipping><g:country>DE</g:country><g:price>4.95 EUR</g:price></g:shipping>
    </item>
    <item>
      <g:id>TENT-2P</g:id>
      <g:title>Trail tent, 2 person</g:title>
      <g:description>Light and quick to pitch.</g:description>
      <g:link>https://shop.example.com/p/tent-2p</g:link>
      <g:image_link>https://shop.example.com/img/tent.jpg</g:image_link>
      <g:availability>out_of_stock</g:availability>
      <g:price>249.00 EUR</g:price>
      <g:brand>Acme</g:brand>
      <g:condition>new</g:condition>
      <g:product_type>Camping &gt; Tents</g:product_type>
    </item>
    <item>
      <g:id>STOVE-1</g:id>
      <g:title>Camping stove</g:title>
      <g:link>https://shop.example.com/p/stove</g:link>
      <g:availability>preorder</g:availability>
      <g:price>thirty euros</g:price>
    </item>
  </channel>
</rss>`;

const MERCHANT_TSV = [
  'id\ttitle\tdescription\tlink\timage link\tadditional image link\tavailability\tprice\tsale price\tbrand\tgtin\tcondition\tproduct type',
  'MUG-01\tEnamel mug "Camp"\tHolds 350 ml.\thttps://shop.example.com/p/mug\thttps://shop.example.com/img/mug.jpg\thttps://shop.example.com/img/mug-2.jpg,https://shop.example.com/img/mug-3.jpg\tin stock\t12.00 USD\t\tAcme\t0012345678905\tnew\tKitchen > Mugs',
  'LAMP-01\tHead lamp\tBright.\thttps://shop.example.com/p/lamp\thttps://shop.example.com/img/lamp.jpg\t\tbackorder\t29.99 USD\t24.99 USD\tAcme\t\tnew\tLights',
].join('\n');

const MERCHANT_CSV = [
  'id,title,link,image_link,availability,price,product_type',
  'BOTTLE-1,"Bottle, 1 l",https://shop.example.com/p/bottle,https://shop.example.com/img/bottle.jpg,in_stock,9.50 GBP,"Kitchen > Bottles"',
].join('\r\n');

function wooStoreProduct(i: number) {
  return {
    id: 1000 + i,
    name: i === 0 ? 'Beanie &amp; scarf' : `Product ${i}`,
    slug: `product-${i}`,
    parent: 0,
    type: 'simple',
    variation: '',
    permalink: `https://woo.example.com/product/product-${i}/`,
    sku: `WOO-${i}`,
    short_description: '<p>Short.</p>',
    description: '<p>Long description.</p>',
    on_sale: i === 0,
    prices: {
      price: i === 0 ? '1800' : '2500', regular_price: '2500', sale_price: i === 0 ? '1800' : '2500', price_range: null,
      currency_code: 'EUR', currency_symbol: '€', currency_minor_unit: 2, currency_decimal_separator: ',', currency_thousand_separator: '.',
      currency_prefix: '', currency_suffix: ' €',
    },
    price_html: '<span class="woocommerce-Price-amount amount">25,00&nbsp;€</span>',
    average_rating: '0',
    review_count: 0,
    images: [
      { id: 10, src: `https://woo.example.com/wp-content/uploads/p${i}.jpg`, thumbnail: 'https://woo.example.com/t.jpg', srcset: '', sizes: '', name: 'p.jpg', alt: '' },
      { id: 11, src: `https://woo.example.com/wp-content/uploads/p${i}-b.jpg`, thumbnail: 'https://woo.example.com/t.jpg', srcset: '', sizes: '', name: 'p.jpg', alt: '' },
    ],
    categories: [{ id: 20, name: 'Accessories', slug: 'accessories', link: 'https://woo.example.com/product-category/accessories/' }],
    tags: [],
    attributes: [],
    variations: [],
    has_options: false,
    is_purchasable: true,
    is_in_stock: i % 10 !== 9,
    is_on_backorder: false,
    low_stock_remaining: null,
    sold_individually: false,
    add_to_cart: { text: 'Add to cart', description: 'Add to your cart', url: '?add-to-cart=1', minimum: 1, maximum: 9999, multiple_of: 1 },
  };
}
const WOO_TOTAL = 130;

const WOO_REST = [{
  id: 799, name: 'Ship Your Idea', slug: 'ship-your-idea-22', permalink: 'https://woo.example.com/product/ship-your-idea-22/', type: 'variable',
  status: 'publish', sku: 'SYI', price: '31.50', regular_price: '35.00', sale_price: '31.50', on_sale: true, description: '<p>Desc</p>', short_description: '<p>Short</p>',
  categories: [{ id: 9, name: 'Clothing', slug: 'clothing' }, { id: 14, name: 'T-shirts', slug: 't-shirts' }],
  images: [{ id: 795, src: 'https://woo.example.com/wp-content/uploads/2017/03/T_4_front.jpg', name: '', alt: '' }],
  stock_quantity: 7, stock_status: 'instock', attributes: [{ id: 6, name: 'Color', position: 0, visible: false, variation: true, options: ['Black', 'Green'] }],
}];

let plainJson: unknown = [
  { external_item_key: 'p1', title: 'Plain one', price: '5.00', currency: 'CHF', categories: ['A', 'B'], payload: { material: 'wool' }, available: true },
  { external_item_key: 'p2', title: 'Plain two', price: '6.00', currency: 'CHF', stock_quantity: 0 },
];

const PLAIN_CSV = 'external_item_key,title,price,currency,gallery,categories,payload.material\nc1,CSV one,1.50,EUR,https://x.example/1.jpg|https://x.example/2.jpg,A|B,cotton\n';

let requests: string[] = [];

function serve(req: http.IncomingMessage, res: http.ServerResponse) {
  const url = new URL(req.url!, 'http://127.0.0.1');
  requests.push(url.pathname + url.search);
  const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': type, ...headers });
    res.end(body);
  };
  switch (url.pathname) {
    case '/feeds/google.xml': return send(200, 'application/rss+xml', MERCHANT_XML);
    case '/feeds/google.tsv': return send(200, 'text/tab-separated-values', MERCHANT_TSV);
    case '/feeds/google.csv': return send(200, 'text/csv', MERCHANT_CSV);
    case '/wp-json/wc/store/v1/products': {
      const perPage = Number(url.searchParams.get('per_page') ?? 10);
      const page = Number(url.searchParams.get('page') ?? 1);
      const all = Array.from({ length: WOO_TOTAL }, (_, i) => wooStoreProduct(i));
      const slice = all.slice((page - 1) * perPage, page * perPage);
      return send(200, 'application/json', JSON.stringify(slice), { 'x-wp-total': String(WOO_TOTAL), 'x-wp-totalpages': String(Math.ceil(WOO_TOTAL / perPage)) });
    }
    case '/wp-json/wc/v3/products': return send(200, 'application/json', JSON.stringify(url.searchParams.get('page') === '1' ? WOO_REST : []));
    case '/plain.json': return send(200, 'application/json', JSON.stringify(plainJson));
    case '/plain.csv': return send(200, 'text/csv', PLAIN_CSV);
    case '/big.json': return send(200, 'application/json', JSON.stringify(Array.from({ length: 1200 }, (_, i) => ({ external_item_key: `b${i}`, title: `Big ${i}` }))));
    case '/moved': return send(302, 'text/plain', '', { location: 'http://169.254.169.254/latest/meta-data' });
    default: return send(404, 'text/plain', 'not found');
  }
}

let feedServer: http.Server;
let base: string;
let svc: TestService;
let key: string;

before(async () => {
  feedServer = http.createServer(serve);
  await new Promise<void>((resolve) => feedServer.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(feedServer.address() as AddressInfo).port}`;
  svc = await startService({ env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', CATALOG_FEED_MAX_ITEMS: 1000, RATE_LIMIT_ENDPOINT_PER_MINUTE: 0 } });
  key = (await svc.workspace()).key;
});
after(async () => {
  await svc?.stop();
  await new Promise((resolve) => feedServer?.close(resolve));
});

async function importFeed(path: string, body: Record<string, unknown> = {}) {
  const res = await svc.request('POST', '/v1/catalogs', { key, body: { name: path, source_url: base + path, ...body } });
  assert.equal(res.status, 202, res.text);
  assert.equal(res.body.data.catalog.status, 'importing');
  const catalog = await eventually(async () => {
    const got = await svc.request('GET', `/v1/catalogs/${res.body.data.catalog.id}`, { key });
    return got.body.data.catalog.status !== 'importing' ? got.body.data.catalog : null;
  });
  return catalog;
}

async function allItems(catalogId: number) {
  const out: any[] = [];
  let cursor: string | undefined;
  do {
    const res = await svc.request('GET', `/v1/catalogs/${catalogId}/items`, { key, query: { limit: 200, ...(cursor ? { cursor } : {}) } });
    out.push(...res.body.data);
    cursor = res.body.meta.next_cursor ?? undefined;
  } while (cursor);
  return new Map(out.map((i) => [i.external_item_key, i]));
}

async function lastJob(catalogId: number) {
  // Sync jobs are numbered per database; the catalog's import job is the latest one for it.
  const rows = await svc.runtime.database.db.query.catalogSyncJobs.findMany({ where: (j, { eq }) => eq(j.catalogId, catalogId), orderBy: (j, { desc }) => desc(j.id) });
  const res = await svc.request('GET', `/v1/catalogs/${catalogId}/sync-jobs/${rows[0]!.id}`, { key });
  return res.body.data.sync_job;
}

describe('feed import', () => {
  test('Google Merchant Center RSS 2.0 XML', async () => {
    const catalog = await importFeed('/feeds/google.xml', { source: 'google_merchant' });
    assert.equal(catalog.status, 'active');
    assert.equal(catalog.last_sync_status, 'completed');
    const items = await allItems(catalog.id);
    assert.equal(items.size, 2);
    const shirt = items.get('TSHIRT-BL-M');
    assert.equal(shirt.title, 'Organic T-shirt & cap set – Blue, M');
    assert.equal(shirt.description, 'Soft <b>organic</b> cotton.');
    assert.equal(shirt.external_product_id, 'TSHIRT');
    assert.equal(shirt.external_variant_id, 'TSHIRT-BL-M');
    assert.equal(shirt.price, '19.90');
    assert.equal(shirt.regular_price, '24.90');
    assert.equal(shirt.sale_price, '19.90');
    assert.equal(shirt.currency, 'EUR');
    assert.equal(shirt.url, 'https://shop.example.com/p/tshirt?variant=bl-m');
    assert.equal(shirt.image, 'https://shop.example.com/img/tshirt-blue.jpg');
    assert.deepEqual(shirt.gallery, ['https://shop.example.com/img/tshirt-blue-2.jpg', 'https://shop.example.com/img/tshirt-blue-3.jpg']);
    assert.deepEqual(shirt.categories, ['Apparel > Men > T-shirts']);
    assert.equal(shirt.stock_status, 'in_stock');
    assert.equal(shirt.available, true);
    assert.equal(shirt.sku, 'TS-BL-M');
    assert.equal(shirt.source, 'google_merchant');
    assert.ok(shirt.payload.some((p: any) => p.name === 'gtin' && p.value === '04006381333931'));
    assert.ok(shirt.payload.some((p: any) => p.name === 'color' && p.value === 'Blue'));
    assert.equal(shirt.raw_payload[0].id, 'TSHIRT-BL-M');
    const tent = items.get('TENT-2P');
    assert.equal(tent.available, false);
    assert.equal(tent.stock_status, 'out_of_stock');
    const job = await lastJob(catalog.id);
    assert.equal(job.type, 'feed_import');
    assert.equal(job.status, 'completed');
    assert.deepEqual(job.progress, { total: 3, processed: 3, accepted: 2, failed: 1 });
    assert.deepEqual(job.errors.map((e: any) => [e.index, e.external_item_key, e.field]), [[2, 'STOVE-1', 'price']]);
  });

  test('Google Merchant Center TSV and CSV', async () => {
    const tsv = await allItems((await importFeed('/feeds/google.tsv')).id);
    assert.deepEqual([...tsv.keys()].sort(), ['LAMP-01', 'MUG-01']);
    const mug = tsv.get('MUG-01');
    assert.equal(mug.title, 'Enamel mug "Camp"');
    assert.equal(mug.price, '12.00');
    assert.equal(mug.currency, 'USD');
    assert.deepEqual(mug.gallery, ['https://shop.example.com/img/mug-2.jpg', 'https://shop.example.com/img/mug-3.jpg']);
    assert.equal(mug.stock_status, 'in_stock');
    assert.equal(tsv.get('LAMP-01').stock_status, 'backorder');
    assert.equal(tsv.get('LAMP-01').price, '24.99');

    const csv = await allItems((await importFeed('/feeds/google.csv')).id);
    const bottle = csv.get('BOTTLE-1');
    assert.equal(bottle.title, 'Bottle, 1 l');
    assert.equal(bottle.price, '9.50');
    assert.equal(bottle.currency, 'GBP');
    assert.deepEqual(bottle.categories, ['Kitchen > Bottles']);
  });

  test('WooCommerce Store API, followed page by page; REST API', async () => {
    requests = [];
    const catalog = await importFeed('/wp-json/wc/store/v1/products', { source: 'woocommerce' });
    assert.ok(requests.includes('/wp-json/wc/store/v1/products?per_page=100&page=1'), requests.join());
    assert.ok(requests.includes('/wp-json/wc/store/v1/products?per_page=100&page=2'), requests.join());
    const items = await allItems(catalog.id);
    assert.equal(items.size, WOO_TOTAL);
    const first = items.get('1000');
    assert.equal(first.title, 'Beanie & scarf');
    assert.equal(first.price, '18.00');
    assert.equal(first.regular_price, '25.00');
    assert.equal(first.currency, 'EUR');
    assert.equal(first.sku, 'WOO-0');
    assert.equal(first.url, 'https://woo.example.com/product/product-0/');
    assert.equal(first.image, 'https://woo.example.com/wp-content/uploads/p0.jpg');
    assert.deepEqual(first.gallery, ['https://woo.example.com/wp-content/uploads/p0-b.jpg']);
    assert.deepEqual(first.categories, ['Accessories']);
    assert.equal(first.available, true);
    assert.equal(items.get('1009').available, false);
    assert.equal(items.get('1009').stock_status, 'out_of_stock');

    const rest = await allItems((await importFeed('/wp-json/wc/v3/products', { source: 'woocommerce', metadata: ['currency=EUR'] })).id);
    const idea = rest.get('799');
    assert.equal(idea.price, '31.50');
    assert.equal(idea.regular_price, '35.00');
    assert.equal(idea.stock_quantity, 7);
    assert.equal(idea.stock_status, 'in_stock');
    assert.equal(idea.currency, 'EUR');
    assert.deepEqual(idea.categories, ['Clothing', 'T-shirts']);
    assert.deepEqual(idea.payload, [{ name: 'Color', value: 'Black, Green' }]);
  });

  test("WooCommerce REST prices without the catalog's currency are refused, not guessed", async () => {
    const catalog = await importFeed('/wp-json/wc/v3/products');
    assert.equal((await allItems(catalog.id)).size, 0);
    const job = await lastJob(catalog.id);
    assert.deepEqual(job.errors.map((e: any) => [e.external_item_key, e.field]), [['799', 'currency']]);
  });

  test('plain JSON and CSV; a re-import updates and archives what the feed dropped', async () => {
    const catalog = await importFeed('/plain.json');
    let items = await allItems(catalog.id);
    assert.deepEqual(items.get('p1').categories, ['A', 'B']);
    assert.deepEqual(items.get('p1').payload, [{ name: 'material', value: 'wool' }]);
    assert.equal(items.get('p2').available, false);

    plainJson = { items: [{ external_item_key: 'p1', title: 'Plain one, renamed', price: '5.50', currency: 'CHF' }] };
    await svc.runtime.database.db.execute(sql`update catalogs set feed_imported_at = now() - interval '2 hours' where id = ${catalog.id}`);
    const resync = svc.runtime.services.catalogs as unknown as { resyncIntervalMinutes: number };
    resync.resyncIntervalMinutes = 60;
    assert.equal(await svc.runtime.services.catalogs.queueDueResyncs(), 1);
    assert.equal(await svc.runtime.services.catalogs.queueDueResyncs(), 0, 'an import already queued is not queued twice');
    resync.resyncIntervalMinutes = 0;
    items = await eventually(async () => {
      const now = await allItems(catalog.id);
      return now.get('p1').title === 'Plain one, renamed' && now.get('p2').status === 'archived' ? now : null;
    });
    assert.equal(items.get('p1').price, '5.50');
    assert.equal(items.get('p2').available, false);

    const csv = await allItems((await importFeed('/plain.csv')).id);
    const c1 = csv.get('c1');
    assert.deepEqual(c1.gallery, ['https://x.example/1.jpg', 'https://x.example/2.jpg']);
    assert.deepEqual(c1.categories, ['A', 'B']);
    assert.deepEqual(c1.payload, [{ name: 'material', value: 'cotton' }]);
    assert.equal(c1.price, '1.50');
  });

  test('item cap: the first CATALOG_FEED_MAX_ITEMS are imported, the rest reported', async () => {
    const catalog = await importFeed('/big.json');
    const job = await lastJob(catalog.id);
    assert.equal(job.status, 'completed');
    assert.equal(job.progress.total, 1000);
    assert.equal(job.progress.accepted, 1000);
    assert.match(job.errors.at(-1).message, /more than 1000 items/);
    assert.equal((await allItems(catalog.id)).size, 1000);
  });

  test('a feed that cannot be fetched fails the job and the catalog', async () => {
    const missing = await importFeed('/nope.xml');
    assert.equal(missing.status, 'failed');
    assert.equal(missing.last_sync_status, 'failed');
    assert.match(missing.last_sync_error, /HTTP 404/);
    const moved = await importFeed('/moved');
    assert.equal(moved.status, 'failed');
    assert.match(moved.last_sync_error, /redirect/);
    const job = await lastJob(moved.id);
    assert.equal(job.status, 'failed');
    assert.equal(job.errors[0].field, 'source_url');
  });
});

describe('feed refusal', () => {
  test('a private host not in OUTBOUND_ALLOWED_HOSTS is refused with a 422 on source_url', async () => {
    const strict = await startService({ worker: false });
    try {
      const ws = await strict.workspace();
      for (const url of [`${base}/feeds/google.xml`, 'https://127.0.0.1/feed.xml', 'https://169.254.169.254/latest', 'ftp://shop.example.com/feed.xml', 'https://user:pw@shop.example.com/feed']) {
        const res = await strict.request('POST', '/v1/catalogs', { key: ws.key, body: { name: 'x', source_url: url } });
        assert.equal(res.status, 422, `${url}: ${res.text}`);
        assert.ok(res.body.error.details.source_url, url);
      }
      const list = await strict.request('GET', '/v1/catalogs', { key: ws.key });
      assert.deepEqual(list.body.data, []);
    } finally {
      await strict.stop();
    }
  });
});
