/**
 * Access lists (/subscribers) and embed domains over the API: every
 * operation, its validation and 404s, workspace isolation, and the derived
 * settings.eod_enabled / domains_enabled moving with the lists.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { books } from '../../src/modules/books/books.tables.ts';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';

describe('access lists and embed domains', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let other: { id: number; key: string };

  before(async () => {
    svc = await startService({ worker: false });
    ws = await svc.workspace();
    other = await svc.workspace();
  });
  after(() => svc.stop());

  const book = (randomId: string, key = ws.key) => svc.request('GET', `/v1/books/${randomId}`, { key }).then((r) => r.body.data);

  describe('POST /subscribers', () => {
    it('refuses the numeric key, unknown books, other workspaces\' books and bad addresses with 422', async () => {
      const row = await insertBook(svc, ws.id);
      const numeric = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: String(row.id), email: 'ann@example.com' } });
      assert.equal(numeric.status, 422);
      assert.match(numeric.body.error.details.book_id[0], /random_id/);
      const unknown = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: 'AAAAAAAAAAAAAAAAAAAAAA', email: 'ann@example.com' } });
      assert.equal(unknown.status, 422);
      const foreign = await svc.request('POST', '/v1/subscribers', { key: other.key, body: { book_id: row.randomId, email: 'ann@example.com' } });
      assert.equal(foreign.status, 422);
      for (const email of ['not an address', 'ann@', 'ann@localhost@x', 'a..b@example.com', '@@']) {
        const bad = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: row.randomId, email, type: 'email' } });
        assert.equal(bad.status, 422, email);
        assert.ok(bad.body.error.details.email, email);
      }
      const badType = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: row.randomId, email: 'ann@example.com', type: 'group' } });
      assert.equal(badType.status, 422);
      const tooLong = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: row.randomId, email: `${'a'.repeat(250)}@example.com` } });
      assert.equal(tooLong.status, 422);
      assert.equal((await book(row.randomId)).settings.eod_enabled, false, 'nothing was added');
    });

    it('adds addresses and domains, turns eod_enabled on with a new settings_revision, and answers a repeat with 200', async () => {
      const row = await insertBook(svc, ws.id);
      const before = await book(row.randomId);
      assert.equal(before.settings.eod_enabled, false);

      const added = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: row.randomId, email: ' Ann@Example.COM ' } });
      assert.equal(added.status, 201);
      assert.deepEqual({ ...added.body.data, id: 0, created_at: '' }, { id: 0, book_id: row.randomId, type: 'email', email: 'ann@example.com', created_at: '' });
      assert.deepEqual(added.body.meta, { eod_enabled: true });

      const afterAdd = await book(row.randomId);
      assert.equal(afterAdd.settings.eod_enabled, true);
      const [stored] = await svc.runtime.database.db.select({ revision: books.settingsRevision }).from(books).where(eq(books.id, row.id));
      assert.notEqual(stored!.revision, row.settingsRevision, 'the settings revision moved with eod_enabled');

      const again = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: row.randomId, email: 'ann@example.com' } });
      assert.equal(again.status, 200);
      assert.equal(again.body.data.id, added.body.data.id);

      const domain = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: row.randomId, email: '@Partner.ORG', type: 'domain' } });
      assert.equal(domain.status, 201);
      assert.equal(domain.body.data.type, 'domain');
      assert.equal(domain.body.data.email, 'partner.org');
      // Without a type, a bare domain is a domain and an address with type domain stands for its domain.
      const inferred = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: row.randomId, email: 'acme.test' } });
      assert.equal(inferred.body.data.type, 'domain');
      const fromAddress = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: row.randomId, email: 'bob@bücher.example', type: 'domain' } });
      assert.equal(fromAddress.body.data.email, 'xn--bcher-kva.example');
    });

    it('needs subscribers:write', async () => {
      const row = await insertBook(svc, ws.id);
      const readOnly = await svc.key(ws.id, ['subscribers:read']);
      const res = await svc.request('POST', '/v1/subscribers', { key: readOnly.key, body: { book_id: row.randomId, email: 'ann@example.com' } });
      assert.equal(res.status, 403);
      assert.deepEqual(res.body.error.details.required_scope, ['subscribers:write']);
    });
  });

  describe('GET /subscribers', () => {
    let listed: { randomId: string };
    let fresh: { id: number; key: string };
    before(async () => {
      fresh = await svc.workspace();
      const a = await insertBook(svc, fresh.id);
      const b = await insertBook(svc, fresh.id);
      listed = a;
      for (const email of ['ann@example.com', 'bob@example.com', 'carol@example.net']) {
        await svc.request('POST', '/v1/subscribers', { key: fresh.key, body: { book_id: a.randomId, email } });
      }
      await svc.request('POST', '/v1/subscribers', { key: fresh.key, body: { book_id: b.randomId, email: 'example.org', type: 'domain' } });
    });

    const list = (query: Record<string, string | number>) => svc.request('GET', '/v1/subscribers', { key: fresh.key, query });

    it('pages with pagination[page] and pagination[per_page] (or rowsPerPage) and reports totals', async () => {
      const first = await list({ 'pagination[per_page]': 2 });
      assert.equal(first.status, 200);
      assert.equal(first.body.data.length, 2);
      assert.deepEqual(first.body.meta, { current_page: 1, per_page: 2, total: 4, last_page: 2 });
      const second = await list({ 'pagination[rowsPerPage]': 2, 'pagination[page]': 2 });
      assert.equal(second.body.data.length, 2);
      assert.notDeepEqual(second.body.data.map((s: { id: number }) => s.id), first.body.data.map((s: { id: number }) => s.id));
      const beyond = await list({ 'pagination[page]': 9 });
      assert.deepEqual(beyond.body.data, []);
    });

    it('filters by text, by a book\'s random_id and by type', async () => {
      assert.deepEqual((await list({ filter: 'example.com' })).body.data.map((s: { email: string }) => s.email).sort(), ['ann@example.com', 'bob@example.com']);
      assert.equal((await list({ filter: listed.randomId })).body.data.length, 3);
      assert.deepEqual((await list({ type: 'domain' })).body.data.map((s: { email: string }) => s.email), ['example.org']);
      assert.deepEqual((await list({ filter: '%' })).body.data, [], 'LIKE wildcards are literal');
    });

    it('validates its query with the spec\'s limits', async () => {
      const queries: Record<string, string | number>[] = [{ 'pagination[per_page]': 201 }, { 'pagination[rowsPerPage]': 0 }, { 'pagination[page]': 0 }, { type: 'group' }];
      for (const query of queries) {
        assert.equal((await list(query)).status, 422, JSON.stringify(query));
      }
    });

    it('shows only the caller\'s workspace', async () => {
      const res = await svc.request('GET', '/v1/subscribers', { key: other.key });
      assert.equal(res.status, 200);
      assert.ok(res.body.data.every((s: { book_id: string }) => s.book_id !== listed.randomId));
    });
  });

  describe('DELETE /subscribers/{subscriber}', () => {
    it('removes entries; the last one turns eod_enabled off; another workspace gets 404', async () => {
      const row = await insertBook(svc, ws.id);
      const a = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: row.randomId, email: 'ann@example.com' } });
      const b = await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: row.randomId, email: 'example.com' } });
      assert.equal((await svc.request('DELETE', `/v1/subscribers/${a.body.data.id}`, { key: other.key })).status, 404);
      const first = await svc.request('DELETE', `/v1/subscribers/${a.body.data.id}`, { key: ws.key });
      assert.equal(first.status, 200);
      assert.equal(first.body.data.deleted, true);
      assert.deepEqual(first.body.meta, { eod_enabled: true });
      assert.equal((await book(row.randomId)).settings.eod_enabled, true);
      const last = await svc.request('DELETE', `/v1/subscribers/${b.body.data.id}`, { key: ws.key });
      assert.deepEqual(last.body.meta, { eod_enabled: false });
      assert.equal((await book(row.randomId)).settings.eod_enabled, false);
      assert.equal((await svc.request('DELETE', `/v1/subscribers/${b.body.data.id}`, { key: ws.key })).status, 404);
      assert.equal((await svc.request('DELETE', '/v1/subscribers/abc', { key: ws.key })).status, 422);
    });

    it('ignores eod_enabled in PUT /books/{book}', async () => {
      const row = await insertBook(svc, ws.id);
      const res = await svc.request('PUT', `/v1/books/${row.randomId}`, { key: ws.key, body: { status: 'draft', eod_enabled: true, domains_enabled: true } });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.settings.eod_enabled, false);
      assert.equal(res.body.data.settings.domains_enabled, false);
    });
  });

  describe('POST /subscribers/import and /subscribers/clear', () => {
    it('previews each row with a dry run, then adds the good rows in one go and reports the rest in words', async () => {
      const row = await insertBook(svc, ws.id);
      await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: row.randomId, email: 'old@example.com' } });
      const entries = [{ email: 'Ann@Example.com' }, { email: 'not an address' }, { email: 'partner.org' }, { email: 'ann@example.com' }, { email: 'OLD@example.com' }, { email: 'bob@', type: 'email' }];
      const preview = await svc.request('POST', '/v1/subscribers/import', { key: ws.key, body: { book_id: row.randomId, entries, dry_run: true } });
      assert.equal(preview.status, 200);
      assert.deepEqual(preview.body.data.map((r: { row: number; outcome: string }) => `${r.row}:${r.outcome}`), ['1:added', '2:invalid', '3:added', '4:repeated', '5:listed', '6:invalid']);
      assert.match(preview.body.data[1].message, /not a valid domain/);
      assert.equal(preview.body.data[3].message, 'Repeats row 1.');
      assert.equal(preview.body.data[4].message, 'Already on the access list.');
      assert.match(preview.body.data[5].message, /not a valid e-mail address/);
      assert.deepEqual(preview.body.meta, { added: 2, listed: 1, repeated: 1, invalid: 2, dry_run: true, eod_enabled: true });
      const listed = () => svc.request('GET', '/v1/subscribers', { key: ws.key, query: { filter: row.randomId } }).then((r) => r.body.data.map((s: { email: string }) => s.email).sort());
      assert.deepEqual(await listed(), ['old@example.com'], 'a dry run writes nothing');

      const done = await svc.request('POST', '/v1/subscribers/import', { key: ws.key, body: { book_id: row.randomId, entries } });
      assert.equal(done.status, 200);
      assert.equal(done.body.meta.added, 2);
      assert.equal(typeof done.body.data[0].id, 'number');
      assert.deepEqual(await listed(), ['ann@example.com', 'old@example.com', 'partner.org']);

      const cleared = await svc.request('POST', '/v1/subscribers/clear', { key: ws.key, body: { book_id: row.randomId } });
      assert.deepEqual(cleared.body, { data: { removed: 3 }, meta: { eod_enabled: false } });
      assert.equal((await book(row.randomId)).settings.eod_enabled, false);
    });

    it('refuses other workspaces\' books, the numeric key, empty and oversized lists, and read-only keys', async () => {
      const row = await insertBook(svc, ws.id);
      const post = (path: string, body: unknown, key = ws.key) => svc.request('POST', path, { key, body });
      assert.equal((await post('/v1/subscribers/import', { book_id: row.randomId, entries: [{ email: 'a@example.com' }] }, other.key)).status, 422);
      assert.equal((await post('/v1/subscribers/clear', { book_id: row.randomId }, other.key)).status, 422);
      assert.equal((await post('/v1/subscribers/import', { book_id: String(row.id), entries: [{ email: 'a@example.com' }] })).status, 422);
      assert.equal((await post('/v1/subscribers/import', { book_id: row.randomId, entries: [] })).status, 422);
      const many = Array.from({ length: 1001 }, (_, i) => ({ email: `r${i}@example.com` }));
      assert.equal((await post('/v1/subscribers/import', { book_id: row.randomId, entries: many })).status, 422);
      const readOnly = await svc.key(ws.id, ['subscribers:read']);
      assert.equal((await post('/v1/subscribers/import', { book_id: row.randomId, entries: [{ email: 'a@example.com' }] }, readOnly.key)).status, 403);
      assert.equal((await book(row.randomId)).settings.eod_enabled, false);
    });
  });

  describe('embed domains', () => {
    it('reduces a pasted URL to its host, refuses what is not a host, and moves domains_enabled', async () => {
      const row = await insertBook(svc, ws.id);
      const path = `/v1/books/${row.randomId}/embed-domains`;
      for (const domain of ['not a host', 'https://', '127.0.0.1', 'http://[::1]/', 'javascript:alert(1)', 'ex ample.com', 'a'.repeat(64) + '.com']) {
        const bad = await svc.request('POST', path, { key: ws.key, body: { domain } });
        assert.equal(bad.status, 422, domain);
      }
      assert.equal((await svc.request('POST', path, { key: ws.key, body: {} })).status, 422);
      assert.equal((await book(row.randomId)).settings.domains_enabled, false);

      const added = await svc.request('POST', path, { key: ws.key, body: { domain: 'https://Shop.Example.com:8443/catalog?ref=1' } });
      assert.equal(added.status, 200);
      assert.deepEqual({ ...added.body.data, id: '', created_at: '' }, { id: '', domain: 'shop.example.com', includes_subdomains: true, created_at: '' });
      assert.equal(typeof added.body.data.id, 'string');
      assert.deepEqual(added.body.meta, { domains_enabled: true });
      const again = await svc.request('POST', path, { key: ws.key, body: { domain: 'shop.example.com' } });
      assert.equal(again.body.data.id, added.body.data.id);
      await svc.request('POST', path, { key: ws.key, body: { domain: '*.partner.org' } });

      const list = await svc.request('GET', path, { key: ws.key });
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.data.map((d: { domain: string }) => d.domain), ['shop.example.com', 'partner.org']);
      assert.deepEqual(list.body.meta, { total: 2, domains_enabled: true });
      assert.equal((await book(row.randomId)).settings.domains_enabled, true);

      // Another workspace: 404 for everything.
      assert.equal((await svc.request('GET', path, { key: other.key })).status, 404);
      assert.equal((await svc.request('POST', path, { key: other.key, body: { domain: 'evil.example' } })).status, 404);
      assert.equal((await svc.request('DELETE', `${path}/${added.body.data.id}`, { key: other.key })).status, 404);

      for (const d of list.body.data) {
        const removed = await svc.request('DELETE', `${path}/${d.id}`, { key: ws.key });
        assert.equal(removed.status, 200);
        assert.equal(removed.body.data.deleted, true);
      }
      assert.equal((await book(row.randomId)).settings.domains_enabled, false);
      assert.equal((await svc.request('DELETE', `${path}/${added.body.data.id}`, { key: ws.key })).status, 404);
      assert.equal((await svc.request('GET', '/v1/books/AAAAAAAAAAAAAAAAAAAAAA/embed-domains', { key: ws.key })).status, 404);
    });
  });
});
