/**
 * A book's versions (issue 29, docs/book-versions.md): what happens in the
 * database when a version becomes current, and which versions' files the
 * retention limit removes. Shared by the conversion job (a new version is
 * ready) and the versions service (a restore).
 *
 * The current version lives where it always did: its pages in book_pages and
 * its assets (rendition, source, PDF, outline, cover) on the book row, so the
 * reader, search, the pages API and the thumbnail need no change. Every other
 * version keeps its pages in book_version_pages and its files under its own
 * rendition prefix. A switch swaps the two in one transaction, under the
 * book's row lock: readers see the old version or the new one, never a mix.
 */
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../platform/db/database.ts';
import { recordEvent } from '../events/events.service.ts';
import { bookPrefix } from './books.service.ts';
import { bookVersions, books, uploadBatches, type BookRow, type VersionRow } from './books.tables.ts';

export const DEFAULT_VERSIONS_KEPT = 10;

const PAGE_COLUMNS = sql.raw('"number", "width_pt", "height_pt", "images", "text", "links", "error", "warnings", "plain_text"');

/** The current version's state as the book row holds it (the version row of the current version may lag behind it). */
function currentState(book: BookRow) {
  return {
    status: book.pageImagesStatus === 'ready' ? 'ready' : book.pageImagesStatus === 'failed' ? 'failed' : 'converting',
    pageCount: book.pageCount,
    renditionId: book.renditionId,
    pdfKey: book.pdfKey,
    sourceKey: book.sourceKey,
    sourceFormat: book.sourceFormat,
    sourcePassword: book.sourcePassword,
    outline: book.outline,
    coverWidthPt: book.coverWidthPt,
    coverHeightPt: book.coverHeightPt,
  };
}

/**
 * The row of the book's current version, made from the book when it has none
 * yet (books made before versions existed, or by an upload or content render:
 * their first version is recorded the first time it is needed).
 */
export async function ensureCurrentVersion(tx: DbOrTx, book: BookRow): Promise<VersionRow> {
  const [existing] = await tx.select().from(bookVersions).where(and(eq(bookVersions.bookId, book.id), eq(bookVersions.number, book.currentVersion)));
  if (existing) return existing;
  const [batch] = book.batchId ? await tx.select({ filename: uploadBatches.originalFilename }).from(uploadBatches).where(eq(uploadBatches.id, book.batchId)) : [];
  const [made] = await tx
    .insert(bookVersions)
    .values({
      bookId: book.id, number: book.currentVersion, batchId: book.batchId, createdBy: null, sourceFilename: batch?.filename ?? null,
      createdAt: book.createdAt, publishedAt: book.createdAt, ...currentState(book),
    })
    .onConflictDoNothing()
    .returning();
  if (made) return made;
  const [raced] = await tx.select().from(bookVersions).where(and(eq(bookVersions.bookId, book.id), eq(bookVersions.number, book.currentVersion)));
  return raced!;
}

/** The page count of one version of the book (the book's own while it is current; 0 for a number it does not have). */
export async function versionPageCount(tx: DbOrTx, book: BookRow, number: number): Promise<number> {
  if (number === book.currentVersion) return book.pageCount;
  const [row] = await tx.select({ pageCount: bookVersions.pageCount }).from(bookVersions).where(and(eq(bookVersions.bookId, book.id), eq(bookVersions.number, number)));
  return row?.pageCount ?? 0;
}

export interface PublishOutcome {
  published: boolean;
  /** Storage prefixes and keys of versions the retention limit expired: to delete after the commit. */
  removeKeys: string[];
}

/**
 * Makes `version` (ready, with its pages in book_version_pages) the book's
 * current version. `tx` must hold the book's row lock (SELECT … FOR UPDATE),
 * taken before `book` was read.
 */
