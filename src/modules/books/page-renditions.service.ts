/**
 * Page renditions made on first request instead of during the conversion:
 * the 2048 px image (the most expensive size to make and the least fetched:
 * the conversion runs ~2.5x faster without it) and the reader's zoom sizes
 * (3072-5120 px, sharp at 4x zoom on a 3x phone screen). They are listed on
 * the page like the others (with `onDemand` set), under keys of the same
 * shape; the first GET of a missing one draws it from the book's stored
 * source (its PDF, or an uploaded image up to its own size), stores it and
 * answers it. Later requests, from any API process, find it in storage.
 *
 * The gate is the page image's: the URL is the rendition's key (the book's
 * random id and its rendition id), so only who may see the page images can
 * ask. Drawing is bounded per process (a few at once, a short queue, then
 * 429) and per client address (`RENDITIONS_PER_MINUTE`).
 *
 * A page the conversion has not drawn yet (a book readable before its last
 * page is drawn, docs/conversion.md) lists its conversion widths with
 * `onDemand: 'page'`: the first request for any of them claims the page in
 * its row (the same claim the background phase takes), draws every such width
 * in one render, stores them and marks the page drawn. A page claimed by
 * another drawer is drawn and answered without being stored, so no image is
 * stored twice.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import type { OnDemandAssets } from '../../platform/storage/assets.routes.ts';
import type { Storage } from '../../platform/storage/storage.ts';
import {
  DEFAULT_EFFORT,
  DEFAULT_MAX_PAGE_PIXELS,
  DEFAULT_QUALITY,
  MAX_EMBEDDED_IMAGE_PIXELS,
  ZOOM_MAX_PAGE_PIXELS,
  drawPageOnRequest,
  encodeImageRendition,
  renderPdfPage,
  renditionSize,
} from '../conversion/conversion.service.ts';
import { RenderWorkerPool } from '../conversion/render-worker-pool.ts';
import type { RenderedPage } from '../conversion/conversion.types.ts';
import { bookPages, bookVersionPages, bookVersions, books, uploadBatches, type StoredPageImage } from './books.tables.ts';

/** A page image key: books/<random id>/<rendition>/p<page>-w<width>.<format>. */
const KEY = /^books\/([A-Za-z0-9_-]{1,64})\/([A-Za-z0-9_-]{1,64})\/p(\d{1,6})-w(\d{1,5})\.(webp|jpeg)$/;
const IMAGE_SOURCES = new Set(['jpeg', 'png']);
/** Warnings of content left out that poppler draws when it is there and does not fail (a damaged image stays damaged). */
const REDRAWABLE = new Set(['image_too_large', 'font_not_drawn']);

/** A page's draw claim older than this is free again (its drawer died): a page never takes this long (DEFAULT_PAGE_TIMEOUT_MS is 60 s). */
export const DRAW_CLAIM_TTL_MS = 90_000;

export interface OnDemandWidths {
  /** Listed widths the conversion leaves out (PAGE_WIDTHS_ON_DEMAND). */
  lazy: readonly number[];
  /** The reader's zoom renditions (ZOOM_WIDTHS). */
  zoom: readonly number[];
}

/**
 * The on-demand entries of a converted page, beside the images the conversion
 * made: each listed width it left out, then each zoom width wider than the
 * widest so far (a PDF page up to the zoom pixel budget, an uploaded image up
 * to its own size, its last entry exactly that size).
 */
export function onDemandImages(page: RenderedPage, listed: readonly number[], widths: OnDemandWidths, key: (width: number) => string): StoredPageImage[] {
  const made = new Set(page.images.map((i) => i.requestedWidth));
  const entries: StoredPageImage[] = [];
  const size = (requested: number, maxPixels: number) => {
    if (page.sourcePixels) {
      const width = Math.min(requested, page.sourcePixels.width);
      return { width, height: Math.max(1, Math.round((page.sourcePixels.height * width) / page.sourcePixels.width)) };
    }
    return renditionSize(page.widthPt, page.heightPt, requested, maxPixels);
  };
  for (const requested of listed) {
    if (made.has(requested) || !widths.lazy.includes(requested)) continue;
    entries.push({ ...size(requested, DEFAULT_MAX_PAGE_PIXELS), key: key(requested), bytes: 0, onDemand: 'width' });
  }
  let widest = Math.max(0, ...page.images.map((i) => i.width), ...entries.map((e) => e.width));
  for (const requested of [...widths.zoom].sort((a, b) => a - b)) {
    const s = size(requested, ZOOM_MAX_PAGE_PIXELS);
    if (s.width <= widest * 1.1) continue;
    widest = s.width;
    entries.push({ ...s, key: key(requested), bytes: 0, onDemand: 'zoom' });
  }
  return entries;
}

