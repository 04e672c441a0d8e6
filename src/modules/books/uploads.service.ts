/**
 * Uploads and their batches: one file per request becomes one batch, one
 * book and one conversion job, created together in one transaction after the
 * file is safely stored.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/database.ts';
import { ERRORS } from '../../platform/errors.ts';
import type { JobQueue } from '../../platform/jobs/queue.ts';
import type { Storage } from '../../platform/storage/storage.ts';
import { sniffDocument } from '../conversion/document-type.ts';
import { recordEvent } from '../events/events.service.ts';
import { bookPrefix, type BooksService, type Caller } from './books.service.ts';
import { DEFAULT_SETTINGS, settingsRevision } from './books.settings.ts';
import { bookVersions, books, uploadBatches, type BatchRow } from './books.tables.ts';
import { stripBidiControls } from '../../platform/http/input-guard.ts';

/** URL-safe, unguessable public id (128 bits). */
export function newRandomId(): string {
  return randomBytes(16).toString('base64url');
}

export interface UploadInput {
  /** A temporary file from receive(); the caller removes it. */
  filePath: string;
  filename: string;
  originalFilename?: string;
  status?: 'draft' | 'publish';
  autoLinksEnabled?: boolean;
  /** Opens an encrypted PDF; used for conversion only. */
  password?: string;
}

export const ACTIVE_BATCH_STATUSES = ['queued', 'processing'];

function nameFromFilename(filename: string): string {
  const base = path.basename(filename).replace(/\.[A-Za-z0-9]{1,5}$/, '').replace(/[_]+/g, ' ').trim();
  return (base || 'Untitled').slice(0, 255);
}

export class UploadsService {
  private readonly db: Db;
  private readonly storage: Storage;
  private readonly queue: JobQueue;
  private readonly books: BooksService;
  private readonly tmpDir: string;

  constructor(deps: { db: Db; storage: Storage; queue: JobQueue; books: BooksService; tmpDir: string }) {
    this.db = deps.db;
    this.storage = deps.storage;
    this.queue = deps.queue;
    this.books = deps.books;
    this.tmpDir = deps.tmpDir;
  }

