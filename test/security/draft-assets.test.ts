/**
 * The decision on a draft book's page images: they are served, as capability
 * URLs. A page image URL carries the book's random_id (128 random bits) and
 * the rendition id (48 more), is given only to the workspace (the API) and
 * to readers of a public book (the reader page), and the reader answers 404
 * for a draft, so a draft's URLs are known only to the workspace that made
 * them. Serving them lets the workspace preview a draft (and a CDN serve
 * images straight from the bucket with S3_PUBLIC_URL, where no status check
 * could run). Deleting the book removes them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makePng } from '../documents.ts';
import { startService, uploadFile, waitForBatch, type TestService } from '../helpers.ts';

describe("a draft book's page images", () => {
  let svc: TestService;
  let key: string;
  before(async () => {
    svc = await startService();
    key = (await svc.workspace()).key;
  });
  after(() => svc.stop());

  it('are served at their unguessable URL while the reader hides the draft, and go with the book', async () => {
    const upload = await uploadFile(svc, key, await makePng(64, 48), 'draft.png', { status: 'draft' });
    assert.equal(upload.status, 202, upload.text);
    const batch = await waitForBatch(svc, key, upload.body.data.batch_id);
    assert.equal(batch.status, 'completed', JSON.stringify(batch.error));
    const book = batch.books[0];
    assert.equal(book.status, 'draft');

    const pages = await svc.request('GET', `/v1/books/${book.random_id}/pages`, { key });
    const url: string = pages.body.data[0].images[0].url;
    const served = await fetch(url);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/webp');
    await served.arrayBuffer();

    // The only public place that lists page URLs is the reader, which does not show drafts.
    const reader = await fetch(`${svc.url}/read/${book.random_id}`);
    assert.equal(reader.status, 404);
    await reader.arrayBuffer();
    // Knowing the book but not the rendition is not enough.
    const [, rendition] = /\/books\/[^/]+\/([^/]+)\//.exec(new URL(url).pathname)!;
    const guessed = await fetch(url.replace(`/${rendition}/`, '/AAAAAAAA/'));
    assert.equal(guessed.status, 404);
    await guessed.arrayBuffer();

    assert.equal((await svc.request('DELETE', `/v1/books/${book.random_id}`, { key })).status, 200);
    const gone = await fetch(url);
    assert.equal(gone.status, 404);
    await gone.arrayBuffer();
  });
});
