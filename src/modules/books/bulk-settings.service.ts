/**
 * Bulk settings: the same changes applied to up to 100 books of a workspace,
 * guarded by each book's settings_revision (optimistic concurrency).
 *
 * - Creating a batch locks the books (SELECT … FOR UPDATE) and compares their
 *   revisions in the same transaction: one stale book and nothing is created.
 * - A job applies the items in order. Each item is one transaction that locks
 *   the book, checks the revision again and writes settings, access list,
 *   item outcome and the `flipbook.updated` event together. A PUT on the same
 *   book takes the same row lock, so the two writes serialise and neither
 *   leaves a mix; an item interrupted by a crash rolled back whole and simply
 *   runs again.
 */
import { randomBytes } from 'node:crypto';
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { planAllows } from '../../platform/auth/plans.ts';
import type { Db, DbOrTx } from '../../platform/db/database.ts';
import { AppError, ERRORS } from '../../platform/errors.ts';
import type { JobQueue } from '../../platform/jobs/queue.ts';
import { parseAccessEntry } from '../access/access-entries.ts';
import { subscribers } from '../access/access.tables.ts';
import { recordEvent } from '../events/events.service.ts';
import type { Caller } from './books.service.ts';
import { DEFAULT_SETTINGS, applySettingsChange, downloadablePdfOf, readerDefaults, settingsRevision, type SETTING_FIELDS, type SettingsChange } from './books.settings.ts';
import { books, type BookRow } from './books.tables.ts';
import type { BulkSettingsInput } from './bulk-settings.schemas.ts';
import { bulkSettingsBatches, bulkSettingsItems, type BulkBatchRow, type BulkItemRow } from './bulk-settings.tables.ts';

/**
 * Writes a book's access list inside the caller's transaction. Provided by
 * the access area (src/modules/access/access-lists.service.ts); entries are
 * e-mail addresses or domains, refused with ERRORS.validation when invalid.
 */
/** The access area's list writes; the item records its one `flipbook.updated` itself (callerRecordsEvent). */
export interface AccessListWriter {
  replace(tx: DbOrTx, ref: { workspaceId: number; bookId: number }, entries: string[], options: { callerRecordsEvent: true }): Promise<unknown>;
  clear(tx: DbOrTx, ref: { workspaceId: number; bookId: number }, options: { callerRecordsEvent: true }): Promise<unknown>;
}

const ONE_EVENT = { callerRecordsEvent: true } as const;

/** Bulk field → the update body's setting field it maps onto (the rest are handled apart). */
const BULK_TO_SETTING = {
  allow_fullscreen: 'allow_fullscreen',
  animation_type: 'animation_type',
  autoplay_interval: 'autoplay_interval',
  background: 'background',
  copyright_enabled: 'copyright_enabled',
  flip_sound: 'flip_sound',
  image_display: 'image_display',
  made_with_badge_enabled: 'made_with_badge_enabled',
  magic_link_error_message: 'magic_link_error_message',
  magic_link_message: 'magic_link_message',
  mobile_animation_type: 'mobile_animation_type',
  open_fullscreen_by_default: 'open_fullscreen_by_default',
  page_layout: 'page_layout',
  pdf_privacy_status: 'pdf_privacy_status',
  reading_direction: 'reading_direction',
  share_social_media: 'share_social_media',
  watermark: 'watermark',
} as const satisfies Partial<Record<keyof BulkSettingsInput, keyof typeof SETTING_FIELDS>>;

const FINISHED_ITEM = ['succeeded', 'failed', 'cancelled'];
const OPEN_BATCH = ['queued', 'running'];

/** Only random ids of the right shape can name a book; anything else is simply not found. */
const BOOK_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A change that fails one item (not the batch): its outcome records the code and message. */
class ItemFailure extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

export function newBulkBatchId(): string {
  return `bsb_${randomBytes(12).toString('base64url')}`;
}

/** The stored revision (set on every write); computed for a row written before revisions existed. */
function revisionOf(row: BookRow): string {
  return row.settingsRevision || settingsRevision(row);
}

