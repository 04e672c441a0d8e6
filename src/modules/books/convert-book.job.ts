/**
 * The conversion job: one upload batch → the book's pages (images at several
 * widths, text, links), written to storage and the database as they finish,
 * with the batch's progress updated page by page.
 *
 * Idempotent: a retry (after a crash or a shutdown) starts a new rendition and
 * removes what the interrupted one left. Cancellation (DELETE /batches, or the
 * book deleted) is noticed within a second and stops the renderers.
 *
 * A batch is either a book's first upload (its pages go straight to the book)
 * or a new version of a book (POST /books/{book}/versions): then its pages go
 * to book_version_pages, the book keeps showing its current version, and the
 * finished version becomes current in one transaction (book-versions.ts).
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { Type } from 'typebox';
import type { Db, DbOrTx } from '../../platform/db/database.ts';
import { defineJob, type JobContext } from '../../platform/jobs/queue.ts';
import type { Storage } from '../../platform/storage/storage.ts';
import { isConversionError } from '../conversion/conversion.errors.ts';
import { joinRuns } from '../conversion/text-order.ts';
import { convertDocument, type ArchiveLimits } from '../conversion/conversion.service.ts';
import type { RenderedPage } from '../conversion/conversion.types.ts';
import { recordEvent } from '../events/events.service.ts';
import { bookPrefix, pageImageKey } from './books.service.ts';
import { SOURCE_WARNING_CODES, bookPages, bookVersionPages, bookVersions, books, uploadBatches, type StoredPageImage, type StoredWarning } from './books.tables.ts';
import { DEFAULT_VERSIONS_KEPT, publishVersion } from './book-versions.ts';
import { acquireConversionLease, isLeaseLost } from './conversion-lease.ts';
import { fingerprintVersion } from './page-fingerprints.ts';
import { onDemandImages, type OnDemandWidths } from './page-renditions.service.ts';
import { DEFAULT_WIDTHS } from '../conversion/conversion.service.ts';

declare module '../../platform/jobs/queue.ts' {
  interface JobPayloads {
    'books.convert': { batchId: string };
  }
}

const RETRY_LIMIT = 3;
const CANCEL_POLL_MS = 1000;
/** A batch keeps at most this many warnings (a document with an image problem on every page would repeat it). */
const MAX_BATCH_WARNINGS = 100;
const DEFAULT_LEASE_MS = 20_000;

export interface ConvertBookDeps {
  db: Db;
  storage: Storage;
  widths?: number[];
  /** Renditions drawn on first request instead (page-renditions.service.ts). Default: none. */
  onDemandWidths?: OnDemandWidths;
  concurrency?: number;
  officeTimeoutMs?: number;
  officeMemoryLimitMb?: number;
  archiveLimits?: ArchiveLimits;
  maxPages?: number;
  /** Conversion lease (conversion-lease.ts): renewed every quarter; a run silent for this long is taken over. */
  leaseMs?: number;
  /** BOOK_VERSIONS_KEPT: versions whose files stay once a new version is published. */
  versionsKept?: number;
}

async function localCopy(storage: Storage, key: string, workDir: string): Promise<string> {
  const object = await storage.get(key);
  if (!object) throw new Error(`The uploaded file ${key} is missing from storage`);
  const target = path.join(workDir, `source${path.extname(key)}`);
  await pipeline(object.body, createWriteStream(target));
  return target;
}