export async function publishVersion(
  tx: DbOrTx,
  book: BookRow,
  version: VersionRow,
  options: { reason: 'upload' | 'restore'; kept: number },
): Promise<PublishOutcome> {
  const previous = await ensureCurrentVersion(tx, book);
  if (previous.id === version.id) return { published: false, removeKeys: [] };
  // The outgoing version keeps its pages and assets, as they are now, in its own row.
  await tx.update(bookVersions).set(currentState(book)).where(eq(bookVersions.id, previous.id));
  await tx.execute(sql`delete from book_version_pages where version_id = ${previous.id}`);
  await tx.execute(sql`insert into book_version_pages ("version_id", ${PAGE_COLUMNS}) select ${previous.id}, ${PAGE_COLUMNS} from book_pages where book_id = ${book.id}`);
  await tx.execute(sql`delete from book_pages where book_id = ${book.id}`);
  await tx.execute(sql`insert into book_pages ("book_id", ${PAGE_COLUMNS}) select ${book.id}, ${PAGE_COLUMNS} from book_version_pages where version_id = ${version.id}`);
  await tx.execute(sql`delete from book_version_pages where version_id = ${version.id}`);
  const now = new Date();
  const [updated] = await tx
    .update(books)
    .set({
      currentVersion: version.number,
      pageImagesStatus: 'ready',
      pageCount: version.pageCount,
      renditionId: version.renditionId,
      pdfKey: version.pdfKey,
      sourceKey: version.sourceKey,
      sourceFormat: version.sourceFormat,
      sourcePassword: version.sourcePassword,
      outline: version.outline,
      coverWidthPt: version.coverWidthPt,
      coverHeightPt: version.coverHeightPt,
      updatedAt: now,
    })
    .where(eq(books.id, book.id))
    .returning();
  await tx.update(bookVersions).set({ status: 'ready', publishedAt: now }).where(eq(bookVersions.id, version.id));
  await recordEvent(tx, book.workspaceId, 'flipbook.version_published', {
    book_id: book.randomId, version: version.number, previous_version: previous.number, page_count: version.pageCount, reason: options.reason,
  });
  const removeKeys = await expireVersions(tx, updated!, options.kept);
  return { published: true, removeKeys };
}

/**
 * Keeps the newest `kept` versions (by number) and the current one; the
 * others that still have files are marked expired and their pages dropped.
 * Versions still converting are never expired (they are the newest). Returns
 * what to delete from storage once the transaction commits: a restore takes
 * the same row lock and refuses an expired version, so no restore can start
 * from files being deleted.
 */
export async function expireVersions(tx: DbOrTx, book: BookRow, kept: number): Promise<string[]> {
  const all = await tx.select().from(bookVersions).where(eq(bookVersions.bookId, book.id)).orderBy(desc(bookVersions.number));
  const keep = new Set(all.slice(0, Math.max(1, kept)).map((v) => v.id));
  const expire = all.filter((v) => !keep.has(v.id) && v.number !== book.currentVersion && ['ready', 'failed', 'cancelled'].includes(v.status));
  if (expire.length === 0) return [];
  await tx.update(bookVersions).set({ status: 'expired', expiredAt: new Date() }).where(inArray(bookVersions.id, expire.map((v) => v.id)));
  await tx.execute(sql`delete from book_version_pages where version_id in (${sql.join(expire.map((v) => sql`${v.id}`), sql`, `)})`);
  // Files another kept version (or the book) still uses stay: the first version's source is shared by nothing else today, but be exact.
  const inUse = new Set<string>();
  for (const v of all) if (!expire.includes(v)) for (const key of [v.sourceKey, v.pdfKey]) if (key) inUse.add(key);
  for (const key of [book.sourceKey, book.pdfKey]) if (key) inUse.add(key);
  const keys: string[] = [];
  for (const v of expire) {
    if (v.renditionId && v.renditionId !== book.renditionId) keys.push(`${bookPrefix(book.randomId)}${v.renditionId}/`);
    for (const key of [v.sourceKey, v.pdfKey]) if (key && !inUse.has(key) && !key.startsWith(`${bookPrefix(book.randomId)}${v.renditionId}/`)) keys.push(key);
  }
  return keys;
}
