import { index, integer, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import { books } from './books.tables.ts';
import { instant } from '../../platform/db/columns.ts';


/** The validated `settings` of a bulk batch, in the API's field names (see bulk-settings.service.ts). */
export type BulkSettingsChanges = Record<string, unknown>;

/**
 * One bulk settings batch: the same changes applied to up to 100 books, one
 * item per book, in the background.
 */
export const bulkSettingsBatches = pgTable('bulk_settings_batches', {
  /** Public id (bsb_…). */
  id: text('id').primaryKey(),
  workspaceId: integer('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  /** queued | running | completed | cancelled */
  status: text('status').notNull(),
  /** The changes to apply. Holds pdf_password when one is set: never returned, never logged. */
  settings: jsonb('settings').$type<BulkSettingsChanges>().notNull(),
  retryOfBatchId: text('retry_of_batch_id'),
  createdAt: instant('created_at').notNull().defaultNow(),
  updatedAt: instant('updated_at').notNull().defaultNow(),
  startedAt: instant('started_at'),
  finishedAt: instant('finished_at'),
  cancelledAt: instant('cancelled_at'),
}, (t) => [index('bulk_settings_batches_workspace_created_idx').on(t.workspaceId, t.createdAt)]);

/** One book of a batch, with its own outcome. */
export const bulkSettingsItems = pgTable('bulk_settings_items', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  batchId: text('batch_id').notNull().references(() => bulkSettingsBatches.id, { onDelete: 'cascade' }),
  /** Order of application (the order of `books` in the request). */
  position: integer('position').notNull(),
  /** Null once the book is deleted; book_random_id keeps naming it. */
  bookId: integer('book_id').references(() => books.id, { onDelete: 'set null' }),
  bookRandomId: text('book_random_id').notNull(),
  /** The settings_revision the client read: the item applies only while the book still has it. */
  expectedRevision: text('expected_revision').notNull(),
  /** pending | running | succeeded | failed | cancelled */
  status: text('status').notNull(),
  errorCode: text('error_code'),
  error: text('error'),
  revisionBefore: text('revision_before'),
  revisionAfter: text('revision_after'),
  startedAt: instant('started_at'),
  finishedAt: instant('finished_at'),
}, (t) => [
  uniqueIndex('bulk_settings_items_batch_position_key').on(t.batchId, t.position),
  index('bulk_settings_items_book_idx').on(t.bookId),
]);

export type BulkBatchRow = typeof bulkSettingsBatches.$inferSelect;
export type BulkItemRow = typeof bulkSettingsItems.$inferSelect;
