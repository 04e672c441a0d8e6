/**
 * The two per-book lists that decide who may read a book and where it may be
 * embedded: the access list (spec "subscribers": addresses and domains) and
 * the embed-domain allow-list. A book's `settings.eod_enabled` and
 * `settings.domains_enabled` are derived from them; they are written into the
 * book's stored settings (and its settings_revision) in the same transaction
 * as every list change, with the book row locked, so the flags, the lists and
 * the revision can never disagree.
 */
import { and, asc, count, eq, ilike, inArray, or, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import { findWorkspaceBook } from '../books/books.service.ts';
import { settingsRevision } from '../books/books.settings.ts';
import { books, type BookRow } from '../books/books.tables.ts';
import { recordEvent } from '../events/events.service.ts';
import { domainCandidates, hostOf, parseAccessEntry, type AccessEntry, type EntryType } from './access-entries.ts';
import { embedDomains, subscribers, type EmbedDomainRow, type SubscriberRow } from './access.tables.ts';

export interface Caller {
  workspaceId: number;
}

export interface BookTarget {
  workspaceId: number;
  bookId: number;
}

export interface ListFlags {
  eod_enabled: boolean;
  domains_enabled: boolean;
}

export interface SubscriberRecord {
  id: number;
  book_id: string;
  type: EntryType;
  /** The address, or for a domain entry the domain. */
  email: string;
  created_at: string;
}

export interface EmbedDomainRecord {
  id: string;
  domain: string;
  includes_subdomains: boolean;
  created_at: string;
}

/** The numeric key looks like this; v1 never accepts it. */
const NUMERIC_KEY = /^\d+$/;

function toSubscriber(row: SubscriberRow, bookRandomId: string): SubscriberRecord {
  return { id: row.id, book_id: bookRandomId, type: row.type as EntryType, email: row.value, created_at: row.createdAt.toISOString() };
}

function toEmbedDomain(row: EmbedDomainRow): EmbedDomainRecord {
  return { id: String(row.id), domain: row.domain, includes_subdomains: row.includesSubdomains, created_at: row.createdAt.toISOString() };
}

/**
 * Re-derives a book's list flags after a list change and stores them with a
 * new settings revision when they moved, with a `flipbook.updated` event
 * unless the caller records one for its whole change (`callerRecordsEvent`).
 * The caller's transaction must already hold the book row (lockBook).
 */
async function refreshFlags(tx: DbOrTx, book: BookRow, options: ListWriteOptions = {}): Promise<ListFlags> {
  const [[accessCount], [domainCount]] = await Promise.all([
    tx.select({ n: count() }).from(subscribers).where(eq(subscribers.bookId, book.id)),
    tx.select({ n: count() }).from(embedDomains).where(eq(embedDomains.bookId, book.id)),
  ]);
  const flags: ListFlags = { eod_enabled: accessCount!.n > 0, domains_enabled: domainCount!.n > 0 };
  const current = { eod_enabled: book.settings.eod_enabled ?? false, domains_enabled: book.settings.domains_enabled ?? false };
  if (current.eod_enabled !== flags.eod_enabled || current.domains_enabled !== flags.domains_enabled) {
    const settings = { ...book.settings, ...flags };
    await tx
      .update(books)
      .set({ settings, settingsRevision: settingsRevision({ ...book, settings }), updatedAt: new Date() })
      .where(eq(books.id, book.id));
    if (!options.callerRecordsEvent) {
      await recordEvent(tx, book.workspaceId, 'flipbook.updated', { book_id: book.randomId, fields: Object.keys(flags).filter((k) => current[k as keyof ListFlags] !== flags[k as keyof ListFlags]) });
    }
  }
  return flags;
}

export interface ListWriteOptions {
  /** The caller records one `flipbook.updated` for its whole change (a bulk settings item), so the list change adds none. */
  callerRecordsEvent?: boolean;
}

async function lockBook(tx: DbOrTx, target: BookTarget): Promise<BookRow> {
  const [row] = await tx.select().from(books).where(and(eq(books.id, target.bookId), eq(books.workspaceId, target.workspaceId))).for('update');
  if (!row) throw ERRORS.notFound('Book');
  return row;
}

/**
 * Replaces a book's access list with `entries` (addresses or domains, as
 * typed). For bulk settings (`eod_lists`); runs in the caller's transaction,
 * locks the book row and updates its settings and revision: re-read the
 * book afterwards.
 */
export async function replaceAccessList(tx: DbOrTx, target: BookTarget, entries: readonly string[], options: ListWriteOptions = {}): Promise<ListFlags> {
  const parsed = parseEntries(entries, 'eod_lists');
  const book = await lockBook(tx, target);
  await tx.delete(subscribers).where(eq(subscribers.bookId, book.id));
  if (parsed.length > 0) {
    await tx.insert(subscribers).values(parsed.map((e) => ({ workspaceId: book.workspaceId, bookId: book.id, type: e.type, value: e.value }))).onConflictDoNothing();
  }
  return refreshFlags(tx, book, options);
}

/** Empties a book's access list (bulk `eod_enabled: false`); same contract as replaceAccessList. */
export async function clearAccessList(tx: DbOrTx, target: BookTarget, options: ListWriteOptions = {}): Promise<ListFlags> {
  return replaceAccessList(tx, target, [], options);
}

function parseEntries(entries: readonly string[], field: string): AccessEntry[] {
  const parsed: AccessEntry[] = [];
  const errors: string[] = [];
  for (const entry of entries) {
    const result = parseAccessEntry(entry);
    if ('error' in result) errors.push(result.error);
    else if (!parsed.some((p) => p.type === result.type && p.value === result.value)) parsed.push(result);
  }
  if (errors.length > 0) throw ERRORS.validation({ [field]: errors.slice(0, 20) });
  return parsed;
}

/** One row of an import, in the order given. */
export interface ImportRow {
  /** 1-based position in `entries`. */
  row: number;
  input: string;
  /** added (or would be, in a dry run), listed (already there), repeated (an earlier row has it), invalid. */
  outcome: 'added' | 'listed' | 'repeated' | 'invalid';
  type?: EntryType;
  /** The entry as stored: the address, or the domain. */
  email?: string;
  /** The entry's id once it is on the list. */
  id?: number;
  /** Why a row was not added, in words. */
  message?: string;
}

export interface ListSubscribersQuery {
  page: number;
  perPage: number;
  filter?: string;
  type?: EntryType;
}

export class AccessListsService {
  private readonly db: Db;

  constructor(deps: { db: Db }) {
    this.db = deps.db;
  }

  /** Every access-list entry of the workspace, page by page; `filter` matches the entry or is a book's random_id. */
  async listSubscribers(caller: Caller, query: ListSubscribersQuery) {
    const conditions = [eq(subscribers.workspaceId, caller.workspaceId)];
    if (query.type) conditions.push(eq(subscribers.type, query.type));
    if (query.filter) {
      const pattern = `%${query.filter.trim().toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      conditions.push(or(ilike(subscribers.value, pattern), eq(books.randomId, query.filter.trim()))!);
    }
    const where = and(...conditions);
    const [rows, [total]] = await Promise.all([
      this.db
        .select({ entry: subscribers, bookRandomId: books.randomId })
        .from(subscribers)
        .innerJoin(books, eq(books.id, subscribers.bookId))
        .where(where)
        .orderBy(asc(subscribers.id))
        .limit(query.perPage)
        .offset((query.page - 1) * query.perPage),
      this.db.select({ n: count() }).from(subscribers).innerJoin(books, eq(books.id, subscribers.bookId)).where(where),
    ]);
    return {
      data: rows.map((r) => toSubscriber(r.entry, r.bookRandomId)),
      meta: { current_page: query.page, per_page: query.perPage, total: total!.n, last_page: Math.max(1, Math.ceil(total!.n / query.perPage)) },
    };
  }

  /**
   * Adds an entry to a book's access list. Adding one that is already there
   * changes nothing and answers it again (`created: false`).
   */
  async addSubscriber(caller: Caller, input: { book_id: string; email: string; type?: EntryType }) {
    if (NUMERIC_KEY.test(input.book_id)) {
      throw ERRORS.validation({ book_id: ["book_id is the book's random_id (as in preview_url); the numeric key is not accepted in v1."] });
    }
    const parsed = parseAccessEntry(input.email, input.type);
    if ('error' in parsed) throw ERRORS.validation({ email: [parsed.error] });
    return this.db.transaction(async (tx) => {
      const [book] = await tx.select().from(books).where(and(eq(books.workspaceId, caller.workspaceId), eq(books.randomId, input.book_id))).for('update');
      // book_id is a field of the body: an unknown book is a validation error, not a missing resource.
      if (!book) throw ERRORS.validation({ book_id: ['No book with this random_id in this workspace.'] });
      const [inserted] = await tx
        .insert(subscribers)
        .values({ workspaceId: caller.workspaceId, bookId: book.id, type: parsed.type, value: parsed.value })
        .onConflictDoNothing()
        .returning();
      const row = inserted ?? (await tx.select().from(subscribers).where(and(eq(subscribers.bookId, book.id), eq(subscribers.type, parsed.type), eq(subscribers.value, parsed.value))))[0]!;
      const flags = await refreshFlags(tx, book);
      const record = toSubscriber(row, book.randomId);
      if (inserted) await recordEvent(tx, caller.workspaceId, 'subscriber.added', { ...record });
      return { record, created: Boolean(inserted), flags };
    });
  }

  /**
   * Adds many entries to a book's access list at once (a pasted list, a CSV
   * file), each row judged apart: a row that is not an address or a domain,
   * or repeats an earlier row, is reported and skipped, and the rest are
   * added in one transaction. With `dryRun` nothing is written: the answer
   * is what the import would do, for a preview.
   */
  async importSubscribers(caller: Caller, input: { book_id: string; entries: readonly { email: string; type?: EntryType }[]; dry_run?: boolean }) {
    this.assertRandomId(input.book_id);
    const rows: ImportRow[] = [];
    const firstRow = new Map<string, number>();
    for (const [index, entry] of input.entries.entries()) {
      const row = index + 1;
      const parsed = parseAccessEntry(entry.email, entry.type);
      if ('error' in parsed) {
        rows.push({ row, input: entry.email, outcome: 'invalid', message: parsed.error });
        continue;
      }
      const key = `${parsed.type}:${parsed.value}`;
      const earlier = firstRow.get(key);
      if (earlier !== undefined) {
        rows.push({ row, input: entry.email, outcome: 'repeated', type: parsed.type, email: parsed.value, message: `Repeats row ${earlier}.` });
        continue;
      }
      firstRow.set(key, row);
      rows.push({ row, input: entry.email, outcome: 'added', type: parsed.type, email: parsed.value });
    }
    return this.db.transaction(async (tx) => {
      const book = await this.lockBookForBody(tx, caller, input.book_id);
      const wanted = rows.filter((r) => r.outcome === 'added');
      const existing = wanted.length === 0 ? [] : await tx
        .select()
        .from(subscribers)
        .where(and(eq(subscribers.bookId, book.id), inArray(subscribers.value, [...new Set(wanted.map((r) => r.email!))])));
      const listed = new Map(existing.map((e) => [`${e.type}:${e.value}`, e]));
      for (const r of wanted) {
        const found = listed.get(`${r.type}:${r.email}`);
        if (found) Object.assign(r, { outcome: 'listed', id: found.id, message: 'Already on the access list.' });
      }
      const fresh = rows.filter((r) => r.outcome === 'added');
      if (!input.dry_run && fresh.length > 0) {
        const inserted = await tx
          .insert(subscribers)
          .values(fresh.map((r) => ({ workspaceId: caller.workspaceId, bookId: book.id, type: r.type!, value: r.email! })))
          .onConflictDoNothing()
          .returning();
        const ids = new Map(inserted.map((e) => [`${e.type}:${e.value}`, e]));
        for (const r of fresh) {
          const row = ids.get(`${r.type}:${r.email}`);
          if (!row) continue;
          r.id = row.id;
          await recordEvent(tx, caller.workspaceId, 'subscriber.added', { ...toSubscriber(row, book.randomId) });
        }
      }
      const flags = input.dry_run ? { eod_enabled: book.settings.eod_enabled ?? false } : await refreshFlags(tx, book);
      const counts = { added: 0, listed: 0, repeated: 0, invalid: 0 };
      for (const r of rows) counts[r.outcome] += 1;
      return { rows, counts, eod_enabled: flags.eod_enabled };
    });
  }

  /** Empties a book's access list: anyone with the link may read it again. */
  async clearSubscribers(caller: Caller, bookRandomId: string) {
    this.assertRandomId(bookRandomId);
    return this.db.transaction(async (tx) => {
      const book = await this.lockBookForBody(tx, caller, bookRandomId);
      const removed = await tx.delete(subscribers).where(eq(subscribers.bookId, book.id)).returning({ id: subscribers.id });
      const flags = await refreshFlags(tx, book);
      return { removed: removed.length, eod_enabled: flags.eod_enabled };
    });
  }

  private assertRandomId(bookId: string): void {
    if (NUMERIC_KEY.test(bookId)) {
      throw ERRORS.validation({ book_id: ["book_id is the book's random_id (as in preview_url); the numeric key is not accepted in v1."] });
    }
  }

  /** book_id is a field of the body: an unknown book is a validation error, not a missing resource. */
  private async lockBookForBody(tx: DbOrTx, caller: Caller, randomId: string): Promise<BookRow> {
    const [book] = await tx.select().from(books).where(and(eq(books.workspaceId, caller.workspaceId), eq(books.randomId, randomId))).for('update');
    if (!book) throw ERRORS.validation({ book_id: ['No book with this random_id in this workspace.'] });
    return book;
  }

  async removeSubscriber(caller: Caller, id: number) {
    return this.db.transaction(async (tx) => {
      const [found] = await tx.select().from(subscribers).where(and(eq(subscribers.id, id), eq(subscribers.workspaceId, caller.workspaceId)));
      if (!found) throw ERRORS.notFound('Subscriber');
      const book = await lockBook(tx, { workspaceId: caller.workspaceId, bookId: found.bookId });
      const [removed] = await tx.delete(subscribers).where(eq(subscribers.id, id)).returning();
      if (!removed) throw ERRORS.notFound('Subscriber');
      const flags = await refreshFlags(tx, book);
      return { record: toSubscriber(removed, book.randomId), flags };
    });
  }

  async listEmbedDomains(caller: Caller, randomId: string) {
    const book = await findWorkspaceBook(this.db, caller.workspaceId, randomId);
    const rows = await this.db.select().from(embedDomains).where(eq(embedDomains.bookId, book.id)).orderBy(asc(embedDomains.id));
    return { data: rows.map(toEmbedDomain), meta: { total: rows.length, domains_enabled: rows.length > 0 } };
  }

  /** Adds a host (a pasted URL is reduced to its host); an existing one answers again unchanged. */
  async addEmbedDomain(caller: Caller, randomId: string, domain: string) {
    const host = hostOf(domain);
    if (!host) throw ERRORS.validation({ domain: [`"${domain.slice(0, 80)}" is not a host name or URL (for example shop.example.com).`] });
    return this.db.transaction(async (tx) => {
      const book = await findWorkspaceBook(tx, caller.workspaceId, randomId, { lock: true });
      const [inserted] = await tx.insert(embedDomains).values({ workspaceId: caller.workspaceId, bookId: book.id, domain: host }).onConflictDoNothing().returning();
      const row = inserted ?? (await tx.select().from(embedDomains).where(and(eq(embedDomains.bookId, book.id), eq(embedDomains.domain, host))))[0]!;
      const flags = await refreshFlags(tx, book);
      return { record: toEmbedDomain(row), created: Boolean(inserted), flags };
    });
  }

  async removeEmbedDomain(caller: Caller, randomId: string, id: number) {
    return this.db.transaction(async (tx) => {
      const book = await findWorkspaceBook(tx, caller.workspaceId, randomId, { lock: true });
      const [removed] = await tx.delete(embedDomains).where(and(eq(embedDomains.id, id), eq(embedDomains.bookId, book.id))).returning();
      if (!removed) throw ERRORS.notFound('Embed domain');
      const flags = await refreshFlags(tx, book);
      return { record: toEmbedDomain(removed), flags };
    });
  }

  // ---- for the reader's access policy -------------------------------------------------

  /** Whether an address may read a book: it, its domain or a parent domain is on the list. */
  async admits(bookId: number, email: string): Promise<boolean> {
    const domains = domainCandidates(email);
    const [row] = await this.db
      .select({ id: subscribers.id })
      .from(subscribers)
      .where(and(
        eq(subscribers.bookId, bookId),
        or(
          and(eq(subscribers.type, 'email'), eq(subscribers.value, email)),
          domains.length > 0 ? and(eq(subscribers.type, 'domain'), inArray(subscribers.value, domains)) : sql`false`,
        ),
      ))
      .limit(1);
    return Boolean(row);
  }

  async embedHosts(bookId: number): Promise<string[]> {
    const rows = await this.db.select({ domain: embedDomains.domain }).from(embedDomains).where(eq(embedDomains.bookId, bookId));
    return rows.map((r) => r.domain);
  }
}
