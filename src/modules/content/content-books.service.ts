/**
 * Books made from content instead of an uploaded file: template content
 * (posts, pages, products), editor pages (POST /books/konva) and catalog
 * renders. Each request creates, in one transaction, an upload batch, its
 * book (`processing`), the book's source record and a `books.render` job; the
 * job draws the PDF and hands it to the same conversion as an upload, so the
 * batch API, progress, pages, text, search, links and outline are the same.
 */
import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import sharp, { type Metadata } from 'sharp';
import type { Db, DbOrTx } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import type { JobQueue } from '../../platform/jobs/queue.ts';
import type { Storage } from '../../platform/storage/storage.ts';
import { recordEvent } from '../events/events.service.ts';
import { bookPrefix, findWorkspaceBook, type BooksService, type Caller } from '../books/books.service.ts';
import { applySettingsChange, DEFAULT_SETTINGS } from '../books/books.settings.ts';
import { books, uploadBatches, type StoredBookSettings, type StoredWarning } from '../books/books.tables.ts';
import { newRandomId } from '../books/uploads.service.ts';
import { bookSources } from './content.tables.ts';
import { DEFAULT_TEMPLATE, findTemplate, templateFits, TEMPLATES, type Template } from './templates.ts';
import type { Static } from 'typebox';
import type { CreateFromTemplateBody, EditorSettings, KonvaBody, RenderCatalogBody } from './content.schemas.ts';
import { availableItems, findWorkspaceCatalog, itemsByKeys } from '../catalogs/catalog-reads.ts';

/** Largest decoded editor page: 100 megapixels (10,000 × 10,000, the canvas limit). */
export const KONVA_MAX_PAGE_PIXELS = 100_000_000;
/** Largest `canvas.objects`, serialised: kept verbatim for re-editing. */
export const KONVA_OBJECTS_MAX_BYTES = 16 * 1024 * 1024;

const DATA_URL = /^data:image\/(png|jpeg|webp);base64,/;

export interface TemplateRecord {
  id: string;
  name: string;
  type: string;
  is_default: boolean;
  thumbnails: { small: string; large: string };
  description: string;
}

type EditorSettingsInput = Static<typeof EditorSettings>;

/** Editor and render `settings` → stored settings, through the same mapping as PUT /books/{book}. */
export function settingsFrom(input: EditorSettingsInput | undefined, name: string, overrides: Partial<StoredBookSettings> = {}) {
  const { eod_enabled: _e, domains_enabled: _d, pdf_password: pdfPassword, ...rest } = input ?? {};
  const applied = applySettingsChange(
    { settings: { ...DEFAULT_SETTINGS }, name, description: null, pdfPassword: null },
    { settings: rest, pdfPassword: pdfPassword ?? undefined },
  );
  const settings = { ...applied.settings, ...overrides };
  return { settings, pdfPassword: applied.pdfPassword, settingsRevision: applySettingsChange({ ...applied, settings }, { settings: {} }).settingsRevision };
}

export interface NewContentBook {
  kind: 'template' | 'konva' | 'catalog';
  name: string;
  status?: 'draft' | 'publish';
  settings: ReturnType<typeof settingsFrom>;
  templateId: number | null;
  catalogId: number | null;
  input: Record<string, unknown>;
  canvas?: Record<string, unknown> | null;
  /** Runs in the transaction before the job is queued (editor pages are stored before it). */
  randomId?: string;
}

export class ContentBooksService {
  private readonly db: Db;
  private readonly storage: Storage;
  private readonly queue: JobQueue;
  private readonly books: BooksService;
  private readonly assetUrl: (key: string) => string;

  constructor(deps: { db: Db; storage: Storage; queue: JobQueue; books: BooksService }) {
    this.db = deps.db;
    this.storage = deps.storage;
    this.queue = deps.queue;
    this.books = deps.books;
    this.assetUrl = deps.books.urls.assetUrl;
  }

  templates(type?: string): { data: TemplateRecord[]; meta: { default_template_id: string; default_template_source: string } } {
    const wanted = type === 'pages' ? 'posts' : type;
    const list = TEMPLATES.filter((t) => !wanted || t.type === wanted);
    const defaultId = DEFAULT_TEMPLATE[(wanted === 'posts' || wanted === 'products' ? wanted : 'catalog') as 'catalog'];
    return {
      data: list.map((t) => ({
        id: String(t.id),
        name: t.name,
        type: t.type,
        is_default: (!wanted ? DEFAULT_TEMPLATE.catalog === t.id : defaultId === t.id) || (t.type === 'posts' && t.id === DEFAULT_TEMPLATE.posts),
        thumbnails: { small: this.assetUrl(templateThumbnailKey(t.id, 320)), large: this.assetUrl(templateThumbnailKey(t.id, 1024)) },
        description: t.description,
      })),
      meta: { default_template_id: String(defaultId), default_template_source: 'built_in' },
    };
  }

