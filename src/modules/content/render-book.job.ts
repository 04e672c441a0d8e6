/**
 * The render job: a content book's source → a PDF (pdf-layout.ts) → the
 * conversion of an upload (convertBook, called directly so the book does not
 * wait for a second pick-up by the queue). Images are fetched first, a few at
 * a time, through the SSRF-safe client; failures become placeholders and
 * batch warnings. Rendering errors fail the batch with a message; a retry
 * starts over (the conversion makes a new rendition).
 */
import { and, eq, inArray } from 'drizzle-orm';
import sharp from 'sharp';
import { Type } from 'typebox';
import { defineJob, type JobContext } from '../../platform/jobs/queue.ts';
import type { OutboundClient } from '../../platform/outbound/outbound-client.ts';
import type { Storage } from '../../platform/storage/storage.ts';
import { bookPrefix } from '../books/books.service.ts';
import { books, uploadBatches, type BookRow, type StoredWarning } from '../books/books.tables.ts';
import { convertBook, type ConvertBookDeps } from '../books/convert-book.job.ts';
import { ImageSet } from './content-images.ts';
import { htmlToBlocks } from './html-blocks.ts';
import { bookSources, type BookSourceRow } from './content.tables.ts';
import { renderArticlesPdf, renderCatalogPdf, renderImagePagesPdf, type RenderArticle, type RenderProduct, type RenderResult } from './pdf-layout.ts';
import { findTemplate } from './templates.ts';

declare module '../../platform/jobs/queue.ts' {
  interface JobPayloads {
    'books.render': { batchId: string };
  }
}

/** What a catalog render needs from the catalogs area: the items to draw, by key, in order. */
export interface CatalogItemsSource {
  itemsForRender(workspaceId: number, catalogId: number, keys: string[] | null): Promise<{ catalogName: string; items: RenderProduct[] }>;
}

export interface RenderBookDeps extends ConvertBookDeps {
  outbound: OutboundClient;
  catalogItems?: CatalogItemsSource;
}

interface ContentInput {
  source_type: 'posts' | 'pages' | 'products';
  content: Array<Record<string, unknown>>;
  metadata: { currency?: string; currency_symbol?: string; site_name?: string; site_url?: string };
}

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

