/**
 * Bulk settings benchmark: `npm run bench:bulk [-- --books N]`.
 *
 * Starts the service (embedded database; DATABASE_URL for PostgreSQL), inserts
 * 2 × N books (100 by default) straight into the database, then:
 *
 *   - applies one bulk settings batch to the first N (summary, POST batch,
 *     GET polled every 100 ms, printing progress) and times it from the POST
 *     to the batch's finished_at;
 *   - as a reference in the same run, applies the same settings to the other
 *     N with N sequential PUT /v1/books/{book} calls.
 *
 * Both paths write the same things per book (settings, revision, the
 * flipbook.updated event); the batch adds its per-item bookkeeping and the
 * revision check, and runs in the background.
 */
import { parseArgs } from 'node:util';
import { insertBook } from '../test/factories.ts';
import { startService } from '../test/helpers.ts';

const { values } = parseArgs({ options: { books: { type: 'string', default: '100' } } });
const count = Math.min(100, Math.max(1, Number(values.books)));
const settings = { animation_type: 'slide', watermark: 'Q3 preview', downloadable_pdf: 'full', flip_sound: true, allow_fullscreen: false } as const;
const putBody = { status: 'draft', animation_type: 'slide', watermark: 'Q3 preview', downloadable_pdf: true, flip_sound: true, allow_fullscreen: false };

const svc = await startService({ env: { RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0 } });
try {
  const mode = process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite';
  process.stdout.write(`bench:bulk on ${mode}: ${count} books per path\n`);
  const ws = await svc.workspace();
  const batchBooks = [];
  const putBooks = [];
  for (let i = 0; i < count; i++) batchBooks.push(await insertBook(svc, ws.id, { name: `Batch ${i}` }));
  for (let i = 0; i < count; i++) putBooks.push(await insertBook(svc, ws.id, { name: `Put ${i}` }));

  // Warm up both paths on one book each (JIT, prepared plans, the job queue).
  const warm = await insertBook(svc, ws.id);
  await svc.request('PUT', `/v1/books/${warm.randomId}`, { key: ws.key, body: putBody });

  const summary = await svc.request('POST', '/v1/books/bulk-settings/summary', { key: ws.key, body: { book_ids: batchBooks.map((b) => b.randomId) } });
  if (summary.status !== 200) throw new Error(`summary failed: ${summary.text}`);
  const started = performance.now();
  const created = await svc.request('POST', '/v1/books/bulk-settings/batches', {
    key: ws.key,
    body: { books: summary.body.data.books.map((b: { id: string; settings_revision: string }) => ({ id: b.id, settings_revision: b.settings_revision })), settings },
  });
  if (created.status !== 202) throw new Error(`batch failed: ${created.text}`);
  const accepted = performance.now() - started;
  let batch = created.body.data;
  let last = '';
  while (!batch.finished_at) {
    await new Promise((r) => setTimeout(r, 100));
    batch = (await svc.request('GET', `/v1/books/bulk-settings/batches/${batch.id}`, { key: ws.key })).body.data;
    const line = `  ${batch.status.padEnd(9)} ${batch.progress.finished.padStart(7)}  ${String(batch.progress.percent).padStart(3)}%  (${((performance.now() - started) / 1000).toFixed(2)} s)`;
    if (line.slice(0, 25) !== last) process.stdout.write(`${line}\n`);
    last = line.slice(0, 25);
  }
  const batchMs = Date.parse(batch.finished_at) - Date.parse(batch.created_at);
  const observedMs = performance.now() - started;
  if (batch.progress.succeeded !== count) throw new Error(`expected ${count} successes: ${JSON.stringify(batch.progress)}`);

  const putStarted = performance.now();
  for (const book of putBooks) {
    const res = await svc.request('PUT', `/v1/books/${book.randomId}`, { key: ws.key, body: putBody });
    if (res.status !== 200) throw new Error(`PUT failed: ${res.text}`);
  }
  const putMs = performance.now() - putStarted;

  const rows: [string, number][] = [
    [`bulk batch, ${count} books (created_at → finished_at)`, batchMs],
    [`bulk batch, as the client saw it (POST → finished seen)`, observedMs],
    [`reference: ${count} sequential PUT /v1/books/{book}`, putMs],
  ];
  process.stdout.write(`\nPOST answered 202 in ${accepted.toFixed(0)} ms\n\n`);
  for (const [label, ms] of rows) process.stdout.write(`${label.padEnd(60)} ${(ms / 1000).toFixed(2).padStart(7)} s  ${(count / (ms / 1000)).toFixed(0).padStart(5)} books/s\n`);
  process.stdout.write(`\nbatch / PUT loop: ${(batchMs / putMs).toFixed(2)}×\n`);
} finally {
  await svc.stop();
}
