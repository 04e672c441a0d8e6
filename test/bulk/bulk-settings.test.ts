/**
 * Bulk settings through HTTP on the real service: summary, batch creation
 * with optimistic concurrency, the background application book by book,
 * cancel, retry, isolation between workspaces, and races with PUT.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import { books } from '../../src/modules/books/books.tables.ts';
import { bulkSettingsBatches, bulkSettingsItems } from '../../src/modules/books/bulk-settings.tables.ts';
import { domainEvents } from '../../src/modules/events/events.tables.ts';
import { subscribers } from '../../src/modules/access/access.tables.ts';
import { insertBook } from '../factories.ts';
import { eventually, scratchPostgres, startService, usingPostgres, type TestService } from '../helpers.ts';

type Ws = { id: number; key: string };

/** These tests poll and fire many requests a minute: the limits have their own tests. */
const env = { RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0 };

const BATCHES = '/v1/books/bulk-settings/batches';

async function summary(svc: TestService, ws: Ws, ids: string[]) {
  return svc.request('POST', '/v1/books/bulk-settings/summary', { key: ws.key, body: { book_ids: ids } });
}

/** Reads the revisions through the summary and creates a batch over them. */
async function createBatch(svc: TestService, ws: Ws, ids: string[], settings: Record<string, unknown>) {
  const read = await summary(svc, ws, ids);
  assert.equal(read.status, 200, read.text);
  return svc.request('POST', BATCHES, {
    key: ws.key,
    body: { books: read.body.data.books.map((b: { id: string; settings_revision: string }) => ({ id: b.id, settings_revision: b.settings_revision })), settings },
  });
}

async function waitForBulk(svc: TestService, ws: Ws, id: string, timeoutMs = 60_000) {
  return eventually(async () => {
    const res = await svc.request('GET', `${BATCHES}/${id}`, { key: ws.key });
    return ['completed', 'cancelled'].includes(res.body?.data?.status) && res.body.data.finished_at ? res.body.data : null;
  }, { timeoutMs, intervalMs: 50 });
}

async function getBook(svc: TestService, ws: Ws, id: string) {
  const res = await svc.request('GET', `/v1/books/${id}`, { key: ws.key });
  assert.equal(res.status, 200, res.text);
  return res.body.data;
}