async function storedBytes(storage: Storage, key: string): Promise<Buffer> {
  const object = await storage.get(key);
  if (!object) throw new Error(`The stored page ${key} is missing`);
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

class RenderFailure extends Error {}

async function renderSource(deps: RenderBookDeps, book: BookRow, source: BookSourceRow, ctx: JobContext): Promise<{ result: RenderResult; warnings: StoredWarning[] }> {
  if (source.kind === 'konva') {
    const input = source.input as { page_keys: string[]; width: number; height: number };
    const pages: Buffer[] = [];
    for (const key of input.page_keys) {
      // The image is the page: decoded once (pixel-limited), flattened, embedded as JPEG at its own size.
      pages.push(await sharp(await storedBytes(deps.storage, key), { limitInputPixels: 100_000_000 }).rotate().flatten({ background: '#ffffff' }).jpeg({ quality: 90 }).toBuffer());
    }
    return { result: await renderImagePagesPdf({ title: book.name, widthPt: input.width * 0.75, heightPt: input.height * 0.75, pages }), warnings: [] };
  }

  const template = findTemplate(source.templateId ?? 0);
  if (!template) throw new RenderFailure(`Template ${source.templateId} no longer exists.`);
  const images = new ImageSet({ outbound: deps.outbound, storage: deps.storage, cachePrefix: source.catalogId ? `catalogs/${source.catalogId}/images/` : null, signal: ctx.signal });

  if (source.kind === 'catalog') {
    if (!deps.catalogItems || !source.catalogId) throw new RenderFailure('Catalog rendering is not available in this build.');
    const input = source.input as { items: string[] | null; title: string | null; cover: { title?: string; description?: string; website?: string }; warnings?: StoredWarning[] };
    const { catalogName, items } = await deps.catalogItems.itemsForRender(book.workspaceId, source.catalogId, input.items);
    images.warnings.push(...(input.warnings ?? []));
    if (items.length === 0) throw new RenderFailure('The catalog has no items to render (none of the keys given, or no available item).');
    await images.load(items.filter((i) => i.image).map((i) => ({ url: i.image!, label: `Item ${i.key}` })));
    const title = input.title || catalogName;
    const result = await renderCatalogPdf({
      title,
      cover: { title: input.cover.title || title, description: input.cover.description ?? null, website: input.cover.website ?? null, subtitle: `${items.length} products` },
      products: items,
      template,
      images: images.get,
    });
    return { result, warnings: images.warnings };
  }

  const input = source.input as unknown as ContentInput;
  if (input.source_type === 'products') {
    const products: RenderProduct[] = input.content.map((c) => ({
      key: String(c.id),
      title: String(c.title),
      price: str(c.price),
      regularPrice: str(c.regular_price),
      salePrice: str(c.sale_price),
      currency: str(c.currency) ?? input.metadata.currency ?? null,
      url: str(c.url),
      sku: str(c.sku),
      stockStatus: str(c.stock_status),
      available: null,
      description: str(c.short_description) ?? str(c.description) ?? str(c.content),
      image: str(c.image) ?? (Array.isArray(c.gallery) ? str(c.gallery[0]) : null),
    }));
    await images.load(products.filter((p) => p.image).map((p) => ({ url: p.image!, label: `Product ${p.key}` })));
    const title = book.name;
    const result = await renderCatalogPdf({
      title,
      cover: { title, description: null, website: input.metadata.site_url ?? null, subtitle: input.metadata.site_name ?? null },
      products,
      template,
      images: images.get,
    });
    return { result, warnings: images.warnings };
  }

  const articles: RenderArticle[] = input.content.map((c) => ({
    title: String(c.title),
    author: str(c.author),
    date: str(c.date),
    categories: Array.isArray(c.categories) ? (c.categories as string[]) : [],
    html: str(c.content) ?? str(c.description) ?? '',
    excerpt: str(c.excerpt),
    url: str(c.url),
    image: str(c.image),
  }));
  const requests: Array<{ url: string; label: string }> = [];
  for (const [index, article] of articles.entries()) {
    if (article.image) requests.push({ url: article.image, label: `Content ${index + 1}` });
    for (const block of htmlToBlocks(article.html)) if (block.kind === 'image') requests.push({ url: block.src, label: `Content ${index + 1}` });
  }
  await images.load(requests);
  return { result: await renderArticlesPdf({ title: book.name, articles, images: images.get }), warnings: images.warnings };
}

export async function renderBook(deps: RenderBookDeps, batchId: string, ctx: JobContext): Promise<{ outcome: string; pages?: number }> {
  const { db, storage } = deps;
  const [book] = await db.select().from(books).where(eq(books.batchId, batchId));
  const [batch] = await db.select().from(uploadBatches).where(eq(uploadBatches.id, batchId));
  if (!batch || !book || !['queued', 'processing'].includes(batch.status)) return { outcome: 'skipped' };
  const [source] = await db.select().from(bookSources).where(eq(bookSources.bookId, book.id));
  if (!source) return { outcome: 'skipped' };
  // Only a batch still open is taken: a DELETE /batches/{batchId} that committed meanwhile stays `cancelled`.
  const [started] = await db.update(uploadBatches).set({ status: 'processing', updatedAt: new Date() })
    .where(and(eq(uploadBatches.id, batchId), inArray(uploadBatches.status, ['queued', 'processing'])))
    .returning({ id: uploadBatches.id });
  if (!started) return { outcome: 'skipped' };

  let rendered: { result: RenderResult; warnings: StoredWarning[] };
  try {
    rendered = await renderSource(deps, book, source, ctx);
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    const expected = error instanceof RenderFailure;
    if (!expected && ctx.retryCount < 2) throw error;
    if (!expected) ctx.log.error({ err: error, batchId }, 'render failed');
    await db.transaction(async (tx) => {
      await tx.update(uploadBatches)
        .set({ status: 'failed', error: expected ? error.message : 'The book could not be rendered; the error was logged.', errorCode: 'render_failed', finishedAt: new Date(), updatedAt: new Date() })
        .where(and(eq(uploadBatches.id, batchId), inArray(uploadBatches.status, ['queued', 'processing'])));
      await tx.update(books).set({ pageImagesStatus: 'failed', updatedAt: new Date() }).where(eq(books.id, book.id));
    });
    return { outcome: 'failed' };
  }

  const sourceKey = `${bookPrefix(book.randomId)}source/original.pdf`;
  await storage.put(sourceKey, rendered.result.pdf, { contentType: 'application/pdf' });
  await db.update(books).set({ sourceKey, sourceFormat: 'pdf', updatedAt: new Date() }).where(eq(books.id, book.id));
  await db.update(bookSources).set({ productAreas: rendered.result.areas }).where(eq(bookSources.bookId, book.id));
  await db.update(uploadBatches)
    .set({ warnings: rendered.warnings.slice(0, 100), sourceBytes: rendered.result.pdf.length, updatedAt: new Date() })
    .where(eq(uploadBatches.id, batchId));

  const outcome = await convertBook(deps, batchId, ctx);
  if (outcome.outcome === 'skipped') {
    // Cancelled (or the book deleted) while rendering: drop what this run stored.
    const [still] = await db.select({ id: books.id }).from(books).where(eq(books.id, book.id));
    if (!still) await storage.deletePrefix(bookPrefix(book.randomId));
    return outcome;
  }
  if (source.kind === 'konva') {
    // Spec: a book built from page images offers no source PDF for download.
    await db.update(books).set({ pdfKey: null }).where(eq(books.id, book.id));
  }
  return outcome;
}

export function renderBookJob(deps: RenderBookDeps) {
  return defineJob({
    name: 'books.render',
    version: 1,
    schema: Type.Object({ batchId: Type.String({ minLength: 1, maxLength: 64 }) }),
    retryLimit: 3,
    retryDelaySeconds: 2,
    expireInSeconds: 30 * 60,
    concurrency: 2,
    handle: (payload, ctx) => renderBook(deps, payload.batchId, ctx),
  });
}