export class PageRenditionsService implements OnDemandAssets {
  readonly #db: Db;
  readonly #storage: Storage;
  readonly #concurrency: number;
  readonly #queueLimit: number;
  readonly #log: Logger | null;
  /** One draw per key per process: concurrent requests for it share the result. */
  readonly #inFlight = new Map<string, Promise<Buffer | null>>();
  /** Pages not drawn yet being drawn by this process (rendition/page → key → bytes): every width of a page shares one drawing. */
  readonly #pagesInFlight = new Map<string, Promise<Map<string, Buffer> | null>>();
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  /**
   * Renderer processes of their own: a conversion leases the shared pool's renderers for its whole run, so a
   * reader's page drawn from the shared pool waited for the end of the background phase (166 s on GeoTopo).
   * At most `concurrency` of them, ended when idle like the shared pool's.
   */
  readonly #pool: RenderWorkerPool;

  constructor(deps: { db: Db; storage: Storage; concurrency?: number; queueLimit?: number; log?: Logger; pool?: RenderWorkerPool }) {
    this.#log = deps.log ?? null;
    this.#db = deps.db;
    this.#storage = deps.storage;
    this.#concurrency = deps.concurrency ?? 2;
    this.#queueLimit = deps.queueLimit ?? 16;
    this.#pool = deps.pool ?? new RenderWorkerPool({ maxWorkers: this.#concurrency });
  }

  /** Whether `key` names a page image (the only keys drawn on demand). */
  handles(key: string): boolean {
    return KEY.test(key);
  }