  /** The template a request names (or the default for its content), checked against what it must lay out. */
  resolveTemplate(id: number | null | undefined, content: 'products' | 'posts' | 'pages', field = 'template_id'): Template {
    const template = findTemplate(id ?? DEFAULT_TEMPLATE[content]);
    if (!template) throw ERRORS.validation({ [field]: [`No template ${id}; GET /v1/templates lists them (ids ${TEMPLATES.map((t) => t.id).join(', ')}).`] });
    if (!templateFits(template, content)) {
      const fitting = TEMPLATES.filter((t) => templateFits(t, content)).map((t) => t.id).join(', ');
      throw ERRORS.validation({ [field]: [`Template ${template.id} (${template.name}) does not lay out ${content}; use one of ${fitting}.`] });
    }
    return template;
  }

  async createFromTemplate(caller: Caller, body: Static<typeof CreateFromTemplateBody>) {
    const template = this.resolveTemplate(body.template_id, body.source_type);
    const name = (body.title || body.metadata?.site_name || body.content[0]!.title).slice(0, 255);
    const randomId = await this.create(caller, {
      kind: 'template',
      name,
      status: body.status,
      settings: settingsFrom(undefined, name),
      templateId: template.id,
      catalogId: null,
      input: { source: body.source, source_type: body.source_type, content: body.content, metadata: body.metadata ?? {} },
    });
    return this.books.get(caller, randomId);
  }

  /**
   * Checks every page image's header (type and pixel size) before anything is
   * stored, then stores the decoded bytes; the job normalises them. The body
   * itself was bounded by the route's body limit.
   */
  async createKonva(caller: Caller, body: Static<typeof KonvaBody>) {
    const objectsBytes = Buffer.byteLength(JSON.stringify(body.canvas.objects));
    if (objectsBytes > KONVA_OBJECTS_MAX_BYTES) throw ERRORS.validation({ 'canvas.objects': [`The objects take ${objectsBytes} bytes; at most ${KONVA_OBJECTS_MAX_BYTES} are kept.`] });
    const pages: Array<{ bytes: Buffer; format: string }> = [];
    const problems: Record<string, string[]> = {};
    const check = async (value: string, field: string) => {
      const match = DATA_URL.exec(value);
      if (!match) { problems[field] = ['Must be a data URL starting with data:image/png;base64, data:image/jpeg;base64, or data:image/webp;base64,.']; return null; }
      const bytes = Buffer.from(value.slice(match[0].length), 'base64');
      let meta: Metadata;
      try {
        meta = await sharp(bytes, { limitInputPixels: false }).metadata();
      } catch {
        problems[field] = ['The data is not a readable image.'];
        return null;
      }
      const format = meta.format === 'jpeg' || meta.format === 'png' || meta.format === 'webp' ? meta.format : null;
      if (!format || format !== (match[1] === 'jpeg' ? 'jpeg' : match[1])) { problems[field] = [`The data is ${meta.format ?? 'unknown'}, not ${match[1]}.`]; return null; }
      const pixels = (meta.width ?? 0) * (meta.height ?? 0);
      if (!pixels || pixels > KONVA_MAX_PAGE_PIXELS) { problems[field] = [`The image is ${meta.width} × ${meta.height} pixels; at most ${KONVA_MAX_PAGE_PIXELS.toLocaleString('en')} pixels (10,000 × 10,000) a page.`]; return null; }
      return { bytes, format };
    };
    for (const [index, value] of body.page_images.entries()) {
      const page = await check(value, `page_images.${index}`);
      if (page) pages.push(page);
    }
    const thumbnail = body.thumbnail ? await check(body.thumbnail, 'thumbnail') : null;
    if (Object.keys(problems).length) throw ERRORS.validation(problems);

    const randomId = newRandomId();
    const pageKeys: string[] = [];
    for (const [index, page] of pages.entries()) {
      const key = `${bookPrefix(randomId)}source/page-${String(index + 1).padStart(4, '0')}.${page.format === 'jpeg' ? 'jpg' : page.format}`;
      await this.storage.put(key, page.bytes, { contentType: `image/${page.format}` });
      pageKeys.push(key);
    }
    if (thumbnail) await this.storage.put(`${bookPrefix(randomId)}source/thumbnail.${thumbnail.format === 'jpeg' ? 'jpg' : thumbnail.format}`, thumbnail.bytes, { contentType: `image/${thumbnail.format}` });
    const name = body.title.slice(0, 255);
    try {
      await this.create(caller, {
        kind: 'konva',
        randomId,
        name,
        status: body.status,
        // Spec: books built from page images have no downloadable source PDF; copyright is forced off.
        settings: settingsFrom(body.settings, name, { copyright_enabled: false, downloadable: false }),
        templateId: null,
        catalogId: null,
        input: { page_keys: pageKeys, width: body.canvas.width, height: body.canvas.height },
        canvas: body.canvas as unknown as Record<string, unknown>,
      });
    } catch (error) {
      await this.storage.deletePrefix(bookPrefix(randomId));
      throw error;
    }
    return this.books.get(caller, randomId);
  }

