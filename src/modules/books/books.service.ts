/**
 * Books of a workspace: list, read, update, delete, and their pages. Every
 * query is confined to the caller's workspace; another workspace's book is
 * "not found" exactly like a missing one.
 */
import { and, asc, eq, gt, ilike, inArray, sql, type SQL } from 'drizzle-orm';
import type { Config } from '../../platform/config/env.ts';
import type { Db, DbOrTx } from '../../platform/db/database.ts';
import { MAX_INTEGER } from '../../platform/db/columns.ts';
import { ERRORS } from '../../platform/errors.ts';
import type { JobQueue } from '../../platform/jobs/queue.ts';
import { afterCursor, decodeCursor, orderOf, toPage, type KeysetSort } from '../../platform/http/pagination.ts';
import type { Storage } from '../../platform/storage/storage.ts';
import { recordEvent } from '../events/events.service.ts';
import { SETTING_FIELDS, applySettingsChange, currentRevision, toBookRecord, type SettingsChange, type AccessListState, type BookRecord, type BookUrls } from './books.settings.ts';
import { bookPages, bookVersions, books, uploadBatches, type BookRow } from './books.tables.ts';
import type { OutlineEntry } from '../conversion/conversion.types.ts';

export interface Caller {
  workspaceId: number;
  plan: string;
}

export const BOOK_SORTS = ['name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at', 'status', '-status'] as const;
export type BookSort = (typeof BOOK_SORTS)[number];

const SORT_KEYS: Record<string, Omit<KeysetSort, 'name' | 'direction' | 'id'>> = {
  name: { key: sql`lower(${books.name})`, cast: 'text', valueOf: (r) => String(r.name).toLowerCase() },
  created_at: { key: books.createdAt, cast: 'timestamptz', valueOf: (r) => (r.createdAt as Date).toISOString() },
  updated_at: { key: books.updatedAt, cast: 'timestamptz', valueOf: (r) => (r.updatedAt as Date).toISOString() },
  status: { key: sql`coalesce(${books.status}, '')`, cast: 'text', valueOf: (r) => (r.status as string | null) ?? '' },
};

function sortOf(sort: BookSort): KeysetSort {
  const field = sort.replace(/^-/, '');
  return { name: sort, direction: sort.startsWith('-') ? 'desc' : 'asc', id: books.id, ...SORT_KEYS[field]! };
}

export interface ListBooksQuery {
  status?: string;
  name?: string;
  sort?: BookSort;
  cursor?: string;
  limit: number;
}

export interface UpdateBookInput {
  status: 'draft' | 'schedule' | 'publish';
  title?: string;
  slug?: string;
  description?: string;
  pdf_password?: string;
  expires_at?: string;
  published_date?: string;
  [setting: string]: unknown;
}

/** The storage key of a page image. Renditions get a new id per conversion, so keys never change meaning. */
export function pageImageKey(randomId: string, renditionId: string, page: number, width: number, format: string): string {
  return `books/${randomId}/${renditionId}/p${page}-w${width}.${format}`;
}

export function bookPrefix(randomId: string): string {
  return `books/${randomId}/`;
}

/**
 * A workspace's book by its random_id, for every area that takes `{book}`:
 * another workspace's book is "not found" exactly like a missing one. `lock`
 * takes the row lock for the rest of the transaction `db` is.
 */
export async function findWorkspaceBook(db: DbOrTx, workspaceId: number, randomId: string, options: { lock?: boolean } = {}): Promise<BookRow> {
  const query = db.select().from(books).where(and(eq(books.workspaceId, workspaceId), eq(books.randomId, randomId)));
  const [row] = options.lock ? await query.for('update') : await query;
  if (!row) throw ERRORS.notFound('Book');
  return row;
}

export class BooksService {
  private readonly db: Db;
  private readonly storage: Storage;
  private readonly queue: JobQueue;
  readonly urls: BookUrls;
  readonly #serviceAssetUrl: (key: string) => string;

