/**
 * Live prices and stock for books rendered from a catalog. The rendered page
 * keeps, per product area, the item key and what was drawn (price label, out
 * of stock or not). The reader asks, for the pages it shows, which products
 * now differ from their page: a new price, or out of stock now. It overlays
 * just those, so the book is never re-rendered for a price change.
 *
 *   GET /read/:randomId/items?pages=3,4
 *
 * Public like the reader (same gate: published books only, access lists and
 * embed domains apply), limited per client (ClientRateLimiter, 120 a minute),
 * and cached in process for a few seconds per book and page set, so a popular
 * book costs one query per interval however many readers turn its pages.
 */
import { and, eq, inArray } from 'drizzle-orm';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import type { ClientRateLimiter } from '../../platform/http/client-rate-limit.ts';
import type { ReaderGate } from '../reader/reader.gate.ts';
import { catalogItems } from '../catalogs/catalogs.tables.ts';
import { bookSources } from './content.tables.ts';
import { toRenderProduct } from './catalog-items-source.ts';
import { priceLabel, stockLabel } from './pdf-layout.ts';

export const LIVE_ITEMS_LIMIT = { bucket: 'reader:items', max: 120, windowMs: 60_000 };
export const LIVE_ITEMS_CACHE_MS = 5_000;
const MAX_PAGES_PER_REQUEST = 10;
const CACHE_ENTRIES = 2_000;

/** A product whose page is out of date: where it is, and what to show now. */
export interface LiveItem {
  page: number;
  key: string;
  x: number;
  y: number;
  width: number;
  height: number;
  /** The current price label when it differs from the page's, else null. */
  price: string | null;
  out_of_stock: boolean;
}

export class LiveItemsService {
  private readonly db: Db;
  private readonly cache = new Map<string, { at: number; items: LiveItem[] }>();
  private readonly cacheMs: number;

  constructor(deps: { db: Db; cacheMs?: number }) {
    this.db = deps.db;
    this.cacheMs = deps.cacheMs ?? LIVE_ITEMS_CACHE_MS;
  }

  async changes(bookId: number, workspaceId: number, pages: number[]): Promise<LiveItem[]> {
    const cacheKey = `${bookId}:${pages.join(',')}`;
    const cached = this.cache.get(cacheKey);
    if (cached && Date.now() - cached.at < this.cacheMs) return cached.items;

    const [source] = await this.db
      .select({ catalogId: bookSources.catalogId, areas: bookSources.productAreas })
      .from(bookSources)
      .where(and(eq(bookSources.bookId, bookId), eq(bookSources.kind, 'catalog')));
    const items: LiveItem[] = [];
    if (source?.catalogId) {
      const areas = source.areas.filter((a) => pages.includes(a.page));
      const keys = [...new Set(areas.map((a) => a.key))];
      const rows = keys.length
        ? await this.db.select().from(catalogItems).where(and(eq(catalogItems.catalogId, source.catalogId), eq(catalogItems.workspaceId, workspaceId), inArray(catalogItems.externalItemKey, keys)))
        : [];
      const current = new Map(rows.map((r) => [r.externalItemKey, toRenderProduct(r)]));
      for (const area of areas) {
        const item = current.get(area.key);
        // An item deleted from the catalog is no longer sold.
        const outOfStock = item ? stockLabel(item) === 'Out of stock' : true;
        const price = item ? priceLabel(item) : null;
        const priceChanged = item !== undefined && price !== null && price !== area.price;
        if (!priceChanged && outOfStock === area.outOfStock) continue;
        items.push({ page: area.page, key: area.key, x: area.x, y: area.y, width: area.width, height: area.height, price: priceChanged ? price : null, out_of_stock: outOfStock });
      }
    }
    if (this.cache.size >= CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(cacheKey, { at: Date.now(), items });
    return items;
  }
}

export const liveItemsRoutes: FastifyPluginAsync<{ service: LiveItemsService; gate: ReaderGate; limiter?: ClientRateLimiter }> = async (app, { service, gate, limiter }) => {
  app.get('/read/:randomId/items', { schema: { hide: true }, config: { public: true, unlimited: true } }, async (request: FastifyRequest, reply) => {
    if (limiter) {
      const wait = await limiter.hit([{ ...LIVE_ITEMS_LIMIT, subject: limiter.clientKey(request.ip) }]);
      if (wait !== null) throw ERRORS.rateLimited(wait);
    }
    const result = await gate.check({ randomId: (request.params as { randomId: string }).randomId, headers: request.headers, query: (request.query ?? {}) as Record<string, unknown>, ip: request.ip }, 'text');
    if (!result.ok) {
      if (result.status === 410) throw ERRORS.gone(result.message);
      if (result.status === 401) throw ERRORS.unauthenticated(result.message);
      if (result.status === 403) throw ERRORS.forbidden(result.message);
      throw ERRORS.notFound('Book');
    }
    const raw = String((request.query as { pages?: unknown }).pages ?? '');
    const pages = [...new Set(raw.split(',').filter(Boolean).map(Number))].sort((a, b) => a - b);
    if (pages.length === 0 || pages.length > MAX_PAGES_PER_REQUEST || pages.some((p) => !Number.isInteger(p) || p < 1 || p > 100_000)) {
      throw ERRORS.validation({ pages: [`Give 1-${MAX_PAGES_PER_REQUEST} page numbers, comma-separated.`] });
    }
    reply.header('cache-control', `private, max-age=${Math.round(LIVE_ITEMS_CACHE_MS / 1000)}`).header('x-robots-tag', 'noindex');
    return { items: await service.changes(result.book.row.id, result.book.row.workspaceId, pages) };
  });
};