describe('bulk settings', () => {
  let svc: TestService;
  let ws: Ws;
  before(async () => {
    svc = await startService({ env });
    ws = await svc.workspace();
  });
  after(() => svc.stop());

  describe('POST /books/bulk-settings/summary', () => {
    it('returns common and differing settings and each revision', async () => {
      const a = await insertBook(svc, ws.id, { name: 'Alpha' });
      const b = await insertBook(svc, ws.id, { name: 'Beta' });
      await svc.request('PUT', `/v1/books/${b.randomId}`, { key: ws.key, body: { status: 'draft', watermark: 'CONFIDENTIAL', downloadable_pdf: true } });
      const res = await summary(svc, ws, [a.randomId, b.randomId]);
      assert.equal(res.status, 200, res.text);
      const { books: listed, settings } = res.body.data;
      assert.deepEqual(listed.map((x: { id: string; title: string }) => [x.id, x.title]), [[a.randomId, 'Alpha'], [b.randomId, 'Beta']]);
      for (const x of listed) assert.match(x.settings_revision, /^[0-9a-f]{64}$/);
      assert.notEqual(listed[0].settings_revision, listed[1].settings_revision);
      assert.equal(settings.common.animation_type, 'flip');
      assert.equal(settings.common.eod_enabled, false);
      assert.equal(settings.common.has_pdf_password, false);
      assert.equal('pdf_password' in settings.common, false);
      assert.deepEqual(settings.differing.watermark, [{ book_id: a.randomId, value: null }, { book_id: b.randomId, value: 'CONFIDENTIAL' }]);
      assert.deepEqual(settings.differing.downloadable_pdf, [{ book_id: a.randomId, value: false }, { book_id: b.randomId, value: 'full' }]);
      assert.deepEqual(settings.differing.title.map((d: { value: string }) => d.value), ['Alpha', 'Beta']);
      assert.equal('watermark' in settings.common, false);
    });

    it('answers 404 naming unknown books and books of another workspace', async () => {
      const mine = await insertBook(svc, ws.id);
      const other = await svc.workspace();
      const theirs = await insertBook(svc, other.id);
      const res = await summary(svc, ws, [mine.randomId, theirs.randomId, 'nope']);
      assert.equal(res.status, 404);
      assert.equal(res.body.error.type, 'ModelNotFoundException');
      assert.deepEqual(res.body.error.details.book_ids, [theirs.randomId, 'nope']);
    });

    it('validates book_ids (1-100, each once)', async () => {
      const book = await insertBook(svc, ws.id);
      for (const body of [{}, { book_ids: [] }, { book_ids: Array.from({ length: 101 }, (_, i) => `b${i}`) }, { book_ids: [book.randomId, book.randomId] }]) {
        const res = await svc.request('POST', '/v1/books/bulk-settings/summary', { key: ws.key, body });
        assert.equal(res.status, 422, JSON.stringify(body).slice(0, 80));
        assert.equal(res.body.error.type, 'ValidationException');
      }
    });

    it('needs books:read', async () => {
      const { key } = await svc.key(ws.id, ['brand:read']);
      const res = await svc.request('POST', '/v1/books/bulk-settings/summary', { key, body: { book_ids: ['x'] } });
      assert.equal(res.status, 403);
      assert.deepEqual(res.body.error.details.required_scope, ['books:read']);
    });
  });

  describe('POST /books/bulk-settings/batches', () => {
    it('applies the settings to every book in the background, each firing flipbook.updated', async () => {
      const targets = await Promise.all([1, 2, 3].map((n) => insertBook(svc, ws.id, { name: `Book ${n}` })));
      const ids = targets.map((t) => t.randomId);
      const res = await createBatch(svc, ws, ids, {
        animation_type: 'slide', watermark: 'DRAFT', downloadable_pdf: 'spread', allow_fullscreen: false, flip_sound: true,
        description: 'Autumn range', pdf_password: 's3cret', pdf_privacy_status: 'private', made_with_badge_enabled: false,
      });
      assert.equal(res.status, 202, res.text);
      const batch = res.body.data;
      assert.match(batch.id, /^bsb_/);
      assert.equal(res.headers.get('location'), `${BATCHES}/${batch.id}`);
      assert.equal(batch.status, 'queued');
      assert.equal(batch.retry_of_batch_id, null);
      assert.ok(batch.fields.includes('pdf_password'));
      assert.equal('pdf_password' in batch.settings, false, 'the password is never returned');
      assert.ok(!res.text.includes('s3cret'));
      assert.deepEqual(batch.progress.items.map((i: { book_id: string }) => i.book_id), ids);
      assert.equal(batch.progress.total, 3);
      assert.equal(batch.progress.finished, '0/3');

      const done = await waitForBulk(svc, ws, batch.id);
      assert.equal(done.status, 'completed');
      assert.equal(done.progress.finished, '3/3');
      assert.equal(done.progress.percent, 100);
      assert.equal(done.progress.succeeded, 3);
      assert.ok(done.started_at && done.finished_at);
      assert.equal(done.cancelled_at, null);
      for (const item of done.items) {
        assert.equal(item.status, 'succeeded');
        assert.equal(item.error, null);
        assert.equal(item.settings_revision_before, item.expected_settings_revision);
        assert.notEqual(item.settings_revision_after, item.settings_revision_before);
        assert.ok(item.started_at && item.finished_at);
      }
      for (const [i, id] of ids.entries()) {
        const book = await getBook(svc, ws, id);
        assert.equal(book.name, `Book ${i + 1}`, 'title untouched when not sent');
        assert.equal(book.description, 'Autumn range');
        assert.equal(book.settings.animation_type, 'slide');
        assert.equal(book.settings.watermark, 'DRAFT');
        assert.equal(book.settings.downloadable, true);
        assert.equal(book.settings.fullscreen_enabled, false);
        assert.equal(book.settings.sound_enabled, true);
        assert.equal(book.settings.privacy, 'private');
        assert.equal(book.settings.made_with_badge_enabled, false);
        assert.equal(book.settings.has_pdf_password, true);
      }
      // The summary reads the new values back, revisions included.
      const after = await summary(svc, ws, ids);
      assert.equal(after.body.data.settings.common.downloadable_pdf, 'spread');
      assert.equal(after.body.data.settings.common.has_pdf_password, true);
      assert.deepEqual(after.body.data.books.map((b: { settings_revision: string }) => b.settings_revision), done.items.map((i: { settings_revision_after: string }) => i.settings_revision_after));
      const events = await svc.runtime.database.db
        .select()
        .from(domainEvents)
        .where(and(eq(domainEvents.workspaceId, ws.id), eq(domainEvents.type, 'flipbook.updated'), sql`${domainEvents.payload}->>'bulk_settings_batch_id' = ${batch.id}`));
      assert.deepEqual(events.map((e) => e.payload.book_id).sort(), [...ids].sort());
      for (const e of events) assert.ok(!JSON.stringify(e.payload).includes('s3cret'));
    });

    it('clears the password with null and turns downloads off with false', async () => {
      const book = await insertBook(svc, ws.id, { pdfPassword: 'old' });
      await svc.request('PUT', `/v1/books/${book.randomId}`, { key: ws.key, body: { status: 'draft', downloadable_pdf: true } });
      const res = await createBatch(svc, ws, [book.randomId], { pdf_password: null, downloadable_pdf: false, title: 'Renamed', background: null });
      assert.equal(res.status, 202, res.text);
      await waitForBulk(svc, ws, res.body.data.id);
      const record = await getBook(svc, ws, book.randomId);
      assert.equal(record.settings.has_pdf_password, false);
      assert.equal(record.settings.downloadable, false);
      assert.equal(record.name, 'Renamed');
    });

    it('refuses the whole batch with 409 naming the stale books, and applies nothing', async () => {
      const fresh = await insertBook(svc, ws.id);
      const stale = await insertBook(svc, ws.id);
      const read = await summary(svc, ws, [fresh.randomId, stale.randomId]);
      const revisions = read.body.data.books.map((b: { settings_revision: string }) => b.settings_revision);
      // A colleague edits one of them after the summary was read.
      await svc.request('PUT', `/v1/books/${stale.randomId}`, { key: ws.key, body: { status: 'draft', watermark: 'Theirs' } });
      const res = await svc.request('POST', BATCHES, {
        key: ws.key,
        body: { books: [{ id: fresh.randomId, settings_revision: revisions[0] }, { id: stale.randomId, settings_revision: revisions[1] }], settings: { watermark: 'Mine' } },
      });
      assert.equal(res.status, 409);
      assert.equal(res.body.error.type, 'ConflictException');
      assert.deepEqual(res.body.error.details.stale_books, [stale.randomId]);
      const now = (await summary(svc, ws, [stale.randomId])).body.data.books[0].settings_revision;
      assert.deepEqual(res.body.error.details.current_settings_revisions, [now]);
      assert.equal((await getBook(svc, ws, fresh.randomId)).settings.watermark, null);
      assert.equal((await getBook(svc, ws, stale.randomId)).settings.watermark, 'Theirs');
    });

    it('answers 404 naming unknown books and books of another workspace', async () => {
      const mine = await insertBook(svc, ws.id);
      const other = await svc.workspace();
      const theirs = await insertBook(svc, other.id);
      const rev = 'a'.repeat(64);
      const res = await svc.request('POST', BATCHES, {
        key: ws.key,
        body: { books: [{ id: mine.randomId, settings_revision: rev }, { id: theirs.randomId, settings_revision: rev }], settings: { flip_sound: true } },
      });
      assert.equal(res.status, 404);
      assert.deepEqual(res.body.error.details.book_ids, [theirs.randomId]);
    });

    it('validates the body against the spec limits', async () => {
      const book = await insertBook(svc, ws.id);
      const rev = (await summary(svc, ws, [book.randomId])).body.data.books[0].settings_revision;
      const one = [{ id: book.randomId, settings_revision: rev }];
      const cases: [unknown, string][] = [
        [{ settings: { flip_sound: true } }, 'books'],
        [{ books: [], settings: { flip_sound: true } }, 'books'],
        [{ books: Array.from({ length: 101 }, (_, i) => ({ id: `b${i}`, settings_revision: rev })), settings: { flip_sound: true } }, 'books'],
        [{ books: [{ id: book.randomId, settings_revision: rev.toUpperCase() }], settings: { flip_sound: true } }, 'books.0.settings_revision'],
        [{ books: [{ id: book.randomId, settings_revision: 'abc' }], settings: { flip_sound: true } }, 'books.0.settings_revision'],
        [{ books: [...one, ...one], settings: { flip_sound: true } }, 'books.1.id'],
        [{ books: one }, 'settings'],
        [{ books: one, settings: {} }, 'settings'],
        [{ books: one, settings: { flipsound: true } }, 'settings'],
        [{ books: one, settings: { animation_type: 'spin' } }, 'settings.animation_type'],
        [{ books: one, settings: { downloadable_pdf: true } }, 'settings.downloadable_pdf'],
        [{ books: one, settings: { image_display: 'tile' } }, 'settings.image_display'],
        [{ books: one, settings: { title: 'x'.repeat(256) } }, 'settings.title'],
        [{ books: one, settings: { watermark: 'x'.repeat(2049) } }, 'settings.watermark'],
        [{ books: one, settings: { magic_link_message: 'x'.repeat(1001) } }, 'settings.magic_link_message'],
        [{ books: one, settings: { pdf_privacy_status: 'x'.repeat(51) } }, 'settings.pdf_privacy_status'],
        [{ books: one, settings: { pdf_password: 'x'.repeat(256) } }, 'settings.pdf_password'],
        [{ books: one, settings: { description: 'x'.repeat(50001) } }, 'settings.description'],
        [{ books: one, settings: { eod_lists: ['not an address'] } }, 'settings.eod_lists.0'],
        [{ books: one, settings: { eod_lists: ['a@example.com'], eod_enabled: false } }, 'settings.eod_enabled'],
        [{ books: one, settings: { eod_lists: [], eod_enabled: true } }, 'settings.eod_lists'],
      ];
      for (const [body, field] of cases) {
        const res = await svc.request('POST', BATCHES, { key: ws.key, body });
        assert.equal(res.status, 422, `${field}: ${res.text}`);
        assert.equal(res.body.error.type, 'ValidationException');
        assert.ok(Object.keys(res.body.error.details).some((k) => k === field || k.startsWith(`${field}.`)), `${field} in ${JSON.stringify(res.body.error.details)}`);
      }
      assert.equal((await getBook(svc, ws, book.randomId)).settings.sound_enabled, false);
    });

    it('needs books:write', async () => {
      const { key } = await svc.key(ws.id, ['books:read']);
      const res = await svc.request('POST', BATCHES, { key, body: { books: [{ id: 'x', settings_revision: 'a'.repeat(64) }], settings: { flip_sound: true } } });
      assert.equal(res.status, 403);
    });

    it('a 100-book batch finishes with the right outcome for every book', async () => {
      const targets = [];
      for (let i = 0; i < 100; i++) targets.push(await insertBook(svc, ws.id, { name: `Hundred ${i}` }));
      const ids = targets.map((t) => t.randomId);
      const read = await summary(svc, ws, ids);
      const revisions = read.body.data.books.map((b: { settings_revision: string }) => b.settings_revision);
      const res = await svc.request('POST', BATCHES, {
        key: ws.key,
        body: { books: ids.map((id, i) => ({ id, settings_revision: revisions[i] })), settings: { animation_type: 'fade', watermark: 'Q3' } },
      });
      assert.equal(res.status, 202, res.text);
      const batch = res.body.data;
      // While the batch runs, a colleague edits book 97: its item fails as stale, the rest succeed.
      await svc.request('PUT', `/v1/books/${ids[97]}`, { key: ws.key, body: { status: 'draft', title: 'Edited meanwhile' } });
      const done = await waitForBulk(svc, ws, batch.id);
      assert.equal(done.status, 'completed');
      assert.equal(done.progress.total, 100);
      assert.equal(done.progress.finished, '100/100');
      assert.equal(done.items.length, 100);
      const byStatus = (s: string) => done.items.filter((i: { status: string }) => i.status === s).length;
      assert.equal(byStatus('succeeded') + byStatus('failed'), 100);
      const item97 = done.items[97];
      if (item97.status === 'failed') {
        // The PUT landed before the item: the book keeps the colleague's write and nothing of the batch.
        assert.equal(item97.error.code, 'stale_revision');
        const book = await getBook(svc, ws, ids[97]!);
        assert.equal(book.name, 'Edited meanwhile');
        assert.equal(book.settings.watermark, null);
        assert.equal(byStatus('succeeded'), 99);
      } else {
        // The item ran first, then the PUT: both writes are there, whole.
        const book = await getBook(svc, ws, ids[97]!);
        assert.equal(book.name, 'Edited meanwhile');
        assert.equal(book.settings.watermark, 'Q3');
        assert.equal(byStatus('succeeded'), 100);
      }
      for (const [i, item] of done.items.entries()) {
        assert.equal(item.book_id, ids[i]);
        if (i === 97) continue;
        assert.equal(item.status, 'succeeded');
        assert.equal(item.settings_revision_before, revisions[i]);
      }
      const sample = await getBook(svc, ws, ids[42]!);
      assert.equal(sample.settings.animation_type, 'fade');
      assert.equal(sample.settings.watermark, 'Q3');
    });
  });

  describe('GET /books/bulk-settings/batches/{batch}', () => {
    it('answers 404 for an unknown batch and for another workspace\'s', async () => {
      const book = await insertBook(svc, ws.id);
      const res = await createBatch(svc, ws, [book.randomId], { flip_sound: true });
      const other = await svc.workspace();
      for (const [key, id] of [[other.key, res.body.data.id], [ws.key, 'bsb_missing']] as const) {
        const got = await svc.request('GET', `${BATCHES}/${id}`, { key });
        assert.equal(got.status, 404);
        assert.equal(got.body.error.type, 'ModelNotFoundException');
        assert.equal((await svc.request('DELETE', `${BATCHES}/${id}`, { key })).status, 404);
        assert.equal((await svc.request('POST', `${BATCHES}/${id}/retry`, { key })).status, 404);
      }
      await waitForBulk(svc, ws, res.body.data.id);
    });
  });

  describe('DELETE and retry', () => {
    it('cancelling a finished batch answers 409; retrying a batch without failures answers 409', async () => {
      const book = await insertBook(svc, ws.id);
      const res = await createBatch(svc, ws, [book.randomId], { flip_sound: true });
      const done = await waitForBulk(svc, ws, res.body.data.id);
      assert.equal(done.status, 'completed');
      const cancel = await svc.request('DELETE', `${BATCHES}/${done.id}`, { key: ws.key });
      assert.equal(cancel.status, 409);
      assert.equal(cancel.body.error.type, 'ConflictException');
      const retry = await svc.request('POST', `${BATCHES}/${done.id}/retry`, { key: ws.key });
      assert.equal(retry.status, 409);
      assert.match(retry.body.error.message, /no failed item/);
    });

    // PGlite runs one query at a time and the job's queries come back to back, so the batch outruns any request;
    // the restart suite below cancels a started batch deterministically on both engines.
    it('cancelling mid-run stops the items not started and keeps what was applied', { skip: !usingPostgres && 'needs PostgreSQL to interleave requests with the job' }, async () => {
      let checked = false;
      for (let attempt = 0; attempt < 3 && !checked; attempt++) {
        const targets = [];
        for (let i = 0; i < 100; i++) targets.push(await insertBook(svc, ws.id));
        const res = await createBatch(svc, ws, targets.map((t) => t.randomId), { watermark: 'Partial' });
        await eventually(async () => (await svc.request('GET', `${BATCHES}/${res.body.data.id}`, { key: ws.key })).body.data.progress.succeeded > 0, { intervalMs: 5 });
        const cancel = await svc.request('DELETE', `${BATCHES}/${res.body.data.id}`, { key: ws.key });
        if (cancel.status === 409) continue; // it finished first: try again
        assert.equal(cancel.status, 200, cancel.text);
        assert.equal(cancel.body.data.status, 'cancelled');
        assert.ok(cancel.body.data.cancelled_at);
        const done = await waitForBulk(svc, ws, res.body.data.id);
        assert.equal(done.status, 'cancelled');
        assert.ok(done.progress.cancelled > 0);
        assert.equal(done.progress.pending, 0);
        for (const item of done.items) {
          assert.ok(['succeeded', 'cancelled'].includes(item.status), item.status);
          const book = await getBook(svc, ws, item.book_id);
          assert.equal(book.settings.watermark, item.status === 'succeeded' ? 'Partial' : null);
        }
        assert.equal((await svc.request('DELETE', `${BATCHES}/${done.id}`, { key: ws.key })).status, 409);
        checked = true;
      }
      assert.ok(checked, 'the batch was cancelled mid-run in one of three attempts');
    });

  });

  describe('access lists (eod_lists, eod_enabled)', () => {
    it('replaces, keeps and clears the lists, and fails a book without a list to keep', async () => {
      const a = await insertBook(svc, ws.id);
      const b = await insertBook(svc, ws.id);
      const set = await createBatch(svc, ws, [a.randomId], { eod_lists: ['Ann@Example.com', '@partner.org'] });
      assert.equal(set.status, 202, set.text);
      assert.equal((await waitForBulk(svc, ws, set.body.data.id)).items[0].status, 'succeeded');
      const listed = await summary(svc, ws, [a.randomId]);
      assert.equal(listed.body.data.settings.common.eod_enabled, true);
      assert.deepEqual(listed.body.data.settings.common.eod_lists, ['ann@example.com', 'partner.org']);
      assert.equal((await getBook(svc, ws, a.randomId)).settings.eod_enabled, true);

      // eod_enabled true alone keeps a's list and fails b, which has none.
      const keep = await createBatch(svc, ws, [a.randomId, b.randomId], { eod_enabled: true, flip_sound: true });
      const kept = await waitForBulk(svc, ws, keep.body.data.id);
      assert.equal(kept.items[0].status, 'succeeded');
      assert.equal(kept.items[1].status, 'failed');
      assert.equal(kept.items[1].error.code, 'access_list_empty');
      // The failed item left b whole: not even flip_sound was applied.
      assert.equal((await getBook(svc, ws, b.randomId)).settings.sound_enabled, false);
      const rows = await svc.runtime.database.db.select().from(subscribers).where(eq(subscribers.bookId, a.id));
      assert.equal(rows.length, 2);

      const clear = await createBatch(svc, ws, [a.randomId], { eod_enabled: false });
      await waitForBulk(svc, ws, clear.body.data.id);
      assert.equal((await svc.runtime.database.db.select().from(subscribers).where(eq(subscribers.bookId, a.id))).length, 0);
      assert.equal((await getBook(svc, ws, a.randomId)).settings.eod_enabled, false);
      // One flipbook.updated per applied item, the list's flag change included (none of its own).
      const events = await svc.runtime.database.db.select().from(domainEvents)
        .where(and(eq(domainEvents.workspaceId, ws.id), eq(domainEvents.type, 'flipbook.updated'), sql`${domainEvents.payload}->>'book_id' = ${a.randomId}`));
      assert.deepEqual(events.map((e) => e.payload.bulk_settings_batch_id).sort(), [set.body.data.id, keep.body.data.id, clear.body.data.id].sort());
    });
  });

  describe('races with PUT /books/{book}', () => {
    it('never leaves a book with a mix of the two writes', async () => {
      for (let round = 0; round < 5; round++) {
        const targets = [];
        for (let i = 0; i < 20; i++) targets.push(await insertBook(svc, ws.id));
        const res = await createBatch(svc, ws, targets.map((t) => t.randomId), { watermark: 'BATCH', background: '#112233', animation_type: 'fade' });
        assert.equal(res.status, 202);
        // PUTs race the items: each writes the same fields with other values.
        const puts = await Promise.all(targets.map((t) => svc.request('PUT', `/v1/books/${t.randomId}`, {
          key: ws.key, body: { status: 'draft', watermark: 'PUT', background: '#445566', animation_type: 'zoom' },
        })));
        for (const put of puts) assert.equal(put.status, 200);
        const done = await waitForBulk(svc, ws, res.body.data.id);
        for (const [i, item] of done.items.entries()) {
          const { settings } = await getBook(svc, ws, targets[i]!.randomId);
          const triple = [settings.watermark, settings.background, settings.animation_type];
          // Whichever wrote last wins, whole; a stale item leaves the PUT's values.
          assert.ok(
            JSON.stringify(triple) === JSON.stringify(['PUT', '#445566', 'zoom']) || JSON.stringify(triple) === JSON.stringify(['BATCH', '#112233', 'fade']),
            `book ${i}: ${JSON.stringify(triple)} (item ${item.status})`,
          );
          if (item.status === 'failed') assert.equal(item.error.code, 'stale_revision');
          if (item.status === 'succeeded') {
            const [row] = await svc.runtime.database.db.select().from(books).where(eq(books.randomId, item.book_id));
            // The item saw exactly the revision it expected: it ran before the PUT, which then wrote over it whole.
            assert.equal(item.settings_revision_before, item.expected_settings_revision);
            assert.ok(row);
          }
        }
      }
    });
  });
});

