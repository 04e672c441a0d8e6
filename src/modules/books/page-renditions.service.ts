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
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { and, eq } from 'drizzle-orm';
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
  encodeImageRendition,
  renderPdfPage,
  renditionSize,
} from '../conversion/conversion.service.ts';
import type { RenderedPage } from '../conversion/conversion.types.ts';
import { bookPages, bookVersionPages, bookVersions, books, type StoredPageImage } from './books.tables.ts';

/** A page image key: books/<random id>/<rendition>/p<page>-w<width>.<format>. */
const KEY = /^books\/([A-Za-z0-9_-]{1,64})\/([A-Za-z0-9_-]{1,64})\/p(\d{1,6})-w(\d{1,5})\.(webp|jpeg)$/;
const IMAGE_SOURCES = new Set(['jpeg', 'png']);
/** Warnings of content left out that poppler draws when it is there and does not fail (a damaged image stays damaged). */
const REDRAWABLE = new Set(['image_too_large', 'font_not_drawn']);

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
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(deps: { db: Db; storage: Storage; concurrency?: number; queueLimit?: number; log?: Logger }) {
    this.#log = deps.log ?? null;
    this.#db = deps.db;
    this.#storage = deps.storage;
    this.#concurrency = deps.concurrency ?? 2;
    this.#queueLimit = deps.queueLimit ?? 16;
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
      .select({ book: books, images: bookPages.images })
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