/** The book's settings in the bulk `settings` vocabulary, for the summary. */
function bulkView(row: BookRow, plan: string, accessEntries: string[]): Record<string, unknown> {
  const s = { ...DEFAULT_SETTINGS, ...row.settings };
  const reader = readerDefaults(s);
  return {
    allow_fullscreen: s.fullscreen_enabled,
    animation_type: s.animation_type,
    autoplay_interval: reader.autoplay_interval,
    background: s.background,
    copyright_enabled: s.copyright_enabled,
    description: row.description,
    downloadable_pdf: downloadablePdfOf(s),
    eod_enabled: accessEntries.length > 0,
    eod_lists: accessEntries,
    flip_sound: s.sound_enabled,
    has_pdf_password: row.pdfPassword !== null,
    image_display: s.image_display,
    // Effective value, as the Book record shows it.
    made_with_badge_enabled: planAllows(plan, 'remove_made_with_badge') ? s.made_with_badge_enabled : true,
    magic_link_error_message: s.magic_link_error_message,
    magic_link_message: s.magic_link_message,
    mobile_animation_type: s.mobile_animation_type,
    open_fullscreen_by_default: s.open_fullscreen_by_default,
    page_layout: reader.page_layout,
    pdf_privacy_status: s.privacy,
    reading_direction: reader.reading_direction,
    share_social_media: s.share_social_media,
    title: row.name,
    watermark: s.watermark,
  };
}

/** The bulk changes as the shared settings change of books.settings.ts. */
function toSettingsChange(input: BulkSettingsInput): SettingsChange {
  const change: SettingsChange = { settings: {} };
  for (const [bulk, field] of Object.entries(BULK_TO_SETTING)) {
    const value = input[bulk as keyof BulkSettingsInput];
    if (value !== undefined) change.settings[field] = value;
  }
  if (input.downloadable_pdf !== undefined) {
    change.settings.downloadable_pdf = input.downloadable_pdf !== false;
    change.downloadMode = input.downloadable_pdf === false ? null : input.downloadable_pdf;
  }
  if (input.title !== undefined) change.title = input.title;
  if (input.description !== undefined) change.description = input.description;
  if (input.pdf_password !== undefined) change.pdfPassword = input.pdf_password;
  return change;
}

/** Checks the combination of fields no schema can express; field-level limits are the route schema's. */
function checkSettings(input: BulkSettingsInput): void {
  const problems: Record<string, string[]> = {};
  if (input.eod_lists) {
    // The access area's own parser: a batch is refused up front rather than failing item after item.
    input.eod_lists.forEach((entry, i) => {
      const parsed = parseAccessEntry(entry);
      if ('error' in parsed) problems[`settings.eod_lists.${i}`] = [parsed.error];
    });
    if (input.eod_enabled === false && input.eod_lists.length > 0) {
      problems['settings.eod_enabled'] = ['eod_enabled false clears the access lists: send it without eod_lists entries.'];
    }
    if (input.eod_enabled === true && input.eod_lists.length === 0) {
      problems['settings.eod_lists'] = ['An empty eod_lists turns the access lists off: it cannot go with eod_enabled true.'];
    }
  }
  if (Object.keys(problems).length > 0) throw ERRORS.validation(problems);
}

export interface BulkBatchRecord {
  id: string;
  status: string;
  retry_of_batch_id: string | null;
  fields: string[];
  settings: Record<string, unknown>;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  cancelled_at: string | null;
  items: ReturnType<typeof toItemRecord>[];
  progress: {
    finished: string;
    percent: number;
    total: number;
    succeeded: number;
    failed: number;
    cancelled: number;
    pending: number;
    items: { book_id: string; status: string }[];
  };
}

function toItemRecord(item: BulkItemRow) {
  return {
    book_id: item.bookRandomId,
    status: item.status,
    error: item.errorCode ? { code: item.errorCode, message: item.error ?? '' } : null,
    expected_settings_revision: item.expectedRevision,
    settings_revision_before: item.revisionBefore,
    settings_revision_after: item.revisionAfter,
    started_at: item.startedAt?.toISOString() ?? null,
    finished_at: item.finishedAt?.toISOString() ?? null,
  };
}

