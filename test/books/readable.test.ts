/**
 * A book readable before its last page is drawn (docs/conversion.md,
 * "Readable before the last page is drawn"), through the real service and
 * worker: the batch's stage and progress while the background phase draws,
 * pages drawn on request meanwhile (bounded: 429 with Retry-After beyond the
 * queue, every page served in the end), and no image stored twice, whoever
 * draws it. CONVERSION_BACKGROUND_THREADS=1 (a documented setting) keeps the
 * background phase slow enough to be seen on a fast machine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import sharp from 'sharp';
import { bookPages, books } from '../../src/modules/books/books.tables.ts';
import type { Storage } from '../../src/platform/storage/storage.ts';
import { makePdf } from '../documents.ts';
import { startService, uploadFile, waitForBatch, type TestService } from '../helpers.ts';

/** Counts every put per key on the service's own storage (the real one underneath). */
export function countPuts(storage: Storage): Map<string, number> {
  const puts = new Map<string, number>();
  const put = storage.put.bind(storage);
  storage.put = (key, body, options) => {
    puts.set(key, (puts.get(key) ?? 0) + 1);
    return put(key, body, options);
  };
  return puts;
}

export function storedTwice(puts: Map<string, number>): string[] {
  return [...puts].filter(([, n]) => n > 1).map(([key, n]) => `${key} ×${n}`);
}

