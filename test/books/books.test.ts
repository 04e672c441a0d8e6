import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { books } from '../../src/modules/books/books.tables.ts';
import type { DatabaseTarget } from '../../src/platform/db/database.ts';
import { makePdf } from '../documents.ts';
import { insertBook } from '../factories.ts';
import { eventually, scratchPostgres, startService, uploadFile, usingPostgres, waitForBatch, type TestService } from '../helpers.ts';

describe('books', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService();
  });
  after(() => svc.stop());

  describe('GET /books', () => {
    let ws: { id: number; key: string };
    const t0 = Date.parse('2026-01-01T00:00:00.000Z');
    before(async () => {
      ws = await svc.workspace();
      const specs: [string, string, number][] = [
        ['Alpha catalogue', 'publish', 1], ['beta Brochure', 'draft', 2], ['Gamma catalogue', 'schedule', 3],
        ['delta report', 'publish', 4], ['Epsilon', 'draft', 5], ['Zeta catalogue', 'publish', 5],
      ];
      for (const [name, status, minute] of specs) {
        await insertBook(svc, ws.id, {
          name, status,
          publishedDate: status === 'schedule' ? new Date(Date.now() + 86_400_000) : null,
          createdAt: new Date(t0 + minute * 60_000), updatedAt: new Date(t0 + (10 - minute) * 60_000),
        });
      }
      const other = await svc.workspace();
      await insertBook(svc, other.id, { name: 'Other workspace catalogue', status: 'publish' });
    });

    const names = (res: { body: { data: { name: string }[] } }) => res.body.data.map((b) => b.name);

    it('lists newest first by default, only the workspace\'s books', async () => {
      const res = await svc.request('GET', '/v1/books', { key: ws.key });
      assert.equal(res.status, 200);
      // Two books share a created_at: the later id comes first.
      assert.deepEqual(names(res), ['Zeta catalogue', 'Epsilon', 'delta report', 'Gamma catalogue', 'beta Brochure', 'Alpha catalogue']);
      assert.deepEqual(res.body.meta, { next_cursor: null, has_more: false });
    });

    it('filters by status and by a case-insensitive part of the name', async () => {
      assert.deepEqual(names(await svc.request('GET', '/v1/books', { key: ws.key, query: { 'filter[status]': 'publish' } })), ['Zeta catalogue', 'delta report', 'Alpha catalogue']);
      assert.deepEqual(names(await svc.request('GET', '/v1/books', { key: ws.key, query: { 'filter[status]': 'schedule' } })), ['Gamma catalogue']);
      assert.deepEqual(names(await svc.request('GET', '/v1/books', { key: ws.key, query: { 'filter[name]': 'CATALOGUE', sort: 'name' } })), ['Alpha catalogue', 'Gamma catalogue', 'Zeta catalogue']);
      assert.deepEqual(names(await svc.request('GET', '/v1/books', { key: ws.key, query: { 'filter[name]': '100%_' } })), []);
    });

    it('pages through every sort without skipping or repeating', async () => {
      const expected: Record<string, string[]> = {
        name: ['Alpha catalogue', 'beta Brochure', 'delta report', 'Epsilon', 'Gamma catalogue', 'Zeta catalogue'],
        '-name': ['Zeta catalogue', 'Gamma catalogue', 'Epsilon', 'delta report', 'beta Brochure', 'Alpha catalogue'],
        created_at: ['Alpha catalogue', 'beta Brochure', 'Gamma catalogue', 'delta report', 'Epsilon', 'Zeta catalogue'],
        '-updated_at': ['Alpha catalogue', 'beta Brochure', 'Gamma catalogue', 'delta report', 'Zeta catalogue', 'Epsilon'],
        updated_at: ['Epsilon', 'Zeta catalogue', 'delta report', 'Gamma catalogue', 'beta Brochure', 'Alpha catalogue'],
        status: ['beta Brochure', 'Epsilon', 'Alpha catalogue', 'delta report', 'Zeta catalogue', 'Gamma catalogue'],
        '-status': ['Gamma catalogue', 'Zeta catalogue', 'delta report', 'Alpha catalogue', 'Epsilon', 'beta Brochure'],
      };
      for (const [sort, order] of Object.entries(expected)) {
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const res = await svc.request('GET', '/v1/books', { key: ws.key, query: { sort, limit: 4, ...(cursor ? { cursor } : {}) } });
          assert.equal(res.status, 200, res.text);
          seen.push(...names(res));
          cursor = res.body.meta.next_cursor ?? undefined;
        } while (cursor);
        assert.deepEqual(seen, order, `sort ${sort}`);
      }
    });

    it('validates the query', async () => {
      const invalid: Record<string, string | number>[] = [{ limit: 0 }, { limit: 201 }, { sort: 'size' }, { 'filter[status]': 'archived' }, { 'filter[name]': 'x'.repeat(256) }];
      for (const query of invalid) {
        const res = await svc.request('GET', '/v1/books', { key: ws.key, query });
        assert.equal(res.status, 422, JSON.stringify(query));
      }
      const other = await svc.request('GET', '/v1/books', { key: ws.key, query: { sort: 'name', cursor: Buffer.from(JSON.stringify({ s: '-created_at', v: 'x', i: 1 })).toString('base64url') } });
      assert.equal(other.status, 422);
    });
  });

  describe('PUT /books/{book}', () => {
    it('updates settings and fields, keeps read-only ones, never returns the password', async () => {
      const ws = await svc.workspace({ plan: 'pro' });
      const book = await insertBook(svc, ws.id);
      const res = await svc.request('PUT', `/v1/books/${book.randomId}`, {
        key: ws.key,
        body: {
          status: 'publish', title: 'Renamed', description: 'About it', background: '#112233', watermark: 'CONFIDENTIAL',
          pdf_password: 's3cret', animation_type: 'slide', mobile_animation_type: 'fade', image_display: 'center/cover',
          allow_fullscreen: false, flip_sound: true, downloadable_pdf: true, made_with_badge_enabled: false,
          eod_enabled: true, domains_enabled: true, magic_link_message: 'Enter your e-mail',
        },
      });
      assert.equal(res.status, 200, res.text);
      const data = res.body.data;
      assert.equal(data.name, 'Renamed');
      assert.equal(data.description, 'About it');
      assert.equal(data.status, 'publish');
      assert.ok(data.published_date);
      assert.deepEqual(
        [data.settings.background, data.settings.watermark, data.settings.animation_type, data.settings.mobile_animation_type, data.settings.image_display],
        ['#112233', 'CONFIDENTIAL', 'slide', 'fade', 'center/cover'],
      );
      assert.equal(data.settings.fullscreen_enabled, false);
      assert.equal(data.settings.sound_enabled, true);
      assert.equal(data.settings.downloadable, true);
      assert.equal(data.settings.made_with_badge_enabled, false);
      assert.equal(data.settings.has_pdf_password, true);
      assert.equal(data.settings.eod_enabled, false, 'read-only, ignored');
      assert.equal(data.settings.domains_enabled, false, 'read-only, ignored');
      assert.ok(!res.text.includes('s3cret'));
      const cleared = await svc.request('PUT', `/v1/books/${book.randomId}`, { key: ws.key, body: { status: 'draft', pdf_password: '' } });
      assert.equal(cleared.body.data.settings.has_pdf_password, false);
      assert.equal(cleared.body.data.status, 'draft');
    });

    it('keeps the badge on for plans that cannot remove it', async () => {
      const ws = await svc.workspace({ plan: 'free' });
      const book = await insertBook(svc, ws.id);
      const res = await svc.request('PUT', `/v1/books/${book.randomId}`, { key: ws.key, body: { status: 'draft', made_with_badge_enabled: false } });
      assert.equal(res.body.data.settings.made_with_badge_enabled, true);
    });

    it('validates the body with the spec\'s limits', async () => {
      const ws = await svc.workspace();
      const book = await insertBook(svc, ws.id);
      const cases: [Record<string, unknown>, string][] = [
        [{}, 'status'],
        [{ status: 'archived' }, 'status'],
        [{ status: 'draft', title: 'x'.repeat(256) }, 'title'],
        [{ status: 'draft', description: 'x'.repeat(50_001) }, 'description'],
        [{ status: 'draft', magic_link_message: 'x'.repeat(1001) }, 'magic_link_message'],
        [{ status: 'draft', animation_type: 'spin' }, 'animation_type'],
        [{ status: 'draft', image_display: 'tile' }, 'image_display'],
        [{ status: 'draft', expires_at: 'tomorrow' }, 'expires_at'],
        [{ status: 'draft', flip_sound: 'yes' }, 'flip_sound'],
        [{ status: 'schedule', published_date: '2020-01-01T00:00:00Z' }, 'published_date'],
        [{ status: 'schedule' }, 'published_date'],
        [{ status: 'publish', expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
      ];
      for (const [body, field] of cases) {
        const res = await svc.request('PUT', `/v1/books/${book.randomId}`, { key: ws.key, body });
        assert.equal(res.status, 422, `${JSON.stringify(body).slice(0, 80)} → ${res.status}`);
        assert.ok(res.body.error.details[field], `${field} in ${JSON.stringify(res.body.error.details)}`);
      }
    });

    it('publishes a scheduled book when its time comes', async () => {
      const ws = await svc.workspace();
      const book = await insertBook(svc, ws.id);
      const at = new Date(Date.now() + 5000).toISOString(); // still ahead when a loaded machine sends it (a past instant is a 422)
      const res = await svc.request('PUT', `/v1/books/${book.randomId}`, { key: ws.key, body: { status: 'schedule', published_date: at } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.status, 'schedule');
      await eventually(async () => {
        const [row] = await svc.runtime.database.db.select().from(books).where(eq(books.id, book.id));
        return row!.status === 'publish';
      }, { timeoutMs: 60_000 });
      const read = await svc.request('GET', `/v1/books/${book.randomId}`, { key: ws.key });
      assert.equal(read.body.data.status, 'publish');
    });

    it('unpublishes at expires_at: the record shows it at that instant, and the job persists it', async () => {
      const ws = await svc.workspace();
      const book = await insertBook(svc, ws.id);
      // Far enough ahead that a loaded machine still sends it as a future instant (a past one is a 422).
      const expiresAt = new Date(Date.now() + 5000);
      const res = await svc.request('PUT', `/v1/books/${book.randomId}`, { key: ws.key, body: { status: 'publish', expires_at: expiresAt.toISOString() } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.status, 'publish');
      assert.equal(res.body.data.expires_at, expiresAt.toISOString());
      await new Promise((r) => setTimeout(r, expiresAt.getTime() - Date.now() + 50));
      const read = await svc.request('GET', `/v1/books/${book.randomId}`, { key: ws.key });
      assert.equal(read.body.data.status, 'draft', 'no longer published the moment it expires');
      const published = await svc.request('GET', '/v1/books', { key: ws.key, query: { 'filter[status]': 'publish' } });
      assert.equal(published.body.data.length, 0);
      await eventually(async () => {
        const [row] = await svc.runtime.database.db.select().from(books).where(eq(books.id, book.id));
        return row!.status === 'draft' && row!.unpublishedAt !== null;
      });
      const events = await svc.runtime.database.runner.executeSql(`select type, payload from domain_events where workspace_id = $1 order by id`, [ws.id]);
      assert.ok(events.rows.some((e: any) => e.type === 'flipbook.updated' && e.payload.reason === 'expired'));
    });

    it('billing expiry is read-only through the API and set by the operator', async () => {
      const ws = await svc.workspace();
      const book = await insertBook(svc, ws.id, { status: 'publish' });
      await svc.runtime.services.books.setBillingExpiry(book.randomId, new Date('2027-01-01T00:00:00Z'));
      const read = await svc.request('GET', `/v1/books/${book.randomId}`, { key: ws.key });
      assert.equal(read.body.data.billing_expires_at, '2027-01-01T00:00:00.000Z');
      assert.equal(read.body.data.status, 'publish');
    });
  });

  it('confines books to their workspace: another workspace gets 404 for read, update and delete', async () => {
    const a = await svc.workspace();
    const b = await svc.workspace();
    const book = await insertBook(svc, a.id);
    for (const [method, body] of [['GET', undefined], ['PUT', { status: 'publish' }], ['DELETE', undefined]] as const) {
      const res = await svc.request(method, `/v1/books/${book.randomId}`, { key: b.key, body });
      assert.equal(res.status, 404, method);
      assert.equal(res.body.error.type, 'ModelNotFoundException');
    }
    assert.equal((await svc.request('GET', `/v1/books/${book.randomId}`, { key: a.key })).status, 200);
    const unknown = await svc.request('GET', '/v1/books/does-not-exist', { key: a.key });
    assert.deepEqual(unknown.body, (await svc.request('GET', `/v1/books/${book.randomId}`, { key: b.key })).body);
  });

  it('deletes a book and every file generated for it', async () => {
    const ws = await svc.workspace();
    const upload = await uploadFile(svc, ws.key, await makePdf({ pages: 2 }), 'to-delete.pdf', { status: 'publish' });
    const batch = await waitForBatch(svc, ws.key, upload.body.data.batch_id);
    const randomId = batch.books[0].random_id;
    // The 2048 px image is drawn on its first request: ask for page 1's, so the deletion must remove it too.
    const pages = await svc.request('GET', `/v1/books/${randomId}/pages`, { key: ws.key });
    const large = pages.body.data[0].images.find((i: { width: number }) => i.width === 2048);
    assert.equal((await fetch(large.url)).status, 200);
    const files = await svc.runtime.storage.list(`books/${randomId}/`);
    assert.equal(files.length, 6, `source + 2 pages x 2 widths + one 2048 px image drawn on request: ${files.join(', ')}`);
    const res = await svc.request('DELETE', `/v1/books/${randomId}`, { key: ws.key });
    assert.equal(res.status, 200);
    assert.equal(typeof res.body.data.message, 'string');
    assert.deepEqual(await svc.runtime.storage.list(`books/${randomId}/`), []);
    assert.equal((await svc.request('GET', `/v1/books/${randomId}`, { key: ws.key })).status, 404);
    assert.equal((await svc.request('DELETE', `/v1/books/${randomId}`, { key: ws.key })).status, 404);
  });

  it('cancels a conversion in flight, and refuses to cancel a finished one', async () => {
    const ws = await svc.workspace();
    const upload = await uploadFile(svc, ws.key, await makePdf({ pages: 300 }), 'long.pdf');
    const batchId = upload.body.data.batch_id;
    const randomId = upload.body.data.books[0].random_id;
    await eventually(async () => {
      const res = await svc.request('GET', `/v1/batches/${batchId}`, { key: ws.key });
      return res.body.data.progress.completed >= 2;
    }, { timeoutMs: 180_000 }); // the first pages of a conversion, on a loaded machine
    const cancelled = await svc.request('DELETE', `/v1/batches/${batchId}`, { key: ws.key });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.data.status, 'cancelled');
    assert.deepEqual(cancelled.body.data.books, []);
    assert.ok(cancelled.body.data.progress.completed < 300);
    assert.equal((await svc.request('GET', `/v1/books/${randomId}`, { key: ws.key })).status, 404);
    // The job stops and cleans up after itself.
    await eventually(async () => (await svc.runtime.storage.list(`books/${randomId}/`)).length === 0, { timeoutMs: 180_000 });
    const again = await svc.request('DELETE', `/v1/batches/${batchId}`, { key: ws.key });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.type, 'ConflictException');

    const small = await uploadFile(svc, ws.key, await makePdf({ pages: 1 }), 'small.pdf');
    await waitForBatch(svc, ws.key, small.body.data.batch_id);
    assert.equal((await svc.request('DELETE', `/v1/batches/${small.body.data.batch_id}`, { key: ws.key })).status, 409);
    assert.equal((await svc.request('DELETE', '/v1/batches/bat_unknown', { key: ws.key })).status, 404);
  });

  it('removes a page stored after the cancellation, when the write on the deleted book fails before the job notices', async () => {
    const ws = await svc.workspace();
    const storage = svc.runtime.storage;
    const put = storage.put;
    let cancelledDuring: Promise<unknown> | null = null;
    // The cancellation lands between a page's image upload and its row: the row's insert then fails on the deleted book.
    storage.put = async function (key, ...rest) {
      if (!cancelledDuring && /\/p3-w\d+\./.test(key)) {
        cancelledDuring = svc.request('DELETE', `/v1/batches/${batchId}`, { key: ws.key });
        assert.equal(((await cancelledDuring) as { status: number }).status, 200);
      }
      return put.call(this, key, ...rest);
    };
    let batchId = '';
    let randomId = '';
    try {
      const upload = await uploadFile(svc, ws.key, await makePdf({ pages: 40 }), 'raced.pdf');
      batchId = upload.body.data.batch_id;
      randomId = upload.body.data.books[0].random_id;
      await eventually(async () => cancelledDuring, { timeoutMs: 180_000 });
      await eventually(async () => (await storage.list(`books/${randomId}/`)).length === 0, { timeoutMs: 60_000 });
      // and nothing comes back later (a retry would find no book to clean up after)
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.deepEqual(await storage.list(`books/${randomId}/`), []);
    } finally {
      storage.put = put;
    }
  });

  it('replays an upload sent twice with one Idempotency-Key: one batch, one book', async () => {
    const ws = await svc.workspace();
    const pdf = await makePdf({ pages: 1 });
    const headers = { 'idempotency-key': `upload-${Date.now()}` };
    const first = await uploadFile(svc, ws.key, pdf, 'once.pdf', {}, headers);
    const second = await uploadFile(svc, ws.key, pdf, 'once.pdf', {}, headers);
    assert.equal(second.headers.get('x-idempotent-replay'), 'true');
    assert.equal(second.body.data.batch_id, first.body.data.batch_id);
    const list = await svc.request('GET', '/v1/books', { key: ws.key });
    assert.equal(list.body.data.length, 1);
  });
});