export function toBatchRecord(batch: BulkBatchRow, items: BulkItemRow[]): BulkBatchRecord {
  const count = (status: string) => items.filter((i) => i.status === status).length;
  const finished = items.filter((i) => FINISHED_ITEM.includes(i.status)).length;
  const shown = { ...batch.settings };
  delete shown.pdf_password;
  return {
    id: batch.id,
    status: batch.status,
    retry_of_batch_id: batch.retryOfBatchId,
    fields: Object.keys(batch.settings).sort(),
    settings: shown,
    created_at: batch.createdAt.toISOString(),
    started_at: batch.startedAt?.toISOString() ?? null,
    finished_at: batch.finishedAt?.toISOString() ?? null,
    cancelled_at: batch.cancelledAt?.toISOString() ?? null,
    items: items.map(toItemRecord),
    progress: {
      finished: `${finished}/${items.length}`,
      percent: items.length === 0 ? 100 : Math.floor((finished * 100) / items.length),
      total: items.length,
      succeeded: count('succeeded'),
      failed: count('failed'),
      cancelled: count('cancelled'),
      pending: items.length - finished,
      items: items.map((i) => ({ book_id: i.bookRandomId, status: i.status })),
    },
  };
}

export class BulkSettingsService {
  private readonly db: Db;
  private readonly queue: JobQueue;
  private readonly accessLists: AccessListWriter;

  constructor(deps: { db: Db; queue: JobQueue; accessLists: AccessListWriter }) {
    this.db = deps.db;
    this.queue = deps.queue;
    this.accessLists = deps.accessLists;
  }

  /** The workspace's books with these random ids, in the order given; 404 naming the missing ones. */
  private async findBooks(db: DbOrTx, caller: Caller, ids: string[], lock: boolean): Promise<BookRow[]> {
    const valid = ids.filter((id) => BOOK_ID.test(id));
    const query = valid.length === 0
      ? null
      : db.select().from(books).where(and(eq(books.workspaceId, caller.workspaceId), inArray(books.randomId, valid))).orderBy(asc(books.id));
    // Locks are taken in id order, so two batches over the same books cannot deadlock.
    const rows = query ? (lock ? await query.for('update') : await query) : [];
    const byId = new Map(rows.map((r) => [r.randomId, r]));
    const missing = ids.filter((id) => !byId.has(id));
    if (missing.length > 0) {
      throw new AppError(404, 'ModelNotFoundException', `Book not found: ${missing.join(', ')}.`, { book_ids: missing });
    }
    return ids.map((id) => byId.get(id)!);
  }

  private async accessEntries(db: DbOrTx, bookIds: number[]): Promise<Map<number, string[]>> {
    const entries = new Map<number, string[]>(bookIds.map((id) => [id, []]));
    if (bookIds.length === 0) return entries;
    const rows = await db
      .select({ bookId: subscribers.bookId, type: subscribers.type, value: subscribers.value })
      .from(subscribers)
      .where(inArray(subscribers.bookId, bookIds))
      .orderBy(asc(subscribers.value));
    for (const row of rows) entries.get(row.bookId)?.push(row.value);
    return entries;
  }

  /** Common and differing settings of the books, and each book's current revision. */
  async summary(caller: Caller, bookIds: string[]) {
    rejectDuplicates(bookIds, (i) => `book_ids.${i}`);
    const rows = await this.findBooks(this.db, caller, bookIds, false);
    const entries = await this.accessEntries(this.db, rows.map((r) => r.id));
    const views = rows.map((row) => ({ row, view: bulkView(row, caller.plan, entries.get(row.id)!) }));
    const common: Record<string, unknown> = {};
    const differing: Record<string, { book_id: string; value: unknown }[]> = {};
    for (const field of Object.keys(views[0]!.view)) {
      const first = JSON.stringify(views[0]!.view[field]);
      if (views.every((v) => JSON.stringify(v.view[field]) === first)) common[field] = views[0]!.view[field];
      else differing[field] = views.map((v) => ({ book_id: v.row.randomId, value: v.view[field] }));
    }
    return {
      books: rows.map((row) => ({ id: row.randomId, title: row.name, settings_revision: revisionOf(row) })),
      settings: { common, differing },
    };
  }