async function until<T>(read: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 120_000, intervalMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

describe('a book readable before its last page is drawn', () => {
  let svc: TestService;
  let key: string;
  let puts: Map<string, number>;
  before(async () => {
    svc = await startService({ env: { CONVERSION_BACKGROUND_THREADS: 1, RENDITIONS_PER_MINUTE: 10_000 } });
    key = (await svc.workspace()).key;
    puts = countPuts(svc.runtime.storage);
  });
  after(() => svc.stop());

  async function upload(pages: number) {
    const res = await uploadFile(svc, key, await makePdf({ pages }), `Long ${pages}.pdf`, { status: 'publish' });
    assert.equal(res.status, 202, res.text);
    return res.body.data.batch_id as string;
  }
  const batchOf = async (batchId: string) => (await svc.request('GET', `/v1/batches/${batchId}`, { key })).body.data;
  async function allPages(randomId: string) {
    const list = [];
    let cursor: string | null = null;
    do {
      const res: { status: number; text: string; body: any } = await svc.request('GET', `/v1/books/${randomId}/pages`, { key, query: { limit: 100, ...(cursor ? { cursor } : {}) } });
      assert.equal(res.status, 200, res.text);
      list.push(...res.body.data);
      cursor = res.body.meta.next_cursor;
    } while (cursor);
    return list as { number: number; drawn: boolean; images: { width: number; height: number; url: string }[]; text: { text: string }[] }[];
  }

  it('is ready with every page listed while the background phase draws, shows its stage and progress, and ends fully drawn', async () => {
    const batchId = await upload(40);
    const readable = await until(async () => {
      const batch = await batchOf(batchId);
      assert.notEqual(batch.status, 'failed', JSON.stringify(batch.error));
      return batch.stage === 'rendering' ? batch : null;
    }, 'the batch to be readable');
    assert.equal(readable.status, 'processing', 'a batch is completed only once every page is drawn');
    assert.ok(readable.readable_at, 'readable_at is set');
    assert.equal(readable.total_pages, 40);
    assert.ok(readable.rendered_pages < 40, `the book is readable before its last page is drawn (${readable.rendered_pages} drawn)`);
    assert.equal(readable.rendered_pages, readable.progress.completed + readable.progress.failed);
    const book = readable.books[0];
    assert.equal(book.page_images_status, 'ready', 'every page can be served now');
    assert.equal(book.page_count, 40);

    const pages = await allPages(book.random_id);
    assert.equal(pages.length, 40, 'every page is listed, with its size and text');
    assert.ok(pages.every((p) => p.text.some((t) => t.text.includes(`Page ${p.number} of 40`))), 'every page\'s text is searchable already');
    assert.ok(pages.slice(0, 4).every((p) => p.drawn), 'the first pages are drawn before the book is readable');
    const undrawn = pages.filter((p) => !p.drawn);
    assert.ok(undrawn.length > 0, 'pages not drawn yet say so');

    // The last page, not drawn yet, is drawn on request and then stored.
    const last = pages[39]!;
    const image = last.images.find((i) => i.width === 1024)!;
    const res = await fetch(image.url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/webp');
    const drawnOnRequest = sharp(Buffer.from(await res.arrayBuffer()));
    const { width, height } = await drawnOnRequest.metadata();
    assert.deepEqual({ width, height }, { width: image.width, height: image.height }, 'the size the conversion listed');
    const { channels } = await drawnOnRequest.stats();
    assert.ok(channels[0]!.min < 100, 'the page is drawn (its text is dark ink), not a blank stand-in');

    const done = await waitForBatch(svc, key, batchId);
    assert.equal(done.status, 'completed', JSON.stringify(done.error));
    assert.equal(done.stage, 'done');
    assert.equal(done.rendered_pages, 40);
    assert.deepEqual(done.warnings, []);
    const finished = await allPages(book.random_id);
    assert.ok(finished.every((p) => p.drawn), 'every page drawn in the end');
    const db = svc.runtime.database.db;
    const rows = await db.select({ images: bookPages.images }).from(bookPages).innerJoin(books, eq(books.id, bookPages.bookId)).where(eq(books.randomId, book.random_id));
    for (const row of rows) {
      assert.ok(!row.images.some((i) => i.onDemand === 'page'), 'no image left to draw');
      for (const stored of row.images.filter((i) => !i.onDemand)) assert.ok(await svc.runtime.storage.stat(stored.key), `${stored.key} is stored`);
    }
    assert.deepEqual(storedTwice(puts), [], 'no image stored twice');
  });

  it('holds its render limits under a flood of requests for undrawn pages: 429 with Retry-After beyond the queue, every page served in the end', async () => {
    const batchId = await upload(80);
    const readable = await until(async () => {
      const batch = await batchOf(batchId);
      return batch.stage === 'rendering' ? batch : null;
    }, 'the batch to be readable');
    const pages = await allPages(readable.books[0].random_id);
    const urls = pages.filter((p) => !p.drawn).map((p) => p.images[0]!.url);
    assert.ok(urls.length >= 60, `${urls.length} pages not drawn yet`);
    // A reader flicking through every undrawn page at once, or many readers: far more than the two drawings and sixteen waiting.
    const first = await Promise.all(urls.map((url) => fetch(url).then(async (r) => ({ url, status: r.status, retryAfter: r.headers.get('retry-after'), bytes: (await r.arrayBuffer()).byteLength }))));
    const refused = first.filter((r) => r.status === 429);
    assert.ok(refused.length > 0, 'beyond the queue, requests are refused');
    assert.ok(first.every((r) => r.status === 200 || r.status === 429), JSON.stringify(first.filter((r) => r.status !== 200 && r.status !== 429)));
    assert.ok(refused.every((r) => Number(r.retryAfter) > 0), 'each 429 says when to try again');
    assert.ok(first.filter((r) => r.status === 200).every((r) => r.bytes > 0));
    // Retried after Retry-After, as the reader does: every page is served.
    let pending = refused.map((r) => r.url);
    for (let round = 0; pending.length > 0; round++) {
      assert.ok(round < 30, `${pending.length} pages never served`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const again = await Promise.all(pending.map((url) => fetch(url).then(async (r) => ({ url, status: r.status, bytes: (await r.arrayBuffer()).byteLength }))));
      assert.ok(again.every((r) => r.status === 200 || r.status === 429));
      pending = again.filter((r) => r.status !== 200).map((r) => r.url);
    }
    const done = await waitForBatch(svc, key, batchId);
    assert.equal(done.status, 'completed');
    assert.equal(done.rendered_pages, 80);
    assert.deepEqual(storedTwice(puts), [], 'requests and the background phase never stored the same image twice');
  });
});
