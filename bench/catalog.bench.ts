/**
 * Catalog benchmark: `npm run bench:catalog [-- --items 100000 --availability 10000 --concurrency 4]`.
 *
 * Starts the service (embedded database; DATABASE_URL for PostgreSQL) and:
 *
 *   1. upserts N items (100,000 by default) through the API in batches of 500
 *      (POST /catalogs/{catalog}/items:bulk-upsert, `concurrency` requests in
 *      flight), waits for every sync job, and reports items/s from the first
 *      POST to the last job's finished_at, and the time each job took from
 *      its 202 to finished (p50, p95, max);
 *   2. patches availability of M of them (10,000) the same way
 *      (PATCH /catalogs/{catalog}/items/availability);
 *   3. as the reference, in the same run and on the same database, writes the
 *      same rows into another catalog with a plain multi-row
 *      `INSERT … ON CONFLICT (catalog_id, external_item_key) DO UPDATE`
 *      (500 rows a statement, one after another), and the same availability
 *      with a plain `UPDATE … FROM (VALUES …)`.
 *
 * The API path does more per item than the reference (checks every field,
 * stores the batch durably in its sync job, queues a job, keeps snapshot
 * order, updates progress), which is what the ratio prices.
 */
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { catalogItems } from '../src/modules/catalogs/catalogs.tables.ts';
import { contentHash, parseItems } from '../src/modules/catalogs/item-input.ts';
import { startService } from '../test/helpers.ts';

const { values } = parseArgs({
  options: { items: { type: 'string', default: '100000' }, availability: { type: 'string', default: '10000' }, concurrency: { type: 'string', default: '4' } },
});
const N = Math.max(500, Number(values.items));
const M = Math.min(N, Math.max(500, Number(values.availability)));
const CONCURRENCY = Math.max(1, Number(values.concurrency));
const BATCH = 500;

function item(i: number): string[] {
  const product = Math.floor(i / 4);
  return [
    `external_item_key=sku-${i}`, `external_product_id=prod-${product}`, `external_variant_id=var-${i}`, `sku=SKU-${i}`,
    `title=Product ${product}, variant ${i % 4}`, `product_type=Apparel`, `price=${19 + (i % 50)}.90`, `regular_price=${29 + (i % 50)}.90`, 'currency=EUR',
    `image=https://shop.example.com/img/${product}.jpg`, `gallery=https://shop.example.com/img/${product}-b.jpg`, `url=https://shop.example.com/p/${product}?v=${i}`,
    `description=Soft organic cotton, product ${product}. Machine washable at 30 degrees.`, 'categories=Men > T-shirts', `payload.color=c${i % 7}`, `payload.size=${['S', 'M', 'L', 'XL'][i % 4]}`,
    `stock_quantity=${i % 20}`,
  ];
}
const availability = (i: number) => [`external_item_key=sku-${i}`, `stock_quantity=${(i * 7) % 13}`, `availability=Berlin:${i % 5}`];