export async function convertBook(deps: ConvertBookDeps, batchId: string, ctx: JobContext): Promise<{ outcome: string; pages?: number }> {
  const { db, storage } = deps;
  // Only the run holding the batch's lease writes; a live holder makes this job a duplicate.
  const lease = await acquireConversionLease(db, batchId, { ttlMs: deps.leaseMs ?? DEFAULT_LEASE_MS, log: ctx.log });
  if (!lease) return { outcome: 'skipped: another run holds the batch' };
  const [version] = await db.select().from(bookVersions).where(and(eq(bookVersions.batchId, batchId), sql`${bookVersions.number} > 1`));
  const [book] = await db.select().from(books).where(version ? eq(books.id, version.bookId) : eq(books.batchId, batchId));
  const [batch] = await db.select().from(uploadBatches).where(eq(uploadBatches.id, batchId));
  if (!batch || !book || !['queued', 'processing'].includes(batch.status) || (version && version.status !== 'converting')) {
    await lease.write((tx) => lease.finish(tx));
    return { outcome: 'skipped' };
  }

  // A new rendition per attempt: whatever an interrupted attempt stored is dropped.
  const previousRendition = version ? version.renditionId : book.renditionId;
  const renditionId = randomBytes(6).toString('base64url');
  /** A new version's source, password and PDF are its own; the book's stay those of its current version. */
  const source = version ?? book;
  try {
    await lease.write(async (tx) => {
      if (version) {
        await tx.delete(bookVersionPages).where(eq(bookVersionPages.versionId, version.id));
        await tx.update(bookVersions).set({ renditionId, pageCount: 0 }).where(eq(bookVersions.id, version.id));
      } else {
        await tx.delete(bookPages).where(eq(bookPages.bookId, book.id));
        await tx.update(books).set({ renditionId, pageImagesStatus: 'processing', pageCount: 0, updatedAt: new Date() }).where(eq(books.id, book.id));
      }
      await tx
        .update(uploadBatches)
        .set({ status: 'processing', totalPages: 0, completedPages: 0, failedPages: 0,
          // A new attempt drops the conversion's own warnings; those of the book's source (made before, by the render job) stay.
          warnings: sql`coalesce((select jsonb_agg(w) from jsonb_array_elements(${uploadBatches.warnings}) w where w->>'code' in (${sql.join(SOURCE_WARNING_CODES.map((c) => sql`${c}`), sql`, `)})), '[]'::jsonb)`,
          updatedAt: new Date() })
        .where(eq(uploadBatches.id, batchId));
    });
    if (previousRendition) {
      for (const key of await storage.list(`${bookPrefix(book.randomId)}${previousRendition}/`)) await storage.delete(key);
    }
  } catch (error) {
    await lease.release(); // the job's retry takes the batch
    throw error;
  }

  const abort = new AbortController();
  const onShutdown = () => abort.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', onShutdown, { once: true });
  const onLeaseLost = () => abort.abort(lease.signal.reason);
  lease.signal.addEventListener('abort', onLeaseLost, { once: true });
  let cancelled = false;
  /** The batch was cancelled or the book deleted (DELETE /batches, DELETE /books). */
  const wasCancelled = async (): Promise<boolean> => {
    const [state] = await db
      .select({ status: uploadBatches.status, bookExists: sql<boolean>`exists (select 1 from ${books} where ${books.id} = ${book.id})` })
      .from(uploadBatches)
      .where(eq(uploadBatches.id, batchId));
    return !state || state.status === 'cancelled' || !state.bookExists;
  };
  const poll = setInterval(async () => {
    try {
      if (await wasCancelled()) {
        cancelled = true;
        abort.abort(new Error('cancelled'));
      }
    } catch {
      // The next poll tries again.
    }
  }, CANCEL_POLL_MS);

  const workDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-convert-'));
  try {
    const sourcePath = await localCopy(storage, source.sourceKey!, workDir);
    /** Adds warnings to the batch (capped) and says in the log why the pages are not faithful. */
    const warn = async (warnings: StoredWarning[], target: DbOrTx = db) => {
      if (warnings.length === 0) return;
      for (const w of warnings) ctx.log.warn({ batchId, page: w.page, code: w.code }, `conversion warning: ${w.message}`);
      await target
        .update(uploadBatches)
        .set({
          warnings: sql`case when jsonb_array_length(${uploadBatches.warnings}) >= ${MAX_BATCH_WARNINGS} then ${uploadBatches.warnings}
            else ${uploadBatches.warnings} || ${JSON.stringify(warnings)}::jsonb end`,
          updatedAt: new Date(),
        })
        .where(eq(uploadBatches.id, batchId));
    };
    const storePage = async (page: RenderedPage) => {
      const images: StoredPageImage[] = [];
      for (const image of page.images) {
        const key = pageImageKey(book.randomId, renditionId, page.number, image.requestedWidth, image.format);
        await storage.put(key, createReadStream(image.path), { contentType: image.format === 'webp' ? 'image/webp' : 'image/jpeg' });
        await rm(image.path, { force: true });
        images.push({ width: image.width, height: image.height, key, bytes: image.bytes });
      }
      if (deps.onDemandWidths && !page.error) {
        const listed = deps.widths ?? DEFAULT_WIDTHS;
        const format = page.images[0]?.format ?? 'webp';
        images.push(...onDemandImages(page, listed, deps.onDemandWidths, (width) => pageImageKey(book.randomId, renditionId, page.number, width, format)));
        images.sort((a, b) => a.width - b.width);
      }
      await lease.write(async (tx) => {
        await tx.insert(version ? bookVersionPages : bookPages).values({
          ...(version ? { versionId: version.id } : { bookId: book.id }),
          number: page.number,
          widthPt: page.widthPt,
          heightPt: page.heightPt,
          images,
          text: page.text,
          links: page.links,
          error: page.error ?? null,
          warnings: page.warnings ?? [],
          plainText: joinRuns(page.text),
        }).onConflictDoNothing();
        const pageWarnings: StoredWarning[] = (page.warnings ?? []).map((w) => ({ ...w, page: page.number }));
        if (page.error) pageWarnings.push({ code: 'page_failed', message: `Page ${page.number} is blank: ${page.error}`, page: page.number });
        await warn(pageWarnings, tx);
        const counter = page.error ? { failedPages: sql`${uploadBatches.failedPages} + 1` } : { completedPages: sql`${uploadBatches.completedPages} + 1` };
        await tx.update(uploadBatches).set({ ...counter, updatedAt: new Date() }).where(eq(uploadBatches.id, batchId));
        if (page.number === 1 && version) {
          await tx.update(bookVersions).set({ coverWidthPt: page.widthPt, coverHeightPt: page.heightPt }).where(eq(bookVersions.id, version.id));
        } else if (page.number === 1) {
          await tx.update(books).set({ coverWidthPt: page.widthPt, coverHeightPt: page.heightPt, updatedAt: new Date() }).where(eq(books.id, book.id));
        }
      });
    };

    const result = await convertDocument(
      {
        filePath: sourcePath,
        password: source.sourcePassword ?? undefined,
        autoLinks: book.settings.auto_links_enabled,
        widths: deps.widths,
        ...(deps.onDemandWidths ? { deferWidths: deps.onDemandWidths.lazy } : {}),
        concurrency: deps.concurrency,
        officeTimeoutMs: deps.officeTimeoutMs,
        officeMemoryLimitMb: deps.officeMemoryLimitMb,
        archiveLimits: deps.archiveLimits,
        maxPages: deps.maxPages,
        signal: abort.signal,
        workDir,
        onStart: (info) => lease.write(async (tx) => {
          await tx.update(uploadBatches).set({ totalPages: info.pageCount, updatedAt: new Date() }).where(eq(uploadBatches.id, batchId));
          if (version) {
            await tx.update(bookVersions).set({ pageCount: info.pageCount, outline: info.outline }).where(eq(bookVersions.id, version.id));
            return;
          }
          await tx.update(books).set({ pageCount: info.pageCount, outline: info.outline, updatedAt: new Date() }).where(eq(books.id, book.id));
        }),
      },
      storePage,
    );

    await warn(result.warnings.map((w) => ({ ...w, page: null })));
    // Keep the PDF the pages came from, for downloads (an office upload's is LibreOffice's output).
    let pdfKey = source.sourceFormat === 'pdf' ? source.sourceKey : null;
    if (!pdfKey && result.pdfPath) {
      pdfKey = `${bookPrefix(book.randomId)}${renditionId}/document.pdf`;
      await storage.put(pdfKey, createReadStream(result.pdfPath), { contentType: 'application/pdf' });
    }
    if (version) {
      // Before the switch, while the version is not read by anyone: its pages' fingerprints and their matches in the version shown now.
      try {
        const [now] = await db.select({ currentVersion: books.currentVersion }).from(books).where(eq(books.id, book.id));
        const matched = await fingerprintVersion(db, storage, { bookId: book.id, versionId: version.id, version: version.number, currentVersion: now?.currentVersion ?? book.currentVersion });
        ctx.log.info({ batchId, version: version.number, matched }, 'version pages matched');
      } catch (error) {
        ctx.log.warn({ err: error, batchId }, 'the version\'s pages could not be fingerprinted: its page figures will not follow earlier versions');
      }
    }
    const removeKeys = await lease.write(async (tx) => {
      await lease.finish(tx);
      const [finished] = await tx
        .update(uploadBatches)
        .set({ status: 'completed', finishedAt: new Date(), updatedAt: new Date() })
        .where(and(eq(uploadBatches.id, batchId), eq(uploadBatches.status, 'processing')))
        .returning();
      if (!finished) return [];
      if (version) {
        // The book's row lock orders this switch with restores and the other versions' switches.
        const [locked] = await tx.select().from(books).where(eq(books.id, book.id)).for('update');
        const [ready] = await tx.update(bookVersions).set({ status: 'ready', pageCount: result.pageCount, pdfKey }).where(eq(bookVersions.id, version.id)).returning();
        if (!locked || !ready) return [];
        // The later upload wins: a version finishing after a newer one was published stays ready, not current.
        if (ready.number < locked.currentVersion) return [];
        const outcome = await publishVersion(tx, locked, ready, { reason: 'upload', kept: deps.versionsKept ?? DEFAULT_VERSIONS_KEPT });
        return outcome.removeKeys;
      }
      await tx
        .update(books)
        .set({ pageImagesStatus: 'ready', pageCount: result.pageCount, pdfKey, updatedAt: new Date() })
        .where(eq(books.id, book.id));
      await recordEvent(tx, book.workspaceId, 'flipbook.updated', { book_id: book.randomId, fields: ['page_images_status'], page_images_status: 'ready' });
      return [];
    });
    for (const key of removeKeys) await (key.endsWith('/') ? storage.deletePrefix(key) : storage.delete(key)).catch((error: unknown) => ctx.log.warn({ err: error, key }, 'an expired version\'s file could not be deleted'));
    ctx.log.info({ batchId, pages: result.pageCount }, 'book converted');
    return { outcome: 'completed', pages: result.pageCount };
  } catch (error) {
    if (isLeaseLost(error) || lease.signal.aborted) {
      // Another run owns the batch now (this one was taken for dead): drop what this run stored, write nothing.
      await storage.deletePrefix(`${bookPrefix(book.randomId)}${renditionId}/`).catch(() => undefined);
      return { outcome: 'superseded' };
    }
    // A page written after the cancellation fails on the deleted book before the poll notices: that is a cancellation too,
    // and its files (stored after DELETE removed the book's) go now, since a retry would find no book to clean up after.
    if (cancelled || (await wasCancelled().catch(() => false))) {
      if (version) {
        // Only this version's files: the book's current version is untouched.
        await storage.deletePrefix(`${bookPrefix(book.randomId)}${renditionId}/`);
        if (version.sourceKey) await storage.delete(version.sourceKey).catch(() => undefined);
        await db.update(bookVersions).set({ status: 'cancelled' }).where(eq(bookVersions.id, version.id)).catch(() => undefined);
        // This run may have marked the batch processing after the book's deletion cancelled it: it ends cancelled either way.
        await db.update(uploadBatches).set({ status: 'cancelled', finishedAt: new Date(), updatedAt: new Date() })
          .where(and(eq(uploadBatches.id, batchId), inArray(uploadBatches.status, ['queued', 'processing']))).catch(() => undefined);
      } else {
        await storage.deletePrefix(bookPrefix(book.randomId));
      }
      await lease.write((tx) => lease.finish(tx)).catch(() => undefined);
      return { outcome: 'cancelled' };
    }
    if (ctx.signal.aborted) {
      await lease.release(); // shutdown: the job's retry takes the batch at once
      throw error;
    }
    const final = isConversionError(error) || ctx.retryCount >= RETRY_LIMIT;
    if (!final) {
      await lease.release();
      throw error;
    }
    const message = isConversionError(error) ? error.message : 'The conversion failed unexpectedly; the error was logged.';
    const code = isConversionError(error) ? error.code : 'internal_error';
    if (!isConversionError(error)) ctx.log.error({ err: error, batchId }, 'conversion failed');
    await lease.write(async (tx) => {
      await lease.finish(tx);
      await tx
        .update(uploadBatches)
        .set({ status: 'failed', error: message, errorCode: code, finishedAt: new Date(), updatedAt: new Date() })
        .where(and(eq(uploadBatches.id, batchId), eq(uploadBatches.status, 'processing')));
      if (version) {
        // The book stays as it was; this version's pages and files go.
        await tx.update(bookVersions).set({ status: 'failed' }).where(eq(bookVersions.id, version.id));
        await tx.delete(bookVersionPages).where(eq(bookVersionPages.versionId, version.id));
      } else {
        await tx.update(books).set({ pageImagesStatus: 'failed', updatedAt: new Date() }).where(eq(books.id, book.id));
      }
    });
    if (version) await storage.deletePrefix(`${bookPrefix(book.randomId)}${renditionId}/`).catch(() => undefined);
    return { outcome: 'failed' };
  } finally {
    clearInterval(poll);
    lease.stop();
    lease.signal.removeEventListener('abort', onLeaseLost);
    ctx.signal.removeEventListener('abort', onShutdown);
    await rm(workDir, { recursive: true, force: true });
  }
}

export function convertBookJob(deps: ConvertBookDeps) {
  return defineJob({
    name: 'books.convert',
    version: 1,
    schema: Type.Object({ batchId: Type.String({ minLength: 1, maxLength: 64 }) }),
    retryLimit: RETRY_LIMIT,
    retryDelaySeconds: 2,
    expireInSeconds: 30 * 60,
    // Each conversion renders on every core already; a second slot keeps one slow document from blocking the rest.
    concurrency: 2,
    handle: (payload, ctx) => convertBook(deps, payload.batchId, ctx),
  });
}
