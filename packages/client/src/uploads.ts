/**
 * Upload a document and wait for its conversion: `POST /v1/books`
 * (multipart, one file in `files[]`) answers 202 with an upload batch, which
 * `GET /v1/batches/{batchId}` follows until it is completed, failed or
 * cancelled.
 */
import { sleep } from './retry.ts';
import type { Client } from 'openapi-fetch';
import { unwrap } from './errors.ts';
import { toFormData } from './form-data.ts';
import type { components, operations, paths } from './schema.d.ts';

export type Book = components['schemas']['Book'];
export type UploadBatch = components['schemas']['UploadBatch'];
/** The form fields beside the file: status, original_filename, auto_links_enabled, password. */
export type UploadFields = Omit<operations['uploadBook']['requestBody']['content']['multipart/form-data'], 'files[]'>;

export interface UploadAndWaitOptions {
  /** The file name the service records (default: the File's name, else `document`); the type is read from the content. */
  filename?: string;
  fields?: UploadFields;
  /** Called with the batch's progress each time it is read, the last time with the finished batch. */
  onProgress?: (progress: UploadBatch['progress'], batch: UploadBatch) => void;
  /** Time between two reads of the batch (default 1000 ms). */
  pollIntervalMs?: number;
  /** Stops the upload or the waiting (the conversion goes on: cancel it with DELETE /v1/batches/{batchId}). */
  signal?: AbortSignal;
  /** The upload's Idempotency-Key (default: a new one for this call). */
  idempotencyKey?: string;
}

export interface UploadResult {
  /** The book the upload produced, as the completed batch lists it. */
  book: Book;
  /** The completed batch, with its `warnings` (what the conversion could not reproduce faithfully). */
  batch: UploadBatch;
}

/** The batch ended failed or cancelled: `code` is the batch's error code (or `cancelled`). */
export class FlipbookBatchError extends Error {
  override name = 'FlipbookBatchError';
  readonly code: string;
  readonly batch: UploadBatch;

  constructor(batch: UploadBatch) {
    super(batch.error?.message ?? (batch.status === 'cancelled' ? 'The upload was cancelled.' : `The upload ended ${batch.status}.`));
    this.code = batch.error?.code ?? batch.status;
    this.batch = batch;
  }
}

const FINISHED = new Set<UploadBatch['status']>(['completed', 'failed', 'cancelled']);


/**
 * Uploads one document and resolves when its book is converted; throws a
 * FlipbookApiError when the upload is refused, a FlipbookBatchError when the
 * conversion fails.
 */
export async function uploadAndWait(client: Client<paths>, file: Blob, options: UploadAndWaitOptions = {}): Promise<UploadResult> {
  const filename = options.filename ?? (typeof File !== 'undefined' && file instanceof File && file.name ? file.name : 'document');
  const { data: started } = await unwrap(
    client.POST('/v1/books', {
      // The generated type of a binary field is string; the serializer below puts the Blob in the form.
      body: { ...options.fields, 'files[]': file as unknown as string },
      // The file last, under the name given.
      bodySerializer: (body) => {
        const form = toFormData({ ...body, 'files[]': undefined });
        form.append('files[]', file, filename);
        return form;
      },
      headers: options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : undefined,
      signal: options.signal,
    }),
  );
  let batch: UploadBatch = started;
  for (;;) {
    options.onProgress?.(batch.progress, batch);
    if (FINISHED.has(batch.status)) break;
    await sleep(options.pollIntervalMs ?? 1000, options.signal);
    ({ data: batch } = await unwrap(client.GET('/v1/batches/{batchId}', { params: { path: { batchId: started.batch_id } }, signal: options.signal })));
  }
  if (batch.status !== 'completed') throw new FlipbookBatchError(batch);
  const book = batch.books[0];
  if (!book) throw new FlipbookBatchError(batch);
  return { book, batch };
}
