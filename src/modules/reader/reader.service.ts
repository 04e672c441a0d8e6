/**
 * The public reader's domain: which books a visitor may open, what the page
 * needs to show one (page images, links, outline, text), full-text search,
 * and the download. No HTTP here: reader.routes.ts adapts it.
 */
import type { Readable } from 'node:stream';
import { and, asc, eq, gte, inArray, lte, sql } from 'drizzle-orm';
import { planAllows } from '../../platform/auth/plans.ts';
import type { Config } from '../../platform/config/env.ts';
import { BatchedLookup } from '../../platform/db/batched-lookup.ts';
import { MAX_INTEGER } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Storage } from '../../platform/storage/storage.ts';
import { DEFAULT_SETTINGS, effectiveStatus, readerDefaults } from '../books/books.settings.ts';
import { bookPages, bookVersionPages, bookVersions, books, type BookRow, type StoredBookSettings } from '../books/books.tables.ts';
import type { OutlineEntry, PageLink, TextItem } from '../conversion/conversion.types.ts';
import { runSeparator } from '../conversion/text-order.ts';
import { loadReaderLeadForm } from '../analytics/lead-forms.service.ts';
import { loadReaderBrand, type ReaderBrand } from '../brand/brand.service.ts';
import { workspaces } from '../workspaces/workspaces.tables.ts';
import type { HitRect, ReaderData, ReaderImage, ReaderLink, ReaderPage, SearchHit, SearchResponse, TextLayerResponse, TextResponse } from './reader.types.ts';

export const RANDOM_ID = /^[A-Za-z0-9_-]{22}$/;
export const DEFAULT_BILLING_GRACE_MS = 7 * 24 * 60 * 60 * 1000;
/** Characters of page text put in the HTML (for search engines and the text view); later pages load on demand. */
export const DEFAULT_TEXT_BUDGET = 200_000;
export const SEARCH_HIT_LIMIT = 100;
export const SEARCH_MAX_QUERY = 200;
export const TEXT_PAGES_PER_REQUEST = 50;

/** A book as the reader sees it: the row, its effective settings and who publishes it. */
export interface ReaderBook {
  row: BookRow;
  settings: StoredBookSettings;
  publisher: string;
  /** The workspace's plan (what it may show: badge removal, brand take-over). */
  plan: string;
}

/**
 * - missing: unknown, draft, scheduled for later, or pages not ready (404)
 * - gone: its expires_at has passed (410)
 * - billing_expired: public, but the workspace's billing ran out more than the grace period ago (a notice instead of pages)
 * - public: readable
 */
export type Availability = 'missing' | 'gone' | 'billing_expired' | 'public';

export interface ReaderCover {
  url: string;
  width: number;
  height: number;
}

/** Everything the reader page renders. */
export interface ReaderContent {
  data: ReaderData;
  cover: ReaderCover | null;
  /** The cover's srcset candidates, smallest first. */
  coverImages: { url: string; width: number; height: number }[];
  outline: OutlineEntry[];
  description: string;
  /** Page texts put in the HTML: pages 1..data.textUntil. */
  texts: { page: number; text: string }[];
  pageCount: number;
  /** The workspace brand shown instead of the service's, while take-over is on and the plan allows it. */
  brand: ReaderBrand | null;
}

export interface PdfDownload {
  body: Readable;
  size: number | null;
  filename: string;
}

const SAFE_URL = /^(https?:|mailto:|tel:)/i;

function round(n: number): number {
  return Math.round(n * 10000) / 10000;
}

function commonPrefix(values: string[]): string {
  if (values.length === 0) return '';
  let prefix = values[0]!;
  for (const value of values) {
    let i = 0;
    while (i < prefix.length && i < value.length && prefix.charCodeAt(i) === value.charCodeAt(i)) i++;
    prefix = prefix.slice(0, i);
    if (!prefix) break;
  }
  return prefix;
}