  /** The editor canvas of a book made with POST /books/konva, as it was sent. */
  async canvas(caller: Caller, randomId: string) {
    const book = await findWorkspaceBook(this.db, caller.workspaceId, randomId);
    const [source] = await this.db.select({ canvas: bookSources.canvas }).from(bookSources).where(and(eq(bookSources.bookId, book.id), eq(bookSources.kind, 'konva')));
    if (!source?.canvas) throw ERRORS.notFound('Editor canvas');
    return { book_id: book.randomId, canvas: source.canvas };
  }

  /**
   * A book from a catalog: the items named (in that order), or every
   * available item up to CATALOG_RENDER_MAX_ITEMS. Keys the catalog does not
   * hold: 422 when none is known, otherwise left out with a warning on the
   * batch. The items' values are read when the job renders, and live prices
   * keep them current in the reader afterwards.
   */
  async renderCatalog(caller: Caller, catalogId: number, body: Static<typeof RenderCatalogBody>) {
    const catalog = await findWorkspaceCatalog(this.db, caller.workspaceId, catalogId);
    const template = this.resolveTemplate(body.template_id, 'products');
    let keys: string[] | null = null;
    const warnings: StoredWarning[] = [];
    if (body.items) {
      const { items, missing } = await itemsByKeys(this.db, caller.workspaceId, catalogId, body.items);
      if (items.length === 0) throw ERRORS.validation({ items: [`None of the ${missing.length} keys is an item of catalog ${catalogId}.`] });
      if (missing.length) warnings.push({ code: 'items_missing', page: null, message: `${missing.length} item key(s) are not in the catalog and were left out: ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ', …' : ''}.` });
      keys = items.map((i) => i.externalItemKey);
    } else {
      const available = await availableItems(this.db, caller.workspaceId, catalogId, { limit: 1 });
      if (available.length === 0) throw ERRORS.validation({ items: ['The catalog has no available item to render; send `items` or add items first.'] });
    }
    const name = (body.title || catalog.name).slice(0, 255);
    const { batchId } = await this.createWithBatch(caller, {
      kind: 'catalog',
      name,
      status: body.status,
      settings: settingsFrom(body.settings, name),
      templateId: template.id,
      catalogId,
      input: { items: keys, title: body.title ?? null, cover: body.cover ?? {}, warnings },
    });
    return batchId;
  }

  /** Batch, book, source and render job in one transaction; returns the book's random_id. */
  async create(caller: Caller, book: NewContentBook, tx?: DbOrTx): Promise<string> {
    return (await this.createWithBatch(caller, book, tx)).randomId;
  }

  async createWithBatch(caller: Caller, book: NewContentBook, tx?: DbOrTx): Promise<{ randomId: string; batchId: string }> {
    const randomId = book.randomId ?? newRandomId();
    const batchId = `bat_${randomBytes(12).toString('base64url')}`;
    const now = new Date();
    const run = async (t: DbOrTx) => {
      await t.insert(uploadBatches).values({ id: batchId, workspaceId: caller.workspaceId, status: 'queued', originalFilename: null, sourceFormat: 'pdf' });
      const [row] = await t.insert(books).values({
        randomId,
        workspaceId: caller.workspaceId,
        batchId,
        externalCatalogId: book.catalogId,
        name: book.name,
        status: book.status ?? 'draft',
        publishedDate: book.status === 'publish' ? now : null,
        pageImagesStatus: 'processing',
        settings: book.settings.settings,
        pdfPassword: book.settings.pdfPassword,
        settingsRevision: book.settings.settingsRevision,
      }).returning({ id: books.id });
      await t.insert(bookSources).values({
        bookId: row!.id,
        workspaceId: caller.workspaceId,
        kind: book.kind,
        templateId: book.templateId,
        catalogId: book.catalogId,
        input: book.input,
        canvas: book.canvas ?? null,
      });
      await this.queue.send('books.render', { batchId }, { tx: t, singletonKey: batchId });
      await recordEvent(t, caller.workspaceId, 'flipbook.created', { book_id: randomId, batch_id: batchId, name: book.name });
    };
    if (tx) await run(tx);
    else await this.db.transaction(run);
    return { randomId, batchId };
  }
}

export function templateThumbnailKey(templateId: number, width: number): string {
  return `templates/v1/${templateId}/thumbnail-w${width}.webp`;
}