  /** Creates the batch when every book still has the revision the client read; 409 naming the stale ones otherwise. */
  async create(caller: Caller, input: { books: { id: string; settings_revision: string }[]; settings: BulkSettingsInput }): Promise<BulkBatchRecord> {
    rejectDuplicates(input.books.map((b) => b.id), (i) => `books.${i}.id`);
    checkSettings(input.settings);
    const { batch, items } = await this.db.transaction(async (tx) => {
      const rows = await this.findBooks(tx, caller, input.books.map((b) => b.id), true);
      const stale = rows
        .map((row, i) => ({ row, expected: input.books[i]!.settings_revision }))
        .filter(({ row, expected }) => revisionOf(row) !== expected);
      if (stale.length > 0) {
        throw ERRORS.conflict(
          `${stale.length} of the books changed since their settings were read; nothing was applied. Read POST /books/bulk-settings/summary again and resend.`,
          { stale_books: stale.map((s) => s.row.randomId), current_settings_revisions: stale.map((s) => revisionOf(s.row)) },
        );
      }
      const targets = rows.map((row, i) => ({ bookId: row.id, randomId: row.randomId, expected: input.books[i]!.settings_revision }));
      return this.insertBatch(tx, caller.workspaceId, input.settings, targets, null);
    });
    return toBatchRecord(batch, items);
  }

  private async insertBatch(tx: DbOrTx, workspaceId: number, settings: BulkSettingsInput, targets: { bookId: number | null; randomId: string; expected: string }[], retryOf: string | null) {
    const [batch] = await tx
      .insert(bulkSettingsBatches)
      .values({ id: newBulkBatchId(), workspaceId, status: 'queued', settings, retryOfBatchId: retryOf })
      .returning();
    const items = await tx
      .insert(bulkSettingsItems)
      .values(targets.map(({ bookId, randomId, expected }, position) => ({
        batchId: batch!.id, position, bookId, bookRandomId: randomId, expectedRevision: expected, status: 'pending',
      })))
      .returning();
    await this.queue.send('books.bulk-settings', { batchId: batch!.id }, { tx, singletonKey: batch!.id });
    return { batch: batch!, items: items.sort((a, b) => a.position - b.position) };
  }

  private async findBatch(db: DbOrTx, caller: Caller, batchId: string, lock = false): Promise<BulkBatchRow> {
    const query = db.select().from(bulkSettingsBatches).where(and(eq(bulkSettingsBatches.workspaceId, caller.workspaceId), eq(bulkSettingsBatches.id, batchId)));
    const [batch] = lock ? await query.for('update') : await query;
    if (!batch) throw ERRORS.notFound('Bulk settings batch');
    return batch;
  }

  private async itemsOf(db: DbOrTx, batchId: string): Promise<BulkItemRow[]> {
    return db.select().from(bulkSettingsItems).where(eq(bulkSettingsItems.batchId, batchId)).orderBy(asc(bulkSettingsItems.position));
  }

  async get(caller: Caller, batchId: string): Promise<BulkBatchRecord> {
    const batch = await this.findBatch(this.db, caller, batchId);
    return toBatchRecord(batch, await this.itemsOf(this.db, batch.id));
  }

  /** Cancels the items not started yet; what was applied stays. 409 once the batch has finished. */
  async cancel(caller: Caller, batchId: string): Promise<BulkBatchRecord> {
    return this.db.transaction(async (tx) => {
      const batch = await this.findBatch(tx, caller, batchId, true);
      if (!OPEN_BATCH.includes(batch.status)) {
        throw ERRORS.conflict(`The batch has already finished (${batch.status}); there is nothing left to cancel.`, { status: [batch.status] });
      }
      const now = new Date();
      // An item the job holds (running) finishes; its transaction has the item's row lock, so this waits for it.
      await tx
        .update(bulkSettingsItems)
        .set({ status: 'cancelled', finishedAt: now })
        .where(and(eq(bulkSettingsItems.batchId, batch.id), eq(bulkSettingsItems.status, 'pending')));
      const items = await this.itemsOf(tx, batch.id);
      const busy = items.some((i) => i.status === 'running');
      const [updated] = await tx
        .update(bulkSettingsBatches)
        .set({ status: 'cancelled', cancelledAt: now, updatedAt: now, finishedAt: busy ? null : now })
        .where(eq(bulkSettingsBatches.id, batch.id))
        .returning();
      return toBatchRecord(updated!, items);
    });
  }

