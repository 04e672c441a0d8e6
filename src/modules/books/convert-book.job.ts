/**
 * The conversion job: one upload batch → the book's pages (images at several
 * widths, text, links), written to storage and the database as they finish,
 * with the batch's progress updated page by page.
 *
 * A book's first upload (a PDF or office document) is converted in two
 * phases (docs/conversion.md, "Readable before the last page is drawn"):
 * 1. readable: every page's size, text and links are read (no drawing: a few
 *    ms a page) while the first pages are drawn; every page's row is then in
 *    place, the undrawn images listed `onDemand: 'page'` (drawn on their first
 *    request by page-renditions.service.ts), and the book is `ready`;
 * 2. background: the other pages are drawn in page order, each claimed in its
 *    row first so that a page drawn on request meanwhile is not stored twice.
 *
 * Idempotent: a retry (after a crash or a shutdown) before the book was
 * readable starts a new rendition and removes what the interrupted one left;
 * a retry after it keeps the rendition and the pages stored, and draws only
 * the pages still undrawn. Cancellation (DELETE /batches, or the book
 * deleted) is noticed within a second and stops the renderers.
 *
 * A batch is either a book's first upload (its pages go straight to the book)
 * or a new version of a book (POST /books/{book}/versions): then its pages go
 * to book_version_pages, the book keeps showing its current version, and the
 * finished version becomes current in one transaction (book-versions.ts).
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
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
import { convertDocument, prepareDocument, renderPdfPages, type ArchiveLimits, type ConversionResult, type ConvertInput, type PreparedDocument } from '../conversion/conversion.service.ts';
import type { RenderedPage } from '../conversion/conversion.types.ts';
import { recordEvent } from '../events/events.service.ts';
import { bookPrefix, pageImageKey } from './books.service.ts';
import { SOURCE_WARNING_CODES, bookPages, bookVersionPages, bookVersions, books, uploadBatches, type StoredPageImage, type StoredWarning } from './books.tables.ts';
import { DEFAULT_VERSIONS_KEPT, publishVersion } from './book-versions.ts';
import { acquireConversionLease, isLeaseLost } from './conversion-lease.ts';
import { fingerprintVersion } from './page-fingerprints.ts';
import { DRAW_CLAIM_TTL_MS, onDemandImages, type OnDemandWidths } from './page-renditions.service.ts';
import { DEFAULT_MAX_PAGE_PIXELS, DEFAULT_WIDTHS, renderWorkerPool, renditionSize } from '../conversion/conversion.service.ts';

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
/** Pages drawn before a book is readable: the cover and the first spreads a reader opens on. */
export const FIRST_PAGES = 4;
/** Rows of page data written per transaction while a book becomes readable. */
const ROWS_PER_WRITE = 50;

export interface ConvertBookDeps {
  db: Db;
  storage: Storage;
  widths?: number[];
  /** Renditions drawn on first request instead (page-renditions.service.ts). Default: none. */
  onDemandWidths?: OnDemandWidths;
  concurrency?: number;
  /** Render threads of the background phase (CONVERSION_BACKGROUND_THREADS); default `concurrency`. */
  backgroundConcurrency?: number;
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

