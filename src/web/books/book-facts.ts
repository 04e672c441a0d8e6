/**
 * What the books screens say about a book: its status in words (with
 * "Expired" when its expiry has passed), and its conversion, followed
 * through GET /v1/batches/{batchId} while its pages render.
 */
import { useEffect, useState } from 'preact/hooks';
import type { components } from '@flipbook/client';
import { call, client, type Problem } from '../api.ts';

export type Book = components['schemas']['Book'];
export type UploadBatch = components['schemas']['UploadBatch'];
export type BookStatus = 'draft' | 'published' | 'scheduled' | 'expired';

export const STATUS_WORDS: Record<BookStatus, string> = { draft: 'Draft', published: 'Published', scheduled: 'Scheduled', expired: 'Expired' };

export function bookStatus(book: Pick<Book, 'status' | 'expires_at'>, now = Date.now()): BookStatus {
  if (book.expires_at && Date.parse(book.expires_at) <= now) return 'expired';
  if (book.status === 'publish') return 'published';
  if (book.status === 'schedule') return 'scheduled';
  return 'draft';
}

/** The API's filter[status] values, in the screen's words. */
export const STATUS_FILTERS = [
  { value: '', label: 'Any status' },
  { value: 'draft', label: 'Draft' },
  { value: 'publish', label: 'Published' },
  { value: 'schedule', label: 'Scheduled' },
] as const;

/** Every sort the API offers. */
export const SORTS = [
  { value: '-updated_at', label: 'Last updated, newest first' },
  { value: 'updated_at', label: 'Last updated, oldest first' },
  { value: '-created_at', label: 'Created, newest first' },
  { value: 'created_at', label: 'Created, oldest first' },
  { value: 'name', label: 'Name, A to Z' },
  { value: '-name', label: 'Name, Z to A' },
  { value: 'status', label: 'Status' },
  { value: '-status', label: 'Status, reversed' },
] as const;

export type Sort = (typeof SORTS)[number]['value'];

export const isFinished = (batch: UploadBatch): boolean => batch.status === 'completed' || batch.status === 'failed' || batch.status === 'cancelled';

/** "Converting: 12 of 40 pages", "Ready", "Failed: <the service's message>". */
export function conversionWords(batch: UploadBatch): string {
  const { total, completed } = batch.progress;
  switch (batch.status) {
    case 'queued': return 'Waiting to convert';
    case 'processing': return total > 0 ? `Converting: ${completed} of ${total} pages` : 'Opening the document';
    case 'completed': return batch.progress.failed > 0 ? `Ready, ${batch.progress.failed} ${batch.progress.failed === 1 ? 'page' : 'pages'} blank` : 'Ready';
    case 'cancelled': return 'Cancelled';
    case 'failed': return `Failed: ${batch.error?.message ?? 'the document could not be converted.'}`;
  }
}

const POLL_MS = 1000;

/**
 * Follows a batch until it finishes: the latest record, or the problem that
 * stopped the reading. `onFinished` runs once, with the finished batch.
 */
export function useBatch(batchId: string | null, onFinished?: (batch: UploadBatch) => void): { batch: UploadBatch | null; problem: Problem | null } {
  const [state, setState] = useState<{ batch: UploadBatch | null; problem: Problem | null }>({ batch: null, problem: null });
  useEffect(() => {
    if (!batchId) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      const result = await call(client.GET('/v1/batches/{batchId}', { params: { path: { batchId } } }));
      if (stopped) return;
      if (!result.ok) {
        setState((s) => ({ ...s, problem: result.problem }));
        // A network blip or a 429: try again; a 404 (the book was deleted) ends it.
        if (result.problem.status === 0 || result.problem.status === 429 || result.problem.status >= 500) timer = setTimeout(read, POLL_MS * 3);
        return;
      }
      setState({ batch: result.data, problem: null });
      if (isFinished(result.data)) onFinished?.(result.data);
      else timer = setTimeout(read, POLL_MS);
    };
    void read();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
    // onFinished is read when the batch ends; following starts again only for another batch.
  }, [batchId]);
  return state;
}

/** A book's page in the application. */
export const bookHref = (book: Pick<Book, 'random_id'>) => `/app/books/${encodeURIComponent(book.random_id)}`;