  constructor(deps: { db: Db; storage: Storage; queue: JobQueue; config: Readonly<Config> }) {
    this.db = deps.db;
    this.storage = deps.storage;
    this.queue = deps.queue;
    const base = deps.config.publicBaseUrl;
    this.urls = {
      previewUrl: (randomId) => `${base}/read/${randomId}`,
      assetUrl: (key) => deps.storage.directUrl(key) ?? `${base}/assets/${key}`,
    };
    this.#serviceAssetUrl = (key) => `${base}/assets/${key}`;
  }

  /** Access-list state of books: derived flags the access area keeps in the stored settings. */
  private accessState(rows: BookRow[]): Map<number, AccessListState> {
    return new Map(rows.map((row) => [row.id, { eodEnabled: row.settings.eod_enabled ?? false, domainsEnabled: row.settings.domains_enabled ?? false }]));
  }

  private async coverKeys(bookRows: BookRow[]): Promise<Map<number, string>> {
    const ready = bookRows.filter((b) => b.renditionId);
    if (ready.length === 0) return new Map();
    const covers = await this.db
      .select({ bookId: bookPages.bookId, images: bookPages.images })
      .from(bookPages)
      .where(and(inArray(bookPages.bookId, ready.map((b) => b.id)), eq(bookPages.number, 1)));
    return new Map(covers.map((c) => [c.bookId, c.images[0]?.key]).filter((e): e is [number, string] => Boolean(e[1])));
  }

  async toRecords(caller: Caller, rows: BookRow[]): Promise<BookRecord[]> {
    const access = this.accessState(rows);
    const covers = await this.coverKeys(rows);
    return rows.map((row) =>
      toBookRecord(row, { plan: caller.plan, urls: this.urls, access: access.get(row.id)!, coverKey: covers.get(row.id) ?? null }),
    );
  }

  /** `lock` takes the row lock (SELECT … FOR UPDATE) for the rest of the transaction `db` is. */
  async findRow(caller: Caller, randomId: string, db: DbOrTx = this.db, options: { lock?: boolean } = {}): Promise<BookRow> {
    return findWorkspaceBook(db, caller.workspaceId, randomId, options);
  }

  async get(caller: Caller, randomId: string): Promise<BookRecord> {
    const [record] = await this.toRecords(caller, [await this.findRow(caller, randomId)]);
    return record!;
  }

  async list(caller: Caller, query: ListBooksQuery): Promise<{ data: BookRecord[]; meta: { next_cursor: string | null; has_more: boolean } }> {
    const sort = sortOf(query.sort ?? '-created_at');
    const conditions: (SQL | undefined)[] = [eq(books.workspaceId, caller.workspaceId), afterCursor(sort, decodeCursor(sort, query.cursor))];
    if (query.status) conditions.push(statusCondition(query.status));
    if (query.name) conditions.push(ilike(books.name, `%${query.name.replace(/[\\%_]/g, (c) => `\\${c}`)}%`));
    const rows = await this.db.select().from(books).where(and(...conditions)).orderBy(...orderOf(sort)).limit(query.limit + 1);
    const page = toPage(sort, rows, query.limit, (r) => r.id);
    return { data: await this.toRecords(caller, page.rows), meta: page.meta };
  }

