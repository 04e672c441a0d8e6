/** Bulk settings over many books: spec part 4, "Books" (the /books/bulk-settings rows). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authOf } from '../../platform/http/route-config.ts';
import type { BulkSettingsService } from './bulk-settings.service.ts';
import { BulkBatch, BulkBatchParams, CreateBulkBatchBody, SummaryBody, SummaryResponse } from './bulk-settings.schemas.ts';
import { errorResponses } from '../../platform/http/openapi.ts';

const BatchRef = Type.Ref('BulkSettingsBatch');

export const bulkSettingsRoutes: FastifyPluginAsyncTypebox<{ bulkSettings: BulkSettingsService }> = async (app, { bulkSettings }) => {
  app.addSchema(BulkBatch);

  app.post('/books/bulk-settings/summary', {
    schema: {
      operationId: 'summariseBulkSettings', tags: ['Bulk settings'], summary: 'Settings shared by several books, and their revisions',
      description:
        'For 1-100 books: the settings they share (`settings.common`), the ones they differ on with each book\'s value (`settings.differing`), ' +
        'in the bulk `settings` field names, and each book\'s current `settings_revision` to send back when creating a batch. ' +
        'A book that does not exist or belongs to another workspace answers 404 with `details.book_ids` naming the missing ones.',
      body: SummaryBody,
      response: { 200: Type.Object({ data: SummaryResponse, meta: Type.Object({}) }), ...errorResponses(404) },
    },
    config: { scope: 'books:read' },
  }, async (request) => ({ data: await bulkSettings.summary(authOf(request), request.body.book_ids), meta: {} }));

  app.post('/books/bulk-settings/batches', {
    schema: {
      operationId: 'createBulkSettingsBatch', tags: ['Bulk settings'], summary: 'Apply settings to many books in the background',
      description:
        'Optimistic concurrency: every book must still have the `settings_revision` sent. If one does not, nothing is applied and the answer is 409 ' +
        '`ConflictException` with `details.stale_books` (their random ids) and `details.current_settings_revisions` (their revisions now, in the same order): ' +
        're-read the summary and resend. Otherwise 202 with the batch; its items then run one book at a time, each checked against its revision again ' +
        '(an item whose book changed meanwhile fails as `stale_revision`). Each applied item fires `flipbook.updated`. ' +
        'Unknown books answer 404 with `details.book_ids`. `eod_lists` replaces each book\'s access list, `eod_enabled: false` clears it, ' +
        '`eod_enabled: true` alone keeps it (and fails the item for a book without one).',
      body: CreateBulkBatchBody,
      response: { 202: Type.Object({ data: BatchRef, meta: Type.Object({}) }), ...errorResponses(404) },
    },
    config: { scope: 'books:write' },
  }, async (request, reply) => {
    const batch = await bulkSettings.create(authOf(request), request.body);
    reply.code(202).header('location', `/v1/books/bulk-settings/batches/${batch.id}`);
    return { data: batch, meta: {} };
  });

  app.get('/books/bulk-settings/batches/:batch', {
    schema: {
      operationId: 'getBulkSettingsBatch', tags: ['Bulk settings'], summary: 'A bulk settings batch and the outcome of each book',
      params: BulkBatchParams, response: { 200: Type.Object({ data: BatchRef }) },
    },
    config: { scope: 'books:read' },
  }, async (request) => ({ data: await bulkSettings.get(authOf(request), request.params.batch) }));

  app.delete('/books/bulk-settings/batches/:batch', {
    schema: {
      operationId: 'cancelBulkSettingsBatch', tags: ['Bulk settings'], summary: 'Cancel the items not started yet',
      description: 'Items not started become `cancelled`; settings already applied stay, and an item being applied finishes. The batch becomes `cancelled`. A batch already `completed` or `cancelled` answers 409.',
      params: BulkBatchParams, response: { 200: Type.Object({ data: BatchRef }) },
    },
    config: { scope: 'books:write' },
  }, async (request) => ({ data: await bulkSettings.cancel(authOf(request), request.params.batch) }));

  app.post('/books/bulk-settings/batches/:batch/retry', {
    schema: {
      operationId: 'retryBulkSettingsBatch', tags: ['Bulk settings'], summary: 'Retry the failed items in a new batch',
      description:
        'A new batch with the same settings for the items that failed, with `retry_of_batch_id` set. It applies over each book\'s revision at the time of the retry ' +
        '(a deleted book fails again as `book_not_found`). 409 while the batch is `queued` or `running`, or when it has no failed item.',
      params: BulkBatchParams, response: { 202: Type.Object({ data: BatchRef }) },
    },
    config: { scope: 'books:write' },
  }, async (request, reply) => {
    const batch = await bulkSettings.retry(authOf(request), request.params.batch);
    reply.code(202).header('location', `/v1/books/bulk-settings/batches/${batch.id}`);
    return { data: batch };
  });
};
