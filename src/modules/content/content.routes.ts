/**
 * Books made from content (spec part 4): GET /templates,
 * POST /books/create-from-template, POST /books/konva (with the editor canvas
 * readable again at GET /books/{book}/konva) and POST /catalogs/{catalog}/render.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { authOf } from '../../platform/http/route-config.ts';
import type { Storage } from '../../platform/storage/storage.ts';
import { Book, BookParams, ConversionWarning, UploadBatch, exampleBook } from '../books/books.schemas.ts';
import type { ContentBooksService } from './content-books.service.ts';
import { KONVA_MAX_PAGE_PIXELS, KONVA_OBJECTS_MAX_BYTES } from './content-books.service.ts';
import { Canvas, CatalogParams, CreateFromTemplateBody, KonvaBody, RenderCatalogBody, Template, TemplatesQuery } from './content.schemas.ts';
import type { UploadsService } from '../books/uploads.service.ts';
import { CATALOG_RENDER_MAX_ITEMS } from './catalog-items-source.ts';
import { ensureTemplateThumbnails } from './template-thumbnails.ts';

const BookRef = Type.Ref('Book');

export const contentRoutes: FastifyPluginAsyncTypebox<{ content: ContentBooksService; uploads: UploadsService; storage: Storage; konvaBodyLimitBytes: number }> = async (app, { content, uploads, storage, konvaBodyLimitBytes }) => {
  app.addSchema(Book);
  app.addSchema(ConversionWarning);
  app.addSchema(UploadBatch);
  app.addSchema(Template);

  app.get('/templates', {
    schema: {
      operationId: 'listTemplates', tags: ['Catalogs'], summary: 'List templates',
      description:
        'The built-in templates that lay content out into pages: product grids of three densities (`catalog`), a product a page (`products`) and articles for posts and pages (`posts`). ' +
        '`id` is a positive integer as a string; request bodies take the same value as the integer `template_id`. Thumbnails are renders of sample content (WebP, 320 and 1024 px). ' +
        '`meta.default_template_id` is the template used when a request of the filtered type (catalog when unfiltered) names none; `meta.default_template_source` is `built_in`.',
      querystring: TemplatesQuery,
      response: {
        200: Type.Object({ data: Type.Array(Type.Ref('Template')), meta: Type.Object({ default_template_id: Type.String(), default_template_source: Type.String() }) }, {
          examples: [{ data: [{ id: '1', name: 'Classic catalog', type: 'catalog', is_default: true, thumbnails: { small: 'https://flipbook.example/assets/templates/v1/1/thumbnail-w320.webp', large: 'https://flipbook.example/assets/templates/v1/1/thumbnail-w1024.webp' }, description: 'Cover, then nine products a page with image, name, price and stock.' }], meta: { default_template_id: '1', default_template_source: 'built_in' } }],
        }),
      },
    },
    config: { scope: 'catalogs:read' },
  }, async (request) => {
    await ensureTemplateThumbnails(storage);
    return content.templates(request.query.type);
  });

  app.post('/books/create-from-template', {
    schema: {
      operationId: 'createBookFromTemplate', tags: ['Books'], summary: 'Create a book from content and a template',
      description:
        'Lays out 1-50 posts, pages or products with a template into a PDF with real text, fonts and links, then converts it like an upload. ' +
        'HTML in `content` is sanitised (allow-listed text elements, http(s) links and images) and laid out, never executed. Images are fetched server-side (public https only; a failed image becomes a placeholder and a warning on the batch). ' +
        'Answers 201 with the book, `page_images_status: processing` until its pages are ready; follow its `batch_id` with GET /batches/{batchId}. A template that does not lay out `source_type` answers 422.',
      body: CreateFromTemplateBody,
      response: { 201: Type.Object({ data: Type.Object({ book: BookRef }) }, { examples: [{ data: { book: { ...exampleBook, page_images_status: 'processing' } } }] }) },
    },
    config: { scope: 'books:write' },
  }, async (request, reply) => {
    const book = await content.createFromTemplate(authOf(request), request.body);
    reply.code(201).header('location', `/v1/books/${book.random_id}`);
    return { data: { book } };
  });

  app.post('/books/konva', {
    bodyLimit: konvaBodyLimitBytes,
    schema: {
      operationId: 'createEditorBook', tags: ['Books'], summary: 'Create a book from editor pages',
      description:
        'Each `page_images` entry (a `data:image/png|jpeg|webp;base64,` URL) becomes one page: the image is the page, laid on a page of the canvas size (1 px = 0.75 pt). ' +
        `Each image is checked before anything is stored: its bytes must be the type the data URL names and at most ${KONVA_MAX_PAGE_PIXELS.toLocaleString('en')} pixels (otherwise 422 naming the entry). ` +
        `\`canvas\` is stored verbatim (its \`objects\` up to ${KONVA_OBJECTS_MAX_BYTES / 1024 / 1024} MiB serialised) and returned by GET /books/{book}/konva for re-editing. ` +
        '`copyright_enabled` is forced off and the book offers no PDF download (spec). `eod_enabled` and `domains_enabled` in `settings` are read-only on books and ignored. ' +
        `This route alone accepts bodies up to KONVA_BODY_LIMIT_BYTES (${Math.round(konvaBodyLimitBytes / 1024 / 1024)} MiB here); a larger body answers 413 PayloadTooLargeException. ` +
        'Answers 201 with the book, `processing` until its pages are ready (follow `batch_id`).',
      body: KonvaBody,
      response: { 201: Type.Object({ data: Type.Object({ book: BookRef }) }, { examples: [{ data: { book: { ...exampleBook, page_images_status: 'processing' } } }] }) },
    },
    config: { scope: 'books:write' },
  }, async (request, reply) => {
    const book = await content.createKonva(authOf(request), request.body);
    reply.code(201).header('location', `/v1/books/${book.random_id}`);
    return { data: { book } };
  });

  app.get('/books/:book/konva', {
    schema: {
      operationId: 'getEditorCanvas', tags: ['Books'], summary: "A editor book's canvas, for re-editing",
      description: 'Beyond the spec: the `canvas` sent to POST /books/konva, verbatim. 404 for books not made in the editor.',
      params: BookParams,
      response: { 200: Type.Object({ data: Type.Object({ book_id: Type.String(), canvas: Canvas }) }) },
    },
    config: { scope: 'books:read' },
  }, async (request) => ({ data: (await content.canvas(authOf(request), request.params.book)) as never }));

  app.post('/catalogs/:catalog/render', {
    schema: {
      operationId: 'renderCatalog', tags: ['Catalogs'], summary: 'Render a catalog into a book',
      description:
        'Lays the catalog\'s items out with a template (`template_id`, default 1, a product grid) behind a cover (`cover`, default: the catalog name), as a PDF with real text, fonts and a link on each product to its `url`, then converts it like an upload. ' +
        `\`items\` are external item keys in page order; absent: every available item (status active, not known to be unavailable), oldest first, up to ${CATALOG_RENDER_MAX_ITEMS}. ` +
        'Keys the catalog does not hold are left out with a warning on the batch (422 when none is known). Product images are fetched server-side (public https only) and cached per catalog; one that fails is drawn as a placeholder with a warning. ' +
        'Answers 202 with the upload batch (the same record as GET /batches/{batchId}); its book is there from the start with `external_catalog_id` and `page_images_status: processing`. ' +
        'DELETE /batches/{batchId} cancels it until it is ready, as it cancels an upload: the unfinished book and its files are removed. ' +
        'The reader keeps each product\'s price and stock current from the catalog without re-rendering. Another workspace\'s catalog answers 404.',
      params: CatalogParams,
      body: RenderCatalogBody,
      response: { 202: Type.Object({ data: Type.Intersect([Type.Object({ batch_id: Type.String() }), Type.Ref('UploadBatch')]) }) },
    },
    config: { scope: ['catalogs:read', 'books:write'] },
  }, async (request, reply) => {
    const caller = authOf(request);
    const batchId = await content.renderCatalog(caller, request.params.catalog, request.body ?? {});
    const batch = await uploads.getBatch(caller, batchId);
    reply.code(202).header('location', `/v1/batches/${batch.id}`);
    return { data: { batch_id: batch.id, ...batch } };
  });
};
