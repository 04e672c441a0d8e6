/** Tracked links over HTTP: list, create, delete, their 404s and 422s, scopes and workspace isolation. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { insertBook } from '../factories.ts';
import { startService, type ApiResponse, type TestService } from '../helpers.ts';

describe('tracked links', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let bookId: string;

  before(async () => {
    svc = await startService({ worker: false });
    ws = await svc.workspace();
    bookId = (await insertBook(svc, ws.id, { status: 'publish' })).randomId;
  });
  after(() => svc.stop());

  const path = (book = bookId) => `/v1/books/${book}/tracked-links`;

  it('creates a link with a given slug and answers its shareable URL', async () => {
    const res = await svc.request('POST', path(), { key: ws.key, body: { name: 'Spring mailing', slug: 'spring-mail' } });
    assert.equal(res.status, 201, res.text);
    const link = res.body.data;
    assert.equal(typeof link.id, 'number');
    assert.equal(link.book_id, bookId);
    assert.equal(link.name, 'Spring mailing');
    assert.equal(link.slug, 'spring-mail');
    assert.equal(link.url, `${svc.url}/read/${bookId}?tl=spring-mail`);
    assert.equal(link.visits, 0);
    assert.ok(!Number.isNaN(Date.parse(link.created_at)));
  });

  it('makes a slug from the name when none is given, with a suffix when it is taken', async () => {
    const first = await svc.request('POST', path(), { key: ws.key, body: { name: 'Été Newsletter #3!' } });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.body.data.slug, 'ete-newsletter-3');
    const second = await svc.request('POST', path(), { key: ws.key, body: { name: 'Été newsletter 3' } });
    assert.equal(second.status, 201, second.text);
    assert.match(second.body.data.slug, /^ete-newsletter-3-[a-z0-9]{4}$/);
    const symbols = await svc.request('POST', path(), { key: ws.key, body: { name: '新闻' } });
    assert.equal(symbols.status, 201, symbols.text);
    assert.match(symbols.body.data.slug, /^[a-z0-9]{10}$/);
  });

  it('refuses a slug the book already uses with a 422 on slug, and allows it on another book', async () => {
    const res = await svc.request('POST', path(), { key: ws.key, body: { name: 'Again', slug: 'spring-mail' } });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.type, 'ValidationException');
    assert.ok(res.body.error.details.slug);
    const other = await insertBook(svc, ws.id, { status: 'publish' });
    const elsewhere = await svc.request('POST', path(other.randomId), { key: ws.key, body: { name: 'Again', slug: 'spring-mail' } });
    assert.equal(elsewhere.status, 201, elsewhere.text);
  });

  it('validates name and slug', async () => {
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(256) }, 'name'],
      [{ name: 'ok', slug: 'Upper' }, 'slug'],
      [{ name: 'ok', slug: 'has space' }, 'slug'],
      [{ name: 'ok', slug: '' }, 'slug'],
      [{ name: 'ok', slug: 'a'.repeat(65) }, 'slug'],
      [{ name: 'ok', extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const res = await svc.request('POST', path(), { key: ws.key, body });
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
      assert.ok(Object.keys(res.body.error.details).some((k) => k === field || k === '_'), `${JSON.stringify(body)} → ${JSON.stringify(res.body.error.details)}`);
    }
  });

  it('lists newest first with cursor pagination', async () => {
    const own = (await insertBook(svc, ws.id, { status: 'publish' })).randomId;
    const created: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await svc.request('POST', path(own), { key: ws.key, body: { name: `Link ${i}` } });
      created.push(res.body.data.id);
    }
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const res: ApiResponse = await svc.request('GET', path(own), { key: ws.key, query: { limit: 2, ...(cursor ? { cursor } : {}) } });
      assert.equal(res.status, 200, res.text);
      assert.ok(res.body.data.length <= 2);
      seen.push(...res.body.data.map((l: { id: number }) => l.id));
      cursor = res.body.meta.next_cursor;
      assert.equal(res.body.meta.has_more, cursor !== null);
    } while (cursor);
    assert.deepEqual(seen, [...created].reverse());
    const bad = await svc.request('GET', path(own), { key: ws.key, query: { cursor: 'nonsense' } });
    assert.equal(bad.status, 422);
    const tooMany = await svc.request('GET', path(own), { key: ws.key, query: { limit: 201 } });
    assert.equal(tooMany.status, 422);
  });

  it('deletes a link; deleting it again, or through another book, is a 404', async () => {
    const created = await svc.request('POST', path(), { key: ws.key, body: { name: 'Short lived' } });
    const id = created.body.data.id;
    const other = await insertBook(svc, ws.id, { status: 'publish' });
    const wrongBook = await svc.request('DELETE', `${path(other.randomId)}/${id}`, { key: ws.key });
    assert.equal(wrongBook.status, 404);
    const res = await svc.request('DELETE', `${path()}/${id}`, { key: ws.key });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.id, id);
    assert.equal(res.body.data.deleted, true);
    const list = await svc.request('GET', path(), { key: ws.key, query: { limit: 200 } });
    assert.ok(!list.body.data.some((l: { id: number }) => l.id === id));
    const again = await svc.request('DELETE', `${path()}/${id}`, { key: ws.key });
    assert.equal(again.status, 404);
    assert.equal(again.body.error.type, 'ModelNotFoundException');
    const notInteger = await svc.request('DELETE', `${path()}/abc`, { key: ws.key });
    assert.equal(notInteger.status, 422);
  });

  it("answers 404 for an unknown book and for another workspace's book and links", async () => {
    const other = await svc.workspace();
    const theirBook = (await insertBook(svc, other.id, { status: 'publish' })).randomId;
    const theirLink = await svc.request('POST', path(theirBook), { key: other.key, body: { name: 'Theirs' } });
    assert.equal(theirLink.status, 201);
    for (const [method, route, body] of [
      ['GET', path('AAAAAAAAAAAAAAAAAAAAAA'), undefined],
      ['GET', path(theirBook), undefined],
      ['POST', path(theirBook), { name: 'Mine?' }],
      ['DELETE', `${path(theirBook)}/${theirLink.body.data.id}`, undefined],
      ['DELETE', `${path()}/${theirLink.body.data.id}`, undefined],
    ] as const) {
      const res = await svc.request(method, route, { key: ws.key, body });
      assert.equal(res.status, 404, `${method} ${route}: ${res.text}`);
    }
    const still = await svc.request('GET', path(theirBook), { key: other.key });
    assert.equal(still.body.data.length, 1);
  });

  it('needs tracked-links:read to list and tracked-links:write to change', async () => {
    const reader = await svc.key(ws.id, ['tracked-links:read']);
    const list = await svc.request('GET', path(), { key: reader.key });
    assert.equal(list.status, 200);
    const create = await svc.request('POST', path(), { key: reader.key, body: { name: 'No' } });
    assert.equal(create.status, 403);
    assert.deepEqual(create.body.error.details.required_scope, ['tracked-links:write']);
    const booksOnly = await svc.key(ws.id, ['books:read']);
    const denied = await svc.request('GET', path(), { key: booksOnly.key });
    assert.equal(denied.status, 403);
    const anonymous = await svc.request('GET', path());
    assert.equal(anonymous.status, 401);
  });
});
