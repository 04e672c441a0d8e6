/**
 * Book versions (issue 29): a new document under the same book, the switch
 * when it is ready, failure, restore, concurrent uploads, workspace scoping
 * and the kept-versions limit, through the real server, worker and database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { and, asc, eq } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import { interactionEvents, viewEvents } from '../../src/modules/analytics/analytics.tables.ts';
import { domainEvents } from '../../src/modules/events/events.tables.ts';
import { makePdf } from '../documents.ts';
import { eventually, sendMultipart, startService, uploadFile, waitForBatch, type TestService } from '../helpers.ts';

async function pageTexts(svc: TestService, key: string, book: string): Promise<string[]> {
  const pages = await svc.request('GET', `/v1/books/${book}/pages`, { key, query: { limit: 200 } });
  assert.equal(pages.status, 200, pages.text);
  return pages.body.data.map((p: { text: { text: string }[] }) => p.text.map((t) => t.text).join(' '));
}

describe('book versions', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let key: string;

  before(async () => {
    svc = await startService({ env: { BOOK_VERSIONS_KEPT: 3 } });
    ws = await svc.workspace();
    key = ws.key;
  });
  after(() => svc.stop());

  async function newBook(pages: number, name = 'Catalog.pdf') {
    const res = await uploadFile(svc, key, await makePdf({ pages }), name, { status: 'publish' });
    assert.equal(res.status, 202, res.text);
    const batch = await waitForBatch(svc, key, res.body.data.batch_id);
    assert.equal(batch.status, 'completed');
    return batch.books[0] as { random_id: string; page_count: number; preview_url: string; settings_revision: string };
  }
  const uploadVersion = (book: string, file: Buffer, name = 'v.pdf', fields: Record<string, string> = {}, k = key) =>
    sendMultipart(svc, k, 'POST', `/v1/books/${book}/versions`, fields, { field: 'files[]', bytes: file, name });
  const versions = async (book: string) => {
    const res = await svc.request('GET', `/v1/books/${book}/versions`, { key });
    assert.equal(res.status, 200, res.text);
    return res.body.data as { number: number; status: string; current: boolean; page_count: number; source_filename: string; created_by: unknown; batch_id: string }[];
  };

  it('replaces the document under the same book, keeping its address, settings and access list', async () => {
    const book = await newBook(3);
    const id = book.random_id;
    const put = await svc.request('PUT', `/v1/books/${id}`, { key, body: { status: 'publish', title: 'Spring catalog', background: '#112233' } });
    assert.equal(put.status, 200, put.text);
    const domain = await svc.request('POST', `/v1/books/${id}/embed-domains`, { key, body: { domain: 'shop.example.com' } });
    assert.ok([200, 201].includes(domain.status), domain.text);
    const before = (await svc.request('GET', `/v1/books/${id}`, { key })).body.data;
    const oldPages = (await svc.request('GET', `/v1/books/${id}/pages`, { key })).body.data;

    const res = await uploadVersion(id, await makePdf({ pages: 5 }), 'Catalog fixed.pdf');
    assert.equal(res.status, 202, res.text);
    assert.equal(res.headers.get('location'), `/v1/batches/${res.body.data.id}`);
    assert.equal(res.body.data.books[0].random_id, id);
    const batch = await waitForBatch(svc, key, res.body.data.batch_id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    assert.deepEqual(batch.progress, { total: 5, completed: 5, failed: 0, pending: 0 });

    const afterSwitch = (await svc.request('GET', `/v1/books/${id}`, { key })).body.data;
    assert.equal(afterSwitch.page_count, 5);
    assert.equal(afterSwitch.page_images_status, 'ready');
    assert.equal(afterSwitch.name, 'Spring catalog');
    assert.equal(afterSwitch.settings.background, '#112233');
    assert.equal(afterSwitch.settings.domains_enabled, true);
    assert.equal(afterSwitch.preview_url, before.preview_url);
    assert.equal(afterSwitch.embed_code, before.embed_code);
    assert.equal(afterSwitch.settings_revision, before.settings_revision, 'a new document is no settings change');
    assert.notEqual(afterSwitch.thumbnail_url, before.thumbnail_url, 'the cover is the new version\'s');
    const texts = await pageTexts(svc, key, id);
    assert.equal(texts.length, 5);
    assert.match(texts[0]!, /Page 1 of 5/);
    assert.match(texts[4]!, /Page 5 of 5/);
    const search = await fetch(`${svc.url}/v1/books/${id}/outline`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(search.status, 200);

    const list = await versions(id);
    assert.deepEqual(list.map((v) => [v.number, v.status, v.current, v.page_count]), [[2, 'ready', true, 5], [1, 'ready', false, 3]]);
    assert.equal(list[0]!.source_filename, 'Catalog fixed.pdf');
    assert.equal(list[1]!.source_filename, 'Catalog.pdf');
    assert.equal((list[0]!.created_by as { type: string }).type, 'api_key');
    assert.equal(list[1]!.created_by, null, 'the first version was uploaded before it was recorded as one');
    assert.equal(list[0]!.batch_id, batch.id);

    // A reader that still holds version 1's page images gets them: they are kept until the kept-versions limit removes them.
    const oldImage = await fetch(oldPages[0].images[0].url);
    assert.equal(oldImage.status, 200);
    // Its renditions made on first request too (2048 px by default), drawn from version 1's own document.
    const lazy = oldPages[0].images.find((i: { width: number }) => i.width === 2048);
    const drawn = await fetch(lazy.url);
    assert.equal(drawn.status, 200);
    assert.equal(drawn.headers.get('content-type'), 'image/webp');

    const events = await svc.runtime.database.db.select().from(domainEvents)
      .where(and(eq(domainEvents.workspaceId, ws.id), eq(domainEvents.type, 'flipbook.version_published')));
    const mine = events.filter((e) => e.payload.book_id === id);
    assert.equal(mine.length, 1);
    assert.deepEqual(mine[0]!.payload, { book_id: id, version: 2, previous_version: 1, page_count: 5, reason: 'upload' });
  });

  it('leaves the book as it was when the new version fails, and the batch says why', async () => {
    const book = await newBook(2);
    const broken = (await makePdf({ pages: 2 })).subarray(0, 200);
    const res = await uploadVersion(book.random_id, broken, 'broken.pdf');
    assert.equal(res.status, 202, res.text);
    const batch = await waitForBatch(svc, key, res.body.data.batch_id);
    assert.equal(batch.status, 'failed');
    assert.ok(batch.error.message.length > 10);
    const after = (await svc.request('GET', `/v1/books/${book.random_id}`, { key })).body.data;
    assert.equal(after.page_images_status, 'ready');
    assert.equal(after.page_count, 2);
    assert.match((await pageTexts(svc, key, book.random_id))[0]!, /Page 1 of 2/);
    assert.deepEqual((await versions(book.random_id)).map((v) => [v.number, v.status, v.current]), [[2, 'failed', false], [1, 'ready', true]]);
  });

  it('refuses what an upload refuses, and answers 404 for another workspace\'s book', async () => {
    const book = await newBook(1);
    const text = await uploadVersion(book.random_id, Buffer.from('not a document'), 'notes.pdf');
    assert.equal(text.status, 422);
    assert.match(text.body.error.details.files[0], /PDF/);
    const noFile = await sendMultipart(svc, key, 'POST', `/v1/books/${book.random_id}/versions`, {});
    assert.equal(noFile.status, 422);
    const badField = await uploadVersion(book.random_id, await makePdf({ pages: 1 }), 'x.pdf', { original_filename: 'x'.repeat(300) });
    assert.equal(badField.status, 422);

    const other = await svc.workspace();
    const missing = await svc.request('GET', '/v1/books/nosuchbook0000000000AA/versions', { key: other.key });
    for (const res of [
      await uploadVersion(book.random_id, await makePdf({ pages: 1 }), 'x.pdf', {}, other.key),
      await svc.request('GET', `/v1/books/${book.random_id}/versions`, { key: other.key }),
      await svc.request('POST', `/v1/books/${book.random_id}/versions/1/restore`, { key: other.key }),
    ]) {
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.error.type, missing.body.error.type);
      assert.equal(res.body.error.message, missing.body.error.message);
    }
    assert.deepEqual((await versions(book.random_id)).map((v) => v.number), [1], 'nothing was added');
    const readOnly = await svc.key(ws.id, ['books:read']);
    const forbidden = await uploadVersion(book.random_id, await makePdf({ pages: 1 }), 'x.pdf', {}, readOnly.key);
    assert.equal(forbidden.status, 403);
  });

  it('restores an older version at once, and refuses one that is not ready', async () => {
    const book = await newBook(4);
    const id = book.random_id;
    const v2 = await uploadVersion(id, await makePdf({ pages: 2 }), 'short.pdf');
    assert.equal((await waitForBatch(svc, key, v2.body.data.batch_id)).status, 'completed');
    assert.equal((await svc.request('GET', `/v1/books/${id}`, { key })).body.data.page_count, 2);

    const restored = await svc.request('POST', `/v1/books/${id}/versions/1/restore`, { key });
    assert.equal(restored.status, 200, restored.text);
    assert.equal(restored.body.data.number, 1);
    assert.equal(restored.body.data.current, true);
    assert.equal(restored.body.data.page_count, 4);
    const book1 = (await svc.request('GET', `/v1/books/${id}`, { key })).body.data;
    assert.equal(book1.page_count, 4);
    const texts = await pageTexts(svc, key, id);
    assert.deepEqual(texts.map((t) => /Page (\d) of (\d)/.exec(t)![0]), ['Page 1 of 4', 'Page 2 of 4', 'Page 3 of 4', 'Page 4 of 4']);
    const image = await fetch((await svc.request('GET', `/v1/books/${id}/pages`, { key })).body.data[3].images[0].url);
    assert.equal(image.status, 200);
    assert.deepEqual((await versions(id)).map((v) => [v.number, v.status, v.current, v.page_count]), [[2, 'ready', false, 2], [1, 'ready', true, 4]]);

    // And forward again: version 2's pages were kept aside while version 1 was current.
    const again = await svc.request('POST', `/v1/books/${id}/versions/2/restore`, { key });
    assert.equal(again.status, 200);
    assert.match((await pageTexts(svc, key, id))[1]!, /Page 2 of 2/);
    const same = await svc.request('POST', `/v1/books/${id}/versions/2/restore`, { key });
    assert.equal(same.status, 200, 'restoring the current version changes nothing');

    const broken = await uploadVersion(id, (await makePdf({ pages: 1 })).subarray(0, 200), 'broken.pdf');
    await waitForBatch(svc, key, broken.body.data.batch_id);
    const failed = await svc.request('POST', `/v1/books/${id}/versions/3/restore`, { key });
    assert.equal(failed.status, 409);
    assert.equal((await svc.request('POST', `/v1/books/${id}/versions/9/restore`, { key })).status, 404);
    assert.equal((await svc.request('POST', `/v1/books/${id}/versions/zero/restore`, { key })).status, 422);
    const events = await svc.runtime.database.db.select().from(domainEvents).where(eq(domainEvents.type, 'flipbook.version_published'));
    assert.deepEqual(events.filter((e) => e.payload.book_id === id).map((e) => [e.payload.version, e.payload.reason]), [[2, 'upload'], [1, 'restore'], [2, 'restore']]);
  });

  it('converts two versions uploaded together; the later upload becomes current', async () => {
    const book = await newBook(1);
    const id = book.random_id;
    // The later upload is the shorter document, so it likely finishes first; the earlier one must not then replace it.
    const first = await uploadVersion(id, await makePdf({ pages: 12 }), 'first.pdf');
    const second = await uploadVersion(id, await makePdf({ pages: 2 }), 'second.pdf');
    assert.equal(first.status, 202);
    assert.equal(second.status, 202);
    const [a, b] = await Promise.all([waitForBatch(svc, key, first.body.data.batch_id), waitForBatch(svc, key, second.body.data.batch_id)]);
    assert.equal(a.status, 'completed');
    assert.equal(b.status, 'completed');
    const list = await versions(id);
    assert.deepEqual(list.map((v) => [v.number, v.status, v.current, v.page_count]), [[3, 'ready', true, 2], [2, 'ready', false, 12], [1, 'ready', false, 1]]);
    assert.equal((await svc.request('GET', `/v1/books/${id}`, { key })).body.data.page_count, 2);
    assert.match((await pageTexts(svc, key, id))[0]!, /Page 1 of 2/);
  });

  it('keeps BOOK_VERSIONS_KEPT versions: older ones lose their files, never the current one', async () => {
    const book = await newBook(1);
    const id = book.random_id;
    const imageOf = async () => (await svc.request('GET', `/v1/books/${id}/pages`, { key })).body.data[0].images[0].url as string;
    const images = [await imageOf()];
    for (const pages of [2, 3, 4]) {
      const res = await uploadVersion(id, await makePdf({ pages }), `v${pages}.pdf`);
      assert.equal((await waitForBatch(svc, key, res.body.data.batch_id)).status, 'completed');
      images.push(await imageOf());
    }
    // Kept: 3 (versions 4, 3, 2); version 1's files are gone and it can no longer be restored.
    assert.deepEqual((await versions(id)).map((v) => [v.number, v.status, v.current]), [[4, 'ready', true], [3, 'ready', false], [2, 'ready', false], [1, 'expired', false]]);
    // The expired version's files go just after the switch commits (the batch is completed by then).
    const goneAfterSwitch = (url: string) => eventually(async () => (await fetch(url)).status === 404);
    await goneAfterSwitch(images[0]!);
    for (const url of images.slice(1)) assert.equal((await fetch(url)).status, 200, url);
    assert.equal((await svc.request('POST', `/v1/books/${id}/versions/1/restore`, { key })).status, 409);

    // Restoring version 2 makes it current; the next upload then expires version 3 (the oldest not current), never version 2.
    assert.equal((await svc.request('POST', `/v1/books/${id}/versions/2/restore`, { key })).status, 200);
    const v5 = await uploadVersion(id, await makePdf({ pages: 5 }), 'v5.pdf');
    assert.equal((await waitForBatch(svc, key, v5.body.data.batch_id)).status, 'completed');
    assert.deepEqual((await versions(id)).map((v) => [v.number, v.status, v.current]), [[5, 'ready', true], [4, 'ready', false], [3, 'ready', false], [2, 'expired', false], [1, 'expired', false]]);
    await goneAfterSwitch(images[1]!);
    for (const url of [images[2]!, images[3]!, await imageOf()]) assert.equal((await fetch(url)).status, 200, url);
  });

  it('cancels a version in flight without touching the book, and deleting the book stops its versions', async () => {
    const book = await newBook(2);
    const id = book.random_id;
    const res = await uploadVersion(id, await makePdf({ pages: 60 }), 'long.pdf');
    const cancelled = await svc.request('DELETE', `/v1/batches/${res.body.data.batch_id}`, { key });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.data.status, 'cancelled');
    const after = (await svc.request('GET', `/v1/books/${id}`, { key })).body.data;
    assert.equal(after.page_count, 2);
    assert.equal(after.page_images_status, 'ready');
    assert.match((await pageTexts(svc, key, id))[1]!, /Page 2 of 2/);
    assert.deepEqual((await versions(id)).map((v) => [v.number, v.status, v.current]), [[2, 'cancelled', false], [1, 'ready', true]]);

    const next = await uploadVersion(id, await makePdf({ pages: 60 }), 'long.pdf');
    assert.equal((await svc.request('DELETE', `/v1/books/${id}`, { key })).status, 200);
    const stopped = await waitForBatch(svc, key, next.body.data.batch_id);
    assert.equal(stopped.status, 'cancelled');
  });

  it('records with each event the version read: an open reader on version 1 keeps sending about its pages after the switch', async () => {
    const book = await newBook(3);
    const id = book.random_id;
    const send = (session: string, seq: number, page: number, ver?: number) => fetch(`${svc.url}/read/${id}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' },
      body: JSON.stringify({ session_id: session, events: [{ seq, type: 'page_segment_completed', page, active_ms: 4000 }], context: ver ? { ver } : {} }),
    });
    const early = randomUUID();
    assert.equal((await send(early, 0, 2, 1)).status, 200);
    const res = await uploadVersion(id, await makePdf({ pages: 5 }), 'five.pdf');
    assert.equal((await waitForBatch(svc, key, res.body.data.batch_id)).status, 'completed');
    // The early reader still shows version 1 (3 pages): page 3 is its page; page 5 is not one of them.
    assert.equal((await send(early, 1, 3, 1)).status, 200);
    assert.equal((await send(early, 2, 5, 1)).status, 422);
    const late = randomUUID();
    assert.equal((await send(late, 0, 5)).status, 200, 'without ver: the current version');
    assert.equal((await send(randomUUID(), 0, 4, 99)).status, 200, 'an unknown version is the current one');

    const db = svc.runtime.database.db;
    const [row] = await db.select({ id: viewEvents.bookId }).from(viewEvents).where(eq(viewEvents.sessionId, early));
    const events = await db.select({ session: interactionEvents.sessionId, page: interactionEvents.pageNumber, version: interactionEvents.bookVersion })
      .from(interactionEvents).where(eq(interactionEvents.bookId, row!.id)).orderBy(asc(interactionEvents.id));
    assert.deepEqual(events.map((e) => [e.session === early ? 'early' : e.session === late ? 'late' : 'other', e.page, e.version]),
      [['early', 2, 1], ['early', 3, 1], ['late', 5, 2], ['other', 4, 2]]);
    const views = await db.select({ session: viewEvents.sessionId, version: viewEvents.bookVersion }).from(viewEvents).where(eq(viewEvents.bookId, row!.id));
    assert.equal(views.find((v) => v.session === early)!.version, 1);
    assert.equal(views.find((v) => v.session === late)!.version, 2);
  });
});