describe('bulk settings across a restart', () => {
  it('an item interrupted mid-way runs again after a restart and is applied once', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-bulk-'));
    const scratch = usingPostgres ? await scratchPostgres() : null;
    const database = scratch ? { kind: 'postgres' as const, url: scratch.url } : undefined;
    try {
      // First run: no worker, so the batch waits; then a crash is simulated mid-item.
      let svc = await startService({ dataDir, worker: false, database, env });
      const ws = await svc.workspace();
      const one = await insertBook(svc, ws.id);
      const gone = await insertBook(svc, ws.id);
      const two = await insertBook(svc, ws.id);
      const res = await createBatch(svc, ws, [one.randomId, gone.randomId, two.randomId], { watermark: 'Once' });
      assert.equal(res.status, 202, res.text);
      const batchId = res.body.data.id;
      // The second book is deleted before its item runs.
      assert.equal((await svc.request('DELETE', `/v1/books/${gone.randomId}`, { key: ws.key })).status, 200);
      // A worker had marked the first item running and died before committing its write.
      await svc.runtime.database.db.update(bulkSettingsItems).set({ status: 'running', startedAt: new Date() }).where(and(eq(bulkSettingsItems.batchId, batchId), eq(bulkSettingsItems.position, 0)));
      await svc.stop();

      svc = await startService({ dataDir, worker: true, database, env });
      const done = await waitForBulk(svc, ws, batchId);
      assert.deepEqual(done.items.map((i: { status: string }) => i.status), ['succeeded', 'failed', 'succeeded']);
      assert.equal(done.items[1].error.code, 'book_not_found');
      assert.equal(done.items[1].book_id, gone.randomId);
      assert.equal((await getBook(svc, ws, one.randomId)).settings.watermark, 'Once');
      const events = await svc.runtime.database.db
        .select()
        .from(domainEvents)
        .where(sql`${domainEvents.payload}->>'bulk_settings_batch_id' = ${batchId}`);
      assert.deepEqual(events.map((e) => e.payload.book_id).sort(), [one.randomId, two.randomId].sort(), 'one event per applied item');

      // Retry: a new batch for the failed item only.
      const retry = await svc.request('POST', `${BATCHES}/${batchId}/retry`, { key: ws.key });
      assert.equal(retry.status, 202, retry.text);
      assert.equal(retry.body.data.retry_of_batch_id, batchId);
      assert.deepEqual(retry.body.data.items.map((i: { book_id: string }) => i.book_id), [gone.randomId]);
      // Retrying the retry while it may still run: 409 until it has finished.
      const retried = await waitForBulk(svc, ws, retry.body.data.id);
      assert.equal(retried.items[0].error.code, 'book_not_found');
      await svc.stop();
    } finally {
      await scratch?.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('cancelling a started batch lets the item in flight finish and cancels the rest', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-bulk-'));
    const scratch = usingPostgres ? await scratchPostgres() : null;
    const database = scratch ? { kind: 'postgres' as const, url: scratch.url } : undefined;
    try {
      let svc = await startService({ dataDir, worker: false, database, env });
      const ws = await svc.workspace();
      const targets = await Promise.all([1, 2, 3].map(() => insertBook(svc, ws.id)));
      const res = await createBatch(svc, ws, targets.map((t) => t.randomId), { watermark: 'Started' });
      const batchId = res.body.data.id;
      // A worker is inside the first item (marked running, write not committed yet).
      await svc.runtime.database.db.update(bulkSettingsBatches).set({ status: 'running', startedAt: new Date() }).where(eq(bulkSettingsBatches.id, batchId));
      await svc.runtime.database.db.update(bulkSettingsItems).set({ status: 'running', startedAt: new Date() }).where(and(eq(bulkSettingsItems.batchId, batchId), eq(bulkSettingsItems.position, 0)));
      const cancel = await svc.request('DELETE', `${BATCHES}/${batchId}`, { key: ws.key });
      assert.equal(cancel.status, 200, cancel.text);
      assert.equal(cancel.body.data.status, 'cancelled');
      assert.ok(cancel.body.data.cancelled_at);
      assert.equal(cancel.body.data.finished_at, null, 'not finished while an item is in flight');
      assert.deepEqual(cancel.body.data.items.map((i: { status: string }) => i.status), ['running', 'cancelled', 'cancelled']);
      assert.equal(cancel.body.data.progress.finished, '2/3');
      await svc.stop();

      // The worker comes back: the item in flight is applied, the cancelled ones are not, and the batch finishes.
      svc = await startService({ dataDir, worker: true, database, env });
      const done = await waitForBulk(svc, ws, batchId);
      assert.equal(done.status, 'cancelled');
      assert.deepEqual(done.items.map((i: { status: string }) => i.status), ['succeeded', 'cancelled', 'cancelled']);
      assert.deepEqual(await Promise.all(targets.map(async (t) => (await getBook(svc, ws, t.randomId)).settings.watermark)), ['Started', null, null]);
      assert.equal((await svc.request('DELETE', `${BATCHES}/${batchId}`, { key: ws.key })).status, 409);
      await svc.stop();
    } finally {
      await scratch?.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('cancelling before the batch starts cancels every item; retry of a queued batch answers 409', async () => {
    const svc = await startService({ worker: false, env });
    try {
      const ws = await svc.workspace();
      const targets = await Promise.all([1, 2, 3].map(() => insertBook(svc, ws.id)));
      const res = await createBatch(svc, ws, targets.map((t) => t.randomId), { flip_sound: true });
      const retry = await svc.request('POST', `${BATCHES}/${res.body.data.id}/retry`, { key: ws.key });
      assert.equal(retry.status, 409);
      assert.match(retry.body.error.message, /still running/);
      const cancel = await svc.request('DELETE', `${BATCHES}/${res.body.data.id}`, { key: ws.key });
      assert.equal(cancel.status, 200, cancel.text);
      assert.equal(cancel.body.data.status, 'cancelled');
      assert.ok(cancel.body.data.cancelled_at && cancel.body.data.finished_at);
      assert.deepEqual(cancel.body.data.items.map((i: { status: string }) => i.status), ['cancelled', 'cancelled', 'cancelled']);
      assert.equal(cancel.body.data.progress.finished, '3/3');
      for (const t of targets) assert.equal((await getBook(svc, ws, t.randomId)).settings.sound_enabled, false);
      assert.equal((await svc.request('DELETE', `${BATCHES}/${res.body.data.id}`, { key: ws.key })).status, 409);
      // Cancelled without failures: nothing to retry.
      assert.equal((await svc.request('POST', `${BATCHES}/${res.body.data.id}/retry`, { key: ws.key })).status, 409);
    } finally {
      await svc.stop();
    }
  });
});