  async update(caller: Caller, randomId: string, input: UpdateBookInput): Promise<BookRecord> {
    const now = new Date();
    const row = await this.db.transaction(async (tx) => {
      // Locked until commit: a bulk settings item on the same book waits, so neither write is lost or mixed.
      const current = await this.findRow(caller, randomId, tx, { lock: true });
      if (input.settings_revision !== undefined && input.settings_revision !== currentRevision(current)) {
        throw ERRORS.conflict('This book\'s settings were changed meanwhile, elsewhere: read the book again and apply your change over the new settings.', {
          settings_revision: ['The settings_revision sent is not the book\'s revision now.'],
          current_settings_revision: [currentRevision(current)],
        });
      }
      const settingsChange: SettingsChange = { settings: {} };
      for (const field of Object.keys(SETTING_FIELDS) as (keyof typeof SETTING_FIELDS)[]) settingsChange.settings[field] = input[field];
      settingsChange.title = input.title;
      settingsChange.description = input.description;
      settingsChange.pdfPassword = input.pdf_password;
      const group = applySettingsChange(current, settingsChange);
      const changes: Partial<typeof books.$inferInsert> = { ...group, updatedAt: now };
      if (input.slug !== undefined) changes.slug = input.slug;
      if (input.expires_at !== undefined) changes.expiresAt = new Date(input.expires_at);
      if (input.published_date !== undefined) changes.publishedDate = new Date(input.published_date);

      const expiresAt = changes.expiresAt ?? current.expiresAt;
      const publishedDate = changes.publishedDate ?? current.publishedDate;
      if (input.status !== 'draft' && expiresAt && expiresAt <= now) {
        throw ERRORS.validation({ expires_at: ['The expiry has passed: set a later expires_at to publish or schedule this book.'] });
      }
      if (input.status === 'schedule') {
        if (!publishedDate || publishedDate <= now) {
          throw ERRORS.validation({ published_date: ['Scheduling needs a published_date in the future.'] });
        }
      }
      if (input.status === 'publish' && current.status !== 'publish') {
        changes.publishedDate = input.published_date ? new Date(input.published_date) : now;
      }
      changes.status = input.status;
      if (expiresAt && expiresAt > now) changes.unpublishedAt = null;

      const [updated] = await tx.update(books).set(changes).where(eq(books.id, current.id)).returning();
      if (updated!.status === 'schedule') {
        await this.queue.send('books.publish-scheduled', { bookId: updated!.id }, { tx, startAfter: updated!.publishedDate! });
      }
      if (updated!.expiresAt && updated!.expiresAt > now && updated!.status !== 'draft') {
        await this.queue.send('books.expire', { bookId: updated!.id }, { tx, startAfter: updated!.expiresAt });
      }
      await recordEvent(tx, caller.workspaceId, 'flipbook.updated', { book_id: updated!.randomId, fields: Object.keys(input).filter((field) => field !== 'settings_revision') });
      return updated!;
    });
    const [record] = await this.toRecords(caller, [row]);
    return record!;
  }

  /** Removes the book, its pages and every file generated for it; running conversion stops. */
  async delete(caller: Caller, randomId: string): Promise<void> {
    const row = await this.db.transaction(async (tx) => {
      const current = await this.findRow(caller, randomId, tx);
      // The first upload's batch and those of new versions still converting stop with the book.
      const versionBatches = await tx.select({ batchId: bookVersions.batchId }).from(bookVersions).where(eq(bookVersions.bookId, current.id));
      const batchIds = [current.batchId, ...versionBatches.map((v) => v.batchId)].filter((id): id is string => Boolean(id));
      await tx.delete(books).where(eq(books.id, current.id));
      if (batchIds.length > 0) {
        await tx
          .update(uploadBatches)
          .set({ status: 'cancelled', finishedAt: new Date(), updatedAt: new Date(), error: 'The book was deleted.' })
          .where(and(inArray(uploadBatches.id, batchIds), inArray(uploadBatches.status, ['queued', 'processing'])));
      }
      await recordEvent(tx, caller.workspaceId, 'flipbook.deleted', { book_id: current.randomId });
      return current;
    });
    await this.storage.deletePrefix(bookPrefix(row.randomId));
  }