  // A book readable already (its first run ended in the background phase): the retry keeps its rendition and stored pages.
  const resume = !version && batch.status === 'processing' && batch.readableAt !== null && book.renditionId !== null;
  // Otherwise a new rendition per attempt: whatever an interrupted attempt stored is dropped.
  const previousRendition = resume ? null : version ? version.renditionId : book.renditionId;
  const renditionId = resume ? book.renditionId! : randomBytes(6).toString('base64url');
  /** A new version's source, password and PDF are its own; the book's stay those of its current version. */
  const source = version ?? book;
  const claimAs = `run:${lease.token}`;
  if (!resume) {
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
          .set({ status: 'processing', totalPages: 0, completedPages: 0, failedPages: 0, readableAt: null,
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
  }

  const abort = new AbortController();
  const onShutdown = () => abort.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', onShutdown, { once: true });
  const onLeaseLost = () => abort.abort(lease.signal.reason);
  lease.signal.addEventListener('abort', onLeaseLost, { once: true });
  let cancelled = false;
  /** The book became readable (in this run or an earlier one): its rendition is shared with requests and later runs. */
  let readable = resume;
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
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-convert-'));
  try {
    const listed = deps.widths ?? DEFAULT_WIDTHS;
    const imageKey = (page: number, width: number, format: string) => pageImageKey(book.randomId, renditionId, page, width, format);
    /** The page's images: those drawn, then (PDF pages) those made on request; with `undrawn`, the conversion's widths are listed as drawn on request too. */
    const pageImages = (page: RenderedPage, stored: StoredPageImage[], undrawn = false): StoredPageImage[] => {
      const images = [...stored];
      const format = page.images[0]?.format ?? 'webp';
      if (undrawn) {
        const now = listed.filter((w) => !deps.onDemandWidths?.lazy.includes(w));
        for (const width of now.length > 0 ? now : listed) {
          images.push({ ...renditionSize(page.widthPt, page.heightPt, width, DEFAULT_MAX_PAGE_PIXELS), key: imageKey(page.number, width, format), bytes: 0, onDemand: 'page' });
        }
      }
      if (deps.onDemandWidths && !page.error) {
        const drawn = undrawn ? { ...page, images: [] } : page;
        images.push(...onDemandImages(drawn, listed, deps.onDemandWidths, (width) => imageKey(page.number, width, format))
          .filter((entry) => !images.some((i) => i.key === entry.key)));
      }
      return images.sort((a, b) => a.width - b.width);
    };
    const pageRow = (page: RenderedPage, images: StoredPageImage[], drawn: boolean) => ({
      bookId: book.id,
      number: page.number,
      widthPt: page.widthPt,
      heightPt: page.heightPt,
      images,
      text: page.text,
      links: page.links,
      error: page.error ?? null,
      warnings: page.warnings ?? [],
      plainText: joinRuns(page.text),
      drawn,
    });
    const setCover = async (tx: DbOrTx, page: RenderedPage) => {
      if (page.number !== 1) return;
      if (version) await tx.update(bookVersions).set({ coverWidthPt: page.widthPt, coverHeightPt: page.heightPt }).where(eq(bookVersions.id, version.id));
      else await tx.update(books).set({ coverWidthPt: page.widthPt, coverHeightPt: page.heightPt, updatedAt: new Date() }).where(eq(books.id, book.id));
    };
    const pageWarningsOf = (page: RenderedPage): StoredWarning[] => {
      const list: StoredWarning[] = (page.warnings ?? []).map((w) => ({ ...w, page: page.number }));
      if (page.error) list.push({ code: 'page_failed', message: `Page ${page.number} is blank: ${page.error}`, page: page.number });
      return list;
    };
    const countPage = (tx: DbOrTx, page: RenderedPage) => tx.update(uploadBatches)
      .set({ ...(page.error ? { failedPages: sql`${uploadBatches.failedPages} + 1` } : { completedPages: sql`${uploadBatches.completedPages} + 1` }), updatedAt: new Date() })
      .where(eq(uploadBatches.id, batchId));

    /** All-at-once (a new version, an uploaded image): each page stored with its images as it comes. */
    const storePage = async (page: RenderedPage) => {
      const images: StoredPageImage[] = [];
      for (const image of page.images) {
        const key = imageKey(page.number, image.requestedWidth, image.format);
        await storage.put(key, createReadStream(image.path), { contentType: image.format === 'webp' ? 'image/webp' : 'image/jpeg' });
        await rm(image.path, { force: true });
        images.push({ width: image.width, height: image.height, key, bytes: image.bytes });
      }
      const all = pageImages(page, images);
      await lease.write(async (tx) => {
        const row = pageRow(page, all, true);
        if (version) {
          const { bookId: _bookId, drawn: _drawn, ...rest } = row;
          await tx.insert(bookVersionPages).values({ ...rest, versionId: version.id }).onConflictDoNothing();
        } else {
          await tx.insert(bookPages).values(row).onConflictDoNothing();
        }
        await warn(pageWarningsOf(page), tx);
        await countPage(tx, page);
        await setCover(tx, page);
      });
    };

    /** Phase 1: a page's data, its images listed as drawn on request (rows written in groups). */
    let pendingRows: ReturnType<typeof pageRow>[] = [];
    const flushRows = async () => {
      if (pendingRows.length === 0) return;
      const rows = pendingRows;
      pendingRows = [];
      await lease.write(async (tx) => {
        await tx.insert(bookPages).values(rows).onConflictDoNothing();
      });
    };
    const storePageData = async (page: RenderedPage) => {
      pendingRows.push(pageRow(page, pageImages(page, [], true), false));
      if (page.number === 1) await lease.write((tx) => setCover(tx, page));
      if (pendingRows.length >= ROWS_PER_WRITE) await flushRows();
    };

    /**
     * A drawn page of the two phases: its row (if not written yet) and a claim on it, then its images, then
     * the row says they are drawn. A page drawn on request meanwhile (or claimed by a request drawing it now)
     * is left to that request: its files here are dropped, so no image is stored twice.
     */
    const storeDrawnPage = async (page: RenderedPage) => {
      const claimed = await lease.write(async (tx) => {
        await tx.insert(bookPages).values(pageRow(page, pageImages(page, [], true), false)).onConflictDoNothing();
        await setCover(tx, page);
        const [row] = await tx.select({ drawn: bookPages.drawn, claim: bookPages.drawClaim }).from(bookPages)
          .where(and(eq(bookPages.bookId, book.id), eq(bookPages.number, page.number))).for('update');
        if (!row || row.drawn) return null;
        const [taken] = await tx.update(bookPages).set({ drawClaim: claimAs, drawClaimedAt: new Date() })
          .where(and(eq(bookPages.bookId, book.id), eq(bookPages.number, page.number), eq(bookPages.drawn, false),
            // Only one run holds the batch: a claim of another run is a dead one's. A request's is its own until it is stale.
            sql`(${bookPages.drawClaim} is null or ${bookPages.drawClaim} like 'run:%' or ${bookPages.drawClaimedAt} < now() - ${DRAW_CLAIM_TTL_MS} * interval '1 millisecond')`))
          .returning({ number: bookPages.number });
        return taken ? { previous: row.claim } : null;
      });
      if (!claimed) {
        for (const image of page.images) await rm(image.path, { force: true });
        return;
      }
      const images: StoredPageImage[] = [];
      for (const image of page.images) {
        const key = imageKey(page.number, image.requestedWidth, image.format);
        // A drawer that died after storing and before saying so left the file: it is not stored again.
        const there = claimed.previous ? await storage.stat(key) : null;
        if (!there) await storage.put(key, createReadStream(image.path), { contentType: image.format === 'webp' ? 'image/webp' : 'image/jpeg' });
        await rm(image.path, { force: true });
        images.push({ width: image.width, height: image.height, key, bytes: there?.size ?? image.bytes });
      }
      await lease.write(async (tx) => {
        const [done] = await tx.update(bookPages)
          .set({ images: pageImages(page, images), drawn: true, drawClaim: null, drawClaimedAt: null, error: page.error ?? null, warnings: page.warnings ?? [] })
          .where(and(eq(bookPages.bookId, book.id), eq(bookPages.number, page.number), eq(bookPages.drawClaim, claimAs)))
          .returning({ number: bookPages.number });
        // The row went with its book (DELETE /batches or /books): fail now, so the cancellation removes what was just stored.
        if (!done) throw new Error(`The row of page ${page.number} is gone: its book was deleted`);
        await warn(pageWarningsOf(page), tx);
        await countPage(tx, page);
      });
    };

    const input: ConvertInput = {
      filePath: '',
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
    };

    /** The end of an all-at-once conversion: a version published, or the book ready. */
    const finishAllAtOnce = async (pageCount: number, warnings: ConversionResult['warnings'], uploadedPdf: string | null, pdfPath: string | null) => {
      await warn(warnings.map((w) => ({ ...w, page: null })));
      // Keep the PDF the pages came from, for downloads (an office upload's is LibreOffice's output).
      let pdfKey = uploadedPdf;
      if (!pdfKey && pdfPath) {
        pdfKey = `${bookPrefix(book.randomId)}${renditionId}/document.pdf`;
        await storage.put(pdfKey, createReadStream(pdfPath), { contentType: 'application/pdf' });
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
          const [ready] = await tx.update(bookVersions).set({ status: 'ready', pageCount, pdfKey }).where(eq(bookVersions.id, version.id)).returning();
          if (!locked || !ready) return [];
          // The later upload wins: a version finishing after a newer one was published stays ready, not current.
          if (ready.number < locked.currentVersion) return [];
          const outcome = await publishVersion(tx, locked, ready, { reason: 'upload', kept: deps.versionsKept ?? DEFAULT_VERSIONS_KEPT });
          return outcome.removeKeys;
        }
        await tx
          .update(books)
          .set({ pageImagesStatus: 'ready', pageCount, pdfKey, updatedAt: new Date() })
          .where(eq(books.id, book.id));
        await recordEvent(tx, book.workspaceId, 'flipbook.updated', { book_id: book.randomId, fields: ['page_images_status'], page_images_status: 'ready' });
        return [];
      });
      for (const key of removeKeys) await (key.endsWith('/') ? storage.deletePrefix(key) : storage.delete(key)).catch((error: unknown) => ctx.log.warn({ err: error, key }, 'an expired version\'s file could not be deleted'));
      ctx.log.info({ batchId, pages: pageCount }, 'book converted');
      return { outcome: 'completed', pages: pageCount };
    };

    let prepared: PreparedDocument | null = null;
    if (resume) {
      // The PDF the pages come from was stored when the book became readable.
      const pdfKey = book.pdfKey ?? book.sourceKey!;
      const pdfPath = await localCopy(storage, pdfKey, workDir);
      const outDir = path.join(workDir, 'pages');
      await mkdir(outDir, { recursive: true });
      // The password opens the upload itself only (LibreOffice's PDF has none).
      prepared = { kind: book.pdfKey && book.sourceFormat !== 'pdf' ? 'office' : 'pdf', sourceFormat: (book.sourceFormat ?? 'pdf') as PreparedDocument['sourceFormat'], pdfFile: pdfPath, pdfPath: null, warnings: [], outDir };
    } else {
      input.filePath = await localCopy(storage, source.sourceKey!, workDir);
      if (!version) {
        const ready = await prepareDocument(input);
        if (ready.kind !== 'image') prepared = ready;
      }
    }

    if (!prepared) {
      // A new version (its pages are shown only once it is published) or an uploaded image (one page): all at once.
      // A version is drawn by the background renderers (lower priority, V8 sized for memory): the book's current
      // version is what readers see meanwhile, so their pages and the next upload's readable phase go first.
      const result = await convertDocument(version ? { ...input, background: true } : input, storePage);
      return await finishAllAtOnce(result.pageCount, result.warnings, source.sourceFormat === 'pdf' ? source.sourceKey : null, result.pdfPath);
    }

    const pdf = prepared;
    if (!resume) {
      // Phase 1: the first pages drawn while every page's data is read (two renderer processes side by side).
      const phase = new AbortController();
      const stop = () => phase.abort(abort.signal.reason);
      abort.signal.addEventListener('abort', stop, { once: true });
      const first = (count: number) => Array.from({ length: Math.min(FIRST_PAGES, count) }, (_, i) => i + 1);
      const runs = [
        renderPdfPages({ ...input, onStart: undefined, signal: phase.signal, concurrency: 1 }, pdf, { pages: first }, storeDrawnPage),
        renderPdfPages({ ...input, signal: phase.signal }, pdf, { dataOnly: true, pages: (count) => Array.from({ length: Math.max(0, count - FIRST_PAGES) }, (_, i) => i + FIRST_PAGES + 1) }, storePageData),
      ];
      // The first failure is the cause; the other run then ends 'aborted' by the phase's abort, whichever of the two it is.
      let cause: { error: unknown } | null = null;
      const settled = await Promise.allSettled(runs.map((run) => run.catch((error: unknown) => {
        cause ??= { error };
        phase.abort(error);
        throw error;
      })));
      abort.signal.removeEventListener('abort', stop);
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed) throw cause ? (cause as { error: unknown }).error : (failed as PromiseRejectedResult).reason;
      const data = (settled[1] as PromiseFulfilledResult<Awaited<(typeof runs)[1]>>).value;
      await flushRows();
      // The PDF on-request drawings and the next runs read (an office upload's is LibreOffice's output), stored before the book is readable.
      let pdfKey = pdf.kind === 'pdf' ? source.sourceKey : null;
      if (!pdfKey && pdf.pdfPath) {
        pdfKey = `${bookPrefix(book.randomId)}${renditionId}/document.pdf`;
        await storage.put(pdfKey, createReadStream(pdf.pdfPath), { contentType: 'application/pdf' });
      }
      await warn(pdf.warnings.map((w) => ({ ...w, page: null })));
      await lease.write(async (tx) => {
        await tx.update(uploadBatches).set({ readableAt: new Date(), updatedAt: new Date() }).where(eq(uploadBatches.id, batchId));
        await tx.update(books).set({ pageImagesStatus: 'ready', pageCount: data.pageCount, pdfKey, updatedAt: new Date() }).where(eq(books.id, book.id));
        await recordEvent(tx, book.workspaceId, 'flipbook.updated', { book_id: book.randomId, fields: ['page_images_status'], page_images_status: 'ready' });
      });
      readable = true;
      ctx.log.info({ batchId, pages: data.pageCount }, 'book readable; drawing its pages in the background');
    }

