/**
 * Rows written straight to the database, for tests that need a book in a
 * given state without converting a document.
 */
import { DEFAULT_SETTINGS, settingsRevision } from '../src/modules/books/books.settings.ts';
import { books } from '../src/modules/books/books.tables.ts';
import { newRandomId } from '../src/modules/books/uploads.service.ts';
import type { TestService } from './helpers.ts';

/** A ready book row (draft unless `values` says otherwise), with default settings and a matching revision. */
export async function insertBook(svc: TestService, workspaceId: number, values: Partial<typeof books.$inferInsert> = {}) {
  const name = values.name ?? `Book ${Math.random().toString(36).slice(2, 8)}`;
  const [row] = await svc.runtime.database.db
    .insert(books)
    .values({
      randomId: newRandomId(),
      workspaceId,
      name,
      status: 'draft',
      pageImagesStatus: 'ready',
      settings: DEFAULT_SETTINGS,
      settingsRevision: settingsRevision({ settings: DEFAULT_SETTINGS, name, description: null, pdfPassword: null }),
      ...values,
    })
    .returning();
  return row!;
}