  /**
   * Draws the on-demand rendition stored under `key`, stores it and returns
   * its bytes; null when no current page lists it (or its source is gone).
   * `admit` runs before a drawing starts (the caller's rate limit). A 429 when
   * this process has too many draws waiting.
   */
  async make(key: string, admit?: () => Promise<void>): Promise<{ body: Buffer; contentType: string } | null> {
    const match = KEY.exec(key);
    if (!match) return null;
    const [, randomId, renditionId, pageText, , format] = match;
    const [found] = await this.#db
      .select({ book: books, images: bookPages.images, drawn: bookPages.drawn })
      .from(books)
      .innerJoin(bookPages, eq(bookPages.bookId, books.id))
      .where(and(eq(books.randomId, randomId!), eq(books.renditionId, renditionId!), eq(bookPages.number, Number(pageText))))
      .limit(1);
    let source = found?.book;
    let entry = found?.images.find((image) => image.key === key && image.onDemand);
    if (!found) {
      // An earlier version of the book (docs/book-versions.md): a reader opened before the switch zooms into the pages it shows.
      const [older] = await this.#db
        .select({ book: books, version: bookVersions, images: bookVersionPages.images })
        .from(bookVersions)
        .innerJoin(books, eq(books.id, bookVersions.bookId))
        .innerJoin(bookVersionPages, eq(bookVersionPages.versionId, bookVersions.id))
        .where(and(eq(books.randomId, randomId!), eq(bookVersions.renditionId, renditionId!), eq(bookVersionPages.number, Number(pageText))))
        .limit(1);
      if (older) {
        const { version } = older;
        source = { ...older.book, pdfKey: version.pdfKey, sourceKey: version.sourceKey, sourceFormat: version.sourceFormat, sourcePassword: version.sourcePassword };
        entry = older.images.find((image) => image.key === key && image.onDemand);
      }
    }
    if (!source || !entry) return null;
    const contentType = format === 'jpeg' ? 'image/jpeg' : 'image/webp';
    if (found && entry.onDemand === 'page') {
      const pageKey = `${renditionId}/${pageText}`;
      let drawing = this.#pagesInFlight.get(pageKey);
      if (!drawing) {
        await admit?.();
        drawing = this.#pagesInFlight.get(pageKey);
      }
      if (!drawing) {
        if (this.#running >= this.#concurrency && this.#waiting.length >= this.#queueLimit) throw ERRORS.rateLimited(2);
        const widths = found.images.filter((image) => image.onDemand === 'page');
        drawing = this.#drawPage(found.book, Number(pageText), widths, format as 'webp' | 'jpeg').finally(() => this.#pagesInFlight.delete(pageKey));
        this.#pagesInFlight.set(pageKey, drawing);
      }
      const drawn = await drawing;
      const body = drawn?.get(key);
      return body ? { body, contentType } : null;
    }
    let drawing = this.#inFlight.get(key);
    if (!drawing) {
      await admit?.();
      drawing = this.#inFlight.get(key);
    }
    if (!drawing) {
      if (this.#running >= this.#concurrency && this.#waiting.length >= this.#queueLimit) throw ERRORS.rateLimited(2);
      drawing = this.#draw(source, Number(pageText), entry, format as 'webp' | 'jpeg').finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, drawing);
    }
    const body = await drawing;
    return body ? { body, contentType } : null;
  }

  async #draw(book: typeof books.$inferSelect, page: number, entry: StoredPageImage, format: 'webp' | 'jpeg'): Promise<Buffer | null> {
    await this.#slot();
    const workDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-rendition-'));
    try {
      // The PDF the pages came from: LibreOffice's output for office files (pdfKey, stored once the conversion completes), else the upload.
      const pdfKey = book.pdfKey ?? (book.sourceFormat === 'pdf' ? book.sourceKey : null);
      const fromImage = !pdfKey && IMAGE_SOURCES.has(book.sourceFormat ?? '');
      const sourceKey = pdfKey ?? (fromImage ? book.sourceKey : null);
      if (!sourceKey) return null;
      const object = await this.#storage.get(sourceKey);
      if (!object) return null;
      const source = path.join(workDir, `source${path.extname(sourceKey) || '.pdf'}`);
      await pipeline(object.body, createWriteStream(source));
      let body: Buffer;
      const output = { format, quality: DEFAULT_QUALITY, effort: DEFAULT_EFFORT };
      if (fromImage) {
        body = await encodeImageRendition(source, entry.width, entry.height, output);
      } else {
        const rendered = await renderPdfPage({
          filePath: source,
          ...(book.sourcePassword && book.sourceFormat === 'pdf' ? { password: book.sourcePassword } : {}),
          outDir: workDir,
          ...output,
          page,
          width: requestedWidth(entry.key),
          maxPagePixels: entry.onDemand === 'zoom' ? ZOOM_MAX_PAGE_PIXELS : DEFAULT_MAX_PAGE_PIXELS,
          maxEmbeddedImagePixels: MAX_EMBEDDED_IMAGE_PIXELS,
          pool: this.#pool,
        });
        const image = rendered?.images[0];
        if (!image) return null;
        body = await readFile(image.path);
        const leftOut = rendered.warnings?.filter((w) => REDRAWABLE.has(w.code)) ?? [];
        if (leftOut.length > 0) {
          // Content was left out (poppler missing or failing for a huge image or a font without cmap):
          // answer what was drawn, but do not store it, so a later request draws the page again.
          this.#log?.warn({ bookId: book.id, page, width: entry.width, codes: leftOut.map((w) => w.code) }, `on-demand rendition not stored, not faithful: ${leftOut.map((w) => w.message).join(' ')}`);
          return body;
        }
      }
      await this.#storage.put(entry.key, body, { contentType: format === 'jpeg' ? 'image/jpeg' : 'image/webp' });
      return body;
    } finally {
      this.#release();
      await rm(workDir, { recursive: true, force: true });
    }
  }

  /**
   * Draws a page the conversion has not drawn yet at each of its conversion widths (one render), and stores
   * them if this request wins the page's claim; otherwise (the background phase or another process draws it)
   * answers them without storing. Bytes by key; null when the page cannot be drawn.
   */
  async #drawPage(book: typeof books.$inferSelect, page: number, entries: StoredPageImage[], format: 'webp' | 'jpeg'): Promise<Map<string, Buffer> | null> {
    await this.#slot();
    const claim = `api:${randomBytes(9).toString('base64url')}`;
    const where = and(eq(bookPages.bookId, book.id), eq(bookPages.number, page));
    let claimed = false;
    const workDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-rendition-'));
    try {
      const [taken] = await this.#db.update(bookPages).set({ drawClaim: claim, drawClaimedAt: new Date() })
        .where(and(where, eq(bookPages.drawn, false),
          sql`(${bookPages.drawClaim} is null or ${bookPages.drawClaimedAt} < now() - ${DRAW_CLAIM_TTL_MS} * interval '1 millisecond')`))
        .returning({ number: bookPages.number });
      claimed = Boolean(taken);
      const pdfKey = book.pdfKey ?? (book.sourceFormat === 'pdf' ? book.sourceKey : null);
      if (!pdfKey) return null;
      const object = await this.#storage.get(pdfKey);
      if (!object) return null;
      const source = path.join(workDir, 'source.pdf');
      await pipeline(object.body, createWriteStream(source));
      const widths = entries.map((entry) => requestedWidth(entry.key));
      const output = { format, quality: DEFAULT_QUALITY, effort: DEFAULT_EFFORT };
      // mutool straight from the PDF when it can (page-on-request.ts); otherwise a pooled renderer (pdf.js, then poppler).
      const quick = book.sourcePassword ? null : await drawPageOnRequest({
        filePath: source, outDir: workDir, page, maxPagePixels: DEFAULT_MAX_PAGE_PIXELS, output,
        renditions: entries.map((entry, i) => ({ requestedWidth: widths[i]!, width: entry.width, height: entry.height })),
      }).catch((error: unknown) => {
        this.#log?.warn({ err: error, bookId: book.id, page }, 'mutool could not draw the page on request; drawing it with pdf.js');
        return null;
      });
      const rendered = quick ?? await renderPdfPage({
        filePath: source,
        ...(book.sourcePassword && book.sourceFormat === 'pdf' ? { password: book.sourcePassword } : {}),
        outDir: workDir,
        format,
        quality: DEFAULT_QUALITY,
        effort: DEFAULT_EFFORT,
        page,
        width: Math.max(...widths),
        widths,
        maxPagePixels: DEFAULT_MAX_PAGE_PIXELS,
        maxEmbeddedImagePixels: MAX_EMBEDDED_IMAGE_PIXELS,
        pool: this.#pool,
      });
      if (!rendered || rendered.images.length !== entries.length) return null;
      const bodies = new Map<string, Buffer>();
      for (const [i, image] of rendered.images.entries()) bodies.set(entries[i]!.key, await readFile(image.path));
      const leftOut = rendered.warnings?.filter((w) => REDRAWABLE.has(w.code)) ?? [];
      if (!claimed || leftOut.length > 0) {
        if (leftOut.length > 0) this.#log?.warn({ bookId: book.id, page, codes: leftOut.map((w) => w.code) }, 'page drawn on request not stored, not faithful: the background phase draws it');
        return bodies;
      }
      const stored = new Map<string, StoredPageImage>();
      for (const [i, image] of rendered.images.entries()) {
        const entry = entries[i]!;
        await this.#storage.put(entry.key, bodies.get(entry.key)!, { contentType: format === 'jpeg' ? 'image/jpeg' : 'image/webp' });
        stored.set(entry.key, { width: image.width, height: image.height, key: entry.key, bytes: image.bytes });
      }
      await this.#db.transaction(async (tx) => {
        const [row] = await tx.select({ images: bookPages.images }).from(bookPages).where(and(where, eq(bookPages.drawClaim, claim))).for('update');
        if (!row) return;
        const images = row.images.map((image) => stored.get(image.key) ?? image);
        await tx.update(bookPages).set({ images, drawn: true, drawClaim: null, drawClaimedAt: null, warnings: rendered.warnings ?? [] }).where(where);
        if (book.batchId) await tx.update(uploadBatches).set({ completedPages: sql`${uploadBatches.completedPages} + 1`, updatedAt: new Date() }).where(eq(uploadBatches.id, book.batchId));
      });
      claimed = false;
      return bodies;
    } finally {
      // A drawing that failed or was not stored frees its claim: the background phase draws the page.
      if (claimed) await this.#db.update(bookPages).set({ drawClaim: null, drawClaimedAt: null }).where(and(where, eq(bookPages.drawClaim, claim))).catch(() => undefined);
      this.#release();
      await rm(workDir, { recursive: true, force: true });
    }
  }

  async #slot(): Promise<void> {
    if (this.#running < this.#concurrency) {
      this.#running++;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#running--;
  }
}

function requestedWidth(key: string): number {
  return Number(KEY.exec(key)![4]);
}
