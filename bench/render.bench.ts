/**
 * Books-from-content benchmark: `npm run bench:render`.
 *
 * Starts the service (embedded database; DATABASE_URL for PostgreSQL) and a
 * local image server, then through the API:
 *
 *   - renders a 48-item catalog (one 200 px JPEG per item) with the default
 *     template: POST /catalogs/{id}/render until the batch is completed;
 *   - makes a 20-post content book (HTML with headings, lists and an image
 *     per post): POST /books/create-from-template until its batch completes;
 *   - as the reference in the same run, uploads each generated PDF as a
 *     document (POST /books), the same page count through the same
 *     conversion, so the difference is what rendering the content costs.
 *
 * Times are from the POST to the batch's finished_at (the server's clock),
 * after one small warm-up render (JIT, fonts, render threads).
 *
 * Then the generator choice, measured: the same 48 products (images
 * embedded) drawn to a PDF by pdfkit (what the service uses) and printed by
 * Chromium's page.pdf() from an equivalent HTML grid (/usr/bin/chromium,
 * browser already started), median of 5 each.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { renderCatalogPdf, type RenderProduct } from '../src/modules/content/pdf-layout.ts';
import { findTemplate } from '../src/modules/content/templates.ts';
import { colourImage } from '../test/content/content-server.ts';
import { startImageServer } from '../test/content/content-server.ts';
import { startService, uploadFile, waitForBatch, type TestService } from '../test/helpers.ts';

const svc: TestService = await startService({ env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1', RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0 } });
const images = await startImageServer();
const log = (line: string) => process.stdout.write(`${line}\n`);

async function follow(key: string, batchId: string, label: string): Promise<{ seconds: number; pages: number; batch: { books: Array<{ random_id: string }> } }> {
  let last = '';
  const started = performance.now();
  for (;;) {
    const batch = (await svc.request('GET', `/v1/batches/${batchId}`, { key })).body.data;
    const line = `  ${label}: ${batch.status} ${batch.progress.completed}/${batch.progress.total} pages`;
    if (line !== last) log(`${line} (${((performance.now() - started) / 1000).toFixed(2)} s)`);
    last = line;
    if (!['queued', 'processing'].includes(batch.status)) {
      if (batch.status !== 'completed') throw new Error(`${label} ${batch.status}: ${JSON.stringify(batch.error)}`);
      return { seconds: (Date.parse(batch.finished_at) - Date.parse(batch.created_at)) / 1000, pages: batch.books[0].page_count, batch };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function reference(key: string, randomId: string, label: string) {
  const pdf = await readFile(path.join(svc.dataDir, 'files', 'books', randomId, 'source', 'original.pdf'));
  const res = await uploadFile(svc, key, pdf, `${label}.pdf`);
  if (res.status !== 202) throw new Error(res.text);
  return follow(key, res.body.data.batch_id, `${label} (PDF upload)`);
}

try {
  const mode = process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite';
  log(`bench:render on ${mode}`);
  const ws = await svc.workspace();
  const created = await svc.request('POST', '/v1/catalogs', { key: ws.key, body: { name: 'Bench catalog' } });
  const catalogId = created.body.data.catalog.id;
  const items = Array.from({ length: 48 }, (_, i) => [
    `external_item_key=item-${i + 1}`, `external_product_id=p${i + 1}`, `title=Outdoor jacket model ${i + 1} with a longer name`, `sku=OJ-${i + 1}`,
    `price=${(80 + i).toFixed(2)}`, 'currency=EUR', `url=https://shop.example/p/${i + 1}`, 'stock_status=in_stock', `image=${images.url}/img/${i + 1}.jpg`,
  ]);
  const upsert = await svc.request('POST', `/v1/catalogs/${catalogId}/items:bulk-upsert`, { key: ws.key, body: { items } });
  for (;;) {
    const job = (await svc.request('GET', `/v1/catalogs/${catalogId}/sync-jobs/${upsert.body.data.sync_job.id}`, { key: ws.key })).body.data.sync_job;
    if (job.status === 'completed') break;
    if (job.status === 'failed') throw new Error(JSON.stringify(job));
    await new Promise((r) => setTimeout(r, 100));
  }

  log('warm-up: a 1-post book');
  const warm = await svc.request('POST', '/v1/books/create-from-template', { key: ws.key, body: { source: 'wordpress', source_type: 'posts', content: [{ id: 'w', title: 'Warm-up' }] } });
  await waitForBatch(svc, ws.key, warm.body.data.book.batch_id);

  log('48-item catalog (template 1, 9 a page)');
  const render = await svc.request('POST', `/v1/catalogs/${catalogId}/render`, { key: ws.key, body: { status: 'publish' } });
  if (render.status !== 202) throw new Error(render.text);
  const catalog = await follow(ws.key, render.body.data.batch_id, 'catalog');
  const catalogRef = await reference(ws.key, catalog.batch.books[0]!.random_id, 'catalog');

  log('20-post content book (template 5)');
  const posts = Array.from({ length: 20 }, (_, i) => ({
    id: `post-${i + 1}`, title: `Trail report ${i + 1}: what we learned this week`, author: 'Bench', date: '2026-11-22', categories: ['Trails'],
    url: `https://blog.example/${i + 1}`, image: `${images.url}/img/${100 + i}.jpg`,
    content: `<h2>Conditions</h2><p>${'Mud on the lower switchbacks, dry above the tree line, wind in the afternoon. '.repeat(8)}</p><ul><li>Start early</li><li>Carry water</li><li>Check the forecast</li></ul><h2>Gear</h2><p>${'Light layers and a shell were enough for most of the day. '.repeat(6)}</p>`,
  }));
  const content = await svc.request('POST', '/v1/books/create-from-template', { key: ws.key, body: { source: 'wordpress', source_type: 'posts', content: posts } });
  if (content.status !== 201) throw new Error(content.text);
  const postsBook = await follow(ws.key, content.body.data.book.batch_id, 'posts');
  const postsRef = await reference(ws.key, content.body.data.book.random_id, 'posts');

  const row = (label: string, r: { seconds: number; pages: number }) => `| ${label} | ${r.pages} | ${r.seconds.toFixed(2)} s | ${(r.pages / r.seconds).toFixed(1)} |`;
  log('\n| Book | Pages | Ready after | Pages/s |\n|---|---|---|---|');
  log(row('48-item catalog, rendered (POST /catalogs/{id}/render)', catalog));
  log(row('Its PDF uploaded (POST /books), reference', catalogRef));
  log(row('20-post content book (POST /books/create-from-template)', postsBook));
  log(row('Its PDF uploaded (POST /books), reference', postsRef));
  log(`\nGoal: 48-item catalog ready in under 5 s: ${catalog.seconds < 5 ? 'met' : 'NOT met'} (${catalog.seconds.toFixed(2)} s). Load average during the run: ${os.loadavg().map((l) => l.toFixed(1)).join(', ')} on ${os.cpus().length} cores.`);
  await generators();
} finally {
  await images.close();
  await svc.stop();
}

async function generators(): Promise<void> {
  log('\ngenerator choice: 48 products with images to PDF');
  const jpegs = await Promise.all(Array.from({ length: 48 }, (_, i) => colourImage(i + 1)));
  const products: RenderProduct[] = jpegs.map((_, i) => ({
    key: `item-${i + 1}`, title: `Outdoor jacket model ${i + 1} with a longer name`, price: (80 + i).toFixed(2), regularPrice: null, salePrice: null,
    currency: 'EUR', url: `https://shop.example/p/${i + 1}`, sku: `OJ-${i + 1}`, stockStatus: 'instock', available: true, description: null, image: String(i),
  }));
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const pdfkitTimes: number[] = [];
  for (let run = 0; run < 5; run++) {
    const started = performance.now();
    await renderCatalogPdf({ title: 'Bench', cover: { title: 'Bench' }, products, template: findTemplate(1)!, images: (url) => (url ? jpegs[Number(url)] ?? null : null) });
    pdfkitTimes.push(performance.now() - started);
  }
  log(`  pdfkit: ${median(pdfkitTimes).toFixed(0)} ms (median of 5)`);
  if (!existsSync('/usr/bin/chromium')) {
    log('  Chromium: not installed (/usr/bin/chromium), skipped');
    return;
  }
  const cells = products.map((p, i) => `<a class="cell" href="${p.url}"><img src="data:image/jpeg;base64,${jpegs[i]!.toString('base64')}"><b>${p.title}</b><span>SKU ${p.sku}</span><strong>€${p.price}</strong><em>In stock</em></a>`).join('');
  const html = `<!doctype html><html><head><style>@page{size:A4;margin:40px}body{font-family:sans-serif;margin:0}.grid{display:grid;grid-template-columns:repeat(3,1fr);gap:14px}.cell{break-inside:avoid;height:230px;color:#111;text-decoration:none;display:flex;flex-direction:column;font-size:9.5pt}.cell img{height:140px;object-fit:contain;background:#f0f0f2}</style></head><body><section style="height:100vh;background:#10243f;color:#fff;break-after:page"><h1>Bench</h1></section><div class="grid">${cells}</div></body></html>`;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage();
    const times: number[] = [];
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      await page.setContent(html);
      await page.pdf({ format: 'A4', printBackground: true });
      times.push(performance.now() - started);
    }
    log(`  Chromium page.pdf(): ${median(times).toFixed(0)} ms (median of 5, browser already running)`);
  } finally {
    await browser.close();
  }
}
