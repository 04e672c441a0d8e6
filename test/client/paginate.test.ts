/**
 * paginate(): every item of a cursor list, page after page, against the real
 * service; and its types: the paths it accepts, the parameters they need and
 * the items they yield come from the generated schema (checked by tsc, which
 * type-checks this file).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createFlipbookClient, isFlipbookApiError, paginate, unwrap, type CursorListPath, type FlipbookClient, type ListItem, type components } from '@flipbook/client';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const typeIs = <T extends true>(): T | undefined => undefined;

// Compile-time checks: the lists are found from the schema, their items typed.
typeIs<Equal<ListItem<'/v1/books'>, components['schemas']['Book']>>();
typeIs<Equal<ListItem<'/v1/catalogs/{catalog}/items'>, components['schemas']['CatalogItem']>>();
typeIs<'/v1/books' extends CursorListPath ? true : false>();
typeIs<'/v1/webhook-subscriptions/{subscription}/deliveries' extends CursorListPath ? true : false>();
typeIs<'/v1/me' extends CursorListPath ? false : true>();
typeIs<'/v1/subscribers' extends CursorListPath ? false : true>(); // paginated by page number, not by cursor
function typeChecksOnly(client: FlipbookClient) {
  void paginate(client, '/v1/books');
  void paginate(client, '/v1/books/{book}/pages', { path: { book: 'b' } });
  void paginate(client, '/v1/analytics/readers', { query: { book_id: 'b', include_anonymous: true } }, { signal: AbortSignal.timeout(1000) });
  // @ts-expect-error not a list
  void paginate(client, '/v1/me');
  // @ts-expect-error the book is a required path parameter
  void paginate(client, '/v1/books/{book}/pages');
  // @ts-expect-error book_id is a required query parameter
  void paginate(client, '/v1/analytics/readers', { query: {} });
  // @ts-expect-error the cursor is paginate's own
  void paginate(client, '/v1/books', { query: { cursor: 'x' } });
  // @ts-expect-error not a status
  void paginate(client, '/v1/books', { query: { 'filter[status]': 'archived' } });
}
void typeChecksOnly;

describe('paginate', () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  const gets: string[] = [];
  let client: FlipbookClient;

  before(async () => {
    svc = await startService({ worker: false, env: { RATE_LIMIT_ENDPOINT_PER_MINUTE: 0, RATE_LIMIT_WORKSPACE_PER_MINUTE: 0 } });
    ws = await svc.workspace();
    client = createFlipbookClient({
      baseUrl: svc.url,
      token: ws.key,
      fetch: (request) => {
        if (request.method === 'GET') gets.push(new URL(request.url).search);
        return fetch(request);
      },
    });
    for (let i = 0; i < 7; i++) await insertBook(svc, ws.id, { name: `Book ${i}`, status: i < 3 ? 'publish' : 'draft' });
  });
  after(() => svc?.stop());

  it('yields every book of a list longer than one page, once, in the order of one long page', async () => {
    gets.length = 0;
    const seen: string[] = [];
    for await (const book of paginate(client, '/v1/books', { query: { limit: 3 } })) seen.push(book.random_id);
    assert.equal(seen.length, 7);
    assert.equal(new Set(seen).size, 7);
    assert.equal(gets.length, 3, 'three pages of at most 3');
    assert.ok(gets.slice(1).every((q) => new URLSearchParams(q).get('cursor')), 'the later pages ask with the cursor');
    const { data: all } = await unwrap(client.GET('/v1/books', { params: { query: { limit: 200 } } }));
    assert.deepEqual(seen, all.map((b) => b.random_id));
  });

  it('keeps the filters and sort on every page', async () => {
    const names: string[] = [];
    for await (const book of paginate(client, '/v1/books', { query: { limit: 2, 'filter[status]': 'publish', sort: 'name' } })) {
      assert.equal(book.status, 'publish');
      names.push(book.name);
    }
    assert.deepEqual(names, ['Book 0', 'Book 1', 'Book 2']);
  });

  it('follows a list under a path parameter, and stops early when the loop does', async () => {
    const book = await insertBook(svc, ws.id, { name: 'Links' });
    for (let i = 0; i < 5; i++) await unwrap(client.POST('/v1/books/{book}/tracked-links', { params: { path: { book: book.randomId } }, body: { name: `Link ${i}` } }));
    const names: string[] = [];
    for await (const link of paginate(client, '/v1/books/{book}/tracked-links', { path: { book: book.randomId }, query: { limit: 2 } })) names.push(link.name);
    assert.deepEqual([...names].sort(), ['Link 0', 'Link 1', 'Link 2', 'Link 3', 'Link 4']);

    gets.length = 0;
    for await (const link of paginate(client, '/v1/books/{book}/tracked-links', { path: { book: book.randomId }, query: { limit: 2 } })) {
      if (link.name) break;
    }
    assert.equal(gets.length, 1, 'no page is fetched past the break');
  });

  it('throws the FlipbookApiError of a page that fails', async () => {
    const pages = paginate(client, '/v1/books/{book}/pages', { path: { book: 'no-such-book' } });
    const error = await pages.next().catch((e: unknown) => e);
    assert.ok(isFlipbookApiError(error, 'ModelNotFoundException'), String(error));
  });
});