/** Lower case, whitespace collapsed: how both the query and the page text are compared. */
export function normaliseForSearch(text: string): string {
  return text.replace(/\s+/g, ' ').trim().toLowerCase();
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * The part of a text item's box that holds characters [start, start + length)
 * (fractions of its text), following the run's reading direction on the
 * displayed page: down the box for text rotated 90°, right to left for 180°
 * and for right-to-left scripts, up for 270°. Text at another angle gets the
 * whole box (its axis-aligned box cannot be cut along the run).
 */
function partOfItem(item: TextItem, start: number, length: number): HitRect {
  const whole: HitRect = [round(item.x), round(item.y), round(item.width), round(item.height)];
  let angle = item.angle ?? 0;
  if (angle % 90 !== 0) return whole;
  // A right-to-left run starts at the far end of its direction: the same as reading it turned by 180°.
  if (item.dir === 'rtl') angle = (angle + 180) % 360;
  const from = angle === 180 || angle === 270 ? 1 - start - length : start;
  if (angle === 0 || angle === 180) return [round(item.x + item.width * from), round(item.y), round(item.width * length), round(item.height)];
  return [round(item.x), round(item.y + item.height * from), round(item.width), round(item.height * length)];
}

/** Where `query` (normalised) shows on a page: proportional rects inside single text items, whole items when it spans several. */
export function matchRects(items: TextItem[], query: string): HitRect[] {
  const rects: HitRect[] = [];
  const texts = items.map((item) => normaliseForSearch(item.text));
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const text = texts[i]!;
    let from = text.indexOf(query);
    if (from >= 0) {
      // Proportional placement inside the run: exact for monospace, close enough for highlighting otherwise.
      while (from >= 0 && rects.length < 50) {
        rects.push(partOfItem(item, from / text.length, Math.min(1, query.length / text.length)));
        from = text.indexOf(query, from + query.length);
      }
      continue;
    }
    // A match that starts here and runs into the next few items.
    let joined = text;
    for (let j = i + 1; j < Math.min(items.length, i + 6); j++) {
      joined += runSeparator(items[j - 1]!, items[j]!) + texts[j];
      if (joined.includes(query) && !joined.slice(text.length).includes(query)) {
        for (let k = i; k <= j; k++) {
          const part = items[k]!;
          rects.push([round(part.x), round(part.y), round(part.width), round(part.height)]);
        }
        break;
      }
    }
  }
  return rects;
}

function snippet(plain: string, query: string): { before: string; match: string; after: string } {
  const text = plain.replace(/\s+/g, ' ').trim();
  const at = text.toLowerCase().indexOf(query);
  if (at < 0) return { before: '', match: text.slice(0, 80), after: '' };
  let start = Math.max(0, at - 60);
  let end = Math.min(text.length, at + query.length + 60);
  // Whole words at the edges.
  if (start > 0) start = text.indexOf(' ', start) + 1 || start;
  if (end < text.length) end = text.lastIndexOf(' ', end) > at + query.length ? text.lastIndexOf(' ', end) : end;
  return {
    before: (start > 0 ? '… ' : '') + text.slice(start, at),
    match: text.slice(at, at + query.length),
    after: text.slice(at + query.length, end) + (end < text.length ? ' …' : ''),
  };
}

function toLink(link: PageLink): ReaderLink | null {
  const target = link.page ?? (link.url && SAFE_URL.test(link.url) ? link.url : null);
  if (target === null || target === undefined) return null;
  return [round(link.x), round(link.y), round(link.width), round(link.height), target];
}

