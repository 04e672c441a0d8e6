/**
 * Tracked links: named, shareable reader URLs (preview_url?tl=slug) whose
 * visits are attributed to them. Every query is confined to the caller's
 * workspace; another workspace's book or link is "not found".
 */
import { randomBytes } from 'node:crypto';
import { and, count, eq, inArray } from 'drizzle-orm';
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import { afterCursor, decodeCursor, orderOf, toPage, type KeysetSort } from '../../platform/http/pagination.ts';
import { findWorkspaceBook } from '../books/books.service.ts';
import type { BookRow } from '../books/books.tables.ts';
import { trackedLinks, viewEvents, type TrackedLinkRow } from './analytics.tables.ts';

export interface Caller {
  workspaceId: number;
}

export interface TrackedLinkRecord {
  id: number;
  book_id: string;
  name: string;
  slug: string;
  url: string;
  visits: number;
  created_at: string;
}

const SLUG = /^[a-z0-9-]{1,64}$/;

/** Newest first; ties (same millisecond) by id. */
const NEWEST_FIRST: KeysetSort = {
  name: '-created_at',
  key: trackedLinks.createdAt,
  cast: 'timestamptz',
  direction: 'desc',
  id: trackedLinks.id,
  valueOf: (row) => (row.createdAt as Date).toISOString(),
};

/** "Spring Sale 2026!" → "spring-sale-2026"; empty when the name has no ASCII letters or digits. */
export function slugFromName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
}

function randomSlug(length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(length)].map((b) => alphabet[b % alphabet.length]).join('');
}

export class TrackedLinksService {
  private readonly db: Db;
  private readonly publicBaseUrl: string;

  constructor(deps: { db: Db; publicBaseUrl: string }) {
    this.db = deps.db;
    this.publicBaseUrl = deps.publicBaseUrl;
  }

  private findBook(caller: Caller, randomId: string): Promise<BookRow> {
    return findWorkspaceBook(this.db, caller.workspaceId, randomId);
  }

  private toRecord(row: TrackedLinkRow, bookRandomId: string, visits: number): TrackedLinkRecord {
    return {
      id: row.id,
      book_id: bookRandomId,
      name: row.name,
      slug: row.slug,
      url: `${this.publicBaseUrl}/read/${bookRandomId}?tl=${row.slug}`,
      visits,
      created_at: row.createdAt.toISOString(),
    };
  }

  private async visits(bookId: number, linkIds: number[]): Promise<Map<number, number>> {
    if (linkIds.length === 0) return new Map();
    const rows = await this.db
      .select({ linkId: viewEvents.trackedLinkId, n: count() })
      .from(viewEvents)
      .where(and(eq(viewEvents.bookId, bookId), inArray(viewEvents.trackedLinkId, linkIds)))
      .groupBy(viewEvents.trackedLinkId);
    return new Map(rows.map((r) => [r.linkId!, r.n]));
  }

  async list(caller: Caller, bookRandomId: string, query: { cursor?: string; limit: number }) {
    const book = await this.findBook(caller, bookRandomId);
    const cursor = decodeCursor(NEWEST_FIRST, query.cursor);
    const rows = await this.db
      .select()
      .from(trackedLinks)
      .where(and(eq(trackedLinks.workspaceId, caller.workspaceId), eq(trackedLinks.bookId, book.id), afterCursor(NEWEST_FIRST, cursor)))
      .orderBy(...orderOf(NEWEST_FIRST))
      .limit(query.limit + 1);
    const page = toPage(NEWEST_FIRST, rows, query.limit, (r) => r.id);
    const visits = await this.visits(book.id, page.rows.map((r) => r.id));
    return { data: page.rows.map((r) => this.toRecord(r, book.randomId, visits.get(r.id) ?? 0)), meta: page.meta };
  }

  /** A given slug the book already uses is a 422 on `slug`; a slug made from the name gets a suffix instead. */
  async create(caller: Caller, bookRandomId: string, input: { name: string; slug?: string }): Promise<TrackedLinkRecord> {
    const book = await this.findBook(caller, bookRandomId);
    const name = input.name.trim();
    if (!name) throw ERRORS.validation({ name: ['The name field must not be blank.'] });
    if (input.slug !== undefined) {
      if (!SLUG.test(input.slug)) throw ERRORS.validation({ slug: ['The slug may hold 1-64 lower-case letters, digits and dashes.'] });
      const row = await this.insert(caller, book.id, name, input.slug);
      if (!row) throw ERRORS.validation({ slug: [`This book already has a tracked link with the slug "${input.slug}".`] });
      return this.toRecord(row, book.randomId, 0);
    }
    const base = slugFromName(name);
    const candidates = base ? [base, ...Array.from({ length: 4 }, () => `${base}-${randomSlug(4)}`)] : [];
    candidates.push(randomSlug(10));
    for (const slug of candidates) {
      const row = await this.insert(caller, book.id, name, slug);
      if (row) return this.toRecord(row, book.randomId, 0);
    }
    throw ERRORS.conflict('Could not find a free slug for this name; send one in `slug`.');
  }

  private async insert(caller: Caller, bookId: number, name: string, slug: string): Promise<TrackedLinkRow | null> {
    const [row] = await this.db
      .insert(trackedLinks)
      .values({ workspaceId: caller.workspaceId, bookId, name, slug })
      .onConflictDoNothing({ target: [trackedLinks.bookId, trackedLinks.slug] })
      .returning();
    return row ?? null;
  }

  /** Removes the link; visits it brought stay counted, without attribution (their tracked_link_id becomes null). */
  async delete(caller: Caller, bookRandomId: string, id: number): Promise<TrackedLinkRecord> {
    const book = await this.findBook(caller, bookRandomId);
    const visits = await this.visits(book.id, [id]);
    const [row] = await this.db
      .delete(trackedLinks)
      .where(and(eq(trackedLinks.id, id), eq(trackedLinks.bookId, book.id), eq(trackedLinks.workspaceId, caller.workspaceId)))
      .returning();
    if (!row) throw ERRORS.notFound('Tracked link');
    return this.toRecord(row, book.randomId, visits.get(id) ?? 0);
  }
}