const svc = await startService({ env: { RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0, BODY_LIMIT_BYTES: 16 * 1024 * 1024 } });
try {
  const mode = process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite';
  process.stdout.write(`bench:catalog on ${mode}: ${N} items upserted and ${M} availability updates in batches of ${BATCH}, ${CONCURRENCY} requests in flight\n`);
  const ws = await svc.workspace();
  const create = async (name: string) => (await svc.request('POST', '/v1/catalogs', { key: ws.key, body: { name } })).body.data.catalog.id as number;
  const apiCatalog = await create('API path');
  const refCatalog = await create('Reference');
  const db = svc.runtime.database.db;

  type Job = { id: number; posted: number };
  async function run(label: string, method: string, path: string, total: number, build: (i: number) => string[]) {
    const jobs: Job[] = [];
    const started = performance.now();
    let next = 0;
    let sent = 0;
    const worker = async () => {
      while (next < total) {
        const from = next;
        next += BATCH;
        const items = Array.from({ length: Math.min(BATCH, total - from) }, (_, k) => build(from + k));
        const res = await svc.request(method, path, { key: ws.key, body: { items } });
        if (res.status !== 202) throw new Error(`${label} failed: ${res.status} ${res.text.slice(0, 300)}`);
        if (res.body.data.summary.failed_items) throw new Error(`${label}: refused items ${JSON.stringify(res.body.data.summary.errors.slice(0, 2))}`);
        jobs.push({ id: res.body.data.sync_job.id, posted: performance.now() });
        sent += items.length;
        if ((jobs.length % 20) === 0) process.stdout.write(`  ${label}: ${sent} items posted (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const postedMs = performance.now() - started;
    const finished = new Map<number, number>();
    let lastPrint = 0;
    while (finished.size < jobs.length) {
      const rows = await db.execute(sql`select id, status, processed, total, extract(epoch from (finished_at - created_at)) * 1000 as ms from catalog_sync_jobs where id in ${jobs.map((j) => j.id)}`);
      const list = (rows as unknown as { rows: { id: number; status: string; processed: number; ms: string | number | null }[] }).rows;
      for (const r of list) {
        if (r.status === 'failed') throw new Error(`${label}: sync job ${r.id} failed`);
        if (r.status === 'completed' && !finished.has(r.id)) finished.set(r.id, Number(r.ms));
      }
      if (performance.now() - lastPrint > 2000) {
        process.stdout.write(`  ${label}: ${finished.size}/${jobs.length} sync jobs finished (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
        lastPrint = performance.now();
      }
      if (finished.size < jobs.length) await new Promise((r) => setTimeout(r, 200));
    }
    const [{ ms } = { ms: 0 }] = (await db.execute(sql`select extract(epoch from (max(finished_at) - min(created_at))) * 1000 as ms from catalog_sync_jobs where id in ${jobs.map((j) => j.id)}`) as unknown as { rows: { ms: number }[] }).rows;
    const totalMs = Math.max(Number(ms), postedMs);
    const durations = [...finished.values()].sort((a, b) => a - b);
    const pct = (p: number) => durations[Math.min(durations.length - 1, Math.floor(p * durations.length))]!;
    return { totalMs, postedMs, p50: pct(0.5), p95: pct(0.95), max: durations[durations.length - 1]! };
  }

  // Warm-up (JIT, plans, queue): one batch each way into a third catalog.
  const warm = await create('Warm-up');
  await run('warm-up', 'POST', `/v1/catalogs/${warm}/items:bulk-upsert`, BATCH, item);

  const upsert = await run('upsert', 'POST', `/v1/catalogs/${apiCatalog}/items:bulk-upsert`, N, item);
  const patch = await run('availability', 'PATCH', `/v1/catalogs/${apiCatalog}/items/availability`, M, availability);

  // Reference: the same rows, prepared outside the timing.
  process.stdout.write('  reference: preparing rows\n');
  const now = new Date();
  const refRows: (typeof catalogItems.$inferInsert)[] = [];
  for (let from = 0; from < N; from += BATCH) {
    const parsed = parseItems(Array.from({ length: Math.min(BATCH, N - from) }, (_, k) => ({ strings: item(from + k) })), 'upsert');
    for (const { item: it, raw } of parsed.items) {
      const c = it.content!;
      refRows.push({
        catalogId: refCatalog, workspaceId: ws.id, source: 'custom', externalItemKey: it.key, externalProductId: c.external_product_id, externalVariantId: c.external_variant_id,
        sku: c.sku, title: c.title, status: c.status, productType: c.product_type, price: c.price, regularPrice: c.regular_price, salePrice: c.sale_price, currency: c.currency,
        image: c.image, url: c.url, description: c.description, shortDescription: c.short_description, gallery: c.gallery, categories: c.categories, payload: c.payload,
        rawPayload: [raw], stockQuantity: it.availability?.stock_quantity ?? null, available: it.availability?.available ?? null, stockStatus: it.availability?.stock_status ?? null,
        contentHash: contentHash(c), snapshotAt: now, availabilitySnapshotAt: now,
      });
    }
  }
  const refStarted = performance.now();
  for (let from = 0; from < refRows.length; from += BATCH) {
    await db.insert(catalogItems).values(refRows.slice(from, from + BATCH)).onConflictDoUpdate({
      target: [catalogItems.catalogId, catalogItems.externalItemKey],
      set: {
        title: sql`excluded.title`, price: sql`excluded.price`, regularPrice: sql`excluded.regular_price`, salePrice: sql`excluded.sale_price`, currency: sql`excluded.currency`,
        image: sql`excluded.image`, url: sql`excluded.url`, description: sql`excluded.description`, gallery: sql`excluded.gallery`, categories: sql`excluded.categories`,
        payload: sql`excluded.payload`, rawPayload: sql`excluded.raw_payload`, stockQuantity: sql`excluded.stock_quantity`, available: sql`excluded.available`,
        contentHash: sql`excluded.content_hash`, updatedAt: sql`now()`,
      },
    });
    if ((from / BATCH) % 40 === 39) process.stdout.write(`  reference insert: ${from + BATCH} rows (${((performance.now() - refStarted) / 1000).toFixed(1)} s)\n`);
  }
  const refMs = performance.now() - refStarted;

  const refPatchStarted = performance.now();
  for (let from = 0; from < M; from += BATCH) {
    const tuples = Array.from({ length: Math.min(BATCH, M - from) }, (_, k) => {
      const i = from + k;
      const q = (i * 7) % 13;
      return sql`(${`sku-${i}`}, ${q}::integer, ${q > 0}::boolean, ${JSON.stringify([{ location: 'Berlin', quantity: i % 5, available: i % 5 > 0 }])}::jsonb)`;
    });
    await db.execute(sql`update catalog_items i set stock_quantity = v.q, available = v.a, availability = v.l, updated_at = now()
      from (values ${sql.join(tuples, sql`, `)}) as v(k, q, a, l) where i.catalog_id = ${refCatalog} and i.external_item_key = v.k`);
  }
  const refPatchMs = performance.now() - refPatchStarted;

  const line = (label: string, count: number, ms: number) => `${label.padEnd(64)} ${(ms / 1000).toFixed(2).padStart(7)} s  ${Math.round(count / (ms / 1000)).toLocaleString('en-US').padStart(8)} items/s\n`;
  process.stdout.write('\n');
  process.stdout.write(line(`API bulk upsert, ${N} items (first POST → last job finished)`, N, upsert.totalMs));
  process.stdout.write(line(`reference: plain INSERT … ON CONFLICT, same rows`, N, refMs));
  process.stdout.write(line(`API availability, ${M} items (first PATCH → last job finished)`, M, patch.totalMs));
  process.stdout.write(line(`reference: plain UPDATE … FROM VALUES, same rows`, M, refPatchMs));
  process.stdout.write(`\nupsert sync jobs (202 → finished): p50 ${upsert.p50.toFixed(0)} ms, p95 ${upsert.p95.toFixed(0)} ms, max ${upsert.max.toFixed(0)} ms; all POSTs answered in ${(upsert.postedMs / 1000).toFixed(2)} s\n`);
  process.stdout.write(`availability sync jobs (202 → finished): p50 ${patch.p50.toFixed(0)} ms, p95 ${patch.p95.toFixed(0)} ms, max ${patch.max.toFixed(0)} ms\n`);
  process.stdout.write(`\nAPI / plain insert: ${((refMs / upsert.totalMs) * 100).toFixed(0)}% of the plain insert's rate (goal ≥ 50%); availability: ${((refPatchMs / patch.totalMs) * 100).toFixed(0)}%\n`);
} finally {
  await svc.stop();
}