function safeFilename(name: string): string {
  const printable = [...name].map((c) => (c.charCodeAt(0) < 32 ? ' ' : c)).join('');
  const cleaned = printable.replace(/[\\/:*?"<>|]+/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 150);
  return `${cleaned || 'flipbook'}.pdf`;
}

export class ReaderService {
  private readonly db: Db;
  private readonly storage: Storage;
  private readonly baseUrl: string;
  private readonly billingGraceMs: number;
  private readonly textBudget: number;
  private readonly lookup: BatchedLookup<string, ReaderBook>;

  constructor(deps: { db: Db; storage: Storage; config: Readonly<Pick<Config, 'publicBaseUrl'>>; billingGraceMs?: number; textBudgetChars?: number }) {
    this.db = deps.db;
    this.storage = deps.storage;
    this.baseUrl = deps.config.publicBaseUrl;
    this.billingGraceMs = deps.billingGraceMs ?? DEFAULT_BILLING_GRACE_MS;
    this.textBudget = deps.textBudgetChars ?? DEFAULT_TEXT_BUDGET;
    this.lookup = new BatchedLookup((randomIds) => this.load(randomIds), (randomId) => randomId);
  }

  readerUrl(randomId: string): string {
    return `${this.baseUrl}/read/${randomId}`;
  }

  assetUrl(key: string): string {
    return this.storage.directUrl(key) ?? `${this.baseUrl}/assets/${key}`;
  }

  /** Origins page images are served from (for the Content-Security-Policy). */
  assetOrigins(): string[] {
    const origins = new Set([new URL(this.baseUrl).origin]);
    const direct = this.storage.directUrl('books/x/y/p1-w1.webp');
    if (direct) origins.add(new URL(direct).origin);
    return [...origins];
  }

  /** The book at a public id, as the reader sees it; the look-ups of one event-loop turn share one query (batched-lookup.ts). */
  async find(randomId: string): Promise<ReaderBook | null> {
    if (!RANDOM_ID.test(randomId)) return null;
    const found = await this.lookup.get(randomId);
    if (!found) return null;
    // Each caller gets its own settings object: the rows are shared by the requests of the turn.
    return { ...found, settings: { ...found.settings } };
  }

  private async load(randomIds: string[]): Promise<Map<string, ReaderBook>> {
    const rows = await this.db
      .select({ row: books, publisher: workspaces.name, plan: workspaces.plan })
      .from(books)
      .innerJoin(workspaces, eq(workspaces.id, books.workspaceId))
      .where(inArray(books.randomId, randomIds));
    return new Map(rows.map((found) => {
      const settings = { ...DEFAULT_SETTINGS, ...found.row.settings };
      // Plans that cannot remove the badge always show it (as the Book record says).
      if (!planAllows(found.plan, 'remove_made_with_badge')) settings.made_with_badge_enabled = true;
      return [found.row.randomId, { row: found.row, settings, publisher: found.publisher, plan: found.plan }];
    }));
  }

  availability(book: ReaderBook | null, now = new Date()): Availability {
    if (!book) return 'missing';
    const { row } = book;
    // Expiry unpublishes (status draft, unpublished_at set by the job); until the job runs effectiveStatus says draft too.
    if (row.expiresAt && row.expiresAt <= now && (row.status !== 'draft' || row.unpublishedAt !== null)) return 'gone';
    if (effectiveStatus(row, now) !== 'publish' || row.pageImagesStatus !== 'ready') return 'missing';
    if (row.billingExpiresAt && row.billingExpiresAt.getTime() + this.billingGraceMs <= now.getTime()) return 'billing_expired';
    return 'public';
  }

  async content(book: ReaderBook): Promise<ReaderContent> {
    const { row, settings } = book;
    // Read on every page view (the page is not cached), so turning take-over off shows at once.
    const brandLoad = planAllows(book.plan, 'take_over_branding') ? loadReaderBrand(this.db, row.workspaceId, (key) => this.assetUrl(key)) : Promise.resolve(null);
    const rows = await this.db
      .select({
        number: bookPages.number,
        widthPt: bookPages.widthPt,
        heightPt: bookPages.heightPt,
        images: bookPages.images,
        links: bookPages.links,
        textLength: sql<number>`length(${bookPages.plainText})`.mapWith(Number),
      })
      .from(bookPages)
      .where(eq(bookPages.bookId, row.id))
      .orderBy(asc(bookPages.number));

    // On-demand renditions are served by the service, which draws them on first request (a bucket would answer 404).
    const urls = rows.map((p) => p.images.map((image) => (image.onDemand ? `${this.baseUrl}/assets/${image.key}` : this.assetUrl(image.key))));
    const prefix = commonPrefix(urls.flat());
    const pages: ReaderPage[] = rows.map((p, index) => {
      const images: ReaderImage[] = p.images.map((image, i): ReaderImage => {
        const suffix = urls[index]![i]!.slice(prefix.length);
        return image.onDemand ? [image.width, image.height, suffix, image.onDemand === 'zoom' ? 2 : 1] : [image.width, image.height, suffix];
      });
      const page: ReaderPage = { w: round(p.widthPt), h: round(p.heightPt), i: images };
      const links = p.links.map(toLink).filter((l): l is ReaderLink => l !== null);
      if (links.length > 0) page.l = links;
      return page;
    });

    // Page text in the HTML, within the budget.
    let textUntil = 0;
    let used = 0;
    for (const p of rows) {
      if (used + p.textLength > this.textBudget && textUntil > 0) break;
      used += p.textLength;
      textUntil = p.number;
    }
    const texts = textUntil > 0 ? await this.pageTexts(row.id, 1, textUntil) : [];

    const first = rows[0];
    const coverImages = first ? first.images.filter((image) => image.onDemand !== 'zoom').map((image) => ({ url: urls[0]![first.images.indexOf(image)] ?? this.assetUrl(image.key), width: image.width, height: image.height })) : [];
    const cover = coverImages.find((i) => i.width === 1024) ?? coverImages.filter((i) => i.width <= 1200).pop() ?? coverImages[coverImages.length - 1] ?? null;

    const firstText = texts[0]?.text.replace(/\s+/g, ' ').trim() ?? '';
    const description =
      row.description?.replace(/\s+/g, ' ').trim() ||
      (firstText ? (firstText.length > 160 ? `${firstText.slice(0, 157).replace(/\s+\S*$/, '')}…` : firstText) : '') ||
      `${row.name}: a flipbook of ${rows.length} page${rows.length === 1 ? '' : 's'}.`;

    const animation = settings.animation_type || 'flip';
    const data: ReaderData = {
      id: row.randomId,
      title: row.name,
      base: `/read/${row.randomId}`,
      url: this.readerUrl(row.randomId),
      img: prefix,
      pages,
      anim: animation,
      manim: settings.mobile_animation_type || animation,
      fsd: settings.fullscreen_enabled && settings.open_fullscreen_by_default,
      snd: settings.sound_enabled,
      wm: settings.watermark?.trim() || null,
      textUntil,
      ver: row.currentVersion,
    };
    const reader = readerDefaults(settings);
    if (reader.reading_direction === 'rtl') data.dir = 'rtl';
    if (reader.page_layout !== 'auto') data.layout = reader.page_layout;
    if (reader.autoplay_interval) data.auto = reader.autoplay_interval;
    const lead = await loadReaderLeadForm(this.db, row.id);
    if (lead) data.lead = lead;
    // Rendered from a catalog: the client asks for live prices and stock (content/live-items.ts).
    if (row.externalCatalogId !== null) data.live = true;
    return { data, cover, coverImages, outline: row.outline ?? [], description, texts, pageCount: rows.length, brand: await brandLoad };
  }

  private async pageTexts(bookId: number, from: number, to: number): Promise<{ page: number; text: string }[]> {
    const rows = await this.db
      .select({ page: bookPages.number, text: bookPages.plainText })
      .from(bookPages)
      .where(and(eq(bookPages.bookId, bookId), gte(bookPages.number, from), lte(bookPages.number, to)))
      .orderBy(asc(bookPages.number));
    return rows;
  }

  /**
   * The pages of an earlier version, for a reader opened on it before the book switched (`version`, from the reader's data;
   * docs/book-versions.md): it keeps getting the text of the pages it shows until it reopens on the new version. Null: the current pages.
   */
  private olderVersion(book: ReaderBook, version: number | undefined) {
    if (version === undefined || version === book.row.currentVersion) return null;
    return sql`(select ${bookVersions.id} from ${bookVersions} where ${bookVersions.bookId} = ${book.row.id} and ${bookVersions.number} = ${version})`;
  }

  /** Plain text of pages from..to (at most TEXT_PAGES_PER_REQUEST). */
  async text(book: ReaderBook, from: number, to: number, version?: number): Promise<TextResponse> {
    const first = Math.max(1, Math.floor(from));
    const last = Math.min(Math.floor(to), first + TEXT_PAGES_PER_REQUEST - 1, MAX_INTEGER);
    if (!(last >= first)) return { pages: [] };
    const older = this.olderVersion(book, version);
    if (older) {
      const pages = await this.db
        .select({ page: bookVersionPages.number, text: bookVersionPages.plainText })
        .from(bookVersionPages)
        .where(and(eq(bookVersionPages.versionId, older), gte(bookVersionPages.number, first), lte(bookVersionPages.number, last)))
        .orderBy(asc(bookVersionPages.number));
      return { pages };
    }
    return { pages: await this.pageTexts(book.row.id, first, last) };
  }

  /** The positioned text runs of page n (0..1 fractions of the page), for the selectable text layer; null past the end. */
  async textLayer(book: ReaderBook, page: number, version?: number): Promise<TextLayerResponse | null> {
    const older = this.olderVersion(book, version);
    const [row] = older
      ? await this.db.select({ text: bookVersionPages.text }).from(bookVersionPages)
        .where(and(eq(bookVersionPages.versionId, older), eq(bookVersionPages.number, page))).limit(1)
      : await this.db
        .select({ text: bookPages.text })
        .from(bookPages)
        .where(and(eq(bookPages.bookId, book.row.id), eq(bookPages.number, page)))
        .limit(1);
    if (!row) return null;
    return { page, items: row.text.filter((item) => item.text.trim()).map((item) => [round(item.x), round(item.y), round(item.width), round(item.height), item.text]) };
  }

  /** Pages whose text contains the query (case-insensitive, whitespace-insensitive), with snippets and highlight rects. */
  async search(book: ReaderBook, rawQuery: string, offset = 0): Promise<SearchResponse> {
    const query = normaliseForSearch(rawQuery).slice(0, SEARCH_MAX_QUERY);
    if (!query) return { query, total: 0, offset: 0, pages: [], hits: [] };
    const pattern = `%${escapeLike(query)}%`;
    const matching = sql`regexp_replace(${bookPages.plainText}, '\\s+', ' ', 'g') ilike ${pattern}`;
    const numbers = await this.db
      .select({ page: bookPages.number })
      .from(bookPages)
      .where(and(eq(bookPages.bookId, book.row.id), matching))
      .orderBy(asc(bookPages.number));
    const pages = numbers.map((n) => n.page);
    const shown = numbers.slice(offset, offset + SEARCH_HIT_LIMIT);
    if (shown.length === 0) return { query, total: numbers.length, offset, pages, hits: [] };
    const rows = await this.db
      .select({ page: bookPages.number, plain: bookPages.plainText, text: bookPages.text })
      .from(bookPages)
      .where(and(eq(bookPages.bookId, book.row.id), gte(bookPages.number, shown[0]!.page), lte(bookPages.number, shown[shown.length - 1]!.page), matching))
      .orderBy(asc(bookPages.number));
    const hits: SearchHit[] = rows.map((r) => ({ page: r.page, ...snippet(r.plain, query), rects: matchRects(r.text, query) }));
    return { query, total: numbers.length, offset, pages, hits };
  }

  /** The book's PDF as stored (downloadable books only); page ranges and encryption are the caller's (pdf-download.ts). */
  async openPdf(book: ReaderBook): Promise<PdfDownload | null> {
    if (!book.settings.downloadable || !book.row.pdfKey) return null;
    const object = await this.storage.get(book.row.pdfKey);
    if (!object) return null;
    return { body: object.body, size: object.info.size, filename: safeFilename(book.row.name) };
  }
}

/**
 * The pages a download offers when the reader is at `page`, by the book's
 * download mode: null for the whole document (`full`, the default); the page
 * for `single`; for `spread`, the spread as the reader lays it out (the cover
 * alone, then 2-3, 4-5, …). Null when `page` is not one of the book's pages.
 */
export function downloadPages(book: Pick<ReaderBook, 'row' | 'settings'>, page: number): [number, number] | null | 'no_such_page' {
  const mode = book.settings.download_mode ?? 'full';
  if (mode === 'full') return null;
  const count = book.row.pageCount;
  if (!Number.isInteger(page) || page < 1 || page > count) return 'no_such_page';
  if (mode === 'single' || page === 1) return [page, page];
  const left = page - (page % 2);
  return [left, Math.min(count, left + 1)];
}

