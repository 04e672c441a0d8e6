/**
 * uploadAndWait(): a real upload (a PDF made here) converted by the service's
 * worker, followed to its end through GET /v1/batches/{batchId}; a refused
 * upload and a failed conversion as their typed errors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createFlipbookClient, FlipbookBatchError, isFlipbookApiError, unwrap, uploadAndWait, type FlipbookClient, type UploadBatch } from '@flipbook/client';
import { makePdf } from '../documents.ts';
import { startService, type TestService } from '../helpers.ts';

describe('uploadAndWait', () => {
  let svc: TestService;
  let client: FlipbookClient;

  before(async () => {
    svc = await startService({ env: { MAX_PAGES_PER_BOOK: 3, RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0 } });
    client = createFlipbookClient({ baseUrl: svc.url, token: (await svc.workspace()).key });
  });
  after(() => svc?.stop());

  it('uploads a PDF with fields, reports progress, and returns the converted book', async () => {
    const file = new File([new Uint8Array(await makePdf({ pages: 2 }))], 'Spring catalogue.pdf', { type: 'application/pdf' });
    const seen: UploadBatch[] = [];
    const { book, batch } = await uploadAndWait(client, file, { fields: { status: 'publish', auto_links_enabled: false }, pollIntervalMs: 100, onProgress: (_progress, b) => seen.push(b) });

    assert.equal(batch.status, 'completed');
    assert.deepEqual(batch.progress, { total: 2, completed: 2, pending: 0, failed: 0 });
    assert.equal(batch.original_filename, 'Spring catalogue.pdf');
    assert.equal(batch.source_format, 'pdf');
    assert.equal(book.name, 'Spring catalogue');
    assert.equal(book.status, 'publish');
    assert.equal(book.page_count, 2);
    assert.equal(book.page_images_status, 'ready');
    assert.equal(book.settings.auto_links_enabled, false);
    assert.ok(seen.length >= 2, 'the upload answer, then the batch as read until it ended');
    assert.ok(['queued', 'processing'].includes(seen[0]!.status));
    assert.equal(seen.at(-1), batch);

    const { data: stored } = await unwrap(client.GET('/v1/books/{book}', { params: { path: { book: book.random_id } } }));
    assert.equal(stored.page_count, 2);
    const { data: pages } = await unwrap(client.GET('/v1/books/{book}/pages', { params: { path: { book: book.random_id } } }));
    assert.ok(pages[1]!.text.some((t) => t.text.includes('Page 2 of 2')));
  });

  it('names a Blob by the filename option', async () => {
    const blob = new Blob([new Uint8Array(await makePdf({ pages: 1 }))]);
    const { book, batch } = await uploadAndWait(client, blob, { filename: 'Price list.pdf', pollIntervalMs: 100 });
    assert.equal(batch.original_filename, 'Price list.pdf');
    assert.equal(book.name, 'Price list');
    assert.equal(book.status, 'draft');
  });

  it('throws FlipbookBatchError with the batch when the conversion fails', async () => {
    const file = new File([new Uint8Array(await makePdf({ pages: 4 }))], 'Too long.pdf');
    const error = await uploadAndWait(client, file, { pollIntervalMs: 100 }).catch((e: unknown) => e);
    assert.ok(error instanceof FlipbookBatchError, String(error));
    assert.equal(error.code, 'too_many_pages');
    assert.equal(error.batch.status, 'failed');
    assert.equal(error.message, error.batch.error?.message);
  });

  it('throws FlipbookApiError when the upload is refused', async () => {
    const error = await uploadAndWait(client, new File(['plain text, not a document'], 'notes.txt')).catch((e: unknown) => e);
    assert.ok(isFlipbookApiError(error, 'ValidationException'), String(error));
    assert.ok(error.details.files?.length, JSON.stringify(error.details));
  });
});