  /**
   * A new batch with the same changes for the failed items only. It applies
   * over each book's revision at the time of the retry: asking for a retry is
   * asking to re-apply (to re-check a colleague's edit first, read the summary
   * and create a new batch instead).
   */
  async retry(caller: Caller, batchId: string): Promise<BulkBatchRecord> {
    const { batch, items } = await this.db.transaction(async (tx) => {
      const original = await this.findBatch(tx, caller, batchId, true);
      if (OPEN_BATCH.includes(original.status)) {
        throw ERRORS.conflict('The batch is still running: retry it once it has finished.', { status: [original.status] });
      }
      const failed = (await this.itemsOf(tx, original.id)).filter((i) => i.status === 'failed');
      if (failed.length === 0) throw ERRORS.conflict('The batch has no failed item to retry.', { status: [original.status] });
      const ids = failed.map((i) => i.bookId).filter((id): id is number => id !== null);
      const rows = ids.length === 0
        ? []
        : await tx.select().from(books).where(and(eq(books.workspaceId, caller.workspaceId), inArray(books.id, ids))).orderBy(asc(books.id)).for('update');
      const byId = new Map(rows.map((r) => [r.id, r]));
      const targets = failed.map((item) => {
        const row = item.bookId === null ? undefined : byId.get(item.bookId);
        // A deleted book stays in the retry and fails again as book_not_found: the outcome names it.
        return row
          ? { bookId: row.id, randomId: row.randomId, expected: revisionOf(row) }
          : { bookId: null, randomId: item.bookRandomId, expected: item.expectedRevision };
      });
      return this.insertBatch(tx, caller.workspaceId, original.settings as BulkSettingsInput, targets, original.id);
    });
    return toBatchRecord(batch, items);
  }

  /** The job: applies the batch's open items in order. Safe to run again after a crash. */
  async run(batchId: string, signal: AbortSignal): Promise<{ outcome: string; applied?: number }> {
    const [batch] = await this.db.select().from(bulkSettingsBatches).where(eq(bulkSettingsBatches.id, batchId));
    // A cancelled batch still finishes the item that was in flight when it was cancelled (finished_at is set after it).
    if (!batch || batch.status === 'completed' || (batch.status === 'cancelled' && batch.finishedAt)) return { outcome: 'skipped' };
    await this.db
      .update(bulkSettingsBatches)
      .set({ status: 'running', startedAt: sql`coalesce(${bulkSettingsBatches.startedAt}, now())`, updatedAt: new Date() })
      .where(and(eq(bulkSettingsBatches.id, batchId), eq(bulkSettingsBatches.status, 'queued')));
    const settings = batch.settings as BulkSettingsInput;
    const change = toSettingsChange(settings);
    const open = await this.db
      .select({ id: bulkSettingsItems.id })
      .from(bulkSettingsItems)
      .where(and(eq(bulkSettingsItems.batchId, batchId), inArray(bulkSettingsItems.status, ['pending', 'running'])))
      .orderBy(asc(bulkSettingsItems.position));
    let applied = 0;
    for (const { id } of open) {
      // Stopping between items is safe: the job is retried and carries on from the first open item.
      if (signal.aborted) throw new Error('shutdown: the bulk settings batch will resume');
      const [started] = await this.db
        .update(bulkSettingsItems)
        .set({ status: 'running', startedAt: new Date() })
        .where(and(eq(bulkSettingsItems.id, id), inArray(bulkSettingsItems.status, ['pending', 'running'])))
        .returning({ id: bulkSettingsItems.id });
      if (!started) continue; // cancelled meanwhile
      if (await this.applyItem(batch, id, settings, change)) applied++;
    }
    await this.db.transaction(async (tx) => {
      const [current] = await tx.select().from(bulkSettingsBatches).where(eq(bulkSettingsBatches.id, batchId)).for('update');
      const now = new Date();
      await tx
        .update(bulkSettingsBatches)
        .set({ status: current!.status === 'cancelled' ? 'cancelled' : 'completed', finishedAt: current!.finishedAt ?? now, updatedAt: now })
        .where(eq(bulkSettingsBatches.id, batchId));
    });
    return { outcome: 'finished', applied };
  }

