/**
 * A book's versions through the API (issue 29, docs/book-versions.md): a new
 * document for an existing book, the list, and a restore. The database side
 * of a switch is book-versions.ts; the conversion is the upload's job.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { and, desc, eq } from 'drizzle-orm';
import type { AuthContext } from '../../platform/auth/auth-context.ts';
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import type { JobQueue } from '../../platform/jobs/queue.ts';
import type { Storage } from '../../platform/storage/storage.ts';
import { ensureCurrentVersion, publishVersion } from './book-versions.ts';
import { bookPrefix, findWorkspaceBook } from './books.service.ts';
import { bookVersions, books, uploadBatches, type BookRow, type VersionAuthor, type VersionRow } from './books.tables.ts';
import type { UploadInput, UploadsService } from './uploads.service.ts';

export interface VersionRecord {
  number: number;
  status: string;
  current: boolean;
  created_at: string;
  created_by: VersionAuthor | null;
  source_filename: string | null;
  source_format: string | null;
  page_count: number;
  batch_id: string | null;
  published_at: string | null;
}

function authorOf(caller: AuthContext): VersionAuthor {
  if (caller.oauth) return { type: 'oauth', name: caller.oauth.appName };
  if (caller.person) return { type: 'person', name: caller.person.email };
  if (caller.keyPrefix) return { type: 'api_key', name: caller.keyPrefix };
  return { type: 'system', name: null };
}

export class BookVersionsService {
  readonly #db: Db;
  readonly #storage: Storage;
  readonly #queue: JobQueue;
  readonly #uploads: UploadsService;
  readonly #kept: number;

  constructor(deps: { db: Db; storage: Storage; queue: JobQueue; uploads: UploadsService; kept: number }) {
    this.#db = deps.db;
    this.#storage = deps.storage;
    this.#queue = deps.queue;
    this.#uploads = deps.uploads;
    this.#kept = deps.kept;
  }

  /**
   * Stores a new document for the book and queues its conversion as the
   * book's next version; answers the batch. The book is unchanged until that
   * version is completely converted.
   */
  async upload(caller: AuthContext, randomId: string, input: Omit<UploadInput, 'status' | 'autoLinksEnabled'>) {
    // 404 before the file is looked at: another workspace's book answers like a missing one.
    const existing = await findWorkspaceBook(this.#db, caller.workspaceId, randomId);
    if (existing.pageImagesStatus === 'processing') {
      throw ERRORS.conflict('The book is still converting its first document; upload a new version once it is ready (or failed).');
    }
    const { size, type, filename } = await this.#uploads.check({ ...input, filePath: input.filePath, filename: input.filename });
    const batchId = `bat_${randomBytes(12).toString('base64url')}`;
    const sourceKey = `${bookPrefix(randomId)}source/${batchId}.${type.format}`;
    await this.#storage.put(sourceKey, createReadStream(input.filePath), { contentType: type.mime });
    try {
      await this.#db.transaction(async (tx) => {
        // The row lock numbers concurrent uploads in the order they are received.
        const book = await findWorkspaceBook(tx, caller.workspaceId, randomId, { lock: true });
        await ensureCurrentVersion(tx, book);
        const [last] = await tx.select({ number: bookVersions.number }).from(bookVersions).where(eq(bookVersions.bookId, book.id)).orderBy(desc(bookVersions.number)).limit(1);
        await tx.insert(uploadBatches).values({
          id: batchId, workspaceId: caller.workspaceId, status: 'queued', originalFilename: filename.slice(0, 255), sourceFormat: type.format, sourceBytes: size,
        });
        await tx.insert(bookVersions).values({
          bookId: book.id, number: Math.max(book.currentVersion, last?.number ?? 1) + 1, batchId, status: 'converting', createdBy: authorOf(caller),
          sourceFilename: filename.slice(0, 255), sourceKey, sourceFormat: type.format, sourcePassword: input.password ?? null,
        });
        await this.#queue.send('books.convert', { batchId }, { tx, singletonKey: batchId });
      });
    } catch (error) {
      await this.#storage.delete(sourceKey).catch(() => undefined);
      throw error;
    }
    return this.#uploads.getBatch(caller, batchId);
  }

  async list(caller: AuthContext, randomId: string): Promise<VersionRecord[]> {
    const book = await findWorkspaceBook(this.#db, caller.workspaceId, randomId);
    const rows = await this.#db.select().from(bookVersions).where(eq(bookVersions.bookId, book.id)).orderBy(desc(bookVersions.number));
    if (!rows.some((v) => v.number === book.currentVersion)) rows.push(await this.#db.transaction((tx) => ensureCurrentVersion(tx, book)));
    rows.sort((a, b) => b.number - a.number);
    return rows.map((row) => toRecord(book, row));
  }

  /** Makes an older version (still `ready`, its files kept) current again, at once. */
  async restore(caller: AuthContext, randomId: string, number: number): Promise<VersionRecord> {
    const { book, version, removeKeys } = await this.#db.transaction(async (tx) => {
      const locked = await findWorkspaceBook(tx, caller.workspaceId, randomId, { lock: true });
      await ensureCurrentVersion(tx, locked);
      const [target] = await tx.select().from(bookVersions).where(and(eq(bookVersions.bookId, locked.id), eq(bookVersions.number, number)));
      if (!target) throw ERRORS.notFound('Version');
      if (target.number === locked.currentVersion) return { book: locked, version: target, removeKeys: [] };
      if (target.status !== 'ready') {
        throw ERRORS.conflict(`Version ${number} is ${target.status}: only a ready version can be restored${target.status === 'expired' ? ' (its files were removed by the kept-versions limit)' : ''}.`);
      }
      const outcome = await publishVersion(tx, locked, target, { reason: 'restore', kept: this.#kept });
      const [after] = await tx.select().from(books).where(eq(books.id, locked.id));
      const [published] = await tx.select().from(bookVersions).where(eq(bookVersions.id, target.id));
      return { book: after!, version: published!, removeKeys: outcome.removeKeys };
    });
    await this.#removeFiles(removeKeys);
    return toRecord(book, version);
  }

  async #removeFiles(keys: string[]) {
    for (const key of keys) await (key.endsWith('/') ? this.#storage.deletePrefix(key) : this.#storage.delete(key)).catch(() => undefined);
  }
}

function toRecord(book: BookRow, row: VersionRow): VersionRecord {
  const current = row.number === book.currentVersion;
  return {
    number: row.number,
    // The current version's state is the book's (its row is brought up to date when it stops being current).
    status: current ? (book.pageImagesStatus === 'ready' ? 'ready' : book.pageImagesStatus === 'failed' ? 'failed' : 'converting') : row.status,
    current,
    created_at: row.createdAt.toISOString(),
    created_by: row.createdBy,
    source_filename: row.sourceFilename,
    source_format: current ? book.sourceFormat : row.sourceFormat,
    page_count: current ? book.pageCount : row.pageCount,
    batch_id: row.batchId,
    published_at: row.publishedAt?.toISOString() ?? null,
  };
}
