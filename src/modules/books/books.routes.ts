/** Books and upload batches: spec part 4, "Books" and "Batches", plus GET /books/{book}/pages. */
import type { FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { rm } from 'node:fs/promises';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { ERRORS } from '../../platform/errors.ts';
import { validationDetails } from '../../platform/http/error-handler.ts';
import { readMultipartForm } from '../../platform/http/multipart.ts';
import { authOf } from '../../platform/http/route-config.ts';
import { CursorMeta, Message, cursorQuery } from '../../platform/http/schemas.ts';
import type { BooksService } from './books.service.ts';
import {
  Book, BookParams, BookVersion, ConversionWarning, ListBooksQuery, OutlineEntry, Page, UpdateBookBody, UploadBatch, UploadBody, UploadFields, VersionFields, VersionParams,
  VersionUploadBody, exampleBook,
} from './books.schemas.ts';
import type { BookVersionsService } from './book-versions.service.ts';
import type { UploadsService, UploadInput } from './uploads.service.ts';

const BookRef = Type.Ref('Book');
const BatchRef = Type.Ref('UploadBatch');
const BatchParams = Type.Object({ batchId: Type.String({ minLength: 1, maxLength: 64 }) });

export const booksRoutes: FastifyPluginAsyncTypebox<{ books: BooksService; uploads: UploadsService; versions: BookVersionsService; uploadLimitBytes: number }> = async (
  app, { books, uploads, versions, uploadLimitBytes },
) => {
  app.addSchema(Book);
  app.addSchema(BookVersion);
  app.addSchema(ConversionWarning);
  app.addSchema(OutlineEntry);
  app.addSchema(UploadBatch);
  await app.register(multipart, { limits: { fileSize: uploadLimitBytes, files: 1, fields: 20, fieldSize: 4096, parts: 25 } });

  /** An upload's or a new version's form: the document received into a temporary file (the caller removes it) and the fields. */
  async function readDocumentForm(request: FastifyRequest) {
    const form = await readMultipartForm(request, {
      fileFields: ['files[]', 'files'],
      detailsField: 'files',
      maxFileBytes: uploadLimitBytes,
      expected: 'upload the document as multipart/form-data with the file in the files[] field.',
      receive: (part) => uploads.receive(part.file),
      discard: (filePath) => rm(filePath, { force: true }),
    });
    if (!form.file) throw ERRORS.validation({ files: ['The files[] field is required: attach one document.'] });
    return { file: form.file, fields: form.fields };
  }

  app.get('/books', {
    schema: {
      operationId: 'listBooks', tags: ['Books'], summary: 'List books',
      description: 'Newest first unless `sort` says otherwise. Cursor-paginated.',
      querystring: ListBooksQuery,
      response: { 200: Type.Object({ data: Type.Array(BookRef), meta: CursorMeta }, { examples: [{ data: [exampleBook], meta: { next_cursor: null, has_more: false } }] }) },
    },
    config: { scope: 'books:read' },
  }, async (request) => {
    const q = request.query;
    return books.list(authOf(request), { status: q['filter[status]'], name: q['filter[name]'], sort: q.sort, cursor: q.cursor, limit: q.limit ?? 25 });
  });

  app.post('/books', {
    schema: {
      operationId: 'uploadBook', tags: ['Books'], summary: 'Upload a document to convert into a book',
      description:
        'multipart/form-data with one file in `files[]`. The type is read from the content; anything else than the accepted types answers 422. ' +
        'Answers 202 with the upload batch (`batch_id` and `id` are the same); poll GET /batches/{batchId} until `status` is `completed` or `failed`. ' +
        'Too large a file answers 413 (limit: UPLOAD_LIMIT_BYTES, 200 MB by default).',
      response: { 202: Type.Object({ data: Type.Intersect([Type.Object({ batch_id: Type.String() }), BatchRef]) }) },
    },
    config: { scope: 'books:write', multipartBody: UploadBody },
  }, async (request, reply) => {
    const { file, fields: formFields } = await readDocumentForm(request);
    try {
      const batch = await uploads.upload(authOf(request), { filePath: file.value, filename: file.filename || 'document', ...parseFields(formFields) });
      reply.code(202).header('location', `/v1/batches/${batch.id}`);
      return { data: { batch_id: batch.id, ...batch } };
    } finally {
      await rm(file.value, { force: true });
    }
  });
  app.get('/books/:book', {
    schema: { operationId: 'getBook', tags: ['Books'], summary: 'Get a book', params: BookParams, response: { 200: Type.Object({ data: BookRef }, { examples: [{ data: exampleBook }] }) } },
    config: { scope: 'books:read' },
  }, async (request) => ({ data: await books.get(authOf(request), request.params.book) }));

  app.put('/books/:book', {
    schema: {
      operationId: 'updateBook', tags: ['Books'], summary: 'Update a book',
      description: '`status` is required. `eod_enabled` and `domains_enabled` are read-only and ignored. Changes fire `flipbook.updated`.',
      params: BookParams, body: UpdateBookBody, response: { 200: Type.Object({ data: BookRef }) },
    },
    config: { scope: 'books:write' },
  }, async (request) => ({ data: await books.update(authOf(request), request.params.book, request.body) }));

  app.delete('/books/:book', {
    schema: {
      operationId: 'deleteBook', tags: ['Books'], summary: 'Delete a book and its files',
      description: 'Permanent: removes the book, its pages and every generated file. A conversion in flight stops.',
      params: BookParams, response: { 200: Type.Object({ data: Message, meta: Type.Object({}) }) },
    },
    config: { scope: 'books:write' },
  }, async (request) => {
    await books.delete(authOf(request), request.params.book);
    return { data: { message: 'The book and its files were deleted.' }, meta: {} };
  });

  app.get('/books/:book/pages', {
    schema: {
      operationId: 'listBookPages', tags: ['Books'], summary: "A book's pages: images, text and links",
      description: 'Beyond the spec: what the reader shows, for API users. In page order, cursor-paginated.',
      params: BookParams, querystring: Type.Object(cursorQuery(200, 50)),
      response: { 200: Type.Object({ data: Type.Array(Page), meta: CursorMeta }) },
    },
    config: { scope: 'books:read' },
  }, async (request) => books.pages(authOf(request), request.params.book, { cursor: request.query.cursor, limit: request.query.limit ?? 50 }));

  app.get('/books/:book/outline', {
    schema: {
      operationId: 'getBookOutline', tags: ['Books'], summary: "A book's outline (table of contents)",
      description:
        'Beyond the spec: the outline (bookmarks) of the uploaded document, as the reader shows it. Each entry opens a page (`page`) or, ' +
        'when the document links it to a web or mail address, that address (`url`, an external link; `page` is then null). ' +
        'Nested entries are in `children`. Empty until the conversion has opened the document, and for documents without one.',
      params: BookParams,
      response: {
        200: Type.Object({ data: Type.Array(Type.Ref('OutlineEntry')) }, {
          examples: [{ data: [
            { title: 'Introduction', page: 1, children: [{ title: 'Scope', page: 2, children: [] }] },
            { title: 'Product site', page: null, url: 'https://example.com/product', children: [] },
          ] }],
        }),
      },
    },
    config: { scope: 'books:read' },
  }, async (request) => ({ data: await books.outline(authOf(request), request.params.book) }));

  app.post('/books/:book/versions', {
    schema: {
      operationId: 'uploadBookVersion', tags: ['Books'], summary: "Replace a book's document with a new version",
      description:
        'multipart/form-data with one file in `files[]`: the same types, limits (413 above UPLOAD_LIMIT_BYTES), `password` and warnings as an upload. ' +
        'Answers 202 with the upload batch; its `books` holds the book. The book keeps its address, settings, access list, embed domains, tracked links, ' +
        'lead form and analytics, and readers keep reading the current version until the new one is completely converted; then it becomes current in one step ' +
        '(`flipbook.version_published`). A failed conversion leaves the book as it was (the batch says why). When several are converting, the one uploaded last ' +
        'becomes current. 409 while the book is still converting its first document. See docs/book-versions.md.',
      params: BookParams,
      response: { 202: Type.Object({ data: Type.Intersect([Type.Object({ batch_id: Type.String() }), BatchRef]) }) },
    },
    config: { scope: 'books:write', multipartBody: VersionUploadBody },
  }, async (request, reply) => {
    const { file, fields: formFields } = await readDocumentForm(request);
    try {
      const fields = checkFields(VersionFields, formFields);
      const batch = await versions.upload(authOf(request), request.params.book, {
        filePath: file.value, filename: file.filename || 'document',
        originalFilename: fields.original_filename as string | undefined, password: fields.password as string | undefined,
      });
      reply.code(202).header('location', `/v1/batches/${batch.id}`);
      return { data: { batch_id: batch.id, ...batch } };
    } finally {
      await rm(file.value, { force: true });
    }
  });

  app.get('/books/:book/versions', {
    schema: {
      operationId: 'listBookVersions', tags: ['Books'], summary: "A book's versions",
      description: 'Newest first: number, status, whether it is current, who uploaded it and when, its file name and page count.',
      params: BookParams,
      response: { 200: Type.Object({ data: Type.Array(Type.Ref('BookVersion')) }) },
    },
    config: { scope: 'books:read' },
  }, async (request) => ({ data: await versions.list(authOf(request), request.params.book) }));

  app.post('/books/:book/versions/:version/restore', {
    schema: {
      operationId: 'restoreBookVersion', tags: ['Books'], summary: 'Make an older version current again',
      description:
        'At once, in one step, like a new version: the book shows that version\'s pages, text, outline and cover (`flipbook.version_published`). ' +
        'Restoring the current version changes nothing. 409 when the version is not `ready` (converting, failed, cancelled, or expired by the kept-versions limit).',
      params: VersionParams,
      response: { 200: Type.Object({ data: Type.Ref('BookVersion') }) },
    },
    config: { scope: 'books:write' },
  }, async (request) => ({ data: await versions.restore(authOf(request), request.params.book, request.params.version) }));

  app.get('/batches/:batchId', {
    schema: { operationId: 'getBatch', tags: ['Batches'], summary: 'Get an upload batch', params: BatchParams, response: { 200: Type.Object({ data: BatchRef }) } },
    config: { scope: 'books:read' },
  }, async (request) => ({ data: await uploads.getBatch(authOf(request), request.params.batchId) }));

  app.delete('/batches/:batchId', {
    schema: {
      operationId: 'cancelBatch', tags: ['Batches'], summary: 'Cancel an upload still converting',
      description: 'Rendering stops, the unfinished book and its files are removed, and the batch becomes `cancelled`. A finished batch answers 409.',
      params: BatchParams, response: { 200: Type.Object({ data: BatchRef }) },
    },
    config: { scope: 'books:write' },
  }, async (request) => ({ data: await uploads.cancel(authOf(request), request.params.batchId) }));

  app.get('/books/uploads/status/active', {
    schema: {
      operationId: 'listActiveUploads', tags: ['Batches'], summary: 'Upload batches still converting',
      description: 'Batches `queued` or `processing`, newest first (at most 200).',
      response: { 200: Type.Object({ data: Type.Array(BatchRef) }) },
    },
    config: { scope: 'books:read' },
  }, async (request) => ({ data: await uploads.activeBatches(authOf(request)) }));

  app.get('/books/uploads/:batchId/status', {
    schema: {
      operationId: 'getUploadStatus', tags: ['Batches'], summary: 'Conversion progress of one upload',
      description: 'The same record as GET /batches/{batchId}.',
      params: BatchParams, response: { 200: Type.Object({ data: BatchRef }) },
    },
    config: { scope: 'books:read' },
  }, async (request) => ({ data: await uploads.getBatch(authOf(request), request.params.batchId) }));
};

/** Multipart fields are strings; they are checked against the same schema the document shows. */
function checkFields(schema: typeof UploadFields | typeof VersionFields, fields: Record<string, string>): Record<string, unknown> {
  const converted = Value.Convert(schema, fields) as Record<string, unknown>;
  if (!Value.Check(schema, converted)) {
    const errors = [...Value.Errors(schema, converted)].map((e) => ({ instancePath: e.instancePath, keyword: e.keyword, message: e.message, params: e.params as Record<string, unknown> }));
    throw ERRORS.validation(validationDetails(errors));
  }
  return converted;
}

function parseFields(fields: Record<string, string>): Omit<UploadInput, 'filePath' | 'filename'> {
  const converted = checkFields(UploadFields, fields);
  return {
    originalFilename: converted.original_filename as string | undefined,
    status: converted.status as 'draft' | 'publish' | undefined,
    autoLinksEnabled: converted.auto_links_enabled as boolean | undefined,
    password: converted.password as string | undefined,
  };
}