  /** One item, in one transaction: lock, check the revision, write, record. Returns whether it succeeded. */
  private async applyItem(batch: BulkBatchRow, itemId: number, settings: BulkSettingsInput, change: SettingsChange): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const [item] = await tx.select().from(bulkSettingsItems).where(eq(bulkSettingsItems.id, itemId)).for('update');
      if (!item || item.status !== 'running') return false;
      const finish = (values: Partial<typeof bulkSettingsItems.$inferInsert>) =>
        tx.update(bulkSettingsItems).set({ finishedAt: new Date(), ...values }).where(eq(bulkSettingsItems.id, itemId));
      const [book] = item.bookId === null
        ? []
        : await tx.select().from(books).where(and(eq(books.id, item.bookId), eq(books.workspaceId, batch.workspaceId))).for('update');
      if (!book) {
        await finish({ status: 'failed', errorCode: 'book_not_found', error: 'The book was deleted before its settings could be applied.' });
        return false;
      }
      const before = revisionOf(book);
      if (before !== item.expectedRevision) {
        await finish({
          status: 'failed', revisionBefore: before, errorCode: 'stale_revision',
          error: 'The book changed after the batch was created; its settings were left as they are. Read the summary again and send a new batch.',
        });
        return false;
      }
      try {
        // A savepoint: an item that fails leaves neither settings nor list half-written, and its outcome is still recorded.
        const after = await tx.transaction(async (sp) => {
          const group = applySettingsChange(book, change);
          await sp.update(books).set({ ...group, updatedAt: new Date() }).where(eq(books.id, book.id));
          // The access area stores the list's flag in the settings too, with a new revision: read it back after.
          await this.applyAccessList(sp, { workspaceId: batch.workspaceId, bookId: book.id }, settings);
          const [written] = await sp.select({ revision: books.settingsRevision }).from(books).where(eq(books.id, book.id));
          await recordEvent(sp, batch.workspaceId, 'flipbook.updated', { book_id: book.randomId, fields: Object.keys(settings).sort(), bulk_settings_batch_id: batch.id });
          return written!.revision;
        });
        await finish({ status: 'succeeded', revisionBefore: before, revisionAfter: after });
        return true;
      } catch (error) {
        if (error instanceof ItemFailure) {
          await finish({ status: 'failed', revisionBefore: before, errorCode: error.code, error: error.message });
          return false;
        }
        if (error instanceof AppError && error.status === 422) {
          const messages = Object.values(error.details ?? {}).flat();
          await finish({ status: 'failed', revisionBefore: before, errorCode: 'invalid_access_list', error: messages.join(' ') || error.message });
          return false;
        }
        throw error;
      }
    });
  }

  /** eod_lists replaces the list; eod_enabled false clears it; eod_enabled true alone needs a list to keep. */
  private async applyAccessList(tx: DbOrTx, ref: { workspaceId: number; bookId: number }, settings: BulkSettingsInput): Promise<void> {
    if (settings.eod_lists !== undefined) {
      if (settings.eod_lists.length === 0) await this.accessLists.clear(tx, ref, ONE_EVENT);
      else await this.accessLists.replace(tx, ref, settings.eod_lists.map((e) => e.trim()), ONE_EVENT);
      return;
    }
    if (settings.eod_enabled === false) {
      await this.accessLists.clear(tx, ref, ONE_EVENT);
    } else if (settings.eod_enabled === true) {
      const [entry] = await tx.select({ id: subscribers.id }).from(subscribers).where(eq(subscribers.bookId, ref.bookId)).limit(1);
      if (!entry) throw new ItemFailure('access_list_empty', 'eod_enabled true keeps the book\'s access list, but the book has none: send eod_lists to give it one.');
    }
  }
}

function rejectDuplicates(ids: string[], field: (index: number) => string): void {
  const seen = new Set<string>();
  const problems: Record<string, string[]> = {};
  ids.forEach((id, i) => {
    if (seen.has(id)) problems[field(i)] = [`The book ${id} is listed more than once.`];
    seen.add(id);
  });
  if (Object.keys(problems).length > 0) throw ERRORS.validation(problems);
}