  /** Streams an uploaded file to a temporary file: never whole in memory. The caller removes it. */
  async receive(file: Readable): Promise<string> {
    // A conversion follows most uploads: a worker in this process gets ready while the bytes arrive.
    this.queue.expect('books.convert');
    await mkdir(this.tmpDir, { recursive: true });
    const temporary = path.join(this.tmpDir, `upload-${randomUUID()}`);
    try {
      await pipeline(file, createWriteStream(temporary));
      return temporary;
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  /** What a received file is (422 when it is empty or not a document we convert), and the name it is known by. */
  async check(input: UploadInput) {
    const { size } = await stat(input.filePath);
    if (size === 0) throw ERRORS.validation({ files: ['The file is empty.'] });
    const sniffed = await sniffDocument(input.filePath, input.originalFilename ?? input.filename);
    // The reason says what the file is and what to do, once.
    if (!sniffed.type) throw ERRORS.validation({ files: [sniffed.reason] });
    // Bidi controls would let a name display as another (`invoice\u202Efdp.exe`): dropped before it names anything.
    const filename = stripBidiControls(input.originalFilename ?? input.filename) || 'document';
    return { size, type: sniffed.type, filename };
  }

  /** Checks what the received file is, stores it, and queues its conversion. */
  async upload(caller: Caller, input: UploadInput) {
    const temporary = input.filePath;
    {
      const { size, type, filename } = await this.check(input);
      const randomId = newRandomId();
      const batchId = `bat_${randomBytes(12).toString('base64url')}`;
      const sourceKey = `${bookPrefix(randomId)}source/original.${type.format}`;
      await this.storage.put(sourceKey, createReadStream(temporary), { contentType: type.mime });

      const settings = { ...DEFAULT_SETTINGS, auto_links_enabled: input.autoLinksEnabled ?? DEFAULT_SETTINGS.auto_links_enabled };
      const name = nameFromFilename(filename);
      const now = new Date();
      await this.db.transaction(async (tx) => {
        await tx.insert(uploadBatches).values({
          id: batchId,
          workspaceId: caller.workspaceId,
          status: 'queued',
          originalFilename: filename.slice(0, 255),
          sourceFormat: type.format,
          sourceBytes: size,
        });
        await tx.insert(books).values({
          randomId,
          workspaceId: caller.workspaceId,
          batchId,
          name,
          status: input.status ?? 'draft',
          publishedDate: input.status === 'publish' ? now : null,
          pageImagesStatus: 'processing',
          settings,
          sourceKey,
          sourceFormat: type.format,
          sourcePassword: input.password ?? null,
          settingsRevision: settingsRevision({ settings, name, description: null, pdfPassword: null }),
        });
        await this.queue.send('books.convert', { batchId }, { tx, singletonKey: batchId });
        await recordEvent(tx, caller.workspaceId, 'flipbook.created', { book_id: randomId, batch_id: batchId, name });
      });
      return this.getBatch(caller, batchId);
    }
  }

  private async batchRow(caller: Caller, batchId: string): Promise<BatchRow> {
    const [row] = await this.db.select().from(uploadBatches).where(and(eq(uploadBatches.workspaceId, caller.workspaceId), eq(uploadBatches.id, batchId)));
    if (!row) throw ERRORS.notFound('Batch');
    return row;
  }

  private async toBatchRecords(caller: Caller, rows: BatchRow[]) {
    const ids = rows.map((r) => r.id);
    const bookRows = rows.length
      ? await this.db.select().from(books).where(and(eq(books.workspaceId, caller.workspaceId), inArray(books.batchId, ids)))
      : [];
    // A new version's batch names the book it replaces the document of.
    const versionRows = rows.length
      ? await this.db.select({ batchId: bookVersions.batchId, book: books }).from(bookVersions).innerJoin(books, eq(books.id, bookVersions.bookId))
        .where(and(eq(books.workspaceId, caller.workspaceId), inArray(bookVersions.batchId, ids), sql`${bookVersions.number} > 1`))
      : [];
    const batchOf = new Map<number, string[]>();
    for (const b of bookRows) batchOf.set(b.id, [b.batchId!]);
    for (const v of versionRows) batchOf.set(v.book.id, [...(batchOf.get(v.book.id) ?? []), v.batchId!]);
    const allRows = [...bookRows, ...versionRows.map((v) => v.book).filter((b) => !bookRows.some((r) => r.id === b.id))];
    const records = await this.books.toRecords(caller, allRows);
    const byBatch = (batchId: string) => allRows.flatMap((row, i) => (batchOf.get(row.id)?.includes(batchId) ? [records[i]!] : []));
    return rows.map((batch) => ({
      id: batch.id,
      status: batch.status,
      progress: {
        total: batch.totalPages,
        completed: batch.completedPages,
        failed: batch.failedPages,
        pending: Math.max(0, batch.totalPages - batch.completedPages - batch.failedPages),
      },
      stage: batchStage(batch),
      readable_at: batch.readableAt?.toISOString() ?? null,
      total_pages: batch.totalPages,
      rendered_pages: batch.completedPages + batch.failedPages,
      books: byBatch(batch.id),
      error: batch.error ? { code: batch.errorCode ?? 'conversion_failed', message: batch.error } : null,
      warnings: batch.warnings,
      original_filename: batch.originalFilename,
      source_format: batch.sourceFormat,
      created_at: batch.createdAt.toISOString(),
      finished_at: batch.finishedAt?.toISOString() ?? null,
    }));
  }

  async getBatch(caller: Caller, batchId: string) {
    const [record] = await this.toBatchRecords(caller, [await this.batchRow(caller, batchId)]);
    return record!;
  }

  async activeBatches(caller: Caller) {
    const rows = await this.db
      .select()
      .from(uploadBatches)
      .where(and(eq(uploadBatches.workspaceId, caller.workspaceId), inArray(uploadBatches.status, ACTIVE_BATCH_STATUSES)))
      .orderBy(desc(uploadBatches.createdAt))
      .limit(200);
    return this.toBatchRecords(caller, rows);
  }

  /**
   * Stops a conversion in flight: the batch becomes `cancelled` and its
   * unfinished book is removed with its files (the running job notices within
   * a second and stops). A finished batch cannot be cancelled (409).
   */
  async cancel(caller: Caller, batchId: string) {
    const current = await this.batchRow(caller, batchId);
    const cancelledBook = await this.db.transaction(async (tx) => {
      const [cancelled] = await tx
        .update(uploadBatches)
        .set({ status: 'cancelled', finishedAt: new Date(), updatedAt: new Date(), error: 'Cancelled by the API.' , errorCode: 'cancelled' })
        .where(and(eq(uploadBatches.id, current.id), inArray(uploadBatches.status, ACTIVE_BATCH_STATUSES)))
        .returning();
      if (!cancelled) throw ERRORS.conflict(`The batch has already finished (${current.status}); only a batch still converting can be cancelled.`);
      // A new version's batch: only that version goes (the running job removes its pages and files); the book stays.
      const [version] = await tx.update(bookVersions).set({ status: 'cancelled' })
        .where(and(eq(bookVersions.batchId, current.id), sql`${bookVersions.number} > 1`, eq(bookVersions.status, 'converting')))
        .returning({ sourceKey: bookVersions.sourceKey });
      if (version) return { versionSource: version.sourceKey };
      const removed = await tx.delete(books).where(and(eq(books.batchId, current.id), eq(books.workspaceId, caller.workspaceId))).returning({ randomId: books.randomId });
      return { book: removed[0]?.randomId ?? null };
    });
    if (cancelledBook.book) await this.storage.deletePrefix(bookPrefix(cancelledBook.book));
    if (cancelledBook.versionSource) await this.storage.delete(cancelledBook.versionSource);
    return this.getBatch(caller, batchId);
  }
}

/** The batch's stage (docs/conversion.md): from its status, and whether its book became readable before its last page was drawn. */
function batchStage(batch: BatchRow): 'queued' | 'converting' | 'rendering' | 'done' | 'failed' | 'cancelled' {
  switch (batch.status) {
    case 'queued': return 'queued';
    case 'processing': return batch.readableAt ? 'rendering' : 'converting';
    case 'completed': return 'done';
    case 'failed': return 'failed';
    default: return 'cancelled';
  }
}