describe('a restart during conversion', () => {
  it('loses nothing: the conversion resumes and the book appears once', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-restart-'));
    const scratch = usingPostgres ? await scratchPostgres() : null;
    const database: DatabaseTarget = scratch ? { kind: 'postgres', url: scratch.url } : { kind: 'pglite', dataDir: path.join(dataDir, 'pglite') };
    try {
      const first = await startService({ dataDir, database });
      const ws = await first.workspace();
      const upload = await uploadFile(first, ws.key, await makePdf({ pages: 120 }), 'restart.pdf');
      const batchId = upload.body.data.batch_id;
      await eventually(async () => (await first.request('GET', `/v1/batches/${batchId}`, { key: ws.key })).body.data.progress.completed >= 3, { timeoutMs: 180_000 });
      await first.stop();

      const second = await startService({ dataDir, database });
      try {
        const batch = await waitForBatch(second, ws.key, batchId, 180_000);
        assert.equal(batch.status, 'completed');
        assert.deepEqual(batch.progress, { total: 120, completed: 120, pending: 0, failed: 0 });
        const list = await second.request('GET', '/v1/books', { key: ws.key });
        assert.equal(list.body.data.length, 1);
        assert.equal(list.body.data[0].page_count, 120);
        const pages = await second.request('GET', `/v1/books/${list.body.data[0].random_id}/pages`, { key: ws.key, query: { limit: 200 } });
        assert.deepEqual(pages.body.data.map((p: { number: number }) => p.number), Array.from({ length: 120 }, (_, i) => i + 1));
        // Only the final rendition's files remain: 120 pages x 2 widths (2048 px is drawn on request) + the source.
        assert.equal((await second.runtime.storage.list(`books/${list.body.data[0].random_id}/`)).length, 241);
      } finally {
        await second.stop();
      }
    } finally {
      await scratch?.drop();
      // A renderer of the stopped service may still be closing its last file: retry ENOTEMPTY.
      await rm(dataDir, { recursive: true, force: true, maxRetries: 10 });
    }
  });
});