    // Phase 2: every page not drawn yet, in page order; pages a request is drawing now are waited for, then taken if it died.
    const takeable = sql`(${bookPages.drawClaim} is null or ${bookPages.drawClaim} like 'run:%' or ${bookPages.drawClaimedAt} < now() - ${DRAW_CLAIM_TTL_MS} * interval '1 millisecond')`;
    const undrawn = async (free = false) => (await db.select({ number: bookPages.number }).from(bookPages)
      .where(and(eq(bookPages.bookId, book.id), eq(bookPages.drawn, false), free ? takeable : undefined)).orderBy(bookPages.number)).map((r) => r.number);
    const giveUpAt = Date.now() + DRAW_CLAIM_TTL_MS * 2;
    while ((await undrawn()).length > 0 && Date.now() < giveUpAt) {
      if (abort.signal.aborted) throw abort.signal.reason;
      const pages = await undrawn(true);
      if (pages.length === 0) {
        // Being drawn by requests: their pages are theirs until stored, or until their claim is stale.
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      await renderPdfPages({ ...input, onStart: undefined, concurrency: deps.backgroundConcurrency ?? deps.concurrency, background: true }, pdf, { pages: () => pages, pixelsOnly: true }, storeDrawnPage);
    }
    const left = await undrawn();
    if (left.length > 0) await warn([{ code: 'pages_drawn_on_request', message: `${left.length} pages were not drawn in the background; each is drawn when it is first viewed.`, page: null }]);
    await lease.write(async (tx) => {
      await lease.finish(tx);
      await tx.update(uploadBatches).set({ status: 'completed', finishedAt: new Date(), updatedAt: new Date() })
        .where(and(eq(uploadBatches.id, batchId), eq(uploadBatches.status, 'processing')));
    });
    const [counts] = await db.select({ pages: uploadBatches.totalPages }).from(uploadBatches).where(eq(uploadBatches.id, batchId));
    ctx.log.info({ batchId, pages: counts?.pages }, 'book converted');
    return { outcome: 'completed', pages: counts?.pages ?? 0 };

  } catch (error) {
    if (isLeaseLost(error) || lease.signal.aborted) {
      // Another run owns the batch now (this one was taken for dead): drop what this run stored, write nothing;
      // but a readable book's rendition is shared (the next run keeps it, requests draw into it).
      if (!readable) await storage.deletePrefix(`${bookPrefix(book.randomId)}${renditionId}/`).catch(() => undefined);
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
    if (readable) {
      // Every page can still be served (drawn on its first request): the book stays ready, the batch ends with a warning.
      ctx.log.error({ err: error, batchId }, 'background drawing failed; the remaining pages are drawn on request');
      await lease.write(async (tx) => {
        await lease.finish(tx);
        await warn([{ code: 'pages_drawn_on_request', message: 'Drawing the pages in the background stopped on an error; the pages not drawn yet are drawn when first viewed.', page: null }], tx);
        await tx.update(uploadBatches).set({ status: 'completed', finishedAt: new Date(), updatedAt: new Date() })
          .where(and(eq(uploadBatches.id, batchId), eq(uploadBatches.status, 'processing')));
      });
      return { outcome: 'completed' };
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
    // An upload is arriving: the readable phase's two renderers (page data, first pages) start while its bytes do.
    prepare: () => renderWorkerPool.warm(2),
    handle: (payload, ctx) => convertBook(deps, payload.batchId, ctx),
  });
}
