/**
 * BatchedLookup: the keys asked for in one event-loop turn are read with one
 * load, each caller gets its own key's answer, a failed load fails every
 * caller of its turn, and nothing is kept: a later turn loads again and sees
 * what changed meanwhile. Then through the reader: concurrent page requests
 * for two books each get their own book, and an unpublished book is missing
 * to the very next look-up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import { BatchedLookup } from '../../src/platform/db/batched-lookup.ts';
import { books } from '../../src/modules/books/books.tables.ts';
import { ReaderService } from '../../src/modules/reader/reader.service.ts';
import { insertBook } from '../factories.ts';
import { startService, type TestService } from '../helpers.ts';

describe('BatchedLookup', () => {
  it('reads the keys of one turn with one load and answers each caller its own', async () => {
    const loads: string[][] = [];
    const table = new Map([['a', 1], ['b', 2]]);
    const lookup = new BatchedLookup<string, number>(async (keys) => {
      loads.push([...keys]);
      return new Map(keys.filter((k) => table.has(k)).map((k) => [k, table.get(k)!]));
    }, (k) => k);
    const answers = await Promise.all(['a', 'b', 'a', 'x', 'b'].map((k) => lookup.get(k)));
    assert.deepEqual(answers, [1, 2, 1, undefined, 2]);
    assert.deepEqual(loads, [['a', 'b', 'x']]);
    table.set('a', 10);
    assert.equal(await lookup.get('a'), 10, 'a later turn loads again');
    assert.equal(loads.length, 2);
  });

  it('reads equal structured keys once, by the name idOf gives them', async () => {
    const loads: { bookId: number; slug: string }[][] = [];
    const id = (k: { bookId: number; slug: string }) => `${k.bookId}:${k.slug}`;
    const lookup = new BatchedLookup(async (keys: { bookId: number; slug: string }[]) => {
      loads.push(keys);
      return new Map(keys.map((k) => [id(k), k.slug.length]));
    }, id);
    const answers = await Promise.all([{ bookId: 1, slug: 'spring' }, { bookId: 2, slug: 'spring' }, { bookId: 1, slug: 'spring' }].map((k) => lookup.get(k)));
    assert.deepEqual(answers, [6, 6, 6]);
    assert.deepEqual(loads, [[{ bookId: 1, slug: 'spring' }, { bookId: 2, slug: 'spring' }]]);
  });

  it('fails every caller of a turn whose load fails, and recovers on the next', async () => {
    let fail = true;
    const lookup = new BatchedLookup<string, number>(async (keys) => {
      if (fail) throw new Error('database down');
      return new Map(keys.map((k) => [k, k.length]));
    }, (k) => k);
    const results = await Promise.allSettled([lookup.get('a'), lookup.get('bb')]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected']);
    fail = false;
    assert.equal(await lookup.get('bb'), 2);
  });
});

describe('the reader reads its books in batches', () => {
  let svc: TestService;
  before(async () => { svc = await startService({ worker: false }); });
  after(() => svc.stop());

  it('answers concurrent requests for two books each with its own book, and sees an unpublish at once', async () => {
    const ws = await svc.workspace();
    const [one, two] = await Promise.all([
      insertBook(svc, ws.id, { status: 'publish', pageCount: 3, name: 'First book' }),
      insertBook(svc, ws.id, { status: 'publish', pageCount: 3, name: 'Second book' }),
    ]);
    const reader = new ReaderService({ db: svc.runtime.database.db, storage: svc.runtime.storage, config: svc.runtime.config });
    const found = await Promise.all(Array.from({ length: 20 }, (_, i) => reader.find(i % 2 ? two.randomId : one.randomId)));
    found.forEach((book, i) => assert.equal(book?.row.name, i % 2 ? 'Second book' : 'First book'));
    // Each caller owns its settings object.
    found[0]!.settings.made_with_badge_enabled = !found[2]!.settings.made_with_badge_enabled;
    assert.notEqual(found[0]!.settings.made_with_badge_enabled, found[2]!.settings.made_with_badge_enabled);

    await svc.runtime.database.db.update(books).set({ status: 'draft' }).where(eq(books.id, one.id));
    const [afterUnpublish, other] = await Promise.all([reader.find(one.randomId), reader.find(two.randomId)]);
    assert.equal(reader.availability(afterUnpublish), 'missing');
    assert.equal(reader.availability(other), 'public');
  });
});