  async pages(caller: Caller, randomId: string, query: { cursor?: string; limit: number }) {
    const book = await this.findRow(caller, randomId);
    const after = query.cursor ? decodePageCursor(query.cursor) : 0;
    const rows = await this.db
      .select()
      .from(bookPages)
      .where(and(eq(bookPages.bookId, book.id), gt(bookPages.number, after)))
      .orderBy(asc(bookPages.number))
      .limit(query.limit + 1);
    const hasMore = rows.length > query.limit;
    const page = rows.slice(0, query.limit);
    return {
      data: page.map((p) => ({
        number: p.number,
        width: p.widthPt,
        height: p.heightPt,
        // Zoom renditions are the reader's; an on-demand image is served by the service, which draws it on first request.
        images: p.images.filter((i) => i.onDemand !== 'zoom').map((i) => ({ width: i.width, height: i.height, url: i.onDemand ? this.#serviceAssetUrl(i.key) : this.urls.assetUrl(i.key) })),
        text: p.text,
        links: p.links,
        drawn: p.drawn,
        error: p.error,
        warnings: p.warnings,
      })),
      meta: { has_more: hasMore, next_cursor: hasMore ? Buffer.from(`page:${page[page.length - 1]!.number}`).toString('base64url') : null },
    };
  }

  /** The document's outline as stored by the conversion (entries open a page or an external `url`). */
  async outline(caller: Caller, randomId: string): Promise<OutlineEntry[]> {
    return (await this.findRow(caller, randomId)).outline ?? [];
  }

  /** Job: the scheduled publication time has come. */
  async publishScheduled(bookId: number): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .update(books)
        .set({ status: 'publish', updatedAt: new Date() })
        .where(and(eq(books.id, bookId), eq(books.status, 'schedule'), sql`${books.publishedDate} <= now()`))
        .returning();
      if (row) await recordEvent(tx, row.workspaceId, 'flipbook.updated', { book_id: row.randomId, fields: ['status'] });
      return Boolean(row);
    });
  }

  /** Job: the customer's expiry has passed: hard-unpublish (the reader already refuses it from that instant). */
  async expire(bookId: number): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx
        .update(books)
        .set({ status: 'draft', unpublishedAt: sql`now()`, updatedAt: new Date() })
        .where(and(eq(books.id, bookId), inArray(books.status, ['publish', 'schedule']), sql`${books.expiresAt} <= now()`))
        .returning();
      if (row) await recordEvent(tx, row.workspaceId, 'flipbook.updated', { book_id: row.randomId, fields: ['status'], reason: 'expired' });
      return Boolean(row);
    });
  }

  /** Admin: billing's end of paid access (read-only through the API). */
  async setBillingExpiry(randomId: string, at: Date | null): Promise<{ random_id: string; billing_expires_at: string | null }> {
    const [row] = await this.db.update(books).set({ billingExpiresAt: at, updatedAt: new Date() }).where(eq(books.randomId, randomId)).returning();
    if (!row) throw ERRORS.notFound('Book');
    return { random_id: row.randomId, billing_expires_at: row.billingExpiresAt?.toISOString() ?? null };
  }
}

/** Filters on the status a reader sees now, so an expired or due book lists under its real status. */
function statusCondition(status: string): SQL {
  const expired = sql`(${books.expiresAt} is not null and ${books.expiresAt} <= now())`;
  const due = sql`(${books.publishedDate} is not null and ${books.publishedDate} <= now())`;
  switch (status) {
    case 'publish':
      return sql`not ${expired} and (${books.status} = 'publish' or (${books.status} = 'schedule' and ${due}))`;
    case 'schedule':
      return sql`not ${expired} and ${books.status} = 'schedule' and not ${due}`;
    default:
      return sql`(${books.status} = 'draft' or ${expired})`;
  }
}

function decodePageCursor(cursor: string): number {
  const match = /^page:(\d{1,10})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  // A page number past the integer column's range would fail the query: no cursor of ours holds one.
  if (!match || Number(match[1]) > MAX_INTEGER) throw ERRORS.validation({ cursor: ['The cursor is invalid; use meta.next_cursor of the previous page unchanged.'] });
  return Number(match[1]);
}
